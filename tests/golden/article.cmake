# golden/article/README.md's check, end to end on the tiny fixture: run the article's experiments,
# then check-article. The fixture's weights are not GPT-2's, so the check must fail (exit 1)
# clearly: a per-fact table, the fixture note, the EOS id from GPT-2's config matching.
# Registered once the run verb is merged (harness/cli/run.cpp) and experiments/article exists.
file(GLOB article_experiments CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/experiments/article/*.json)
if(article_experiments AND EXISTS ${CMAKE_SOURCE_DIR}/harness/cli/run.cpp)
  set(article_fixture_evidence ${CMAKE_BINARY_DIR}/golden/article-fixture-evidence.json)
  genrepro_cli_test(NAME golden.article.fixture_run EXIT 0 LABELS golden NEEDS_MODEL
    COMMAND run ${article_experiments} --model ${GENREPRO_TINY_MODEL} --out ${article_fixture_evidence})
  set_tests_properties(golden.article.fixture_run PROPERTIES FIXTURES_SETUP article_fixture_evidence)
  genrepro_cli_test(NAME golden.article.fixture_check EXIT 1 LABELS golden
    STDOUT "eos token id +50256 +50256 +match.*note: the model is a fixture.*the evidence does not reproduce the article"
    FIXTURES article_fixture_evidence
    COMMAND check-article ${CMAKE_SOURCE_DIR}/golden/article/article-facts.json ${article_fixture_evidence})
endif()
