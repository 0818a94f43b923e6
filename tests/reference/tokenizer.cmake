# The tokenizer's reference fixtures (tests/reference/tokenizer/): the committed corpora are what
# make_reference.mjs writes (gpt-tokenizer's ids), and OpenAI's own encoder.py algorithm, run with
# Python's `regex` module, gives every string the same ids (skipped when `regex` is missing).
set(tokenizer_reference ${CMAKE_SOURCE_DIR}/tests/reference/tokenizer)
find_program(GENREPRO_NODE node)

if(GENREPRO_NODE)
  add_test(NAME reference.tokenizer.fixtures_reproducible
    COMMAND ${CMAKE_COMMAND} -DNODE=${GENREPRO_NODE} -DSCRIPT=${tokenizer_reference}/make_reference.mjs
            -DOUT=${CMAKE_BINARY_DIR}/tokenizer_reference -DEXPECTED=${tokenizer_reference}
            -P ${tokenizer_reference}/compare_regenerated.cmake)
  set_tests_properties(reference.tokenizer.fixtures_reproducible PROPERTIES LABELS reference TIMEOUT 120)
endif()

add_test(NAME reference.tokenizer.openai_encoder
  COMMAND ${GENREPRO_PYTHON} ${tokenizer_reference}/check_openai_encoder.py ${GENREPRO_TOKENIZER_DIR})
set_tests_properties(reference.tokenizer.openai_encoder PROPERTIES LABELS reference SKIP_RETURN_CODE 77 TIMEOUT 120)
