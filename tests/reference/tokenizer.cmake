# The tokenizer's reference fixtures (tests/reference/tokenizer/): the committed corpus.jsonl and
# unseen.jsonl are the fixture (make_reference.mjs documents how they were made). gpt-tokenizer, run
# by whatever node is installed, must give their strings the committed ids (check_reference_ids.mjs
# says which strings, if any, it leaves out because their ids depend on node's Unicode version),
# and so must OpenAI's own encoder.py algorithm, run with Python's `regex` module (skipped when
# `regex` is missing).
set(tokenizer_reference ${CMAKE_SOURCE_DIR}/tests/reference/tokenizer)
find_program(GENREPRO_NODE node)

if(GENREPRO_NODE)
  add_test(NAME reference.tokenizer.reference_ids
    COMMAND ${GENREPRO_NODE} ${tokenizer_reference}/check_reference_ids.mjs ${GENREPRO_DEPS_DIR}/node_modules/gpt-tokenizer)
else()
  # Without node the entry is still there, reported as skipped with the reason (never absent).
  add_test(NAME reference.tokenizer.reference_ids
    COMMAND ${CMAKE_COMMAND} -E env sh -c "echo 'skipped: no node found at configure time (scripts/setup.sh installs it); gpt-tokenizer cannot run'; exit 77")
endif()
set_tests_properties(reference.tokenizer.reference_ids PROPERTIES LABELS reference TIMEOUT 120 SKIP_RETURN_CODE 77)

add_test(NAME reference.tokenizer.openai_encoder
  COMMAND ${GENREPRO_PYTHON} ${tokenizer_reference}/check_openai_encoder.py ${GENREPRO_TOKENIZER_DIR})
set_tests_properties(reference.tokenizer.openai_encoder PROPERTIES LABELS reference SKIP_RETURN_CODE 77 TIMEOUT 120)
