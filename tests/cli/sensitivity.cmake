# genrepro sensitivity: three cells of a small experiment, each a child genrepro run, the matrix's
# classes checked against the cells' evidence by an independent comparison (tests/cli/sensitivity.py).
add_test(NAME cli.sensitivity.matrix
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/cli/sensitivity.py
          --binary $<TARGET_FILE:genrepro> --model ${GENREPRO_TINY_MODEL} --scratch ${CMAKE_BINARY_DIR}/sensitivity-matrix
          --schema ${CMAKE_SOURCE_DIR}/docs/schema/sensitivity.schema.json)
set_tests_properties(cli.sensitivity.matrix PROPERTIES LABELS cli FIXTURES_REQUIRED tiny_model SKIP_RETURN_CODE 77 TIMEOUT 300)
