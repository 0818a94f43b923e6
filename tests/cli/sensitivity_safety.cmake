# genrepro sensitivity as a process: an earlier matrix in --out survives a later one that fails,
# SIGTERM reaches the child genrepro run, and the engine verbs refuse OMP_NUM_THREADS=0 and a
# native OPENBLAS_CORETYPE this CPU cannot run before anything loads (tests/cli/sensitivity_safety.py).
add_test(NAME cli.sensitivity.safety
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/cli/sensitivity_safety.py
          --binary $<TARGET_FILE:genrepro> --model ${GENREPRO_TINY_MODEL} --scratch ${CMAKE_BINARY_DIR}/sensitivity-safety)
set_tests_properties(cli.sensitivity.safety PROPERTIES LABELS cli FIXTURES_REQUIRED tiny_model SKIP_RETURN_CODE 77 TIMEOUT 240)
