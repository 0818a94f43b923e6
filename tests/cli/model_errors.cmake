# Broken model directories through the CLI (issue #2, "Done when", third bullet): each missing,
# truncated or corrupt model file gives ONE line on stderr naming the file and the problem, exit
# code 2, within a minute (a hang fails on the TIMEOUT) - never a crash (exit 3 / a signal).
# tests/cli/scripts/make_broken_models.py copies the tiny fixture once per case and breaks
# exactly one thing in the copy; the case names below are its directory names.
set(_broken ${CMAKE_BINARY_DIR}/broken-models)
# Long enough for the tiny model's load (well under a second) on a loaded machine; a hang fails.
set(_model_error_timeout 60)

add_test(NAME fixture.make_broken_models
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/scripts/make_broken_models.py
          ${GENREPRO_TINY_MODEL} ${_broken})
set_tests_properties(fixture.make_broken_models PROPERTIES LABELS cli TIMEOUT 120
  FIXTURES_SETUP broken_models FIXTURES_REQUIRED tiny_model)

# genrepro_model_error_test(<case> <regex after "genrepro: error: ">): `genrepro generate` on the
# broken copy <case>. The regex must not contain ';' (CMake would split the argument there) and
# its '[' and ']' must balance (an unbalanced '[' stops CMake splitting the arguments that follow):
# the messages' "; fix ..." parts and half-open "[a, b)" ranges are matched with '.'.
function(genrepro_model_error_test case regex)
  genrepro_cli_test(NAME cli.model_error.${case} EXIT 2 ONE_LINE_STDERR
    STDERR "^genrepro: error: ${regex}"
    FIXTURES broken_models NEEDS_MODEL
    COMMAND generate --model ${_broken}/${case} --prompt "the river bank was" --max-new-tokens 3)
  set_tests_properties(cli.model_error.${case} PROPERTIES TIMEOUT ${_model_error_timeout})
endfunction()

# model.safetensors: the 8-byte header length and the JSON header.
genrepro_model_error_test(header_length_past_end
  ".*/header_length_past_end/model\\.safetensors: header length [0-9]+ exceeds the [0-9]+ bytes after it .*the file is truncated or not safetensors")
genrepro_model_error_test(header_length_huge
  ".*/header_length_huge/model\\.safetensors: header length 9223372036854775808 exceeds the [0-9]+ bytes after it")
genrepro_model_error_test(header_not_json
  ".*/header_not_json/model\\.safetensors: header is not valid JSON \\(.*parse error.*\\)")
genrepro_model_error_test(header_not_object
  ".*/header_not_object/model\\.safetensors: header is JSON but not an object")
# model.safetensors: tensor entries.
genrepro_model_error_test(offsets_past_end
  ".*/offsets_past_end/model\\.safetensors: tensor '[^']+' has data_offsets \\[[0-9]+, [0-9]+\\] past the end of the [0-9]+-byte data section")
genrepro_model_error_test(offsets_overlap
  ".*/offsets_overlap/model\\.safetensors: tensors 'h\\.0\\.ln_1\\.weight' .[0-9]+, [0-9]+. and 'h\\.0\\.ln_1\\.bias' .[0-9]+, [0-9]+. overlap")
genrepro_model_error_test(dtype_i4
  ".*/dtype_i4/model\\.safetensors: tensor 'h\\.0\\.attn\\.c_proj\\.bias' has dtype I4, allowed: F32, F16, BF16")
genrepro_model_error_test(dtype_f64
  ".*/dtype_f64/model\\.safetensors: tensor 'h\\.0\\.attn\\.c_proj\\.bias' has dtype F64, allowed: F32, F16, BF16")
genrepro_model_error_test(tensor_missing
  ".*/tensor_missing/model\\.safetensors: missing tensor 'h\\.1\\.mlp\\.c_fc\\.bias'")
# model.safetensors against config.json.
genrepro_model_error_test(wte_shape_vs_config
  ".*/wte_shape_vs_config/model\\.safetensors: tensor 'wte\\.weight' has shape \\[50257, 64\\], expected \\[50257, 96\\] from config\\.json \\(vocab_size 50257, n_embd 96\\)")
genrepro_model_error_test(wpe_shape_swapped
  ".*/wpe_shape_swapped/model\\.safetensors: tensor 'wpe\\.weight' has shape \\[64, 128\\], expected \\[128, 64\\] from config\\.json \\(n_positions 128, n_embd 64\\)")
# model.safetensors as a whole.
genrepro_model_error_test(weights_truncated
  ".*/weights_truncated/model\\.safetensors: tensor '[^']+' has data_offsets .* past the end of the [0-9]+-byte data section.*truncated")
genrepro_model_error_test(weights_empty
  ".*/weights_empty/model\\.safetensors: file is 0 bytes, too short for the 8-byte safetensors header length")
genrepro_model_error_test(weights_directory
  "model directory .*/weights_directory \\(from --model\\): missing model\\.safetensors \\[model\\.safetensors is a directory\\]")
genrepro_model_error_test(weights_missing
  "model directory .*/weights_missing \\(from --model\\): missing model\\.safetensors. a model directory holds")
