# The libtorch-free build (-DGENREPRO_LIBTORCH=OFF, docs/numerics.md "A build without libtorch"),
# built beside this one from the same sources (its own tree, libtorch-free/, only `genrepro`)
# and held to what it promises: nothing of libtorch or a BLAS linked, the article experiments'
# strict evidence byte-identical to the committed strict digest (as this build's is:
# strict.digest), and reference numerics refused with exit 2 and one line.
option(GENREPRO_TEST_LIBTORCH_FREE "Build the libtorch-free genrepro beside this one and test it" ON)
set(libtorch_free_dir ${CMAKE_BINARY_DIR}/libtorch-free)
if(GENREPRO_TEST_LIBTORCH_FREE)
  genrepro_side_build(genrepro_libtorch_free ${libtorch_free_dir})
endif()
add_test(NAME strict.libtorch_free
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/ci/scripts/libtorch_free.py
          --binary ${libtorch_free_dir}/genrepro --model ${GENREPRO_TINY_MODEL} --source-dir ${CMAKE_SOURCE_DIR}
          --scratch ${CMAKE_BINARY_DIR}/libtorch-free-check --digest ${CMAKE_SOURCE_DIR}/tests/data/strict-digest.json)
set_tests_properties(strict.libtorch_free PROPERTIES LABELS golden FIXTURES_REQUIRED tiny_model SKIP_RETURN_CODE 77 TIMEOUT 120)
