// genrepro bless in-process: refuses without a terminal unless --yes or --run; on a terminal a
// review run by run (accept, reject, skip, accept all, quit; a regression needs "yes"); --run
// changes only the named runs; a golden run missing from the evidence is kept unless --prune;
// a dirty work tree is refused unless --allow-dirty; DIR/blessed.tsv keeps the commit. The data
// is tests/cli/data/diff/golden.json (two runs, experiments "greedy" and "sampling") and copies of
// it changed here, one field at a time. The real terminal: tests/cli/bless_terminal.cmake.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_inprocess/cli_case.hpp"
#include "evidence/evidence.hpp"
#include "params/experiment_file.hpp"
#include "support/text_match.hpp"

namespace genrepro::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kGreedy = "greedy/p0/greedy-429460cc";
const std::string kSampling = "sampling/p0/sample-t1-s42-2ce330fa";

std::string data(const std::string& name) { return source_path("tests/cli/data/diff/" + name); }

json golden_doc() { return json::parse(read_bytes(data("golden.json"))); }

json& run_named(json& doc, const std::string& id) {
  for (json& r : doc["runs"])
    if (r["id"] == id) return r;
  throw std::runtime_error("no run " + id);
}

// rest_mass and margin as the writer derives them from the candidates (the reader checks them).
void rederive(json& s) {
  double listed = 0;
  for (const json& c : s["top"]) listed += c["prob_scaled"].get<double>();
  s["rest_mass"] = 1 - listed;
  s["margin"] = s["top"][0]["prob_scaled"].get<double>() - s["top"][1]["prob_scaled"].get<double>();
}

// The run's last token becomes 31 (" t31") at step 2, a near-tie (0.45001 vs 0.44999). The sampled
// run draws the runner-up from the same distribution: a sampler/RNG change. The greedy run can
// only pick its best candidate, so the two swap places (each keeps its probability): a near-tie.
void change_last_token(json& doc, const std::string& id) {
  json& r = run_named(doc, id);
  r["output_ids"][2] = 31;
  r["text"] = r["prompt"].get<std::string>() + " t10 t20 t31";
  r["continuation"] = " t10 t20 t31";
  json& s = r["steps"][2];
  s["token_id"] = 31;
  s["token_text"] = " t31";
  if (r["params"]["mode"] == "greedy") {
    std::swap(s["top"][0]["id"], s["top"][1]["id"]);
    std::swap(s["top"][0]["text"], s["top"][1]["text"]);
  }
  s["prob"] = s["prob_t1"] = r["params"]["mode"] == "greedy" ? s["top"][0]["prob"] : s["top"][1]["prob"];
}

// The same tokens from another distribution: nothing explains it, diff calls it a regression.
void change_distribution(json& doc, const std::string& id) {
  json& s = run_named(doc, id)["steps"][1];
  s["prob"] = s["prob_t1"] = 0.45;
  s["top"][0]["prob"] = s["top"][0]["prob_scaled"] = 0.45;
  rederive(s);
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

json read_json(const fs::path& p) { return json::parse(read_bytes(p)); }

// A second greedy run in experiment "greedy", at a second prompt, made the way run makes it: the
// spec lists the prompt, and the id is the hash of its experiment, prompt index, prompt and params
// (the reader refuses an id that is not). Returns its id.
std::string add_second_greedy_run(json& doc) {
  json second = run_named(doc, kGreedy);
  const std::string prompt = second["prompt"].get<std::string>() + " (second)";
  second["prompt"] = prompt;
  second["prompt_index"] = 1;
  second["text"] = prompt + second["continuation"].get<std::string>();
  second["index"] = 2;
  second["id"] = run_id("greedy", 1, prompt, params_from_json(second["params"], "params"));
  for (json& x : doc["experiments"])
    if (x["name"] == "greedy") x["spec"]["prompts"].push_back(prompt);
  doc["runs"].push_back(second);
  return second["id"].get<std::string>();
}

int last_token(const fs::path& golden_file, const std::string& id) {
  json doc = read_json(golden_file);
  return run_named(doc, id)["output_ids"][2].get<int>();
}

class Bless : public ::testing::Test {
 protected:
  // A golden directory blessed from golden.json, and evidence made from golden.json by `change`.
  std::string blessed() {
    const std::string into = scratch_ / "golden";
    const CliResult r = genrepro({"bless", data("golden.json"), "--into", into, "--yes"});
    EXPECT_EQ(r.exit, 0) << r.out << r.err;
    return into;
  }
  std::string evidence(const std::function<void(json&)>& change, const std::string& name = "new.json") {
    json doc = golden_doc();
    change(doc);
    return scratch_.write(name, doc.dump(2));
  }
  CliResult review(const std::string& into, const std::string& evidence_path, const std::string& answers,
                   std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"bless", evidence_path, "--into", into, "--no-color"};
    args.insert(args.end(), extra.begin(), extra.end());
    return genrepro(args, {answers, /*in_is_terminal=*/true});
  }
  ScratchDir scratch_{"bless"};
};