genrepro_model_error_test(pytorch_bin_only
  "model directory .*/pytorch_bin_only \\(from --model\\): missing model\\.safetensors \\(pytorch_model\\.bin is not read: genrepro loads only safetensors\\)")
# config.json.
genrepro_model_error_test(heads_do_not_divide
  ".*/heads_do_not_divide/config\\.json: n_embd 64 is not divisible by n_head 5")
genrepro_model_error_test(config_missing
  "model directory .*/config_missing \\(from --model\\): missing config\\.json. a model directory holds")
genrepro_model_error_test(config_not_json
  ".*/config_not_json/config\\.json: not valid JSON \\(.*parse error at line 2, column 1")
genrepro_model_error_test(config_n_layer_string
  ".*/config_n_layer_string/config\\.json: field \"n_layer\" is string \"two\", expected a positive integer")
genrepro_model_error_test(config_directory
  "model directory .*/config_directory \\(from --model\\): missing config\\.json \\[config\\.json is a directory\\]")
# The tokenizer files.
genrepro_model_error_test(vocab_missing
  "model directory .*/vocab_missing \\(from --model\\): missing vocab\\.json \\(or encoder\\.json\\)")
genrepro_model_error_test(merges_missing
  "model directory .*/merges_missing \\(from --model\\): missing merges\\.txt \\(or vocab\\.bpe\\)")
genrepro_model_error_test(vocab_garbage
  "vocab file '.*/vocab_garbage/vocab\\.json' is not valid JSON \\(error at byte [0-9]+\\)")
genrepro_model_error_test(merges_garbage
  "merges file '.*/merges_garbage/merges\\.txt': line 2 \"this line has three tokens\" is not two tokens separated by one space")

# The same errors when the broken directory comes from $GENREPRO_MODEL rather than --model.
function(genrepro_model_error_env_test case regex)
  genrepro_cli_test(NAME cli.model_error.env.${case} EXIT 2 ONE_LINE_STDERR
    STDERR "^genrepro: error: ${regex}"
    FIXTURES broken_models NEEDS_MODEL
    COMMAND generate --prompt "the river bank was" --max-new-tokens 3)
  set_property(TEST cli.model_error.env.${case} APPEND PROPERTY ENVIRONMENT "GENREPRO_MODEL=${_broken}/${case}")
  set_tests_properties(cli.model_error.env.${case} PROPERTIES TIMEOUT ${_model_error_timeout})
endfunction()
genrepro_model_error_env_test(offsets_overlap
  ".*/offsets_overlap/model\\.safetensors: tensors 'h\\.0\\.ln_1\\.weight' .* and 'h\\.0\\.ln_1\\.bias' .* overlap")
genrepro_model_error_env_test(heads_do_not_divide
  ".*/heads_do_not_divide/config\\.json: n_embd 64 is not divisible by n_head 5")
genrepro_model_error_env_test(vocab_missing
  "model directory .*/vocab_missing \\(from \\$GENREPRO_MODEL\\): missing vocab\\.json")
genrepro_model_error_env_test(pytorch_bin_only
  "model directory .*/pytorch_bin_only \\(from \\$GENREPRO_MODEL\\): missing model\\.safetensors \\(pytorch_model\\.bin is not read: genrepro loads only safetensors\\)")

# `genrepro run` on a broken model: the same one line and exit 2, and an existing --out file
# stays byte-identical with nothing left beside it (run_bad_experiment.py checks all three).
function(genrepro_model_error_run_test case regex)
  add_test(NAME cli.model_error.run.${case}
    COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/cli/run_bad_experiment.py
            --binary $<TARGET_FILE:genrepro> --model ${_broken}/${case}
            --experiment ${CMAKE_SOURCE_DIR}/experiments/article/greedy.json --stderr "^genrepro: error: ${regex}")
  set_tests_properties(cli.model_error.run.${case} PROPERTIES LABELS cli TIMEOUT ${_model_error_timeout}
    FIXTURES_REQUIRED "broken_models;tiny_model"
    ENVIRONMENT "GENREPRO_TOKENIZER_DIR=${GENREPRO_TOKENIZER_DIR};GENREPRO_CACHE_DIR=${CMAKE_BINARY_DIR}/cache;HF_HUB_CACHE=${CMAKE_BINARY_DIR}/no-hf-cache")
endfunction()
genrepro_model_error_run_test(weights_truncated
  ".*/weights_truncated/model\\.safetensors: tensor '[^']+' has data_offsets .* past the end")
genrepro_model_error_run_test(header_length_huge
  ".*/header_length_huge/model\\.safetensors: header length 9223372036854775808 exceeds")
genrepro_model_error_run_test(wte_shape_vs_config
  ".*/wte_shape_vs_config/model\\.safetensors: tensor 'wte\\.weight' has shape \\[50257, 64\\], expected \\[50257, 96\\]")
genrepro_model_error_run_test(config_n_layer_string
  ".*/config_n_layer_string/config\\.json: field \"n_layer\" is string \"two\"")
genrepro_model_error_run_test(vocab_garbage
  "vocab file '.*/vocab_garbage/vocab\\.json' is not valid JSON")
