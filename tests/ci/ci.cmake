# CI formats and recipes: diff's JUnit XML and GitHub annotations. The XML is validated against
# tests/data/junit.xsd, the project's own JUnit schema: no Debian 12 package ships a published one
# (tests/ci/scripts/diff_ci_formats.py lists the packages looked in).
add_test(NAME ci.diff_junit_and_annotations
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/ci/scripts/diff_ci_formats.py --binary $<TARGET_FILE:genrepro>
          --golden ${CMAKE_SOURCE_DIR}/golden/fixture --xsd ${CMAKE_SOURCE_DIR}/tests/data/junit.xsd
          --work ${CMAKE_BINARY_DIR}/ci-diff)
set_tests_properties(ci.diff_junit_and_annotations PROPERTIES LABELS cli TIMEOUT 60)

# The Slurm recipe's array tasks, run one after another here, then its merge job (no Slurm needed).
add_test(NAME ci.slurm_recipe_equals_unsharded
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/ci/scripts/slurm_recipe.py --binary $<TARGET_FILE:genrepro>
          --model ${GENREPRO_TINY_MODEL} --source-dir ${CMAKE_SOURCE_DIR} --work ${CMAKE_BINARY_DIR}/ci-slurm)
set_tests_properties(ci.slurm_recipe_equals_unsharded PROPERTIES LABELS cli TIMEOUT 300 FIXTURES_REQUIRED tiny_model
  ENVIRONMENT "GENREPRO_TOKENIZER_DIR=${GENREPRO_TOKENIZER_DIR};GENREPRO_CACHE_DIR=${CMAKE_BINARY_DIR}/cache")

# Every genrepro command line in the GitHub and GitLab recipes parses with the real CLI.
add_test(NAME ci.recipe_command_lines_parse
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/ci/scripts/recipe_commands.py --binary $<TARGET_FILE:genrepro>
          --source-dir ${CMAKE_SOURCE_DIR})
set_tests_properties(ci.recipe_command_lines_parse PROPERTIES LABELS cli TIMEOUT 60)

# genrepro plan lists exactly the runs genrepro run writes (all, and one shard).
add_test(NAME ci.plan_matches_run
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/ci/scripts/plan_matches_run.py --binary $<TARGET_FILE:genrepro>
          --model ${GENREPRO_TINY_MODEL} --source-dir ${CMAKE_SOURCE_DIR} --work ${CMAKE_BINARY_DIR}/ci-plan)
set_tests_properties(ci.plan_matches_run PROPERTIES LABELS cli TIMEOUT 300 FIXTURES_REQUIRED tiny_model
  ENVIRONMENT "GENREPRO_TOKENIZER_DIR=${GENREPRO_TOKENIZER_DIR};GENREPRO_CACHE_DIR=${CMAKE_BINARY_DIR}/cache")
