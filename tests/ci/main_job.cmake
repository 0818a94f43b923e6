# scripts/main.sh: the report it leaves opens with the gate's verdict (report --golden on the
# fixture, --article on real weights), made before the gate so a failing gate still leaves it.
# A stub genrepro and no-op set-up/build: milliseconds, no model.
add_test(NAME ci.main_job_report_has_verdict
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/ci/scripts/main_job_report.py
          --source-dir ${CMAKE_SOURCE_DIR} --work ${CMAKE_BINARY_DIR}/ci-main-job)
set_tests_properties(ci.main_job_report_has_verdict PROPERTIES LABELS cli TIMEOUT 60)

# The CI recipes (ci/github, ci/gitlab) build only the genrepro target in every job.
add_test(NAME ci.recipes_build_only_genrepro
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/ci/scripts/recipe_build_targets.py --source-dir ${CMAKE_SOURCE_DIR})
set_tests_properties(ci.recipes_build_only_genrepro PROPERTIES LABELS cli TIMEOUT 60)
