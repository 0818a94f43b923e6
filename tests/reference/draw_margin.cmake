# The draw records (steps[].draw) held to torch's own generator (tests/reference/draw_margin.py):
# every sampled article run is replayed with its recorded tokens, the Python forward pass and the
# article's chain, torch.Generator().manual_seed(seed), and at each step a clone of the generator's
# state draws q = exponential_() for the race; the recorded runner-up must be the second-best ratio
# and the margin ln(r1 / r2) within 1e-5, with the number of runs and draws it must compare.
# The Python forward pass is libtorch's arithmetic, so the evidence is this build's run of the
# article experiments in reference numerics: strict evidence (the default, and golden/fixture)
# parts from it by float tolerance at margins of unlisted runner-ups and at kept-set boundaries,
# which this check would read as wrong draws. Strict draws use the same generator and race
# (sampling/step_math.hpp); their logits are checked by strict.digest and strict_vs_torch.
file(GLOB draw_margin_experiments CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/experiments/article/*.json)
set(draw_margin_evidence ${CMAKE_BINARY_DIR}/reference/draw-margin-evidence.json)
genrepro_cli_test(NAME reference.draw_margin.run EXIT 0 LABELS reference NEEDS_MODEL
  COMMAND run ${draw_margin_experiments} --model ${GENREPRO_TINY_MODEL} --numerics reference --out ${draw_margin_evidence})
set_tests_properties(reference.draw_margin.run PROPERTIES FIXTURES_SETUP draw_margin_evidence)
add_test(NAME reference.draw_margin
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/reference/draw_margin.py --model ${GENREPRO_TINY_MODEL}
          --evidence ${draw_margin_evidence} --expect-runs 11 --expect-draws 486)
set_tests_properties(reference.draw_margin PROPERTIES
  LABELS "reference" FIXTURES_REQUIRED "tiny_model;draw_margin_evidence" TIMEOUT 300)