// Without --yes or --run and without a terminal (as in CI) bless refuses in one line, exit 2, and writes nothing.
TEST_F(Bless, RefusesWithoutTerminalAndWritesNothing) {
  expect_case({"needs_yes_without_terminal", {"bless", data("golden.json"), "--into", scratch_ / "refused"}, 2,
               R"re(bless: .*greedy.json: new, 1 runs\nbless: .*sampling.json: new, 1 runs\n$)re",
               R"re(not asking without a terminal \(stdin is not a tty\); re-run with --yes to bless all 2 new or changed run\(s\) into .*, or --run ID for chosen runs)re",
               Stderr::one_line});
  EXPECT_FALSE(fs::exists(scratch_ / "refused"));
}

// --yes: one file per experiment, volatile fields stripped, the record beside them, and the
// directory then agrees with the evidence (and with the same runs reordered, same.json).
TEST_F(Bless, YesWritesOneStrippedFilePerExperimentThatAgrees) {
  const std::string into = scratch_ / "blessed";
  expect_case({"yes_writes", {"bless", data("golden.json"), "--into", into, "--yes"}, 0,
               R"re(bless: .*greedy.json: new, 1 runs.*bless: 2 accepted, 0 rejected, 0 skipped; wrote 2 golden file\(s\) into .* \(blessed from commit none \(not in a git work tree\)\))re",
               ""});
  ASSERT_EQ(names_in(into), (std::vector<std::string>{"blessed.tsv", "greedy.json", "sampling.json"}));
  for (const std::string name : {"greedy.json", "sampling.json"}) {
    SCOPED_TRACE(name);
    const json doc = read_json(fs::path(into) / name);
    EXPECT_FALSE(doc.contains("created_utc"));
    EXPECT_FALSE(doc["environment"]["threads"].contains("runs_concurrently"));
    ASSERT_EQ(doc["runs"].size(), 1u);
    EXPECT_FALSE(doc["runs"][0].contains("timing"));
    EXPECT_EQ(doc["runs"][0]["experiment"].get<std::string>() + ".json", name);
  }
  expect_case({"then_diff_agrees", {"diff", into, data("same.json")}, 0, R"re(2 agree, 0 differ)re", ""});
  expect_case({"again_nothing_to_do", {"bless", data("golden.json"), "--into", into}, 0,
               R"re(agrees, left as is.*already holds every run of .*; nothing written)re", ""});
}

