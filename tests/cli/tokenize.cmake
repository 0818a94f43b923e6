# genrepro tokenize: ids, JSON-lines in and out, --decode, and one-line errors (exit 2) for bad
# tokenizer files and bad input lines. The ids are GPT-2's (checked against the reference
# encoder in the unit tests); here the binary's wiring and output format are under test.
set(tokenize_data ${CMAKE_SOURCE_DIR}/tests/cli/data/tokenize)

genrepro_cli_test(NAME cli.tokenize.ids EXIT 0
  STDOUT "^\\[1169,7850,3331,373\\]\n$"
  COMMAND tokenize --model ${GENREPRO_TOKENIZER_DIR} "the river bank was")
genrepro_cli_test(NAME cli.tokenize.endoftext EXIT 0
  STDOUT "^\\[64,50256,65\\]\n$"
  COMMAND tokenize --model ${GENREPRO_TOKENIZER_DIR} "a<|endoftext|>b")
genrepro_cli_test(NAME cli.tokenize.input EXIT 0
  STDOUT "^\\[1169,7850,3331,373\\]\n\\[64,50256,65\\]\n\\[33768,98,17312,105,45739,252\\]\n$"
  COMMAND tokenize --model ${GENREPRO_TOKENIZER_DIR} --input ${tokenize_data}/prompts.jsonl)
genrepro_cli_test(NAME cli.tokenize.decode EXIT 0
  STDOUT "^the river bank was\n$"
  COMMAND tokenize --model ${GENREPRO_TOKENIZER_DIR} --decode "[1169, 7850, 3331, 373]")
# Line 3 ends inside "本" (two of its three bytes): JSON output shows U+FFFD there.
genrepro_cli_test(NAME cli.tokenize.decode_input EXIT 0
  STDOUT "^\\{\"text\":\"the river bank was\"\\}\n\\{\"text\":\"日\"\\}\n\\{\"text\":\"�\"\\}\n$"
  COMMAND tokenize --model ${GENREPRO_TOKENIZER_DIR} --decode --input ${tokenize_data}/ids.jsonl)
genrepro_cli_test(NAME cli.tokenize.help EXIT 0
  STDOUT "--decode --input"
  COMMAND tokenize --help)

genrepro_cli_test(NAME cli.tokenize.bad_input_line EXIT 2 ONE_LINE_STDERR
  STDERR "^genrepro: error: --input '[^']*bad_prompts.jsonl' line 2: .* has no \"text\""
  COMMAND tokenize --model ${GENREPRO_TOKENIZER_DIR} --input ${tokenize_data}/bad_prompts.jsonl)
genrepro_cli_test(NAME cli.tokenize.bad_decode_ids EXIT 2 ONE_LINE_STDERR
  STDERR "^genrepro: error: token id 50257 is not in the vocabulary"
  COMMAND tokenize --model ${GENREPRO_TOKENIZER_DIR} --decode "[50257]")
genrepro_cli_test(NAME cli.tokenize.no_text EXIT 2 ONE_LINE_STDERR
  STDERR "pass TEXT or --input FILE"
  COMMAND tokenize --model ${GENREPRO_TOKENIZER_DIR})
genrepro_cli_test(NAME cli.tokenize.missing_model_dir EXIT 2 ONE_LINE_STDERR
  STDERR "^genrepro: error: tokenizer directory '[^']*/no-such-dir' does not exist"
  COMMAND tokenize --model ${tokenize_data}/no-such-dir "x")
genrepro_cli_test(NAME cli.tokenize.missing_vocab EXIT 2 ONE_LINE_STDERR
  STDERR "^genrepro: error: tokenizer directory '[^']*/tests/cli/data/tokenize' has no vocab.json or encoder.json"
  COMMAND tokenize --model ${tokenize_data} "x")
genrepro_cli_test(NAME cli.tokenize.malformed_vocab EXIT 2 ONE_LINE_STDERR
  STDERR "^genrepro: error: vocab file '[^']*/bad_vocab/vocab.json' is not valid JSON"
  COMMAND tokenize --model ${tokenize_data}/bad_vocab "x")
genrepro_cli_test(NAME cli.tokenize.malformed_merges EXIT 2 ONE_LINE_STDERR
  STDERR "^genrepro: error: merges file '[^']*/bad_merges/merges.txt': line 2 \"Ġt\" is not two tokens"
  COMMAND tokenize --model ${tokenize_data}/bad_merges "x")
