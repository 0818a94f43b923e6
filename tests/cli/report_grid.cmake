# The report of an experiment grid (tests/cli/scripts/report_grid.py): one 300-run grid
# (2 prompts x 3 temperatures x 50 seeds, 3 new tokens) made once on the tiny fixture and read by
# two entries: its summaries' numbers in the CSV files, in `report --json` and on the charts
# against a Python recomputation from evidence.json (figures), and its page in headless Chromium (screenshot:
# skipped with exit 77 without Chromium or python3-pil, except with CI=true). The same entries make
# and render experiments/grids/framework_grid.json's nine cells with 5 seeds of 3 tokens: every chart
# label rendered whole, inside its chart, naming its cell's framework and controls.
set(_report_grid_work ${CMAKE_BINARY_DIR}/report-grid)
set(_report_grid ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/cli/scripts/report_grid.py)
set(_report_grid_env "GENREPRO_TOKENIZER_DIR=${GENREPRO_TOKENIZER_DIR};GENREPRO_CACHE_DIR=${CMAKE_BINARY_DIR}/cache;HF_HUB_CACHE=${CMAKE_BINARY_DIR}/no-hf-cache")
add_test(NAME cli.report.grid_evidence
  COMMAND ${_report_grid} make --binary $<TARGET_FILE:genrepro> --work ${_report_grid_work} --model ${GENREPRO_TINY_MODEL}
          --framework-grid ${CMAKE_SOURCE_DIR}/experiments/grids/framework_grid.json)
set_tests_properties(cli.report.grid_evidence PROPERTIES LABELS "cli" TIMEOUT 300 ENVIRONMENT "${_report_grid_env}"
  FIXTURES_REQUIRED tiny_model FIXTURES_SETUP report_grid)  # not PROCESSORS 2: see run.cmake's shards
add_test(NAME cli.report.grid_figures
  COMMAND ${_report_grid} figures --binary $<TARGET_FILE:genrepro> --work ${_report_grid_work})
set_tests_properties(cli.report.grid_figures PROPERTIES LABELS "cli" TIMEOUT 300 ENVIRONMENT "${_report_grid_env}"
  FIXTURES_REQUIRED report_grid)
add_test(NAME cli.report.grid_screenshot
  COMMAND ${_report_grid} screenshot --binary $<TARGET_FILE:genrepro> --work ${_report_grid_work}
          --article ${CMAKE_SOURCE_DIR}/golden/article/article-facts.json)
set_tests_properties(cli.report.grid_screenshot PROPERTIES LABELS "cli" TIMEOUT 300 SKIP_RETURN_CODE 77 ENVIRONMENT "${_report_grid_env}"
  FIXTURES_REQUIRED report_grid)
