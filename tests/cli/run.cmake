# genrepro run and env end to end (issue #5). The article's experiments on the tiny fixture:
# schema, sha256, BLAS, and identical evidence again / with 2 threads / as merged shards
# (run_article.py). Messages and bad input: tests/cli_inprocess/run_test.cpp.
add_test(NAME run.article_on_fixture
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/cli/run_article.py
          --binary $<TARGET_FILE:genrepro> --engine-library $<TARGET_FILE:genrepro_engine_verbs>
          --model ${GENREPRO_TINY_MODEL} --source-dir ${CMAKE_SOURCE_DIR})
set_tests_properties(run.article_on_fixture PROPERTIES LABELS cli FIXTURES_REQUIRED tiny_model TIMEOUT 300
  ENVIRONMENT "GENREPRO_TOKENIZER_DIR=${GENREPRO_TOKENIZER_DIR};GENREPRO_CACHE_DIR=${CMAKE_BINARY_DIR}/cache")

# The BLAS named in the environment block is the one the process really loaded.
add_test(NAME env.blas_from_process
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/cli/env_blas.py --binary $<TARGET_FILE:genrepro>
          --engine-library $<TARGET_FILE:genrepro_engine_verbs>)
set_tests_properties(env.blas_from_process PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 120)
