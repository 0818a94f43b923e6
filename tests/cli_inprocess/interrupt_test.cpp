// SIGINT and SIGTERM during `genrepro run` (docs/resume.md), in-process: a watcher
// thread sends the signal to this process once the checkpoint holds a given number of lines, the
// way a user's Ctrl-C or a scheduler's SIGTERM arrives, and run's own handler (cli/interrupt.hpp)
// stops the grid. Each time: exit 128 + N, the evidence file that was there before byte for byte
// intact, the checkpoint holding the finished runs and the message saying how many, a second run
// without --resume refused, and --resume completing to the uninterrupted run's evidence (volatile
// fields aside). One process runs the grid five times instead of five processes each opening
// libtorch. What only a process shows stays a process test: SIGKILL, which no handler sees, and a
// cut-short last line (tests/cli/scripts/interrupt_resume.py --part sigkill).
#include <signal.h>
#include <unistd.h>

#include <sys/file.h>
#include <fcntl.h>

#include <atomic>
#include <cstring>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_inprocess/cli_case.hpp"
#include "util/sha256.hpp"

namespace genrepro::test {
namespace {

using nlohmann::json;

// 56 runs: 28 recomputed (4 tokens each), then 28 with the KV cache (8 tokens each, in lock-step
// batches that finish out of order): the process test's grid with 7 seeds instead of 13 (SIGINT
// lands after 5 of the first 28, SIGTERM after 4 of the batched 28: both phases still have runs
// left to lose).
const char* const kMixedGrid = R"({
  "name": "mixed56",
  "description": "Recompute and KV-cache runs: long enough to interrupt in either phase.",
  "prompts": ["the river bank was", "once upon a time"],
  "runs": [
    {"mode": "sample", "temperature": [0.7, 1.3], "top_p": [0.9], "seed": [1,2,3,4,5,6,7],
     "use_cache": false, "max_new_tokens": 4},
    {"mode": "sample", "temperature": [0.7, 1.3], "top_p": [0.9], "seed": [1,2,3,4,5,6,7],
     "use_cache": true, "max_new_tokens": 8}
  ],
  "record": {"top_candidates": 2}
})";
constexpr int kRuns = 56;

// 100 short recomputed runs (the refusals' grid); `tokens` 5 makes "other experiments".
std::string grid100(int tokens) {
  return R"({"name": "grid100", "description": "100 short sampled runs: long enough to interrupt and resume.",
  "prompts": ["the river bank was", "once upon a time"], "max_new_tokens": )" +
         std::to_string(tokens) + R"(, "use_cache": false,
  "runs": [{"mode": "sample", "temperature": [0.7, 1.3], "top_p": [0.9],
            "seed": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25]}],
  "record": {"top_candidates": 2}})";
}

// A copy of the tiny model whose ln_f.bias moved by 0.01: another model with the same architecture.
std::string nudged_model(const ScratchDir& dir) {
  const std::filesystem::path into = dir / "model-v2";
  std::filesystem::copy(tiny_model(), into, std::filesystem::copy_options::recursive);
  std::string blob = read_bytes(into / "model.safetensors");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(blob[static_cast<size_t>(i)]);
  const json header = json::parse(blob.substr(8, n));
  const auto begin = header.at("ln_f.bias").at("data_offsets")[0].get<size_t>();
  const auto end = header.at("ln_f.bias").at("data_offsets")[1].get<size_t>();
  for (size_t at = 8 + n + begin; at < 8 + n + end; at += 4) {
    float v;
    std::memcpy(&v, &blob[at], 4);  // little-endian, as the host
    v += 0.01f;
    std::memcpy(&blob[at], &v, 4);
  }
  write_bytes(into / "model.safetensors", blob);
  return into.string();
}

int lines_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  int n = 0;
  for (char c; in.get(c);) n += c == '\n';
  return n;
}

