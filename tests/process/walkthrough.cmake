# docs/walkthrough.md as a test: every command of its console blocks runs on the tiny fixture (the
# page makes its own with `genrepro fixture`) and prints what the page shows; the conventions for
# elided and volatile output are in the script's header. Four engine processes (the page's runs).
add_test(NAME walkthrough.page
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/process/scripts/walkthrough.py
          --page ${CMAKE_SOURCE_DIR}/docs/walkthrough.md --bin-dir $<TARGET_FILE_DIR:genrepro>)
set_tests_properties(walkthrough.page PROPERTIES LABELS cli TIMEOUT 300 COST 5
  ENVIRONMENT "GENREPRO_TOKENIZER_DIR=${GENREPRO_TOKENIZER_DIR};GENREPRO_CACHE_DIR=${CMAKE_BINARY_DIR}/cache")
