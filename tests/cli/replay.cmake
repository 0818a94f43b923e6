# genrepro replay through the binary: evidence of tests/cli/data/replay/small.json made on the
# tiny fixture replays with exit 0 (same build, same paths); one step's prob changed -> exit 1
# naming the run; missing file, other weights, bad flags -> exit 2 with one line.
set(replay_dir ${CMAKE_BINARY_DIR}/test-replay)
set(replay_experiment ${CMAKE_SOURCE_DIR}/tests/cli/data/replay/small.json)

add_test(NAME replay.clean COMMAND ${CMAKE_COMMAND} -E rm -rf ${replay_dir})
set_tests_properties(replay.clean PROPERTIES FIXTURES_SETUP replay_clean LABELS cli)
genrepro_cli_test(NAME replay.make_evidence EXIT 0 NEEDS_MODEL FIXTURES replay_clean
  STDOUT "wrote .*evidence.json \\(5 runs\\)"
  COMMAND run ${replay_experiment} --model ${GENREPRO_TINY_MODEL} --out ${replay_dir}/evidence.json)
set_tests_properties(replay.make_evidence PROPERTIES FIXTURES_SETUP replay_evidence)
add_test(NAME replay.make_tampered
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/cli/scripts/replay_tamper.py ${replay_dir}/evidence.json ${replay_dir})
set_tests_properties(replay.make_tampered PROPERTIES LABELS cli FIXTURES_REQUIRED replay_evidence FIXTURES_SETUP replay_tampered)

genrepro_cli_test(NAME replay.agrees EXIT 0 NEEDS_MODEL FIXTURES replay_evidence
  STDOUT "replay_small/p0/greedy-[0-9a-f]+ +recompute +6 +0 +- +0 +0 +0 +same +ok\n.*replay_small/p0/sample-t2[-a-z0-9]* +recompute +5 top .* ok\nreplay: 5 runs, 5 within tolerance 0.0001, 0 beyond"
  STDERR "^model: "
  COMMAND replay ${replay_dir}/evidence.json --model ${GENREPRO_TINY_MODEL})
genrepro_cli_test(NAME replay.json EXIT 0 NEEDS_MODEL FIXTURES replay_evidence
  STDOUT "\"schema\": \"genrepro.replay/1\",\n  \"within\": true,.*\"forward\": \"cached\""
  COMMAND replay ${replay_dir}/evidence.json --model ${GENREPRO_TINY_MODEL} --json --forward cached --threads 2)
genrepro_cli_test(NAME replay.tampered_prob EXIT 1 NEEDS_MODEL FIXTURES replay_tampered
  STDOUT "replay_small/p0/greedy-[0-9a-f]+ +recompute +6 +0.105 +2 .* BEYOND\n.*replay: 5 runs, 4 within tolerance 0.0001, 1 beyond"
  COMMAND replay ${replay_dir}/tampered_prob.json --model ${GENREPRO_TINY_MODEL})
genrepro_cli_test(NAME replay.tampered_prob_looser_tolerance EXIT 0 NEEDS_MODEL FIXTURES replay_tampered
  STDOUT "5 within tolerance 0.2"
  COMMAND replay ${replay_dir}/tampered_prob.json --model ${GENREPRO_TINY_MODEL} --logprob-tolerance 0.2)
genrepro_cli_test(NAME replay.model_mismatch EXIT 2 ONE_LINE_STDERR NEEDS_MODEL FIXTURES replay_tampered
  STDERR "other_model.json was made with model.safetensors sha256 0+, the model replayed has [0-9a-f]+.*--allow-model-mismatch to replay anyway"
  COMMAND replay ${replay_dir}/other_model.json --model ${GENREPRO_TINY_MODEL})
genrepro_cli_test(NAME replay.model_mismatch_allowed EXIT 0 NEEDS_MODEL FIXTURES replay_tampered
  STDERR "genrepro: warning: .*other_model.json was made with model.safetensors sha256 0+"
  STDOUT "5 within tolerance"
  COMMAND replay ${replay_dir}/other_model.json --model ${GENREPRO_TINY_MODEL} --allow-model-mismatch)

genrepro_cli_test(NAME replay.bad.missing_file EXIT 2 ONE_LINE_STDERR STDERR "nope.json: no such file"
  COMMAND replay ${replay_dir}/nope.json)
genrepro_cli_test(NAME replay.bad.tolerance EXIT 2 ONE_LINE_STDERR NEEDS_MODEL FIXTURES replay_evidence
  STDERR "--logprob-tolerance -1: must be a finite number >= 0"
  COMMAND replay ${replay_dir}/evidence.json --model ${GENREPRO_TINY_MODEL} --logprob-tolerance -1)
genrepro_cli_test(NAME replay.bad.forward EXIT 2 ONE_LINE_STDERR NEEDS_MODEL FIXTURES replay_evidence
  STDERR "--forward kv: allowed: as-run"
  COMMAND replay ${replay_dir}/evidence.json --model ${GENREPRO_TINY_MODEL} --forward kv)
