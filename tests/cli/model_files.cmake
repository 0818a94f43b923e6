# CLI tests for `genrepro fixture` (and the model files it writes).
set(_mf_data "${CMAKE_BINARY_DIR}/test-data/model_files")
# A directory that is not empty, made at configure time, for the refusal test.
file(WRITE "${_mf_data}/nonempty/keep.txt" "a file the fixture command must not overwrite\n")
file(WRITE "${_mf_data}/a-file" "not a directory\n")

# The pinned sha256 of the tiny fixture's model.safetensors (also in
# tests/unit/model/fixture_model_test.cpp and docs/fixture-models.md).
set(GENREPRO_TINY_WEIGHTS_SHA256 "5801a72533d818a5a1e7ec7078031493337e08f8338f5ccd6e3ae34bde38221f")

genrepro_cli_test(NAME fixture.help EXIT 0
  STDOUT "Options:.*--out.*--preset.*tiny.*gpt2-124m-shape.*--tokenizer-dir.*--force"
  COMMAND fixture --help)

genrepro_cli_test(NAME fixture.refuses_nonempty_dir EXIT 2 ONE_LINE_STDERR
  STDERR "genrepro: error: --out .*nonempty is not empty; pass --force"
  COMMAND fixture --out ${_mf_data}/nonempty)

genrepro_cli_test(NAME fixture.refuses_a_file EXIT 2 ONE_LINE_STDERR
  STDERR "--out .*a-file exists and is not a directory"
  COMMAND fixture --out ${_mf_data}/a-file --force)

genrepro_cli_test(NAME fixture.unknown_preset EXIT 2 ONE_LINE_STDERR
  STDERR "--preset gpt3 is not a fixture preset; allowed: tiny, gpt2-124m-shape"
  COMMAND fixture --out ${_mf_data}/never --preset gpt3)

genrepro_cli_test(NAME fixture.needs_out EXIT 2 ONE_LINE_STDERR
  STDERR "--out is required"
  COMMAND fixture)

genrepro_cli_test(NAME fixture.missing_tokenizer_files EXIT 2 ONE_LINE_STDERR
  STDERR "tokenizer directory .*/nonempty: missing vocab.json \\(or encoder.json\\); run scripts/setup.sh"
  COMMAND fixture --out ${_mf_data}/never --tokenizer-dir ${_mf_data}/nonempty)

# Writing with the default tokenizer dir ($GENREPRO_TOKENIZER_DIR, set by genrepro_cli_test),
# then again with --force into the now non-empty directory.
genrepro_cli_test(NAME fixture.writes_tiny EXIT 0
  STDOUT "wrote fixture model 'tiny' to .*/fresh"
  COMMAND fixture --out ${_mf_data}/fresh --force)
genrepro_cli_test(NAME fixture.force_overwrites EXIT 0
  STDOUT "wrote fixture model 'tiny'"
  COMMAND fixture --out ${_mf_data}/fresh --force)
set_tests_properties(fixture.force_overwrites PROPERTIES DEPENDS fixture.writes_tiny)

# The fixture every engine test loads has exactly the pinned bytes.
add_test(NAME fixture.tiny_sha256_pinned
  COMMAND ${CMAKE_COMMAND} -DFILE=${GENREPRO_TINY_MODEL}/model.safetensors
          -DEXPECTED=${GENREPRO_TINY_WEIGHTS_SHA256} -P ${CMAKE_CURRENT_LIST_DIR}/scripts/check_sha256.cmake)
set_tests_properties(fixture.tiny_sha256_pinned PROPERTIES LABELS "cli" FIXTURES_REQUIRED tiny_model)
