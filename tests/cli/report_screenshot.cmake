# A headless Chromium screenshot of `genrepro report --golden` on golden/fixture's runs with one
# token changed, checked on its pixels (tests/cli/scripts/report_screenshot.py): the rendered page
# names the run in its verdict section; the whole-page screenshot is not blank, shows the verdict
# on the first screen, is not cut (every section heading and the last element have ink), and every
# chart shows both axes along their whole length. In the same test and the same Chromium (one start,
# driven over the DevTools protocol, for all three page loads), `genrepro sensitivity --compare`'s sensitivity.html of three cells made from the same runs
# (identical, one changed token, a dropped run, nudged entropies): a heatmap square for every run
# in every cell, the four class colours, not blank, not cut, both charts with their axes.
# Then the parity page of two engines (docs/engines.md): golden/fixture's greedy run against the
# same run recorded as llama.cpp's engine would record it, its 6th token changed: the section, the
# divergence in its table, the survival curve with both axes, not blank, not cut.
# Negative controls show each check can fail.
# CI installs Chromium (scripts/setup.sh --tests with CI=true) and there the test fails without
# it; elsewhere it is skipped (exit 77, reason printed) when Chromium or python3-pil is missing.
add_test(NAME cli.report.chromium_screenshot
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/cli/scripts/report_screenshot.py
          --binary $<TARGET_FILE:genrepro> --golden ${CMAKE_SOURCE_DIR}/golden/fixture)
set_tests_properties(cli.report.chromium_screenshot PROPERTIES LABELS "cli" TIMEOUT 300 SKIP_RETURN_CODE 77
  COST 4)  # started early (cmake/GenreproTesting.cmake, COST)
