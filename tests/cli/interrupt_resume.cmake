# genrepro run stopped part-way and resumed, as only a process shows it (issue 11): SIGINT, SIGTERM
# and SIGKILL during a 100-run grid, the old evidence intact each time and --resume equal to an
# uninterrupted run; checkpoints from other experiments, models or builds refused; a second writer
# and an unwritable --out refused before any work; a full disk (a small tmpfs) survived.
add_test(NAME cli.run.interrupt_and_resume
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/cli/scripts/interrupt_resume.py
          --binary $<TARGET_FILE:genrepro> --model ${GENREPRO_TINY_MODEL})
set_tests_properties(cli.run.interrupt_and_resume PROPERTIES
  LABELS "cli" TIMEOUT 900 FIXTURES_REQUIRED tiny_model)
