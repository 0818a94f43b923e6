// genrepro check-article on hand-made evidence (tests/cli/data/article, made by its make_data.py).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli_inprocess/cli_case.hpp"

namespace genrepro::test {
namespace {

std::string data(const std::string& name) { return source_path("tests/cli/data/article/" + name); }
const std::string kFacts = source_path("golden/article/article-facts.json");

const std::vector<CliCase> kCases = {
    {"reproduces", {"check-article", kFacts, data("reproduces.json")}, 0,
     R"re(stop top-p-0.9-seed-43-eos +eos at new token 47 +eos at new token 47 +match.*nucleus T=2 p=0.9 at new token 1 \(steps\[0\]\) +14905 +14905 +match.*the evidence reproduces the article)re",
     ""},
    {"fixture_mismatch", {"check-article", kFacts, data("fixture_like.json")}, 1,
     R"re(text greedy .*MISMATCH.*nucleus T=0.5 p=0.9 at new token 1 \(steps\[0\]\) +35 +5 +MISMATCH.*eos token id +50256 +50256 +match.*note: the model is a fixture)re",
     ""},
    {"bad_swapped_arguments", {"check-article", data("reproduces.json"), kFacts}, 2, "", R"re(not an article-facts file)re",
     Stderr::one_line},
    {"bad_missing_evidence", {"check-article", kFacts, data("nope.json")}, 2, "", R"re(nope.json: no such file)re",
     Stderr::one_line},
};

class CheckArticle : public ::testing::TestWithParam<CliCase> {};
TEST_P(CheckArticle, ExitAndTable) { expect_case(GetParam()); }
INSTANTIATE_TEST_SUITE_P(CheckArticle, CheckArticle, ::testing::ValuesIn(kCases), CaseName{});

}  // namespace
}  // namespace genrepro::test
