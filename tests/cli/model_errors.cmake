# Broken model directories: tests/cli/scripts/make_broken_models.py copies the tiny
# fixture once per case and breaks exactly one thing in the copy. Every case is checked in-process
# (tests/cli_inprocess/model_errors_test.cpp: one line, exit 2, via --model, $GENREPRO_MODEL and
# run); tests/cli/process.cmake runs a few of them as real processes.
add_test(NAME fixture.make_broken_models
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/scripts/make_broken_models.py
          ${GENREPRO_TINY_MODEL} ${GENREPRO_BROKEN_MODELS})
set_tests_properties(fixture.make_broken_models PROPERTIES LABELS cli TIMEOUT 120
  FIXTURES_SETUP broken_models FIXTURES_REQUIRED tiny_model)
