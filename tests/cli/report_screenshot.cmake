# A headless Chromium screenshot of `genrepro report --golden` on golden/fixture's runs with one
# token changed: the rendered page names the run in its verdict section, the screenshot is not
# blank and shows the verdict on the first screen (tests/cli/scripts/report_screenshot.py).
# Skipped (exit 77) when Chromium is not installed: GENREPRO_SETUP_CHROMIUM=1 scripts/setup.sh.
add_test(NAME cli.report.chromium_screenshot
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/cli/scripts/report_screenshot.py
          --binary $<TARGET_FILE:genrepro> --golden ${CMAKE_SOURCE_DIR}/golden/fixture)
set_tests_properties(cli.report.chromium_screenshot PROPERTIES LABELS "cli" TIMEOUT 300 SKIP_RETURN_CODE 77)
