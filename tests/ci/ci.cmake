# CI formats and recipes: diff's JUnit XML and GitHub annotations (validated against a JUnit schema).
add_test(NAME ci.diff_junit_and_annotations
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/ci/scripts/diff_ci_formats.py --binary $<TARGET_FILE:genrepro>
          --golden ${CMAKE_SOURCE_DIR}/golden/fixture --xsd ${CMAKE_SOURCE_DIR}/tests/data/junit.xsd
          --work ${CMAKE_BINARY_DIR}/ci-diff)
set_tests_properties(ci.diff_junit_and_annotations PROPERTIES LABELS cli TIMEOUT 60)
