# golden/article/README.md's check, end to end on the tiny fixture: check-article on the evidence
# the regression gate (regression.cmake) makes from experiments/article, so the 22 runs happen
# once. The fixture's weights are not GPT-2's, so the check must fail (exit 1) clearly: a per-fact
# table, the fixture note, the EOS id from GPT-2's config matching.
genrepro_cli_test(NAME golden.article.fixture_check EXIT 1 LABELS golden
  STDOUT "eos token id +50256 +50256 +match.*note: the model is a fixture.*the evidence does not reproduce the article"
  FIXTURES golden_fixture_evidence
  COMMAND check-article ${CMAKE_SOURCE_DIR}/golden/article/article-facts.json ${CMAKE_BINARY_DIR}/golden/fixture-evidence.json)
