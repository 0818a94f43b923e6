# What only a process shows, kept as real subprocess tests: the exit status the shell
# sees (0 ok, 1 differ, 2 bad input, 3 internal error), ONE line on the real stderr (nothing else
# in the process - libtorch, CLI11, the dynamic loader - writes there), libtorch's multi-line
# errors cut to one line, an existing --out untouched when the process fails, stdin that is not a
# terminal, and the working directory. Model-free verbs start in milliseconds; the engine verbs
# load libtorch (about a second), so only a few of those are here. Every message and output check
# runs in-process (tests/cli_inprocess; tests/cli/README.md maps the old test names to the new).
set(_diff ${CMAKE_SOURCE_DIR}/tests/cli/data/diff)
set(_gen generate --prompt "the river bank was" --max-new-tokens 5)

# Exit codes 0 / 1 / 2 as the shell sees them (model-free verb).
genrepro_cli_test(NAME cli.process.exit0_agree EXIT 0
  STDOUT "diff: 2 runs compared, 2 agree, 0 differ"
  COMMAND diff ${_diff}/golden.json ${_diff}/same.json)
genrepro_cli_test(NAME cli.process.exit1_differ EXIT 1
  STDOUT "diff: 2 runs compared, 1 agree, 1 differ \\(1 sampler/RNG change\\)"
  COMMAND diff ${_diff}/golden.json ${_diff}/one_token.json)
genrepro_cli_test(NAME cli.process.exit2_bad_file EXIT 2 ONE_LINE_STDERR
  STDERR "^genrepro: error: .*not_json.json: invalid JSON"
  COMMAND diff ${_diff}/golden.json ${_diff}/not_json.json)
# CLI11's own exit codes (106, 109, ...) never reach the shell: a bad flag is bad input.
genrepro_cli_test(NAME cli.process.exit2_unknown_flag EXIT 2 ONE_LINE_STDERR
  STDERR "^genrepro: error: .*--no-such-flag.*\\(see 'genrepro diff --help'\\)"
  COMMAND diff ${_diff}/golden.json ${_diff}/same.json --no-such-flag)
# An engine verb's flags are checked before the engine library is opened.
genrepro_cli_test(NAME cli.process.exit2_engine_verb_flag EXIT 2 ONE_LINE_STDERR
  STDERR "^genrepro: error: --temperature = -1 is not allowed"
  COMMAND ${_gen} --temperature -1)

# Exit 3: a genrepro whose engine library is missing (a copy of the binary alone in a directory)
# is a broken installation, not bad input: one line naming the library.
set(_lonely ${CMAKE_BINARY_DIR}/test-lonely-genrepro)
add_test(NAME cli.process.copy_binary_alone
  COMMAND ${CMAKE_COMMAND} -E copy $<TARGET_FILE:genrepro> ${_lonely}/genrepro)
set_tests_properties(cli.process.copy_binary_alone PROPERTIES LABELS cli FIXTURES_SETUP lonely_binary)
genrepro_cli_test(NAME cli.process.exit3_engine_library_missing EXIT 3 ONE_LINE_STDERR
  STDERR "^genrepro: internal error \\(please report\\): cannot load the engine library .*libgenrepro_engine_verbs\\.so"
  BINARY ${_lonely}/genrepro FIXTURES lonely_binary NEEDS_MODEL
  COMMAND ${_gen} --model ${GENREPRO_TINY_MODEL})

# `sample` is model-free: the same lonely copy runs it (no engine library beside it to open), and
# its bad input is one line on the real stderr, exit 2. tests/layering's no_libtorch.py shows the
# loader's own trace of it naming no libtorch.
set(_sample ${CMAKE_SOURCE_DIR}/tests/cli/data/sample)
genrepro_cli_test(NAME cli.process.sample_without_engine_library EXIT 0
  STDOUT "^\\{\"index\":0,\"stages\":.*\"pick\":[0-9]+.*\n\\{\"index\":1,"
  STDERR "^sample: 2 rows of 4 logits \\(jsonl\\); framework article, stages \\[temperature, top_k, top_p\\]"
  BINARY ${_lonely}/genrepro FIXTURES lonely_binary
  COMMAND sample ${_sample}/logits.jsonl --params "{\"mode\": \"sample\", \"top_p\": 0.7, \"seed\": 42}")
