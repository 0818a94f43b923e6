# The article's own PyTorch sampling code (tests/reference/article_sampling.py) against genrepro:
# the sampled loop on the tiny fixture, T = 1, p = 0.9, seeds 41/42/43, must pick the same tokens.
# (The fixed-logits comparison, no model needed, runs inside genrepro_engine_tests.)
add_test(NAME reference.article_sampled_loop
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/reference/article_sampling.py
          --check-generate $<TARGET_FILE:genrepro> --model ${GENREPRO_TINY_MODEL})
set_tests_properties(reference.article_sampled_loop PROPERTIES
  LABELS "reference" FIXTURES_REQUIRED tiny_model TIMEOUT 300)
