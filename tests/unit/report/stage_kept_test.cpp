// The report's kept set per stage on evidence the real binary wrote
// (tests/data/frameworks/README.md): every framework run gets a summary row and a step table whose
// columns are its stages and whose cells are the counts in the evidence file, read here from the
// JSON text itself (not through the reader the report uses); article runs get none; many runs fold.
#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "evidence/evidence.hpp"
#include "report/report.hpp"
#include "unit/evidence/evidence_builders.hpp"

namespace genrepro {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kData = std::string(GENREPRO_SOURCE_DIR) + "/tests/data/frameworks/";
constexpr const char* kHeading = "Kept set per stage";

nlohmann::json raw(const std::string& file) {
  std::ifstream in(kData + file);
  return nlohmann::json::parse(in);
}

// 50,257 as the report writes counts (the article's thousands separator), computed independently.
std::string thousands(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::vector<ReportDocument> documents(const std::vector<std::string>& files) {
  std::vector<ReportDocument> out;
  for (const std::string& f : files) out.push_back(read_report_evidence(kData + f));
  return out;
}

// The blocks from the section's heading to the next level-2 heading.
std::vector<ReportBlock> section(const ReportContent& c) {
  std::vector<ReportBlock> out;
  bool in = false;
  for (const ReportBlock& b : c.blocks) {
    if (b.kind == ReportBlock::Kind::heading && b.level == 2) {
      if (in) break;
      in = b.text == kHeading;
      continue;
    }
    if (in) out.push_back(b);
  }
  return out;
}

std::vector<const ReportTable*> tables(const std::vector<ReportBlock>& blocks) {
  std::vector<const ReportTable*> out;
  for (const ReportBlock& b : blocks)
    if (b.kind == ReportBlock::Kind::table) out.push_back(&b.table);
  return out;
}

TEST(StageKept, EveryFrameworkRunHasItsStagesCountsAsTheEvidenceHoldsThem) {
  const nlohmann::json j = raw("golden.json");
  const std::vector<ReportBlock> s = section(build_report_content(documents({"golden.json"})));
  ASSERT_FALSE(s.empty()) << "no section \"" << kHeading << "\"";
  const std::vector<const ReportTable*> t = tables(s);
  std::vector<nlohmann::json> framework_runs;
  for (const nlohmann::json& r : j["runs"])
    if (r["params"].contains("framework")) framework_runs.push_back(r);
  ASSERT_EQ(framework_runs.size(), 4u);
  // The summary, then a step table per run with stages (hf greedy with no_repeat_ngram_size lists one).
  ASSERT_EQ(t.size(), 1 + framework_runs.size());
  const ReportTable& summary = *t[0];
  ASSERT_EQ(summary.rows.size(), framework_runs.size());
  for (size_t i = 0; i < framework_runs.size(); ++i) {
    const nlohmann::json& r = framework_runs[i];
    const nlohmann::json& first = r["steps"][0];
    std::string chain;
    for (const nlohmann::json& k : first["stages"])
      chain += (chain.empty() ? "" : " \u2192 ") + k["stage"].get<std::string>() + " " + thousands(k["kept"].get<int64_t>());
    EXPECT_EQ(summary.rows[i][0], r["id"].get<std::string>());
    EXPECT_EQ(summary.rows[i][1], r["params"]["framework"].get<std::string>());
    EXPECT_EQ(summary.rows[i][3], chain);
    EXPECT_EQ(summary.rows[i][4], thousands(first["kept"].get<int64_t>()));
    EXPECT_EQ(summary.rows[i][6], std::to_string(r["steps"].size()));

    const ReportTable& steps = *t[1 + i];
    std::vector<std::string> header = {"new token", "token"};
    for (const nlohmann::json& k : first["stages"]) header.push_back(k["stage"].get<std::string>());
    header.push_back("kept");
    EXPECT_EQ(steps.header, header) << r["id"];
    ASSERT_EQ(steps.rows.size(), r["steps"].size());
    for (size_t k = 0; k < steps.rows.size(); ++k) {
      const nlohmann::json& step = r["steps"][k];
      EXPECT_EQ(steps.rows[k][0], std::to_string(k + 1));
      for (size_t st = 0; st < step["stages"].size(); ++st)
        EXPECT_EQ(steps.rows[k][2 + st], thousands(step["stages"][st]["kept"].get<int64_t>())) << r["id"] << " step " << k;
      EXPECT_EQ(steps.rows[k].back(), thousands(step["kept"].get<int64_t>()));
    }
  }
  // The article run (no framework) is not listed.
  for (const auto& row : summary.rows) EXPECT_NE(row[1], "article");
}

TEST(StageKept, TheSettingsNameTheControlsThatAreOn) {
  const std::vector<ReportBlock> s = section(build_report_content(documents({"new.json"})));
  const ReportTable& summary = *tables(s).at(0);
  std::vector<std::string> settings;
  for (const auto& row : summary.rows) settings.push_back(row[2]);
  EXPECT_THAT(settings, ::testing::Contains(HasSubstr("repetition_penalty=1.3")));
  EXPECT_THAT(settings, ::testing::Contains(HasSubstr("min_p=0.1")));
  EXPECT_THAT(settings, ::testing::Contains(HasSubstr("no_repeat_ngram_size=2")));
  EXPECT_THAT(settings, ::testing::Contains("llama.cpp T=0.8 top_k=40 top_p=0.95 seed=9 min_p=0.05 repeat_penalty=1.3 frequency_penalty=0.2"));
  // Off values (llama.cpp's repeat_penalty 1, top_n_sigma -1) are not settings, nor what the
  // framework fixes (its own order, rule and rng).
  for (const std::string& text : settings) {
    EXPECT_THAT(text, Not(HasSubstr("top_n_sigma")));
    EXPECT_THAT(text, Not(HasSubstr("repeat_penalty=1 ")));
    EXPECT_THAT(text, Not(HasSubstr("order=")));
    EXPECT_THAT(text, Not(HasSubstr("rng=")));
  }
}

TEST(StageKept, MarkdownAndHtmlBothShowTheTables) {
  const std::vector<ReportFile> files = render_report(documents({"golden.json"}));
  const auto content = [&](const std::string& name) {
    const auto it = std::find_if(files.begin(), files.end(), [&](const ReportFile& f) { return f.name == name; });
    return it == files.end() ? std::string() : std::string(it->content.begin(), it->content.end());
  };
  const std::string md = content("report.md"), html = content("report.html");
  EXPECT_THAT(md, HasSubstr("## Kept set per stage"));
  EXPECT_THAT(md, HasSubstr("| new token | token | top\\_k | top\\_p | min\\_p | temperature | kept |"));
  EXPECT_THAT(html, HasSubstr(">Kept set per stage</h2>"));
  EXPECT_THAT(html, HasSubstr(">min_p</th>"));
  // Four framework runs: each step table is open (no fold in this section).
  const size_t at = md.find("## Kept set per stage");
  const size_t next = md.find("\n## ", at + 1);
  EXPECT_THAT(md.substr(at, next - at), Not(HasSubstr("<details>")));
}

TEST(StageKept, ManyRunsFoldTheirStepTablesAndKeepTheSummaryOpen) {
  // Both files: nine framework runs (the golden's four, the new file's five).
  const std::vector<ReportBlock> s = section(build_report_content(documents({"golden.json", "new.json"})));
  const auto folds = std::count_if(s.begin(), s.end(), [](const ReportBlock& b) { return b.kind == ReportBlock::Kind::fold_begin; });
  EXPECT_EQ(folds, 9);
  ASSERT_FALSE(s.empty());
  // The summary comes before any fold.
  const auto summary = std::find_if(s.begin(), s.end(), [](const ReportBlock& b) { return b.kind == ReportBlock::Kind::table; });
  const auto fold = std::find_if(s.begin(), s.end(), [](const ReportBlock& b) { return b.kind == ReportBlock::Kind::fold_begin; });
  EXPECT_LT(summary - s.begin(), fold - s.begin());
  EXPECT_EQ(summary->table.rows.size(), 9u);
}

TEST(StageKept, EvidenceWithoutFrameworkRunsSaysSo) {
  const Evidence e = test::make_evidence({test::make_run("g", DecodeMode::greedy, test::greedy_steps())});
  const std::vector<ReportBlock> s = section(build_report_content({ReportDocument{"e.json", e, ""}}));
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].kind, ReportBlock::Kind::note);
  EXPECT_THAT(s[0].text, HasSubstr("no run of framework hf or llama.cpp"));
}

}  // namespace
}  // namespace genrepro
