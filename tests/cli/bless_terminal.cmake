# genrepro bless on a real pseudo-terminal: the review's prompts answered with skip, accept and
# reject, colours in the token diff, and the one-line refusal off a terminal (no hang). The logic
# is tested in-process (tests/cli_inprocess/bless_review_test.cpp); this is what only a tty shows.
# Skipped (exit 77, reason printed) where no pseudo-terminal can be opened; the script tries first.
add_test(NAME cli.bless.review_on_a_pty
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/cli/scripts/bless_terminal.py
          --binary $<TARGET_FILE:genrepro> --data ${CMAKE_SOURCE_DIR}/tests/cli/data/diff)
set_tests_properties(cli.bless.review_on_a_pty PROPERTIES LABELS "cli" TIMEOUT 120 SKIP_RETURN_CODE 77)
