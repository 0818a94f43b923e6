# genrepro generate: every bad sampling parameter is rejected before a model is even located
# (no NEEDS_MODEL), with one line naming the flag and what is allowed, exit 2.
set(_gen generate --prompt "the river bank was" --max-new-tokens 5)
genrepro_cli_test(NAME cli.generate.temperature_negative EXIT 2 ONE_LINE_STDERR
  STDERR "--temperature = -1 is not allowed. allowed: a finite number >= 0 \\(0 means greedy\\)"
  COMMAND ${_gen} --temperature -1)
genrepro_cli_test(NAME cli.generate.temperature_nan EXIT 2 ONE_LINE_STDERR
  STDERR "--temperature = nan is not allowed" COMMAND ${_gen} --temperature nan)
genrepro_cli_test(NAME cli.generate.temperature_not_a_number EXIT 2 ONE_LINE_STDERR
  STDERR "convert: [-][-]temperature = warm" COMMAND ${_gen} --temperature warm)
genrepro_cli_test(NAME cli.generate.top_p_zero EXIT 2 ONE_LINE_STDERR
  STDERR "--top-p = 0 is not allowed. allowed: a number in \\(0, 1. \\(1 turns top-p off\\)" COMMAND ${_gen} --top-p 0)
genrepro_cli_test(NAME cli.generate.top_p_above_one EXIT 2 ONE_LINE_STDERR
  STDERR "--top-p = 1.5 is not allowed. allowed: a number in \\(0, 1. \\(1 turns top-p off\\)" COMMAND ${_gen} --top-p 1.5)
genrepro_cli_test(NAME cli.generate.top_k_negative EXIT 2 ONE_LINE_STDERR
  STDERR "--top-k = -1 is not allowed. allowed: an integer >= 0" COMMAND ${_gen} --top-k -1)
foreach(_seed -1 abc 1.5 1e3 18446744073709551616)
  genrepro_cli_test(NAME cli.generate.seed_${_seed} EXIT 2 ONE_LINE_STDERR
    STDERR "--seed = ${_seed} is not allowed. allowed: a non-negative integer below 2\\^64"
    COMMAND ${_gen} --seed=${_seed})
endforeach()
genrepro_cli_test(NAME cli.generate.sampler_order_unknown EXIT 2 ONE_LINE_STDERR
  STDERR "--sampler-order: .*unknown stage 'min_p'. allowed: .*temperature, top_k, top_p"
  COMMAND ${_gen} --sampler-order temperature,min_p)
genrepro_cli_test(NAME cli.generate.sampler_order_repeated EXIT 2 ONE_LINE_STDERR
  STDERR "--sampler-order: .*'top_k' appears twice" COMMAND ${_gen} --sampler-order top_k,top_p,top_k)
genrepro_cli_test(NAME cli.generate.sampler_order_leaves_out_a_set_stage EXIT 2 ONE_LINE_STDERR
  STDERR "--sampler-order = top_k,temperature is not allowed. allowed: an order that contains top_p, since top_p is 0.9"
  COMMAND ${_gen} --top-p 0.9 --sampler-order top_k,temperature)
genrepro_cli_test(NAME cli.generate.top_p_rule_unknown EXIT 2 ONE_LINE_STDERR
  STDERR "--top-p-rule = nucleus is not allowed. allowed: one of \\{article, hf\\}" COMMAND ${_gen} --top-p-rule nucleus)
genrepro_cli_test(NAME cli.generate.rng_unknown EXIT 2 ONE_LINE_STDERR
  STDERR "--rng = mt is not allowed. allowed: one of \\{torch, portable\\}" COMMAND ${_gen} --rng mt)
genrepro_cli_test(NAME cli.generate.greedy_with_sampling_flag EXIT 2 ONE_LINE_STDERR
  STDERR "--greedy cannot be combined with" COMMAND ${_gen} --greedy --temperature 0.8)
genrepro_cli_test(NAME cli.generate.max_new_tokens_negative EXIT 2 ONE_LINE_STDERR
  STDERR "--max-new-tokens = -1 is not allowed" COMMAND generate --prompt x --max-new-tokens -1)
genrepro_cli_test(NAME cli.generate.threads_zero EXIT 2 ONE_LINE_STDERR
  STDERR "--threads 0: must be a whole number >= 1" COMMAND ${_gen} --threads 0)

# With the tiny fixture: ids, text, the greedy / sampled mode rule, reproducibility of a seed.
genrepro_cli_test(NAME cli.generate.greedy_ids NEEDS_MODEL EXIT 0
  STDOUT "^\\[[0-9]+(,[0-9]+){4}\\]\n$" STDERR "model: .*stop: max_new_tokens after 5 new tokens \\(greedy, kv cache\\)"
  COMMAND ${_gen} --model ${GENREPRO_TINY_MODEL} --ids)
genrepro_cli_test(NAME cli.generate.text NEEDS_MODEL EXIT 0
  STDOUT "^the river bank was" COMMAND ${_gen} --model ${GENREPRO_TINY_MODEL} --no-cache)
genrepro_cli_test(NAME cli.generate.temperature_zero_is_greedy NEEDS_MODEL EXIT 0
  STDERR "\\(greedy, recompute\\)" COMMAND ${_gen} --model ${GENREPRO_TINY_MODEL} --no-cache --temperature 0 --ids)
genrepro_cli_test(NAME cli.generate.seed_means_sample NEEDS_MODEL EXIT 0
  STDERR "\\(sample, kv cache\\)" COMMAND ${_gen} --model ${GENREPRO_TINY_MODEL} --seed 42 --ids)
genrepro_cli_test(NAME cli.generate.context_full NEEDS_MODEL EXIT 0
  STDERR "stop: context_full after 124 new tokens"
  COMMAND generate --prompt "the river bank was" --model ${GENREPRO_TINY_MODEL} --max-new-tokens 500 --ids
          --top-k 3 --seed 1)
# The article's seed 42 at T = 1, p = 0.9 (tests/reference/article_sampling.py checks the same
# tokens against the article's Python loop); here the portable rng must print the same ids as torch.
add_test(NAME cli.generate.portable_equals_torch
  COMMAND ${CMAKE_COMMAND} -DBIN=$<TARGET_FILE:genrepro> -DMODEL=${GENREPRO_TINY_MODEL}
          -P ${CMAKE_CURRENT_LIST_DIR}/scripts/generate_rng_check.cmake)
set_tests_properties(cli.generate.portable_equals_torch PROPERTIES LABELS cli FIXTURES_REQUIRED tiny_model TIMEOUT 300)
