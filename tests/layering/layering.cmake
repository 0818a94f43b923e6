# The layers (cmake/Layers.cmake): the real tree passes, and the check refuses each kind of
# violation. The build runs the same check (target genrepro_layering), so this is its proof.
add_test(NAME layering.tree_passes
  COMMAND ${CMAKE_COMMAND} -DTABLE=${GENREPRO_LAYER_TABLE_FILE} -DROOT=${CMAKE_SOURCE_DIR}/harness
          -P ${CMAKE_SOURCE_DIR}/cmake/CheckLayers.cmake)
add_test(NAME layering.refuses_violations
  COMMAND ${CMAKE_COMMAND} -DTABLE=${GENREPRO_LAYER_TABLE_FILE} -DCHECK=${CMAKE_SOURCE_DIR}/cmake/CheckLayers.cmake
          -DWORK=${CMAKE_BINARY_DIR}/layering-cases -P ${CMAKE_SOURCE_DIR}/tests/layering/scripts/refuses_violations.cmake)
set_tests_properties(layering.tree_passes layering.refuses_violations PROPERTIES LABELS unit)

# The genrepro binary itself links no libtorch, and the model-free verbs never load it.
add_test(NAME layering.front_loads_no_libtorch
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/layering/scripts/no_libtorch.py
          --binary $<TARGET_FILE:genrepro> --source-dir ${CMAKE_SOURCE_DIR} --work ${CMAKE_BINARY_DIR}/no-libtorch)
set_tests_properties(layering.front_loads_no_libtorch PROPERTIES LABELS "unit;cli" TIMEOUT 60
  ENVIRONMENT "GENREPRO_TOKENIZER_DIR=${GENREPRO_TOKENIZER_DIR}")
