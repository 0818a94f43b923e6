# genrepro run / merge / env (issue #5). Malformed experiment files: one line, exit 2, an existing
# --out untouched (run_bad_experiment.py). The article's experiments on the tiny fixture: schema,
# sha256, BLAS, and identical evidence again / with 2 threads / as merged shards (run_article.py).
set(run_data ${CMAKE_SOURCE_DIR}/tests/cli/data/run)

function(genrepro_bad_experiment_test name file regex)
  add_test(NAME run.bad.${name}
    COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/cli/run_bad_experiment.py
            --binary $<TARGET_FILE:genrepro> --model ${GENREPRO_TINY_MODEL} --experiment ${file} --stderr "${regex}")
  set_tests_properties(run.bad.${name} PROPERTIES LABELS cli FIXTURES_REQUIRED tiny_model TIMEOUT 120
    ENVIRONMENT "GENREPRO_TOKENIZER_DIR=${GENREPRO_TOKENIZER_DIR};GENREPRO_CACHE_DIR=${CMAKE_BINARY_DIR}/cache")
endfunction()

genrepro_bad_experiment_test(invalid_json ${run_data}/invalid_json.json
  "^genrepro: error: .*invalid_json.json: invalid JSON: parse error at line 3, column 30: syntax error")
genrepro_bad_experiment_test(deep ${run_data}/deep.json
  "^genrepro: error: .*deep.json: line 1, column 88: JSON nested deeper than 64 levels")
genrepro_bad_experiment_test(invalid_utf8 ${run_data}/invalid_utf8.json
  "^genrepro: error: .*invalid_utf8.json: line 2, column 30: invalid UTF-8 \\(byte 0xFF\\)")
genrepro_bad_experiment_test(wrong_type ${run_data}/wrong_type.json
  "^genrepro: error: .*wrong_type.json: runs\\[0\\]\\.temperature = \"hot\" is not allowed; allowed: a finite number >= 0")
genrepro_bad_experiment_test(out_of_range ${run_data}/out_of_range.json
  "^genrepro: error: .*out_of_range.json: runs\\[1\\]\\.temperature\\[1\\] = -0\\.5 is not allowed; allowed: a finite number >= 0")
genrepro_bad_experiment_test(unknown_key ${run_data}/unknown_key.json
  "^genrepro: error: .*unknown_key.json: runs\\[0\\]\\.temprature: unknown key; did you mean \"temperature\"\\?")
genrepro_bad_experiment_test(empty_prompts ${run_data}/empty_prompts.json
  "^genrepro: error: .*empty_prompts.json: prompts: empty list; give at least one prompt")
genrepro_bad_experiment_test(beyond_context ${run_data}/beyond_context.json
  "^genrepro: error: .*beyond_context.json: runs\\[0\\]\\.max_new_tokens = 200 is not allowed; allowed: at most 124 for prompts\\[0\\] \\(4 tokens\\) with this model's context of 128 tokens")
genrepro_bad_experiment_test(missing_file ${run_data}/no_such_experiment.json
  "^genrepro: error: .*no_such_experiment.json: no such file; give the path of an experiment file")

genrepro_cli_test(NAME run.bad_shard EXIT 2 ONE_LINE_STDERR
  STDERR "--shard 3/2: expected I/N with whole numbers 1 <= I <= N"
  COMMAND run ${CMAKE_SOURCE_DIR}/experiments/article/greedy.json --shard 3/2 --out ${CMAKE_BINARY_DIR}/unused.json)
genrepro_cli_test(NAME merge.missing_shard EXIT 2 ONE_LINE_STDERR
  STDERR "no_such_shard.json: no such file"
  COMMAND merge ${CMAKE_BINARY_DIR}/no_such_shard.json --out ${CMAKE_BINARY_DIR}/unused.json)

add_test(NAME run.article_on_fixture
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/cli/run_article.py
          --binary $<TARGET_FILE:genrepro> --engine-library $<TARGET_FILE:genrepro_engine_verbs>
          --model ${GENREPRO_TINY_MODEL} --source-dir ${CMAKE_SOURCE_DIR})
set_tests_properties(run.article_on_fixture PROPERTIES LABELS cli FIXTURES_REQUIRED tiny_model TIMEOUT 300
  ENVIRONMENT "GENREPRO_TOKENIZER_DIR=${GENREPRO_TOKENIZER_DIR};GENREPRO_CACHE_DIR=${CMAKE_BINARY_DIR}/cache")

add_test(NAME env.blas_from_process
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/cli/env_blas.py --binary $<TARGET_FILE:genrepro>
          --engine-library $<TARGET_FILE:genrepro_engine_verbs>)
set_tests_properties(env.blas_from_process PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 120)

genrepro_cli_test(NAME run.out_is_directory EXIT 2 ONE_LINE_STDERR
  STDERR "--out .*: is a directory; give a file path such as"
  COMMAND run ${CMAKE_SOURCE_DIR}/experiments/article/greedy.json --out ${CMAKE_BINARY_DIR})
genrepro_cli_test(NAME env.prints_environment EXIT 0
  STDOUT "\"blas\": \\{.*\"library\": .*\"threads\": \\{.*\"intra_op\": 1"
  COMMAND env)

# The KV cache and recompute must pick the same tokens (exit 0); the diff's own tests cover a
# divergence (diff_cache_equivalence), which a correct engine cannot be made to produce here.
genrepro_cli_test(NAME cli.run.check_equivalence EXIT 0 NEEDS_MODEL
  STDOUT "check-equivalence: KV cache and recompute pick the same tokens"
  COMMAND run ${CMAKE_SOURCE_DIR}/experiments/article/greedy.json ${CMAKE_SOURCE_DIR}/experiments/article/eos.json
          --model ${GENREPRO_TINY_MODEL} --check-equivalence)
