# What only a whole process shows: a crash or std::terminate ends in one line on stderr and exit 3.
add_test(NAME process.crash_is_exit_3_with_one_line
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/process/scripts/crash_guard.py --binary $<TARGET_FILE:genrepro>)
set_tests_properties(process.crash_is_exit_3_with_one_line PROPERTIES LABELS "cli" TIMEOUT 60
  ENVIRONMENT "GENREPRO_TOKENIZER_DIR=${GENREPRO_TOKENIZER_DIR}")
