# The draw records (steps[].draw) held to torch's own generator (tests/reference/draw_margin.py):
# every sampled article run is replayed with its recorded tokens, the Python forward pass and the
# article's chain, torch.Generator().manual_seed(seed), and at each step a clone of the generator's
# state draws q = exponential_() for the race; the recorded runner-up must be the second-best ratio
# and the margin ln(r1 / r2) within 1e-5. Both the evidence this build writes (golden.fixture.run)
# and the blessed golden/fixture, with the number of runs and draws they must compare.
# One process for both: a golden and the run that matches it replay the same, so the forward passes
# are made once per distinct run and each file's 11 runs and 486 draws checked against them.
add_test(NAME reference.draw_margin
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/reference/draw_margin.py --model ${GENREPRO_TINY_MODEL}
          --evidence ${CMAKE_BINARY_DIR}/golden/fixture-evidence.json ${CMAKE_SOURCE_DIR}/golden/fixture
          --expect-runs 22 --expect-draws 972)
set_tests_properties(reference.draw_margin PROPERTIES
  LABELS "reference;golden" FIXTURES_REQUIRED "tiny_model;golden_fixture_evidence" TIMEOUT 300)