// The review: each new or changed run with its verdict, first divergence and token diff, then
// the question. accept writes that run, reject keeps the golden's.
TEST_F(Bless, ReviewAcceptAndReject) {
  const std::string into = blessed();
  const std::string e = evidence([](json& d) {
    change_last_token(d, kGreedy);
    change_last_token(d, kSampling);
  });
  const CliResult r = review(into, e, "a\nr\n");
  EXPECT_EQ(r.exit, 1) << describe({}, r);
  EXPECT_TRUE(Searches(R"re(\[1/2\] greedy.json: changed run greedy/p0/greedy-429460cc: near-tie at new token 3 \(steps\[2\]\))re", r.out)) << r.out;
  EXPECT_TRUE(Searches(R"re(golden: " t10 t20\[- t30-\]"\n  new:    " t10 t20\{\+ t31\+\}"\naccept \(a\) / reject \(r\))re", r.out)) << r.out;
  EXPECT_TRUE(Searches(R"re(\[2/2\] sampling.json: changed run)re", r.out));
  EXPECT_TRUE(Searches(R"re(bless: 1 accepted, 1 rejected, 0 skipped; wrote 1 golden file\(s\))re", r.out)) << r.out;
  EXPECT_EQ(last_token(fs::path(into) / "greedy.json", kGreedy), 31);
  EXPECT_EQ(last_token(fs::path(into) / "sampling.json", kSampling), 30);
}

TEST_F(Bless, ReviewSkipWritesNothing) {
  const std::string into = blessed();
  const std::string before = read_bytes(fs::path(into) / "greedy.json");
  const std::string e = evidence([](json& d) { change_last_token(d, kGreedy); });
  const CliResult r = review(into, e, "s\n");
  EXPECT_EQ(r.exit, 1) << describe({}, r);
  EXPECT_TRUE(Searches(R"re(bless: 0 accepted, 0 rejected, 1 skipped; nothing written)re", r.out)) << r.out;
  EXPECT_EQ(read_bytes(fs::path(into) / "greedy.json"), before);
}

TEST_F(Bless, ReviewAcceptAllAndQuit) {
  const std::string e = evidence([](json& d) {
    change_last_token(d, kGreedy);
    change_last_token(d, kSampling);
  });
  {
    const std::string into = blessed();
    const CliResult r = review(into, e, "A\n");
    EXPECT_EQ(r.exit, 0) << describe({}, r);
    EXPECT_TRUE(Searches(R"re(\[2/2\] .*accepted \(accept all\).*2 accepted, 0 rejected, 0 skipped)re", r.out)) << r.out;
    EXPECT_EQ(last_token(fs::path(into) / "sampling.json", kSampling), 31);
  }
  fs::remove_all(scratch_ / "golden");
  {
    const std::string into = blessed();
    const CliResult r = review(into, e, "a\nq\n");
    EXPECT_EQ(r.exit, 1) << describe({}, r);
    EXPECT_TRUE(Searches(R"re(1 accepted, 0 rejected, 1 skipped)re", r.out)) << r.out;
    EXPECT_EQ(last_token(fs::path(into) / "greedy.json", kGreedy), 31);
    EXPECT_EQ(last_token(fs::path(into) / "sampling.json", kSampling), 30);
  }
}

TEST_F(Bless, ReviewAsksAgainAfterAnUnknownAnswerAndEndOfInputQuits) {
  const std::string into = blessed();
  const std::string e = evidence([](json& d) { change_last_token(d, kGreedy); });
  const CliResult r = review(into, e, "x\n");
  EXPECT_EQ(r.exit, 1);
  EXPECT_TRUE(Searches(R"re('x' is not an answer\naccept \(a\))re", r.out)) << r.out;
  EXPECT_TRUE(Searches(R"re(0 accepted, 0 rejected, 1 skipped; nothing written)re", r.out)) << r.out;
}

// A regression is blessed only after a typed "yes" (or with --accept-regressions).
TEST_F(Bless, RegressionNeedsItsOwnConfirmation) {
  const std::string e = evidence([](json& d) { change_distribution(d, kGreedy); });
  const std::string into = blessed();
  const std::string before = read_bytes(fs::path(into) / "greedy.json");
  CliResult r = review(into, e, "a\ny\n");
  EXPECT_EQ(r.exit, 1) << describe({}, r);
  EXPECT_TRUE(Searches(R"re(changed run greedy/p0/greedy-429460cc: regression at new token 2 \(steps\[1\]\))re", r.out)) << r.out;
  EXPECT_TRUE(Searches(R"re(REGRESSION.*type 'yes': +not blessed: the golden keeps its run)re", r.out)) << r.out;
  EXPECT_TRUE(Searches(R"re(tokens: the same 3 new tokens; the difference is in probabilities)re", r.out)) << r.out;
  EXPECT_EQ(read_bytes(fs::path(into) / "greedy.json"), before);
  r = review(into, e, "a\nyes\n");
  EXPECT_EQ(r.exit, 0) << describe({}, r);
  EXPECT_NE(read_bytes(fs::path(into) / "greedy.json"), before);
}

