# The draw records (steps[].draw) held to torch's own generator (tests/reference/draw_margin.py):
# every sampled article run is replayed with its recorded tokens, the Python forward pass and the
# article's chain, torch.Generator().manual_seed(seed), and at each step a clone of the generator's
# state draws q = exponential_() for the race; the recorded runner-up must be the second-best ratio
# and the margin ln(r1 / r2) within 1e-5, with the number of runs and draws it must compare.
# The Python forward pass is libtorch's arithmetic, so the evidence is this build's run of the
# article experiments in reference numerics: strict evidence (the default, and golden/fixture)
# parts from it by float tolerance at margins of unlisted runner-ups and at kept-set boundaries,
# which this check would read as wrong draws. One thread: reference evidence does not depend on it,
# and a second one spends more CPU than it saves beside the other entries. Strict evidence's draws
# are held to torch's generator by reference.strict_draws below; their logits by strict.digest and
# strict_vs_torch.
file(GLOB draw_margin_experiments CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/experiments/article/*.json)
set(draw_margin_evidence ${CMAKE_BINARY_DIR}/reference/draw-margin-evidence.json)
genrepro_cli_test(NAME reference.draw_margin.run EXIT 0 LABELS reference NEEDS_MODEL
  COMMAND run ${draw_margin_experiments} --model ${GENREPRO_TINY_MODEL} --numerics reference --threads 1 --out ${draw_margin_evidence})
set_tests_properties(reference.draw_margin.run PROPERTIES FIXTURES_SETUP draw_margin_evidence)
add_test(NAME reference.draw_margin
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/reference/draw_margin.py --model ${GENREPRO_TINY_MODEL}
          --evidence ${draw_margin_evidence} --expect-runs 11 --expect-draws 486)
set_tests_properties(reference.draw_margin PROPERTIES
  LABELS "reference" FIXTURES_REQUIRED "tiny_model;draw_margin_evidence" TIMEOUT 300)

# Strict evidence's draws against torch's own generator, with no forward pass
# (tests/reference/strict_draws.py): the committed golden/fixture, strict since it was blessed in
# strict numerics. torch's Exp(1) draws depend on the seed and the step only, so every recorded
# pick must win torch's race against the listed candidates, and every margin whose runner-up is
# listed is recomputed bit for bit from the recorded probabilities.
add_test(NAME reference.strict_draws
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/reference/strict_draws.py --evidence ${CMAKE_SOURCE_DIR}/golden/fixture
          --expect-runs 11 --expect-draws 486 --expect-exact 182)
set_tests_properties(reference.strict_draws PROPERTIES LABELS "reference" TIMEOUT 120)
