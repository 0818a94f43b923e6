#include "cli_inprocess/cli_case.hpp"

#include <filesystem>
#include <memory>
#include <optional>

#include <gtest/gtest.h>

#include "cli/engine/engine_verbs.hpp"
#include "support/env_guard.hpp"
#include "support/text_match.hpp"

namespace genrepro::test {

namespace {

std::string substitute_scratch(std::string arg, const ScratchDir& scratch) {
  const std::string key = "{scratch}";
  for (std::size_t at = arg.find(key); at != std::string::npos; at = arg.find(key, at))
    arg.replace(at, key.size(), scratch.str());
  return arg;
}

// The environment every case runs in, set once for the process: the tokenizer files of the
// build, a cache directory of its own, and no Hugging Face cache or $GENREPRO_MODEL from the
// machine, so that no case can pick up a model the test did not name (the subprocess tests'
// genrepro_cli_test sets the same variables).
class CliEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    cache_ = std::make_unique<ScratchDir>("cli-cache");
    guards_.emplace_back(std::make_unique<EnvGuard>("GENREPRO_TOKENIZER_DIR", tokenizer_dir()));
    guards_.emplace_back(std::make_unique<EnvGuard>("GENREPRO_CACHE_DIR", cache_->str()));
    guards_.emplace_back(std::make_unique<EnvGuard>("HF_HUB_CACHE", *cache_ / "no-hf-cache"));
    guards_.emplace_back(std::make_unique<EnvGuard>("GENREPRO_MODEL", std::nullopt));
  }
  void TearDown() override {
    guards_.clear();
    cache_.reset();
  }

 private:
  std::unique_ptr<ScratchDir> cache_;
  std::vector<std::unique_ptr<EnvGuard>> guards_;
};

[[maybe_unused]] ::testing::Environment* const kEnvironment = ::testing::AddGlobalTestEnvironment(new CliEnvironment);

}  // namespace

std::string source_path(const std::string& relative) { return std::string(GENREPRO_SOURCE_DIR) + "/" + relative; }
std::string tiny_model() { return GENREPRO_TEST_MODEL_DIR; }
std::string broken_model(const std::string& name) { return std::string(GENREPRO_TEST_BROKEN_MODELS_DIR) + "/" + name; }
std::string tokenizer_dir() { return GENREPRO_TEST_TOKENIZER_DIR; }

CliResult genrepro(const std::vector<std::string>& args, const CliInput& input) {
  return run_genrepro(args, cli::local_engine_verbs(), input);
}

std::vector<std::string> case_args(const CliCase& c, const ScratchDir& scratch) {
  std::vector<std::string> args;
  for (const std::string& a : c.args) args.push_back(substitute_scratch(a, scratch));
  return args;
}

void expect_result(const CliCase& c, const std::vector<std::string>& args, const CliResult& r) {
  SCOPED_TRACE(describe(args, r));
  EXPECT_EQ(r.exit, c.exit);
  if (!c.stdout_regex.empty()) EXPECT_TRUE(Searches(c.stdout_regex, r.out)) << "(stdout)";
  if (!c.stderr_regex.empty()) EXPECT_TRUE(Searches(c.stderr_regex, r.err)) << "(stderr)";
  if (c.lines == Stderr::one_line) EXPECT_EQ(nonblank_lines(r.err), 1) << "stderr must be exactly one line";
}

void expect_case(const CliCase& c) {
  const ScratchDir scratch("cli");
  const std::vector<std::string> args = case_args(c, scratch);
  expect_result(c, args, genrepro(args));
}

void expect_bad_input_keeps_out(const std::vector<std::string>& args_without_out, const std::string& regex) {
  const std::string sentinel = "{\"previous\": \"evidence, must survive\"}\n";
  ScratchDir dir("cli-out");
  const std::string out = dir.write("evidence.json", sentinel);
  std::vector<std::string> args = args_without_out;
  args.insert(args.end(), {"--out", out});
  const CliResult r = genrepro(args);
  SCOPED_TRACE(describe(args, r));
  EXPECT_EQ(r.exit, 2);
  EXPECT_EQ(nonblank_lines(r.err), 1) << "stderr must be exactly one line";
  EXPECT_TRUE(Searches(regex, r.err));
  EXPECT_EQ(read_bytes(out), sentinel) << "the existing --out file was changed";
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"evidence.json"}) << "files left beside --out";
}

}  // namespace genrepro::test