TEST_F(Bless, YesRefusesARegressionUnlessAccepted) {
  const std::string e = evidence([](json& d) { change_distribution(d, kGreedy); });
  const std::string into = blessed();
  const std::string before = read_bytes(fs::path(into) / "greedy.json");
  expect_case({"yes_regression", {"bless", e, "--into", into, "--yes"}, 2, "",
               R"re(bless: run greedy/p0/greedy-429460cc in .*greedy.json: diff's verdict is regression .*--accept-regressions)re",
               Stderr::one_line});
  EXPECT_EQ(read_bytes(fs::path(into) / "greedy.json"), before);
  expect_case({"yes_accept_regressions", {"bless", e, "--into", into, "--yes", "--accept-regressions"}, 0,
               R"re(1 accepted, 0 rejected, 0 skipped; wrote 1 golden file)re", ""});
}

// "bless --run ID changes only that run in the golden file". Off a terminal
// --run is the confirmation.
TEST_F(Bless, RunChangesOnlyThatRun) {
  json two = golden_doc();
  const std::string second = add_second_greedy_run(two);
  const std::string base = scratch_.write("two.json", two.dump(2));
  const std::string into = scratch_ / "golden";
  ASSERT_EQ(genrepro({"bless", base, "--into", into, "--yes"}).exit, 0);
  change_last_token(two, kGreedy);
  change_last_token(two, second);
  change_last_token(two, kSampling);
  const std::string e = scratch_.write("changed.json", two.dump(2));
  expect_case({"run_one", {"bless", e, "--into", into, "--run", second}, 1,
               R"re(1 accepted, 0 rejected, 2 skipped; wrote 1 golden file)re", ""});
  EXPECT_EQ(last_token(fs::path(into) / "greedy.json", second), 31);
  EXPECT_EQ(last_token(fs::path(into) / "greedy.json", kGreedy), 30);
  EXPECT_EQ(last_token(fs::path(into) / "sampling.json", kSampling), 30);
  expect_case({"run_unknown", {"bless", e, "--into", into, "--run", "greedy/p0/nope"}, 2, "",
               R"re(--run "greedy/p0/nope": no run with this id in .*changed.json)re", Stderr::one_line});
}

// "bless with a run missing from the evidence lists it and keeps it without --prune".
TEST_F(Bless, MissingRunIsListedAndKeptUnlessPruned) {
  json two = golden_doc();
  const std::string second = add_second_greedy_run(two);
  const std::string into = scratch_ / "golden";
  ASSERT_EQ(genrepro({"bless", scratch_.write("two.json", two.dump(2)), "--into", into, "--yes"}).exit, 0);
  json one = golden_doc();
  change_last_token(one, kGreedy);
  const std::string e = scratch_.write("one.json", one.dump(2));
  expect_case({"kept", {"bless", e, "--into", into, "--yes"}, 0,
               R"re(greedy.json: missing run greedy/p1/greedy-[0-9a-f]{8}: in the golden, not in the evidence: kept \(--prune removes it\).*greedy.json: changes: 1 changed, 1 missing from the evidence \(kept\), 0 unchanged)re",
               ""});
  EXPECT_EQ(read_json(fs::path(into) / "greedy.json")["runs"].size(), 2u);
  // The kept run is not a point of the new spec: the golden keeps the entry that made it, so the
  // reader (which checks every run against its spec) still reads the file bless wrote.
  EXPECT_EQ(read_json(fs::path(into) / "greedy.json")["experiments"].size(), 2u);
  EXPECT_NO_THROW(read_evidence((fs::path(into) / "greedy.json").string()));
  expect_case({"pruned", {"bless", e, "--into", into, "--yes", "--prune"}, 0,
               R"re(missing run greedy/p1/greedy-[0-9a-f]{8}: in the golden, not in the evidence: removed \(--prune\).*wrote 1 golden file)re", ""});
  EXPECT_EQ(read_json(fs::path(into) / "greedy.json")["runs"].size(), 1u);
}