// The evidence without the fields docs/evidence-format.md calls volatile.
json stripped(const std::string& path) {
  json d = json::parse(read_bytes(path));
  d.erase("created_utc");
  d.erase("resumed");  // volatile: which runs came from the checkpoint (docs/evidence-format.md)
  d["environment"]["threads"].erase("runs_concurrently");
  if (d.contains("numerics")) d["numerics"].erase("execution");
  for (json& r : d["runs"]) r.erase("timing");
  return d;
}

// While a test runs, SIGINT and SIGTERM outside `genrepro run` are recorded instead of ending the
// test binary (InterruptWatch restores this handler when run returns).
std::atomic<int> g_stray_signals{0};
extern "C" void count_stray(int) { g_stray_signals.fetch_add(1); }

class StrayGuard {
 public:
  StrayGuard() {
    struct sigaction a {};
    a.sa_handler = count_stray;
    sigemptyset(&a.sa_mask);
    ::sigaction(SIGINT, &a, &int_);
    ::sigaction(SIGTERM, &a, &term_);
  }
  ~StrayGuard() {
    ::sigaction(SIGINT, &int_, nullptr);
    ::sigaction(SIGTERM, &term_, nullptr);
  }

 private:
  struct sigaction int_ {}, term_ {};
};

struct Interrupted {
  CliResult result;
  bool sent = false;  // the watcher saw the lines and sent the signal
};

