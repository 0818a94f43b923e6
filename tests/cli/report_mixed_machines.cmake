# report and check-article on shards merged from two machines name which runs ran where:
# the article shards of tests/cli/run.cmake, the second given an AMD runner's environment.
add_test(NAME report.mixed_machines
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/cli/report_mixed_machines.py --binary $<TARGET_FILE:genrepro>
          --shards ${CMAKE_BINARY_DIR}/run-article/shard1.json ${CMAKE_BINARY_DIR}/run-article/shard2.json
          --facts ${CMAKE_SOURCE_DIR}/golden/article/article-facts.json --scratch ${CMAKE_BINARY_DIR}/report-mixed)
set_tests_properties(report.mixed_machines PROPERTIES LABELS cli FIXTURES_REQUIRED article_shards)