// The commit goes into DIR/blessed.tsv; tracked changes outside DIR refuse the bless.
TEST_F(Bless, DirtyWorkTreeIsRefusedUnlessAllowed) {
  const fs::path repo = scratch_.path() / "repo";
  scratch_.write("repo/tracked.txt", "one\n");
  const std::string git = "git -C '" + repo.string() + "' ";
  ASSERT_EQ(std::system((git + "init -q && " + git + "add tracked.txt && " + git +
                         "-c user.name=t -c user.email=t@example.com commit -qm init").c_str()),
            0);
  const std::string into = (repo / "golden").string();
  const CliResult clean = genrepro({"bless", data("golden.json"), "--into", into, "--yes"});
  ASSERT_EQ(clean.exit, 0) << describe({}, clean);
  EXPECT_TRUE(Searches(R"re(blessed from commit [0-9a-f]{40}\))re", clean.out)) << clean.out;
  EXPECT_TRUE(Searches(R"re(\ngreedy.json\t[0-9a-f]{40}\tclean\t)re", read_bytes(repo / "golden" / "blessed.tsv")));

  scratch_.write("repo/tracked.txt", "two\n");
  const std::string e = evidence([](json& d) { change_last_token(d, kGreedy); });
  expect_case({"dirty", {"bless", e, "--into", into, "--yes"}, 2, "",
               R"re(the work tree holding .*golden has uncommitted changes outside it \(tracked.txt\); commit them first .*--allow-dirty)re",
               Stderr::one_line});
  EXPECT_EQ(last_token(repo / "golden" / "greedy.json", kGreedy), 30);
  expect_case({"allowed", {"bless", e, "--into", into, "--yes", "--allow-dirty"}, 0,
               R"re(, dirty work tree\))re", ""});
  EXPECT_TRUE(Searches(R"re(\ngreedy.json\t[0-9a-f]{40}\tdirty\t)re", read_bytes(repo / "golden" / "blessed.tsv")));
}

TEST_F(Bless, IntoAFileIsRefusedBeforeAnything) {
  const std::string file = scratch_.write("afile", "keep\n");
  expect_case({"into_file", {"bless", data("golden.json"), "--into", file, "--yes"}, 2, "",
               R"re(--into .*afile exists and is not a directory; give a directory path)re", Stderr::one_line});
  EXPECT_EQ(read_bytes(file), "keep\n");
}

// An evidence file naming an experiment that would leave DIR is refused, nothing written.
TEST_F(Bless, HostileExperimentNameIsRefused) {
  for (const std::string& name : std::vector<std::string>{"../outside", "a/b", std::string(65, 'x'), "bell\x07"}) {
    SCOPED_TRACE(name);
    json doc = golden_doc();
    json& run = doc["runs"][0];
    run["experiment"] = name;
    doc["experiments"][0]["name"] = name;
    doc["experiments"][0]["spec"]["name"] = name;
    // Consistent otherwise (the id is the hash of the hostile name too), so the name is what is refused:
    // the reader refuses it in the spec (the rule run applies), before bless's own check of it.
    run["id"] = run_id(name, 0, run["prompt"].get<std::string>(), params_from_json(run["params"], "params"));
    const std::string e = scratch_.write("hostile.json", doc.dump(2));
    expect_case({"hostile", {"bless", e, "--into", scratch_ / "golden", "--yes"}, 2, "",
                 R"re(hostile.json: experiments\[0\]\.spec: .*name = .* is not allowed; allowed: a string of 1 to 64 letters, digits)re",
                 Stderr::one_line});
    EXPECT_FALSE(fs::exists(scratch_ / "golden"));
    EXPECT_FALSE(fs::exists(scratch_.path() / "outside.json"));
  }
}

}  // namespace
}  // namespace genrepro::test
