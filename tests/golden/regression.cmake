# The fixture regression gate (docs/diff.md): run experiments/article on the tiny fixture model and
# diff the evidence against the blessed golden/fixture. CI fails when a change alters any fixture
# golden run. golden/fixture changes only through `genrepro bless` (see golden/README.md); an
# empty or missing golden/fixture fails the gate rather than silently dropping it. The golden is
# strict evidence (the default numerics), so on every machine the runs must also be bit-identical:
# diff's summary then has no "with logits not bit-identical" clause before the tolerance.
file(GLOB golden_fixture_files CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/golden/fixture/*.json)
file(GLOB article_experiments CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/experiments/article/*.json)
set(fixture_evidence ${CMAKE_BINARY_DIR}/golden/fixture-evidence.json)
genrepro_cli_test(NAME golden.fixture.run EXIT 0 LABELS golden NEEDS_MODEL
  COMMAND run ${article_experiments} --model ${GENREPRO_TINY_MODEL} --out ${fixture_evidence})
set_tests_properties(golden.fixture.run PROPERTIES FIXTURES_SETUP golden_fixture_evidence)
genrepro_cli_test(NAME golden.fixture.diff EXIT 0 LABELS golden
  STDOUT "runs compared, [0-9]+ agree, 0 differ. 0 missing, 0 extra. prob tolerance"
  FIXTURES golden_fixture_evidence
  COMMAND diff ${CMAKE_SOURCE_DIR}/golden/fixture ${fixture_evidence})
if(NOT golden_fixture_files)
  add_test(NAME golden.fixture.present
    COMMAND ${CMAKE_COMMAND} -E echo "golden/fixture holds no blessed evidence: the regression gate has nothing to compare")
  set_tests_properties(golden.fixture.present PROPERTIES WILL_FAIL TRUE LABELS golden)
endif()
