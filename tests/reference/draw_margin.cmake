# Issue 22's draw records (steps[].draw) held to torch's own generator (tests/reference/draw_margin.py):
# every sampled article run is replayed with its recorded tokens, the Python forward pass and the
# article's chain, torch.Generator().manual_seed(seed), and at each step a clone of the generator's
# state draws q = exponential_() for the race; the recorded runner-up must be the second-best ratio
# and the margin ln(r1 / r2) within 1e-5. Both the evidence this build writes (golden.fixture.run)
# and the blessed golden/fixture, each with the number of runs and draws it must compare.
set(draw_margin_expect_runs 11)
set(draw_margin_expect_draws 486)
add_test(NAME reference.draw_margin.run
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/reference/draw_margin.py --model ${GENREPRO_TINY_MODEL}
          --evidence ${CMAKE_BINARY_DIR}/golden/fixture-evidence.json
          --expect-runs ${draw_margin_expect_runs} --expect-draws ${draw_margin_expect_draws})
set_tests_properties(reference.draw_margin.run PROPERTIES
  LABELS "reference" FIXTURES_REQUIRED "tiny_model;golden_fixture_evidence" TIMEOUT 300)
add_test(NAME reference.draw_margin.golden
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/reference/draw_margin.py --model ${GENREPRO_TINY_MODEL}
          --evidence ${CMAKE_SOURCE_DIR}/golden/fixture
          --expect-runs ${draw_margin_expect_runs} --expect-draws ${draw_margin_expect_draws})
set_tests_properties(reference.draw_margin.golden PROPERTIES
  LABELS "reference;golden" FIXTURES_REQUIRED tiny_model TIMEOUT 300)
