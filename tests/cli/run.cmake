# genrepro run, merge and env end to end. The article's experiments on the tiny fixture:
# schema, sha256, BLAS, and identical evidence again with 2 threads and as merged shards
# (run_article.py). The first of those runs is the regression gate's (tests/golden/regression.cmake,
# golden.fixture.run: the same experiments, model and flags), so the 22 runs are not made twice;
# the others are ctest entries of their own, so that ctest can spread them over the cores.
# Messages and bad input: tests/cli_inprocess/run_test.cpp.
file(GLOB _article_experiments CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/experiments/article/*.json)
set(_article_out ${CMAKE_BINARY_DIR}/run-article)
set(_article_run run ${_article_experiments} --model ${GENREPRO_TINY_MODEL})
# The shards run with --threads 2 (two runs at a time), so the one comparison with the first
# evidence shows both that sharding and that the thread count leave the bits alone: the article's
# 22 runs are made twice in the suite, not three times.
foreach(_i 1 2)
  genrepro_cli_test(NAME run.article.shard${_i} EXIT 0 NEEDS_MODEL
    STDOUT "wrote .*/shard${_i}\\.json \\([0-9]+ runs\\)"
    COMMAND ${_article_run} --shard ${_i}/2 --threads 2 --out ${_article_out}/shard${_i}.json)
  # Not PROCESSORS 2: `ctest -j2` starts such an entry only when both slots are free, which behind
  # a queue of one-slot entries is the end of the run, and then its dependents (the merge, the
  # mixed-machine checks, run.article_on_fixture) run last, one after another. For a second the
  # two threads share the cores with one other entry instead.
  set_tests_properties(run.article.shard${_i} PROPERTIES FIXTURES_SETUP article_shards)
endforeach()
genrepro_cli_test(NAME run.article.merge_shards EXIT 0 FIXTURES article_shards
  COMMAND merge ${_article_out}/shard2.json ${_article_out}/shard1.json --out ${_article_out}/merged.json)
set_tests_properties(run.article.merge_shards PROPERTIES FIXTURES_SETUP article_merged)

add_test(NAME run.article_on_fixture
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/cli/run_article.py
          --engine-library $<TARGET_FILE:genrepro_engine_verbs> --strict-engine-library $<TARGET_FILE:genrepro_engine_verbs_strict>
          --reference-evidence ${CMAKE_BINARY_DIR}/reference/draw-margin-evidence.json
          --model ${GENREPRO_TINY_MODEL} --source-dir ${CMAKE_SOURCE_DIR}
          --first-evidence ${CMAKE_BINARY_DIR}/golden/fixture-evidence.json
          --merged-evidence ${_article_out}/merged.json)
set_tests_properties(run.article_on_fixture PROPERTIES LABELS cli TIMEOUT 120
  FIXTURES_REQUIRED "tiny_model;golden_fixture_evidence;article_merged;draw_margin_evidence")

# The BLAS named in the environment block is the one the process really loaded.
add_test(NAME env.blas_from_process
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/cli/env_blas.py --binary $<TARGET_FILE:genrepro>
          --engine-library $<TARGET_FILE:genrepro_engine_verbs>)
set_tests_properties(env.blas_from_process PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 120)
