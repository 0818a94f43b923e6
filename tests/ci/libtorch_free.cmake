# The libtorch-free build (-DGENREPRO_LIBTORCH=OFF, docs/numerics.md "A build without libtorch"),
# built beside this one from the same sources (its own tree, libtorch-free/, only `genrepro`)
# and held to what it promises: nothing of libtorch or a BLAS linked, the article experiments'
# strict evidence byte-identical to the committed strict digest (as this build's is:
# strict.digest), and reference numerics refused with exit 2 and one line.
option(GENREPRO_TEST_LIBTORCH_FREE "Build the libtorch-free genrepro beside this one and test it" ON)
set(libtorch_free_dir ${CMAKE_BINARY_DIR}/libtorch-free)
if(GENREPRO_TEST_LIBTORCH_FREE)
  include(ExternalProject)
  set(libtorch_free_args -DGENREPRO_LIBTORCH=OFF -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE} -DGENREPRO_DEPS_DIR=${GENREPRO_DEPS_DIR})
  if(CMAKE_CXX_COMPILER_LAUNCHER)
    list(APPEND libtorch_free_args -DCMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER})
  endif()
  # BUILD_ALWAYS: the sub-build's own ninja decides what changed in the shared sources.
  ExternalProject_Add(genrepro_libtorch_free
    SOURCE_DIR ${CMAKE_SOURCE_DIR}
    BINARY_DIR ${libtorch_free_dir}
    CMAKE_ARGS ${libtorch_free_args}
    BUILD_COMMAND ${CMAKE_COMMAND} --build ${libtorch_free_dir} --target genrepro
    INSTALL_COMMAND ""
    BUILD_ALWAYS ON)
endif()
add_test(NAME strict.libtorch_free
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/ci/scripts/libtorch_free.py
          --binary ${libtorch_free_dir}/genrepro --model ${GENREPRO_TINY_MODEL} --source-dir ${CMAKE_SOURCE_DIR}
          --scratch ${CMAKE_BINARY_DIR}/libtorch-free-check --digest ${CMAKE_SOURCE_DIR}/tests/data/strict-digest.json)
set_tests_properties(strict.libtorch_free PROPERTIES LABELS golden FIXTURES_REQUIRED tiny_model SKIP_RETURN_CODE 77 TIMEOUT 120)
