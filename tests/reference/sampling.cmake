# The article's own PyTorch sampling code (tests/reference/article_sampling.py) against genrepro:
# the sampled loop on the tiny fixture, T = 1, p = 0.9, seeds 41/42/43, must pick the same tokens.
# Python writes its ids (and the greedy loop's) first; then `genrepro generate --ids --no-cache` runs in-process
# (tests/cli_inprocess/article_sampled_loop_test.cpp), six generations in one process.
# The same process writes the fixed-logits picks (no model needed) that genrepro_engine_tests'
# ArticleSamplingReference compares with ($GENREPRO_ARTICLE_FIXED_LOGITS, tests/CMakeLists.txt):
# one Python and torch start for both.
set(article_loop_ids ${CMAKE_BINARY_DIR}/reference/article-loop-ids.json)
add_test(NAME reference.article_sampled_loop.python
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/reference/article_sampling.py
          --model ${GENREPRO_TINY_MODEL} --write-loop-ids ${article_loop_ids} --fixed-logits-out ${article_fixed_logits})
set_tests_properties(reference.article_sampled_loop.python PROPERTIES
  LABELS "reference" FIXTURES_REQUIRED tiny_model FIXTURES_SETUP article_loop_ids TIMEOUT 300)
add_test(NAME reference.article_sampled_loop
  COMMAND genrepro_cli_tests --gtest_filter=ArticleSampledLoop.*)
set_tests_properties(reference.article_sampled_loop PROPERTIES
  LABELS "reference" FIXTURES_REQUIRED "tiny_model;article_loop_ids" TIMEOUT 300
  ENVIRONMENT "GENREPRO_ARTICLE_LOOP_IDS=${article_loop_ids}")
# The regression gate's anchor, rechecked on every run: golden/fixture's greedy and article-sampled
# runs (greedy.json, top_p_seeds.json, eos.json) hold exactly the ids the Python references wrote
# above (tests/reference/golden_anchor.py), so the blessed evidence cannot drift from independent
# code through a bless.
add_test(NAME reference.golden_fixture_anchor
  COMMAND ${GENREPRO_PYTHON} ${CMAKE_SOURCE_DIR}/tests/reference/golden_anchor.py
          --golden ${CMAKE_SOURCE_DIR}/golden/fixture --loop-ids ${article_loop_ids})
set_tests_properties(reference.golden_fixture_anchor PROPERTIES
  LABELS "reference;golden" FIXTURES_REQUIRED article_loop_ids TIMEOUT 60)
# The model-free chain (harness/sampling/) on the same fixed-logits picks, in the unit binary.
add_test(NAME reference.article_fixed_logits.plain_chain
  COMMAND genrepro_unit_tests --gtest_filter=PlainChainReference.Article*)
set_tests_properties(reference.article_fixed_logits.plain_chain PROPERTIES
  LABELS "reference" FIXTURES_REQUIRED article_loop_ids TIMEOUT 300
  ENVIRONMENT "GENREPRO_ARTICLE_FIXED_LOGITS=${article_fixed_logits}")
