# genrepro check-article on hand-made evidence (tests/cli/data/article, made by make_data.py).
set(article_data ${CMAKE_SOURCE_DIR}/tests/cli/data/article)
set(article_facts ${CMAKE_SOURCE_DIR}/golden/article/article-facts.json)
genrepro_cli_test(NAME check_article.reproduces EXIT 0
  STDOUT "stop top-p-0.9-seed-43-eos +eos at new token 47 +eos at new token 47 +match.*nucleus T=2 p=0.9 step 0 +14905 +14905 +match.*the evidence reproduces the article"
  COMMAND check-article ${article_facts} ${article_data}/reproduces.json)
genrepro_cli_test(NAME check_article.fixture_mismatch EXIT 1
  STDOUT "text greedy .*MISMATCH.*nucleus T=0.5 p=0.9 step 0 +35 +5 +MISMATCH.*eos token id +50256 +50256 +match.*note: the model is a fixture"
  COMMAND check-article ${article_facts} ${article_data}/fixture_like.json)
genrepro_cli_test(NAME check_article.bad.swapped_arguments EXIT 2 ONE_LINE_STDERR STDERR "not an article-facts file"
  COMMAND check-article ${article_data}/reproduces.json ${article_facts})
genrepro_cli_test(NAME check_article.bad.missing_evidence EXIT 2 ONE_LINE_STDERR STDERR "nope.json: no such file"
  COMMAND check-article ${article_facts} ${article_data}/nope.json)
