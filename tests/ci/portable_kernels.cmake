# Portable CPU kernels (docs/numerics.md, "CPU kernels").
#
# The in-process suites link libtorch, so OpenBLAS chose its kernels when the test binary started,
# before any genrepro code ran: their environment pins the kernels the way genrepro's loader does
# before it opens the engine (harness/cli/engine_loader.hpp), and the default --cpu-kernels
# portable then reads back what it requires.
# Every entry that runs a test binary linking libtorch: the gtest binaries' shards (however many
# there are) and the article's sampled loop, which runs genrepro_cli_tests on its own. Deferred to
# the end of the directory: the test declarations are included in path order, and some of these
# entries (reference/sampling.cmake's) are declared after this file.
function(_genrepro_pin_portable_kernels)
  get_property(_tests DIRECTORY PROPERTY TESTS)
  set(_pinned 0)
  foreach(_t IN LISTS _tests)
    if(_t MATCHES "^genrepro_(cli|engine)_tests\\." OR _t STREQUAL "reference.article_sampled_loop")
      set_property(TEST ${_t} APPEND PROPERTY ENVIRONMENT "OPENBLAS_CORETYPE=Haswell" "ATEN_CPU_CAPABILITY=avx2")
      math(EXPR _pinned "${_pinned} + 1")
    endif()
  endforeach()
  if(_pinned LESS 3)
    message(FATAL_ERROR "tests/ci/portable_kernels.cmake: found ${_pinned} in-process entries to pin portable kernels for; "
                        "the gtest binaries' entries were renamed")
  endif()
endfunction()
cmake_language(DEFER CALL _genrepro_pin_portable_kernels)

# Portable evidence does not depend on the user's OPENBLAS_CORETYPE / ATEN_CPU_CAPABILITY; native
# does; an unhonourable portable request (no AVX2 claimed, the reference BLAS) is exit 2; a
# change of kernels is diff's own cause.
add_test(NAME portable.kernels
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/cli/portable_kernels.py
          --binary $<TARGET_FILE:genrepro> --model ${GENREPRO_TINY_MODEL} --source-dir ${CMAKE_SOURCE_DIR}
          --scratch ${CMAKE_BINARY_DIR}/portable-kernels)
set_tests_properties(portable.kernels PROPERTIES LABELS cli FIXTURES_REQUIRED tiny_model
  SKIP_RETURN_CODE 77 TIMEOUT 300 COST 6)  # started early (cmake/GenreproTesting.cmake, COST)

# The bit-exact cross-machine check: the regression gate's evidence (experiments/article on the
# tiny fixture, default flags: portable kernels) against the committed digest.
add_test(NAME portable.digest
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/ci/scripts/portable_digest.py
          --evidence ${CMAKE_BINARY_DIR}/golden/fixture-evidence.json
          --digest ${CMAKE_SOURCE_DIR}/tests/data/portable-digest.json)
set_tests_properties(portable.digest PROPERTIES LABELS golden FIXTURES_REQUIRED golden_fixture_evidence
  SKIP_RETURN_CODE 77)

# Shards from mixed machines merge, keep their environments, and diff cleanly; shards of
# different kernels are still refused (the article shards of tests/cli/run.cmake).
add_test(NAME portable.merge_mixed_machines
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/cli/merge_mixed_machines.py --binary $<TARGET_FILE:genrepro>
          --shards ${CMAKE_BINARY_DIR}/run-article/shard1.json ${CMAKE_BINARY_DIR}/run-article/shard2.json
          --unsharded ${CMAKE_BINARY_DIR}/golden/fixture-evidence.json --scratch ${CMAKE_BINARY_DIR}/merge-mixed)
set_tests_properties(portable.merge_mixed_machines PROPERTIES LABELS cli
  FIXTURES_REQUIRED "article_shards;golden_fixture_evidence")

# Strict numerics' committed digest: the article experiments on the tiny fixture, with the fastest
# vector code this CPU runs and with the plain C++ one, byte-identical to tests/data/strict-digest.json
# on every machine, whatever its CPU (docs/numerics.md, "Strict numerics"). The fastest code's
# evidence is the regression gate's run (strict, the default numerics), not made a second time.
add_test(NAME strict.digest
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/ci/scripts/strict_digest.py
          --binary $<TARGET_FILE:genrepro> --model ${GENREPRO_TINY_MODEL} --source-dir ${CMAKE_SOURCE_DIR}
          --evidence ${CMAKE_BINARY_DIR}/golden/fixture-evidence.json
          --scratch ${CMAKE_BINARY_DIR}/strict-digest --digest ${CMAKE_SOURCE_DIR}/tests/data/strict-digest.json)
set_tests_properties(strict.digest PROPERTIES LABELS golden FIXTURES_REQUIRED "tiny_model;golden_fixture_evidence" TIMEOUT 120)