genrepro_cli_test(NAME cli.process.sample_ragged_rows_exit2 EXIT 2 ONE_LINE_STDERR
  STDERR "^genrepro: error: .*ragged.jsonl: row 1 \\(line 2\\): 2 logits, where row 0 \\(line 1\\) has 4"
  COMMAND sample ${_sample}/ragged.jsonl --params "{\"mode\": \"greedy\"}")

# The engine opened on first use: the model note and the stop line are all of stderr.
genrepro_cli_test(NAME cli.process.generate_exit0 EXIT 0 NEEDS_MODEL
  STDOUT "^\\[[0-9]+(,[0-9]+){4}\\]\n$"
  STDERR "^model: [^\n]* \\(from --model\\)\npath: KV cache [^\n]*numerics strict[^\n]*\nstop: max_new_tokens after 5 new tokens \\(greedy, kv cache\\)\nspeed: [0-9.]+ new tokens/s in the loop [^\n]*\n$"
  COMMAND ${_gen} --model ${GENREPRO_TINY_MODEL} --ids)
# NaN weights pass the load checks; their distribution is stopped before torch::multinomial sees
# it (engine/generation_loop.cpp, at the logits): bad input, exit 2, and after the model note exactly one line.
genrepro_cli_test(NAME cli.process.nan_weights_stop_before_the_draw EXIT 2
  STDERR "^model: [^\n]*\npath: [^\n]*\ngenrepro: error: step 0: the model's logits hold NaN \\(token id 0\\); [^\n]*\n$"
  FIXTURES broken_models NEEDS_MODEL
  COMMAND ${_gen} --model ${GENREPRO_BROKEN_MODELS}/weights_nan --seed 1)

# An existing --out survives a failed run byte for byte, with no temporary file beside it, and the
# error is one line: bad experiment (before the engine loads) and broken model (with libtorch
# loaded, so nothing of libtorch's reaches stderr either).
add_test(NAME cli.process.run_bad_experiment_keeps_out
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/run_bad_experiment.py
          --binary $<TARGET_FILE:genrepro> --model ${GENREPRO_TINY_MODEL}
          --experiment ${CMAKE_SOURCE_DIR}/tests/cli/data/run/wrong_type.json
          --stderr "^genrepro: error: .*wrong_type.json: runs\\[0\\]\\.temperature = \"hot\" is not allowed")
add_test(NAME cli.process.run_broken_model_keeps_out
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/run_bad_experiment.py
          --binary $<TARGET_FILE:genrepro> --model ${GENREPRO_BROKEN_MODELS}/weights_truncated
          --experiment ${CMAKE_SOURCE_DIR}/experiments/article/greedy.json
          --stderr "^genrepro: error: .*/weights_truncated/model\\.safetensors: tensor '[^']+' has data_offsets .* past the end")
set_tests_properties(cli.process.run_bad_experiment_keeps_out cli.process.run_broken_model_keeps_out PROPERTIES
  LABELS cli TIMEOUT 120 FIXTURES_REQUIRED "tiny_model;broken_models"
  ENVIRONMENT "GENREPRO_TOKENIZER_DIR=${GENREPRO_TOKENIZER_DIR};GENREPRO_CACHE_DIR=${CMAKE_BINARY_DIR}/cache;HF_HUB_CACHE=${CMAKE_BINARY_DIR}/no-hf-cache")

# stdin from /dev/null is not a terminal: bless refuses without --yes and writes nothing.
genrepro_cli_test(NAME cli.process.bless_without_terminal EXIT 2 ONE_LINE_STDERR
  STDOUT "bless: .*greedy.json: new, 1 runs"
  STDERR "not asking without a terminal .*re-run with --yes"
  ABSENT ${CMAKE_BINARY_DIR}/test-bless-refused
  COMMAND bless ${_diff}/golden.json --into ${CMAKE_BINARY_DIR}/test-bless-refused)

# The report's default directory is reports/out/ under the working directory.
file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/cli-report-default)
genrepro_cli_test(NAME cli.process.report_default_out EXIT 0 STDOUT "^reports/out/report\\.md\n"
  WORKING_DIRECTORY ${CMAKE_BINARY_DIR}/cli-report-default
  COMMAND report ${CMAKE_SOURCE_DIR}/tests/cli/data/report-evidence.json)
