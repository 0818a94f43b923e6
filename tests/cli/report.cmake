# genrepro report: bad input is one line and exit 2; hand-made evidence renders into a directory.
set(report_data ${CMAKE_SOURCE_DIR}/tests/cli/data)

genrepro_cli_test(NAME cli.report.no_evidence EXIT 2 STDERR "evidence is required" ONE_LINE_STDERR
  COMMAND report)
genrepro_cli_test(NAME cli.report.missing_file EXIT 2 ONE_LINE_STDERR
  STDERR "genrepro: error: .*no-such-evidence\\.json: no such file"
  COMMAND report ${report_data}/no-such-evidence.json --out ${CMAKE_BINARY_DIR}/cli-report-missing)
genrepro_cli_test(NAME cli.report.not_json EXIT 2 ONE_LINE_STDERR
  STDERR "genrepro: error: .*make_report_evidence\\.py: invalid JSON: .*line 1, column 1"
  COMMAND report ${report_data}/make_report_evidence.py --out ${CMAKE_BINARY_DIR}/cli-report-not-json)
genrepro_cli_test(NAME cli.report.not_evidence EXIT 2 ONE_LINE_STDERR
  STDERR "genrepro: error: .*not-evidence\\.json: schema: missing"
  COMMAND report ${report_data}/not-evidence.json --out ${CMAKE_BINARY_DIR}/cli-report-not-evidence)
# One good file and one bad: nothing half-done is reported as success.
genrepro_cli_test(NAME cli.report.one_bad_of_two EXIT 2 ONE_LINE_STDERR STDERR "not-evidence\\.json"
  COMMAND report ${report_data}/report-evidence.json ${report_data}/not-evidence.json
          --out ${CMAKE_BINARY_DIR}/cli-report-one-bad)
genrepro_cli_test(NAME cli.report.out_is_a_file EXIT 2 ONE_LINE_STDERR STDERR "report-evidence\\.json/report\\.md"
  COMMAND report ${report_data}/report-evidence.json --out ${report_data}/report-evidence.json)
genrepro_cli_test(NAME cli.report.renders_hand_made_evidence EXIT 0
  STDOUT "cli-report/report\\.md\n.*cli-report/report\\.html\n.*cli-report/first-prediction\\.svg\n.*cli-report/nucleus-sizes\\.svg\n.*cli-report/kept-per-step\\.svg\n.*cli-report/chosen-token-probability\\.svg\n$"
  COMMAND report ${report_data}/report-evidence.json --out ${CMAKE_BINARY_DIR}/cli-report)
# The default directory is reports/out/ under the current directory.
file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/cli-report-default)
genrepro_cli_test(NAME cli.report.default_out EXIT 0 STDOUT "^reports/out/report\\.md\n"
  WORKING_DIRECTORY ${CMAKE_BINARY_DIR}/cli-report-default
  COMMAND report ${report_data}/report-evidence.json)
