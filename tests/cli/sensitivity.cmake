# genrepro sensitivity: four cells of a small experiment (the reference, a native kernel, tiled, Netlib's BLAS), each a child genrepro run, the matrix's
# classes checked against the cells' evidence by an independent comparison (tests/cli/sensitivity.py).
add_test(NAME cli.sensitivity.matrix
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/cli/sensitivity.py
          --binary $<TARGET_FILE:genrepro> --model ${GENREPRO_TINY_MODEL} --scratch ${CMAKE_BINARY_DIR}/sensitivity-matrix
          --schema ${CMAKE_SOURCE_DIR}/docs/schema/sensitivity.schema.json)
set_tests_properties(cli.sensitivity.matrix PROPERTIES LABELS cli FIXTURES_REQUIRED tiny_model SKIP_RETURN_CODE 77 TIMEOUT 300)

# A fixture that can diverge: scripts/near_tie_fixture.py plants near-ties in a copy of the tiny
# fixture; the Sandybridge kernel flips the planted one at new token 4, and diff --sensitivity
# labels it known-fragile (tests/cli/near_tie.py).
add_test(NAME cli.sensitivity.near_tie
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/cli/near_tie.py
          --binary $<TARGET_FILE:genrepro> --model ${GENREPRO_TINY_MODEL} --source-dir ${CMAKE_SOURCE_DIR}
          --scratch ${CMAKE_BINARY_DIR}/sensitivity-near-tie)
set_tests_properties(cli.sensitivity.near_tie PROPERTIES LABELS cli FIXTURES_REQUIRED tiny_model SKIP_RETURN_CODE 77 TIMEOUT 300)

# The near-tie preset (genrepro fixture --preset near-tie) against the documented recipe, byte for byte.
add_test(NAME fixture.near_tie_preset_equals_recipe
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/cli/near_tie_preset.py
          --binary $<TARGET_FILE:genrepro> --tiny ${GENREPRO_TINY_MODEL} --source-dir ${CMAKE_SOURCE_DIR}
          --scratch ${CMAKE_BINARY_DIR}/near-tie-preset)
set_tests_properties(fixture.near_tie_preset_equals_recipe PROPERTIES LABELS cli FIXTURES_REQUIRED tiny_model TIMEOUT 120)