// `genrepro run grid --out out` with `sig` sent to this process once out.checkpoint holds
// `after_lines` lines (its first line is the key, then one line per finished run).
Interrupted run_interrupted(const std::string& grid, const std::string& out, int sig, int after_lines) {
  std::atomic<bool> done{false};
  std::atomic<bool> sent{false};
  const std::string checkpoint = out + ".checkpoint";
  std::thread watcher([&] {
    while (!done.load()) {
      if (lines_of(checkpoint) >= after_lines) {
        sent.store(true);
        ::kill(::getpid(), sig);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  Interrupted r;
  r.result = genrepro({"run", grid, "--model", tiny_model(), "--numerics", "reference", "--out", out});
  done.store(true);
  watcher.join();
  r.sent = sent.load();
  return r;
}

class RunInterrupted : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir("interrupt");
    grid_ = dir_->write("mixed.json", kMixedGrid);
    const CliResult r = genrepro({"run", grid_, "--model", tiny_model(), "--numerics", "reference", "--out", *dir_ / "reference.json"});
    ASSERT_EQ(r.exit, 0) << r.err;
    reference_ = new json(stripped(*dir_ / "reference.json"));
  }
  static void TearDownTestSuite() {
    delete reference_;
    delete dir_;
  }

  // Interrupts the grid with `sig` after `after` finished runs and checks everything above.
  void check(int sig, int exit_code, int after, const std::string& name) {
    ASSERT_NE(reference_, nullptr);
    ASSERT_EQ((*reference_)["runs"].size(), static_cast<size_t>(kRuns));
    const StrayGuard guard;
    const std::string out = *dir_ / ("out-" + name + ".json");
    const std::string checkpoint = out + ".checkpoint";
    const std::string older = "{\"an\": \"older evidence file that must survive\"}\n";
    write_bytes(out, older);

    const Interrupted r = run_interrupted(grid_, out, sig, after + 1);
    ASSERT_TRUE(r.sent) << name << ": the run ended (exit " << r.result.exit << ") before its checkpoint held " << after
                        << " runs: " << r.result.err;
    EXPECT_EQ(r.result.exit, exit_code) << r.result.err;
    EXPECT_EQ(read_bytes(out), older) << name << ": the old evidence changed although the run did not finish";
    const int kept = lines_of(checkpoint) - 1;
    EXPECT_GE(kept, after) << name;
    EXPECT_LT(kept, kRuns) << name;
    const std::string said = std::to_string(kept) + " of " + std::to_string(kRuns) + " runs finished and kept in " + checkpoint;
    EXPECT_NE(r.result.err.find("interrupted by " + name), std::string::npos) << r.result.err;
    EXPECT_NE(r.result.err.find(said), std::string::npos) << "expected '" << said << "' in: " << r.result.err;

    const CliResult again = genrepro({"run", grid_, "--model", tiny_model(), "--numerics", "reference", "--out", out});
    EXPECT_EQ(again.exit, 2) << again.err;
    EXPECT_NE(again.err.find("add --resume"), std::string::npos) << again.err;

    const CliResult resumed = genrepro({"run", grid_, "--model", tiny_model(), "--numerics", "reference", "--out", out, "--resume"});
    ASSERT_EQ(resumed.exit, 0) << resumed.err;
    const std::string resuming = "resuming: " + std::to_string(kept) + " finished run(s) kept";
    EXPECT_NE(resumed.err.find(resuming), std::string::npos) << "expected '" << resuming << "' in: " << resumed.err;
    EXPECT_TRUE(stripped(out) == *reference_) << name << ": the resumed evidence differs from the uninterrupted run's";
    EXPECT_FALSE(std::filesystem::exists(checkpoint)) << name << ": the checkpoint is still there after the evidence was written";
    EXPECT_EQ(g_stray_signals.load(), 0) << name << ": a signal arrived outside the run";
  }

  static ScratchDir* dir_;
  static std::string grid_;
  static json* reference_;
};

ScratchDir* RunInterrupted::dir_ = nullptr;
std::string RunInterrupted::grid_;
json* RunInterrupted::reference_ = nullptr;

// SIGINT while runs are recomputed one after another (the first phase); SIGTERM while KV-cache
// batches run, after the first batch has finished (the second phase). One test, so that gtest's
// shards do not each make the uninterrupted reference.
TEST_F(RunInterrupted, SigintAndSigtermKeepTheOldEvidenceAndResumeToTheUninterruptedRun) {
  check(SIGINT, 130, 5, "SIGINT");
  check(SIGTERM, 143, kRuns / 2 + 4, "SIGTERM");
}

// What --resume refuses (docs/resume.md): a checkpoint from other experiments, another model or
// another build, a damaged line that is not the last, a line edited without its digest, a second writer (an unwritable --out: the
// next test). Each:
// exit 2, one error line after at most the model and plan lines, the checkpoint byte for byte
// untouched. The checkpoint is a real one, left by a run stopped with SIGINT.
TEST(RunResume, RefusesWhatItCannotContinueAndTouchesNothing) {
  const ScratchDir dir("refusals");
  const std::string grid = dir.write("grid.json", grid100(4));
  const std::string other = dir.write("other/grid.json", grid100(5));
  const std::string out = dir / "refused.json";
  const std::string checkpoint = out + ".checkpoint";
  {
    const StrayGuard guard;
    const Interrupted r = run_interrupted(grid, out, SIGINT, 4);
    ASSERT_TRUE(r.sent) << "the run ended before its checkpoint held 3 runs: " << r.result.err;
    ASSERT_EQ(r.result.exit, 130) << r.result.err;
  }
  std::string kept = read_bytes(checkpoint);

  const auto refused = [&](const std::string& what, const std::string& phrase, const std::vector<std::string>& args) {
    const CliResult r = genrepro(args);
    EXPECT_EQ(r.exit, 2) << what << ": " << r.err;
    EXPECT_NE(r.err.find(phrase), std::string::npos) << what << ": expected '" << phrase << "' in: " << r.err;
    EXPECT_LE(nonblank_lines(r.err), 3) << what << ": the model line, the plan line and one error at most: " << r.err;
    EXPECT_EQ(read_bytes(checkpoint), kept) << what << ": the refused checkpoint was changed";
  };
  refused("other experiments", "is from different experiments: experiments[0].sha256",
          {"run", other, "--out", out, "--resume", "--model", tiny_model()});
  refused("another model", "is from a different model: model.files.model.safetensors.sha256",
          {"run", grid, "--out", out, "--resume", "--model", nudged_model(dir)});

  // Another build: the same checkpoint as a different genrepro build would have written it (a
  // rebuilt binary of the same dirty tree has the same commit string: the files' sha256 tell).
  // Every line is {"sha256":"<hex of the body's bytes>","line":<body>} (docs/resume.md): an edit
  // that re-frames its body is what a different build would have written.
  const auto frame = [](const std::string& body) { return "{\"sha256\":\"" + sha256_hex(body) + "\",\"line\":" + body + "}"; };
  const size_t first_end = kept.find('\n');
  ASSERT_NE(first_end, std::string::npos);
  const std::string head = kept.substr(0, first_end), rest = kept.substr(first_end + 1);
  json first = json::parse(head).at("line");
  auto& files = first.at("key").at("genrepro").at("files_sha256");
  ASSERT_FALSE(files.empty());
  files.begin().value() = std::string(64, '0');
  write_bytes(checkpoint, frame(first.dump()) + "\n" + rest);
  kept = read_bytes(checkpoint);
  refused("another build", "is from a different build of genrepro: genrepro.files_sha256.",
          {"run", grid, "--out", out, "--resume", "--model", tiny_model()});

  // A damaged line that is not the last is not guessed at.
  write_bytes(checkpoint, head + "\n{not json\n" + rest);
  kept = read_bytes(checkpoint);
  refused("a damaged line", "line 2:", {"run", grid, "--out", out, "--resume", "--model", tiny_model()});

  // A run line edited by hand (one digit of its output ids) without its digest: the digest finds it.
  const size_t second_end = rest.find('\n');
  ASSERT_NE(second_end, std::string::npos);
  std::string second = rest.substr(0, second_end);
  const std::string ids_key = "\"output_ids\":[";
  const size_t at = second.find(ids_key);
  ASSERT_NE(at, std::string::npos);
  char& digit = second[at + ids_key.size()];
  digit = digit == '1' ? '2' : '1';
  write_bytes(checkpoint, head + "\n" + second + "\n" + rest.substr(second_end + 1));
  kept = read_bytes(checkpoint);
  refused("an edited line", "line 2: its bytes hash to sha256", {"run", grid, "--out", out, "--resume", "--model", tiny_model()});

  // Two writers of one --out: the second finds the checkpoint locked (flock locks belong to an
  // open file, so this process's own second open conflicts as another process's would).
  {
    const int held = ::open(checkpoint.c_str(), O_RDWR);
    ASSERT_GE(held, 0);
    ASSERT_EQ(::flock(held, LOCK_EX | LOCK_NB), 0);
    const CliResult r = genrepro({"run", grid, "--out", out, "--resume", "--model", tiny_model()});
    ::close(held);
    EXPECT_EQ(r.exit, 2) << r.err;
    EXPECT_NE(r.err.find("another genrepro process is writing this checkpoint"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("running"), std::string::npos) << "refused only after the plan: " << r.err;
  }

}

// An unwritable --out is refused before the model loads, naming the checkpoint it cannot make.
// /proc refuses new files even to root, where procfs is mounted; elsewhere (a chroot) the test says
// it cannot run rather than pass.
TEST(RunResume, AnUnwritableOutIsRefusedBeforeAnythingRuns) {
  if (!std::filesystem::exists("/proc/self/status")) GTEST_SKIP() << "no procfs at /proc here: no path is unwritable for root";
  const ScratchDir dir("unwritable");
  const std::string grid = dir.write("grid.json", grid100(4));
  const CliResult r = genrepro({"run", grid, "--out", "/proc/genrepro-cannot-write-here.json", "--model", tiny_model()});
  EXPECT_EQ(r.exit, 2) << r.err;
  EXPECT_NE(r.err.find("/proc/genrepro-cannot-write-here.json.checkpoint: cannot"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("running"), std::string::npos) << "found only after the plan: " << r.err;
}

}  // namespace
}  // namespace genrepro::test
