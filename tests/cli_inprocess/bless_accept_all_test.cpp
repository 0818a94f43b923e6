// bless on a terminal: "accept all" with regressions among the runs left lists them
// and asks for one typed confirmation (it asked once per regression: 30 times for 30 runs); and
// after a parameter change, bless offers to retire the golden runs that a new run of the same
// cell replaced (the pairing of compare/run_pairing.hpp), instead of keeping them until --prune.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_inprocess/cli_case.hpp"
#include "support/text_match.hpp"

namespace genrepro::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string data(const std::string& name) { return source_path("tests/cli/data/diff/" + name); }
json read_json(const fs::path& p) { return json::parse(read_bytes(p)); }

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The same tokens from another distribution at steps[1] (diff: regression), kept consistent for
// the reader: prob is prob_t1 and the best candidate's, margin and rest_mass re-derived.
void change_distribution(json& run) {
  json& s = run["steps"][1];
  s["prob"] = s["prob_t1"] = 0.45;
  s["top"][0]["prob"] = s["top"][0]["prob_scaled"] = 0.45;
  double listed = 0;
  for (const json& c : s["top"]) listed += c["prob_scaled"].get<double>();
  s["rest_mass"] = 1 - listed;
  s["margin"] = s["top"][0]["prob_scaled"].get<double>() - s["top"][1]["prob_scaled"].get<double>();
}

class BlessTerminal : public ::testing::Test {
 protected:
  CliResult review(const std::string& into, const std::string& evidence, const std::string& answers) {
    return genrepro({"bless", evidence, "--into", into, "--no-color"}, {answers, /*in_is_terminal=*/true});
  }
  ScratchDir scratch_{"bless-all"};
};

// Both runs of golden.json regress; "A" lists both and asks once.
TEST_F(BlessTerminal, AcceptAllAsksOnceForEveryRegressionLeft) {
  const std::string into = scratch_ / "golden";
  ASSERT_EQ(genrepro({"bless", data("golden.json"), "--into", into, "--yes"}).exit, 0);
  json doc = read_json(data("golden.json"));
  for (json& run : doc["runs"]) change_distribution(run);
  const std::string e = scratch_.write("regressed.json", doc.dump(2));
  const std::string before = read_bytes(fs::path(into) / "greedy.json");

  const CliResult no = review(into, e, "A\nno\n");
  EXPECT_EQ(no.exit, 1) << no.out << no.err;
  EXPECT_TRUE(Searches(R"re(accept all: 2 of the 2 runs left are REGRESSIONS.*greedy/p0/greedy-429460cc.*sampling/p0/sample-t1-s42-2ce330fa.*type 'yes')re", no.out)) << no.out;
  EXPECT_EQ(count_of(no.out, "type 'yes'"), 1u) << no.out;
  EXPECT_TRUE(Searches(R"re(0 accepted, 0 rejected, 2 skipped; nothing written)re", no.out)) << no.out;
  EXPECT_EQ(read_bytes(fs::path(into) / "greedy.json"), before);

  const CliResult yes = review(into, e, "A\nyes\n");
  EXPECT_EQ(yes.exit, 0) << yes.out << yes.err;
  EXPECT_EQ(count_of(yes.out, "type 'yes'"), 1u) << yes.out;
  EXPECT_TRUE(Searches(R"re(2 accepted, 0 rejected, 0 skipped; wrote 2 golden file)re", yes.out)) << yes.out;
  EXPECT_NE(read_bytes(fs::path(into) / "greedy.json"), before);
}

// A grid of two seeds at top_p 0.9, blessed, then at 0.95: every id changes. Accepting the new
// runs and answering the offer retires the old ids; declining keeps them (as before).
class BlessRetire : public BlessTerminal {
 protected:
  std::string run_grid(const std::string& name, double top_p) {
    const json spec = {{"name", "cells"},
                       {"prompts", {"the river bank was"}},
                       {"max_new_tokens", 2},
                       {"runs", {{{"mode", "sample"}, {"top_p", top_p}, {"seed", {1, 2}}}}}};
    const std::string out = scratch_ / (name + ".json");
    const CliResult r = genrepro({"run", scratch_.write(name + "-spec.json", spec.dump()), "--model", tiny_model(), "--out", out});
    EXPECT_EQ(r.exit, 0) << r.err;
    return out;
  }
  std::vector<std::string> golden_ids(const std::string& into) {
    const json doc = read_json(fs::path(into) / "cells.json");
    std::vector<std::string> ids;
    for (const json& r : doc["runs"]) ids.push_back(r["id"]);
    return ids;
  }
};

TEST_F(BlessRetire, OffersToRetireTheIdsANewRunReplaced) {
  const std::string old_runs = run_grid("old", 0.9), new_runs = run_grid("new", 0.95);
  const json new_doc = read_json(new_runs);
  std::vector<std::string> new_ids;
  for (const json& r : new_doc["runs"]) new_ids.push_back(r["id"]);
  ASSERT_EQ(new_ids.size(), 2u);
  {
    const std::string into = scratch_ / "declined";
    ASSERT_EQ(genrepro({"bless", old_runs, "--into", into, "--yes"}).exit, 0);
    const CliResult r = review(into, new_runs, "A\nn\n");
    EXPECT_EQ(r.exit, 0) << r.out << r.err;
    EXPECT_TRUE(Searches(R"re(2 golden run\(s\) were replaced by an accepted new run of their cell.*cells/p0/sample-t1-p0.9-s1-[0-9a-f]{8} → cells/p0/sample-t1-p0.95-s1-[0-9a-f]{8}: parameter change: top_p 0.9 → 0.95.*retire the 2 old id\(s\))re", r.out)) << r.out;
    EXPECT_EQ(golden_ids(into).size(), 4u);
  }
  {
    const std::string into = scratch_ / "retired";
    ASSERT_EQ(genrepro({"bless", old_runs, "--into", into, "--yes"}).exit, 0);
    const CliResult r = review(into, new_runs, "A\ny\n");
    EXPECT_EQ(r.exit, 0) << r.out << r.err;
    EXPECT_EQ(golden_ids(into), new_ids);
    // The golden now agrees with the new evidence, run for run, and it kept the numerics record
    // (mode and kernel revision), so diff has no numerics difference to list.
    const CliResult d = genrepro({"diff", into, new_runs});
    EXPECT_EQ(d.exit, 0) << d.out;
    EXPECT_FALSE(Searches("numerics", d.out)) << d.out;
    EXPECT_EQ(read_json(fs::path(into) / "cells.json")["numerics"]["mode"], "strict");
  }
  {
    // Off a terminal nothing is asked: the old ids are kept, and bless says how to retire them.
    const std::string into = scratch_ / "yes";
    ASSERT_EQ(genrepro({"bless", old_runs, "--into", into, "--yes"}).exit, 0);
    const CliResult r = genrepro({"bless", new_runs, "--into", into, "--yes"});
    EXPECT_EQ(r.exit, 0) << r.out << r.err;
    EXPECT_TRUE(Searches(R"re(bless: 2 golden run\(s\) were replaced by a new run of their cell \(top_p 0.9 → 0.95\); kept: --prune retires them)re", r.out)) << r.out;
    EXPECT_EQ(golden_ids(into).size(), 4u);
  }
}

}  // namespace
}  // namespace genrepro::test
