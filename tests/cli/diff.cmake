# genrepro diff and bless through the binary: exact exit codes (0 agree, 1 differ, 2 bad input)
# on the hand-made evidence in tests/cli/data/diff (test data made by make_data.py, not goldens).
set(diff_data ${CMAKE_SOURCE_DIR}/tests/cli/data/diff)

genrepro_cli_test(NAME diff.agree EXIT 0
  STDOUT "environment.libtorch_version: \"1.13.0\" -> \"2.8.0\".*diff: 2 runs compared, 2 agree, 0 differ; 0 missing, 0 extra"
  COMMAND diff ${diff_data}/golden.json ${diff_data}/same.json)
genrepro_cli_test(NAME diff.golden_directory EXIT 0
  STDOUT "diff: 2 runs compared, 2 agree, 0 differ"
  COMMAND diff ${diff_data}/golden_dir ${diff_data}/same.json)
genrepro_cli_test(NAME diff.one_token EXIT 1
  STDOUT "run greedy/p0/greedy-0a1b2c3d: sampler/RNG change at step 2\n.*golden token: 30 \" t30\"  p\\(golden\\) 0.7  p\\(new\\) 0.7\n  new token:    31 \" t31\"  p\\(golden\\) 0.2  p\\(new\\) 0.2\n  margin \\(best - second\\): golden 0.5, new 0.5.*diff: 2 runs compared, 1 agree, 1 differ \\(1 sampler/RNG change\\)"
  COMMAND diff ${diff_data}/golden.json ${diff_data}/one_token.json)
genrepro_cli_test(NAME diff.near_tie EXIT 1
  STDOUT "near-tie at step 1.*\\(1 near-tie\\)"
  COMMAND diff ${diff_data}/near_tie_golden.json ${diff_data}/near_tie_new.json)
genrepro_cli_test(NAME diff.near_tie_tighter_tolerance EXIT 1
  STDOUT "regression at step 1.*prob tolerance 1e-06"
  COMMAND diff ${diff_data}/near_tie_golden.json ${diff_data}/near_tie_new.json --prob-tolerance 1e-6)
genrepro_cli_test(NAME diff.json EXIT 1
  STDOUT "\"schema\": \"genrepro.diff/1\".*\"verdict\": \"sampler_change\""
  COMMAND diff ${diff_data}/golden.json ${diff_data}/one_token.json --json)
genrepro_cli_test(NAME diff.missing_runs EXIT 1
  STDOUT "missing run sampling/p0/sample-t1-s42-4e5f6a7b: in golden, not in the new evidence.*1 missing, 0 extra"
  COMMAND diff ${diff_data}/golden.json ${diff_data}/golden_dir/greedy.json)

genrepro_cli_test(NAME diff.bad.missing_file EXIT 2 ONE_LINE_STDERR STDERR "nope.json: no such file"
  COMMAND diff ${diff_data}/golden.json ${diff_data}/nope.json)
genrepro_cli_test(NAME diff.bad.not_json EXIT 2 ONE_LINE_STDERR STDERR "not_json.json: invalid JSON"
  COMMAND diff ${diff_data}/golden.json ${diff_data}/not_json.json)
genrepro_cli_test(NAME diff.bad.not_evidence EXIT 2 ONE_LINE_STDERR STDERR "not genrepro evidence"
  COMMAND diff ${diff_data}/not_evidence.json ${diff_data}/golden.json)
genrepro_cli_test(NAME diff.bad.schema_version EXIT 2 ONE_LINE_STDERR
  STDERR "schema string \"genrepro.evidence/0\", this build reads \"genrepro.evidence/1\""
  COMMAND diff ${diff_data}/golden.json ${diff_data}/wrong_schema.json)
genrepro_cli_test(NAME diff.bad.field EXIT 2 ONE_LINE_STDERR
  STDERR "bad_field.json: runs\\[0\\]\\.steps\\[1\\]\\.prob: expected a number .*found string \"0.5\""
  COMMAND diff ${diff_data}/golden.json ${diff_data}/bad_field.json)
genrepro_cli_test(NAME diff.bad.overlapping_golden EXIT 2 ONE_LINE_STDERR STDERR "is also in .*golden files must not overlap"
  COMMAND diff ${diff_data}/overlap_dir ${diff_data}/golden.json)
genrepro_cli_test(NAME diff.bad.tolerance EXIT 2 ONE_LINE_STDERR STDERR "--prob-tolerance -1: must be a finite number >= 0"
  COMMAND diff ${diff_data}/golden.json ${diff_data}/same.json --prob-tolerance -1)

# bless: without --yes and without a terminal (the test runs with stdin from /dev/null) it refuses
# with exit 2 and writes nothing.
set(bless_dir ${CMAKE_BINARY_DIR}/test-bless)
add_test(NAME bless.clean COMMAND ${CMAKE_COMMAND} -E rm -rf ${bless_dir})
set_tests_properties(bless.clean PROPERTIES FIXTURES_SETUP bless_clean LABELS cli)
genrepro_cli_test(NAME bless.needs_yes_without_terminal EXIT 2 ONE_LINE_STDERR
  STDOUT "bless: .*greedy.json: new, 1 runs"
  STDERR "not asking without a terminal .*re-run with --yes"
  FIXTURES bless_clean COMMAND bless ${diff_data}/golden.json --into ${bless_dir}/refused)
set_tests_properties(bless.needs_yes_without_terminal PROPERTIES FIXTURES_SETUP bless_refused)
genrepro_cli_test(NAME bless.refused_wrote_nothing EXIT 2 ONE_LINE_STDERR STDERR "refused: no such file"
  FIXTURES bless_refused COMMAND diff ${bless_dir}/refused ${diff_data}/golden.json)

# bless --yes: one file per experiment, volatile fields stripped, no temporary file left, and
# the blessed directory then agrees with the evidence (and with the same runs reordered).
genrepro_cli_test(NAME bless.yes_writes EXIT 0
  STDOUT "bless: wrote 2 golden file\\(s\\) into"
  FIXTURES bless_clean COMMAND bless ${diff_data}/golden.json --into ${bless_dir}/blessed --yes)
set_tests_properties(bless.yes_writes PROPERTIES FIXTURES_SETUP blessed)
add_test(NAME bless.yes_files
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/cli/check_golden_dir.py ${bless_dir}/blessed greedy.json sampling.json)
set_tests_properties(bless.yes_files PROPERTIES FIXTURES_REQUIRED blessed LABELS cli)
genrepro_cli_test(NAME bless.then_diff_agrees EXIT 0 STDOUT "2 agree, 0 differ"
  FIXTURES blessed COMMAND diff ${bless_dir}/blessed ${diff_data}/same.json)
