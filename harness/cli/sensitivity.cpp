// genrepro sensitivity EXPERIMENTS... --out DIR: the experiments run once per configuration cell
// (each a child `genrepro run`, its environment set before the BLAS and libtorch load), every
// cell compared with the reference cell. genrepro sensitivity --compare EVIDENCE... --out DIR:
// the same matrix from evidence made anywhere (other machines, builds, CI runners).
// docs/sensitivity.md.
#include <fcntl.h>
#include <sys/stat.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/blas_libraries.hpp"
#include "cli/flag_kinds.hpp"
#include "cli/output_paths.hpp"
#include "cli/interrupt.hpp"
#include "cli/verbs.hpp"
#include "compare/sensitivity.hpp"
#include "evidence/evidence.hpp"
#include "evidence/kernel_requirements.hpp"
#include "evidence/numerics_record.hpp"
#include "cli/forced_cache_experiments.hpp"
#include "cli/model_choice.hpp"
#include "report/sensitivity_page.hpp"
#include "model/model_config.hpp"
#include "plan/plan_checks.hpp"
#include "plan/run_cost.hpp"
#include "plan/run_plan.hpp"
#include "params/experiment_file.hpp"
#include "tokenizer/tokenizer.hpp"
#include "util/atomic_file.hpp"
#include "util/errors.hpp"
#include "util/text_excerpt.hpp"

extern char** environ;

namespace genrepro::cli {

namespace {

namespace fs = std::filesystem;

// blas last: its cells (the reference BLAS is slow) come at the end of the default design.
const std::vector<std::string> kAxes = {"kernels", "threads", "numerics", "batch", "cache", "blas"};

struct SensitivityOptions {
  std::vector<std::string> inputs;  // experiments, or evidence with --compare
  bool compare = false;
  std::string out;
  std::string cells;       // --cells AXIS=V,V;AXIS=V
  std::string reference;   // --compare: the reference file (default: the first)
  bool plan = false;       // say what would run, and roughly how long, and run nothing
  int threads = 2;         // the largest --threads value of the threads axis
  int64_t max_runs = static_cast<int64_t>(kDefaultMaxRuns);
  ModelChoice model;
  std::vector<std::string> given;  // the flags on the command line, for the ones a mode ignores
};

// Every value each axis offers here; the first is the reference cell's.
std::map<std::string, std::vector<std::string>> offered_axes(int threads) {
  std::map<std::string, std::vector<std::string>> axes;
  axes["kernels"] = {"portable"};
  // Every OpenBLAS core this CPU can execute (one it lacks the instructions for would crash).
  for (const std::string& core : executable_openblas_cores(this_cpu_flags())) axes["kernels"].push_back("native:" + core);
  for (int t = 1; t <= threads; ++t) axes["threads"].push_back(std::to_string(t));
  axes["numerics"] = {"reference", "tiled", "strict"};
  axes["batch"] = {"1", "proven", "4-inexact", "16-inexact"};
  axes["cache"] = {kCacheAsWritten, "recompute", "cached"};
  for (const BlasLibrary& b : installed_blas_libraries()) axes["blas"].push_back(b.name);
  return axes;
}

// The cache axis by default: as written, and each forced path that changes some run (the
// article's experiments all recompute, so forcing recompute would repeat the reference cell).
std::vector<std::string> default_cache_values(const std::vector<ExperimentSpec>& experiments) {
  bool some_cached = false, some_recompute = false;
  for (const ExperimentSpec& spec : experiments)
    for (const ExpandedRun& run : spec.runs) (run.params.use_cache ? some_cached : some_recompute) = true;
  std::vector<std::string> values = {kCacheAsWritten};
  if (some_cached) values.push_back("recompute");
  if (some_recompute) values.push_back("cached");
  return values;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep))
    if (!part.empty()) parts.push_back(part);
  return parts;
}

// --cells "kernels=portable,native:SkylakeX;threads=1,2": each axis named keeps only the values
// given (its first value becomes the reference's); axes not named keep every offered value.
struct ChosenAxes {
  std::map<std::string, std::vector<std::string>> values;
  std::set<std::string> named;  // the axes --cells named
};

std::string joined_values(const std::vector<std::string>& values) {
  std::string text;
  for (const std::string& v : values) text += (text.empty() ? "" : ", ") + v;
  return text;
}

// A value the axis takes that the default design does not list: any thread count run accepts
// (not only up to --threads), any inexact batch run accepts, an OpenBLAS core named in another
// case. Empty when `v` is not one; else the value as the axis spells it.
std::string also_valid(const std::string& axis, const std::string& v) {
  const auto whole = [](const std::string& t, int lo, int hi) {
    if (t.empty() || t.size() > 3 || t.find_first_not_of("0123456789") != std::string::npos) return false;
    const int n = std::stoi(t);
    return n >= lo && n <= hi;
  };
  if (axis == "threads" && whole(v, 1, 256)) return std::to_string(std::stoi(v));
  if (axis == "batch" && v.size() > 8 && v.compare(v.size() - 8, 8, "-inexact") == 0 && whole(v.substr(0, v.size() - 8), 2, 256))
    return std::to_string(std::stoi(v.substr(0, v.size() - 8))) + "-inexact";
  if (axis == "kernels" && v.rfind("native:", 0) == 0) {
    const KernelSet* core = find_openblas_core(v.substr(7));
    if (core && missing_flags(*core, this_cpu_flags()).empty()) return std::string("native:") + core->name;
  }
  return {};
}

// Why `v` is not a value of `axis` here, in one line naming what is.
[[noreturn]] void refuse_cell_value(const std::string& axis, const std::string& v, const std::vector<std::string>& offered) {
  const std::string shown = short_value(v, 60);
  if (axis == "kernels" && v.rfind("native:", 0) == 0) {
    if (const KernelSet* core = find_openblas_core(v.substr(7)))
      throw UsageError("--cells kernels=" + shown + ": this CPU has no " + joined_values(missing_flags(*core, this_cpu_flags())) +
                       ", which OpenBLAS's " + core->name + " kernels use (they would end in an illegal instruction); allowed: " +
                       joined_values(offered));
    throw UsageError("--cells kernels=" + shown + ": not an OpenBLAS core type; allowed: " + joined_values(offered));
  }
  if (axis == "threads")
    throw UsageError("--cells threads=" + shown + ": allowed: a whole number from 1 to 256 (what run --threads takes)");
  if (axis == "batch")
    throw UsageError("--cells batch=" + shown + ": allowed: 1, proven, or N-inexact with N a whole number from 2 to 256 (run --batch N --allow-inexact-batch)");
  throw UsageError("--cells " + axis + "=" + shown + ": not offered on this machine; allowed: " + joined_values(offered));
}

ChosenAxes chosen_axes(const std::string& text, int threads) {
  ChosenAxes chosen{offered_axes(threads), {}};
  std::map<std::string, std::vector<std::string>>& axes = chosen.values;
  for (const std::string& item : split(text, ';')) {
    const std::size_t eq = item.find('=');
    const std::string axis = item.substr(0, eq);
    if (eq == std::string::npos || !axes.count(axis))
      throw UsageError("--cells " + short_value(item, 60) +
                       ": allowed: AXIS=VALUE[,VALUE...] with AXIS one of kernels, threads, numerics, batch, cache, blas");
    if (chosen.named.count(axis))
      throw UsageError("--cells: the axis " + axis + " is named twice; allowed: each axis once, with all its values (" + axis + "=A,B)");
    std::vector<std::string> values;
    for (const std::string& given : split(item.substr(eq + 1), ',')) {
      const std::vector<std::string>& offered = axes[axis];
      std::string v = given;
      if (std::find(offered.begin(), offered.end(), v) == offered.end()) {
        v = also_valid(axis, given);
        if (v.empty()) refuse_cell_value(axis, given, offered);
      }
      // Two cells of one name would overwrite each other's evidence and pair as one column.
      if (std::find(values.begin(), values.end(), v) != values.end())
        throw UsageError("--cells " + axis + "=" + short_value(given, 60) + ": given twice in " + short_value(item, 80) +
                         "; allowed: each value once");
      values.push_back(v);
    }
    if (values.empty()) throw UsageError("--cells " + short_value(item, 60) + ": give at least one value");
    axes[axis] = values;
    chosen.named.insert(axis);
  }
  return chosen;
}

// One factor at a time: the reference (every axis at its first value), then each other value of
// each axis with the rest at the reference's: what one-factor attribution needs, in
// 1 + sum(values - 1) cells rather than the product.
std::vector<std::map<std::string, std::string>> one_factor_cells(const std::map<std::string, std::vector<std::string>>& axes) {
  std::map<std::string, std::string> reference;
  for (const auto& [axis, values] : axes) reference[axis] = values.front();
  std::vector<std::map<std::string, std::string>> cells = {reference};
  for (const std::string& axis : kAxes)
    for (std::size_t i = 1; i < axes.at(axis).size(); ++i) {
      std::map<std::string, std::string> cell = reference;
      cell[axis] = axes.at(axis)[i];
      cells.push_back(cell);
    }
  return cells;
}

// Batching applies to the runs that use the KV cache only (docs/numerics.md, "What runs
// together"): on a cell whose every run recomputes, a batch value other than the reference's runs
// exactly the reference's arithmetic. (--numerics tiled changes recompute runs too: not skipped.)
bool some_run_uses_cache(const std::vector<ExperimentSpec>& experiments, const std::string& cache) {
  if (cache == "cached") return true;
  if (cache == "recompute") return false;
  for (const ExperimentSpec& spec : experiments)
    for (const ExpandedRun& run : spec.runs)
      if (run.params.use_cache) return true;
  return false;
}

// Why `cell` cannot change any run, or empty.
std::string changes_nothing(const std::map<std::string, std::string>& cell, const std::map<std::string, std::string>& reference,
                            const std::vector<ExperimentSpec>& experiments) {
  if (cell.at("batch") == reference.at("batch") || some_run_uses_cache(experiments, cell.at("cache"))) return {};
  return "every run of this cell recomputes (use_cache false) and only KV-cache runs are batched";
}

BlasLibrary blas_library(const std::string& name) {
  for (const BlasLibrary& b : installed_blas_libraries())
    if (b.name == name) return b;
  throw Error("sensitivity: blas=" + name + " is no longer installed");
}

// OpenBLAS core types mean nothing to another BLAS: such a cell would be labelled with a kernel
// that did not run, so it is refused rather than made.
void check_cells_make_sense(const std::vector<std::map<std::string, std::string>>& cells) {
  for (const auto& cell : cells) {
    const std::string& kernels = cell.at("kernels");
    if (kernels != "portable" && !blas_library(cell.at("blas")).openblas)
      throw UsageError("--cells: a cell with blas=" + cell.at("blas") + " and kernels=" + kernels +
                       ": OpenBLAS core types apply to OpenBLAS only; allowed with blas=" + cell.at("blas") + ": kernels=portable");
  }
}

std::string cell_name(const std::map<std::string, std::string>& axes) {
  std::string name;
  for (const std::string& axis : kAxes) {
    std::string v = axes.at(axis);
    if (axis == "cache" && v == kCacheAsWritten) continue;  // the names cells had before the axis
    for (char& c : v)
      if (c == ':') c = '-';
    name += (name.empty() ? "" : "_") + axis + "-" + v;
  }
  return name;
}

// The child's arguments and environment for one cell.
struct ChildCommand {
  std::vector<std::string> args;
  std::map<std::string, std::string> env_set;
  std::vector<std::string> env_unset;
};

ChildCommand child_command(const SensitivityOptions& o, const std::map<std::string, std::string>& cell, const std::string& out,
                           const std::string& library_path, const std::vector<std::string>& experiments) {
  ChildCommand c;
  c.args = {"run"};
  for (const std::string& e : experiments) c.args.push_back(e);
  if (o.model.dir) c.args.insert(c.args.end(), {"--model", *o.model.dir});
  if (o.model.require_real) c.args.push_back("--require-real-model");
  c.args.insert(c.args.end(), {"--out", out, "--threads", cell.at("threads")});
  const std::string& kernels = cell.at("kernels");
  const bool strict = cell.at("numerics") == "strict";
  c.args.insert(c.args.end(), {"--numerics", cell.at("numerics")});
  c.env_unset = {kOpenblasCoretypeEnv, kAtenCpuCapabilityEnv};
  if (strict) {
    // Strict numerics take no --cpu-kernels (their own kernels decide the bits): a kernels cell
    // still loads the OpenBLAS core it names, which is what shows it changes nothing.
    if (kernels.rfind("native:", 0) == 0) c.env_set[kOpenblasCoretypeEnv] = kernels.substr(std::strlen("native:"));
  } else if (kernels == "portable" && !blas_library(cell.at("blas")).openblas) {
    // run refuses portable with a BLAS that is not OpenBLAS (it cannot pin Haswell kernels
    // there); native with ATen pinned to portable's AVX2 keeps every kernel but the BLAS's.
    c.args.insert(c.args.end(), {"--cpu-kernels", "native"});
    c.env_set[kAtenCpuCapabilityEnv] = kPortableAtenEnv;
  } else if (kernels.rfind("native:", 0) == 0) {
    c.args.insert(c.args.end(), {"--cpu-kernels", "native"});
    c.env_set[kOpenblasCoretypeEnv] = kernels.substr(std::strlen("native:"));
  }
  if (!library_path.empty()) c.env_set["LD_LIBRARY_PATH"] = library_path;
  const std::string& batch = cell.at("batch");
  if (batch == "1") c.args.insert(c.args.end(), {"--batch", "1"});
  if (batch.find("-inexact") != std::string::npos) {
    // Every strict batch is exact by construction: the same batch, nothing to allow.
    c.args.insert(c.args.end(), {"--batch", batch.substr(0, batch.find('-'))});
    if (!strict) c.args.push_back("--allow-inexact-batch");
  }
  return c;
}

// SIGINT, SIGTERM and SIGHUP held (blocked) for a scope: one that arrives waits, and pending()
// takes it, so the matrix stops where it can put things back.
class StopSignalsHeld {
 public:
  StopSignalsHeld() {
    sigemptyset(&stops_);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stops_, sig);
    pthread_sigmask(SIG_BLOCK, &stops_, &previous_);
  }
  ~StopSignalsHeld() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  StopSignalsHeld(const StopSignalsHeld&) = delete;
  StopSignalsHeld& operator=(const StopSignalsHeld&) = delete;

  // The signal that arrived (and is now taken), or 0.
  int pending() const {
    const timespec now{0, 0};
    siginfo_t info;
    const int sig = sigtimedwait(&stops_, &info, &now);
    return sig > 0 ? sig : 0;
  }

 private:
  sigset_t stops_, previous_;
};

struct ChildExit {
  int code = 0;    // the child's exit code (128 + N when a signal ended it)
  int signal = 0;  // SIGINT, SIGTERM or SIGHUP sent to sensitivity itself while the child ran (then passed on)
};

// Runs genrepro (this very binary) as a child with stdout and stderr into `log`. SIGINT, SIGTERM
// and SIGHUP are held while it runs and passed on to it, and sensitivity waits for it to end:
// a stopped matrix never leaves a child writing its evidence behind.
ChildExit spawn_child(const ChildCommand& c, const std::string& log) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    const std::string key = kv.substr(0, kv.find('='));
    if (std::find(c.env_unset.begin(), c.env_unset.end(), key) == c.env_unset.end() && !c.env_set.count(key)) env.push_back(kv);
  }
  for (const auto& [k, v] : c.env_set) env.push_back(k + "=" + v);
  std::vector<char*> argv, envp;
  std::string self = "/proc/self/exe";
  argv.push_back(self.data());
  std::vector<std::string> args = c.args;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  sigset_t stops, previous;
  sigemptyset(&stops);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stops, sig);
  pthread_sigmask(SIG_BLOCK, &stops, &previous);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &stops);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, "/proc/self/exe", &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    throw Error(std::string("sensitivity: could not start genrepro run: ") + std::strerror(rc));
  }
  ChildExit result;
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) break;
    const timespec tick{0, 50 * 1000 * 1000};
    siginfo_t info;
    const int sig = sigtimedwait(&stops, &info, &tick);
    if (sig > 0) {
      if (result.signal == 0) result.signal = sig;
      ::kill(pid, sig);  // the child (a genrepro run) stops at its next safe point, its checkpoint whole
    }
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  result.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::string last_line_of(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

[[noreturn]] void cannot_write(const std::string& path, const std::string& step, int error) {
  throw Error("sensitivity: cannot write " + short_value(path, 200) + ": " + step + ": " + std::strerror(error) +
              "; nothing was replaced (the outputs already in --out, if any, are as they were); free space or give another --out");
}

// Writes every file or none: each to a temporary beside it, flushed to disk; only when all are
// written is each renamed over its target, the old one kept as a hard link until every rename
// has succeeded, so a failed rename puts back the files already replaced. A reader never sees a
// sensitivity.json beside the Markdown or page of another matrix.
void write_files_together(const std::vector<std::pair<std::string, std::string>>& files) {
  const std::string tag = "." + std::to_string(::getpid()) + ".partial";
  std::vector<std::string> temps, backups(files.size());
  const auto discard = [&](std::size_t from) {
    for (std::size_t i = from; i < temps.size(); ++i) ::unlink(temps[i].c_str());
    for (const std::string& b : backups)
      if (!b.empty()) ::unlink(b.c_str());
  };
  for (const auto& [path, content] : files) {
    const std::string temp = path + tag;
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      const int e = errno;
      discard(0);
      cannot_write(path, "creating its temporary file", e);
    }
    temps.push_back(temp);
    std::size_t done = 0;
    int e = 0;
    while (done < content.size()) {
      const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        e = n < 0 ? errno : ENOSPC;
        break;
      }
      done += static_cast<std::size_t>(n);
    }
    if (e == 0 && ::fsync(fd) != 0) e = errno;
    if (::close(fd) != 0 && e == 0) e = errno;
    if (e != 0) {
      discard(0);
      cannot_write(path, "writing", e);
    }
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    struct stat st {};
    if (::lstat(files[i].first.c_str(), &st) != 0) continue;
    const std::string backup = files[i].first + "." + std::to_string(::getpid()) + ".previous";
    if (::link(files[i].first.c_str(), backup.c_str()) != 0) {
      const int e = errno;
      discard(0);
      cannot_write(files[i].first, "keeping the old file until the new ones are in place", e);
    }
    backups[i] = backup;
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (::rename(temps[i].c_str(), files[i].first.c_str()) == 0) continue;
    const int e = errno;
    for (std::size_t j = 0; j < i; ++j) {
      if (!backups[j].empty()) {
        ::rename(backups[j].c_str(), files[j].first.c_str());
        backups[j].clear();
      } else {
        ::unlink(files[j].first.c_str());
      }
    }
    discard(i);
    cannot_write(files[i].first, "renaming its temporary file over it", e);
  }
  discard(temps.size());
}

void write_outputs(const SensitivityMatrix& m, const std::string& dir, Console& io) {
  const std::string json_path = (fs::path(dir) / "sensitivity.json").string();
  const std::string md_path = (fs::path(dir) / "sensitivity.md").string();
  const std::string html_path = (fs::path(dir) / "sensitivity.html").string();
  write_files_together({{json_path, json_document_text(sensitivity_to_json(m)) + "\n"},
                        {md_path, sensitivity_markdown(m)},
                        {html_path, sensitivity_html(m)}});
  for (std::size_t c = 0; c < m.cells.size(); ++c) {
    const CellSummary& s = m.summaries[c];
    io.out << "sensitivity: " << m.cells[c].name << (c == m.reference ? " (reference)" : "") << ": " << s.identical << " identical, "
           << s.same_tokens << " same tokens, " << s.diverged << " diverged, " << s.missing << " missing\n";
  }
  io.out << "wrote " << json_path << ", " << md_path << " and " << html_path << "\n";
}

// --out's directory, made if missing: a path that cannot be a directory is bad input, not a bug.
void make_out_directory(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw UsageError("--out " + short_value(dir, 200) + ": cannot create the directory (" +
                     (ec ? ec.message() : std::string("not a directory")) + "); give a directory sensitivity can create and write");
}

// The same file, by device and inode (another spelling of it included); false when either is missing.
bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return fs::equivalent(a, b, ec) && !ec;
}

// Whether `path` lies inside `dir` (both made absolute, symlinks resolved as far as they exist).
bool inside(const std::string& path, const std::string& dir) {
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  const fs::path d = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  const auto [d_end, p_at] = std::mismatch(d.begin(), d.end(), p.begin(), p.end());
  return d_end == d.end();
}

// No output may be an input: the three files are replaced, and (without --compare) DIR/cells is
// the new matrix's, the earlier one's moved aside while it runs.
void check_inputs_survive(const SensitivityOptions& o) {
  for (const std::string& input : o.inputs) {
    for (const char* name : {"sensitivity.json", "sensitivity.md", "sensitivity.html"}) {
      const std::string output = (fs::path(o.out) / name).string();
      if (same_file(input, output))
        throw UsageError("--out " + short_value(o.out, 200) + ": its " + name + " is the input " + short_value(input, 200) +
                         ", which the matrix would overwrite; give another --out directory");
    }
    if (o.compare) continue;
    for (const char* dir : {"cells", "cells.previous", "cells.failed"})
      if (inside(input, (fs::path(o.out) / dir).string()))
        throw UsageError("--out " + short_value(o.out, 200) + ": the input " + short_value(input, 200) + " is inside its " + dir +
                         "/, which this matrix replaces; copy the file elsewhere or give another --out directory");
  }
}

// The library the cell asked for must be the one its evidence says was loaded: a loader that
// picked another (an LD_PRELOAD, a library without sgemm_) would otherwise label its bits wrongly.
void check_blas_loaded(const std::string& cell, const BlasLibrary& asked, const Evidence& e, const std::string& evidence) {
  const BlasInfo& got = e.environment.blas;
  std::error_code ec;
  const std::string want = asked.blas.empty() ? "" : std::filesystem::canonical(asked.blas, ec).string();
  const bool ok = asked.blas.empty() ? got.vendor == "openblas" : got.resolved.value_or("") == want;
  if (!ok)
    throw UsageError("sensitivity: cell " + cell + ": asked for blas=" + asked.name + " (" + (want.empty() ? "OpenBLAS, the default" : want) +
                     "), its evidence says " + got.vendor + " (" + got.resolved.value_or("no sgemm_") + ") was loaded: " + evidence);
}

// The plan's time estimate per cell, before any cell runs: every cell starts a genrepro run
// (libtorch's start and the numerics probe, ~1.2 s measured per process on the tiny fixture),
// then runs the experiments by `genrepro plan`'s cost model on the cell's threads. A BLAS other than
// OpenBLAS is Netlib's unblocked sgemm here: 5x slower, measured on the article's matrix.
constexpr double kCellStartSeconds = 1.2;
constexpr double kNetlibBlasSlowdown = 5.0;

struct CellEstimate {
  std::size_t runs = 0;
  double seconds = 0;
};

class MatrixCost {
 public:
  MatrixCost(const ModelChoice& model, const std::vector<ExperimentSpec>& experiments) {
    const ModelFiles files = resolve_chosen_model(model);
    config_ = read_gpt2_config(files.config);
    const Gpt2Tokenizer tokenizer = Gpt2Tokenizer::from_files(files.vocab, files.merges);
    check_vocabularies(config_, files.config, tokenizer, files.vocab);
    plan_ = plan_runs(experiments, Shard{}, config_, tokenizer);
    // Every cell's child runs these runs whole: evidence its readers refuse would fail each cell.
    try {
      check_evidence_size(plan_);
    } catch (const SpecError& e) {
      throw SpecError(std::string("sensitivity: every cell's genrepro run would refuse this: ") + e.what() +
                      " (in sensitivity: lower record.top_candidates in the experiment files, or split them)");
    }
  }

  CellEstimate of(const std::map<std::string, std::string>& cell) const {
    CellEstimate e;
    double seconds = 0;
    const std::string& cache = cell.at("cache");
    for (std::size_t i = 0; i < plan_.runs.size(); ++i) {
      ExpandedRun run = plan_.runs[i];
      if (cache != kCacheAsWritten) run.params.use_cache = cache == "cached";
      seconds += estimated_run_seconds(run, static_cast<int64_t>(plan_.prompt_ids[i].size()), config_);
    }
    e.runs = plan_.runs.size();
    const double concurrent = std::min<double>(std::stod(cell.at("threads")), std::max<double>(double(e.runs), 1));
    const double slowdown = blas_library(cell.at("blas")).openblas ? 1.0 : kNetlibBlasSlowdown;
    e.seconds = kCellStartSeconds + seconds * slowdown / concurrent;
    return e;
  }

 private:
  Gpt2Config config_;
  RunPlan plan_;
};

std::string seconds_text(double s) {
  char text[32];
  std::snprintf(text, sizeof text, s < 10 ? "%.1f s" : "%.0f s", s);
  return text;
}

std::string command_text(const ChildCommand& c) {
  std::string text;
  for (const auto& [k, v] : c.env_set) text += k + "=" + v + " ";
  text += "genrepro";
  for (const std::string& a : c.args) text += " " + a;
  return text;
}

// --plan: every cell's child command and estimate, nothing run or written.
int print_plan(const SensitivityOptions& o, const std::vector<std::map<std::string, std::string>>& cells,
               const std::vector<CellExperiments>& experiments, const std::vector<CellEstimate>& estimates,
               const std::vector<std::string>& no_effect, const std::string& cell_dir, Console& io) {
  double total = 0;
  std::size_t runs = 0;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const std::string name = cell_name(cells[i]);
    const std::string evidence = (fs::path(cell_dir) / (name + ".json")).string();
    const std::string library = blas_library(cells[i].at("blas")).openblas ? "" : "<private dir with " + cells[i].at("blas") + "'s libblas.so.3>";
    io.out << "cell " << (i + 1) << "/" << cells.size() << " " << name << (i == 0 ? " (reference)" : "") << ": " << estimates[i].runs
           << " runs, roughly " << seconds_text(estimates[i].seconds)
           << (experiments[i].forced() ? " (the experiment files copied with use_cache forced: sensitivity writes them when it "
                                       "runs the cell; to run it elsewhere, give each file \"use_cache\" at the top level instead)"
                                     : "")
           << (no_effect[i].empty() ? "" : " (cannot change any run: " + no_effect[i] + ")") << "\n  "
           << command_text(child_command(o, cells[i], evidence, library, experiments[i].paths())) << "\n";
    total += estimates[i].seconds;
    runs += estimates[i].runs;
  }
  io.out << "plan: " << cells.size() << " cells, " << runs << " runs, roughly " << seconds_text(total)
         << " (genrepro plan's cost model plus " << kCellStartSeconds << " s to start each cell; a rough estimate)\n";
  return kExitOk;
}

// DIR/cells while a matrix runs: an earlier matrix's cells are moved to DIR/cells.previous first
// (its sensitivity.json still describes them) and put back if this one does not finish; once the
// new outputs are written, they are removed. A matrix that failed leaves its cells in
// DIR/cells.failed, logs included, and the earlier matrix as it was.
class CellDirectory {
 public:
  explicit CellDirectory(const std::string& out)
      : cells_((fs::path(out) / "cells").string()),
        previous_((fs::path(out) / "cells.previous").string()),
        failed_((fs::path(out) / "cells.failed").string()) {
    std::error_code ec;
    if (fs::exists(fs::symlink_status(previous_, ec)))
      throw UsageError("--out " + short_value(out, 200) + ": " + previous_ +
                       " holds the cells of a matrix that was stopped while another one ran (SIGKILL); move it back to " + cells_ +
                       " or remove it, then run sensitivity again");
    make_out_directory(out);
    if (fs::exists(fs::symlink_status(cells_, ec))) {
      fs::rename(cells_, previous_, ec);
      if (ec)
        throw UsageError("--out " + short_value(out, 200) + ": cannot move the earlier matrix's cells aside to " + previous_ + " (" +
                         ec.message() + "); give another --out directory");
      moved_ = true;
    }
    fs::create_directories(cells_, ec);
    if (ec) {
      restore();
      throw UsageError("--out " + short_value(out, 200) + ": cannot create " + cells_ + " (" + ec.message() + ")");
    }
  }
  CellDirectory(const CellDirectory&) = delete;
  CellDirectory& operator=(const CellDirectory&) = delete;
  ~CellDirectory() {
    if (!committed_) restore();
  }

  const std::string& path() const { return cells_; }
  // Where a cell's log is to be read after a failure.
  std::string failed_path(const std::string& file) const {
    return moved_ ? (fs::path(failed_) / fs::path(file).filename()).string() : file;
  }
  void commit() {
    committed_ = true;
    std::error_code ec;
    if (moved_) fs::remove_all(previous_, ec);
  }

 private:
  void restore() {
    if (!moved_) return;  // nothing was there: this matrix's partial cells stay, logs included
    std::error_code ec;
    fs::remove_all(failed_, ec);
    fs::rename(cells_, failed_, ec);
    fs::rename(previous_, cells_, ec);
  }

  std::string cells_, previous_, failed_;
  bool moved_ = false;
  bool committed_ = false;
};

int run_matrix(const SensitivityOptions& o, Console& io) {
  ChosenAxes axes = chosen_axes(o.cells, o.threads);
  check_cells_make_sense(one_factor_cells(axes.values));  // --cells' own errors first, before any file is read
  // Read once: the cache axis' default, its forced copies and the time estimate all use them.
  const std::vector<ExperimentSpec> specs = load_experiments(o.inputs, checked_max_runs("--max-runs", o.max_runs));
  check_inputs_survive(o);
  if (!axes.named.count("cache")) axes.values["cache"] = default_cache_values(specs);
  std::vector<std::map<std::string, std::string>> cells = one_factor_cells(axes.values);
  // A cell that cannot change any run costs a whole run of the experiments for an "identical"
  // that says nothing: left out unless --cells named its axis, and then marked.
  std::vector<std::string> no_effect, skipped;
  for (std::size_t i = 0; i < cells.size();) {
    const std::string why = i == 0 ? std::string() : changes_nothing(cells[i], cells[0], specs);
    if (!why.empty() && !axes.named.count("batch")) {
      skipped.push_back("batch=" + cells[i].at("batch"));
      cells.erase(cells.begin() + static_cast<std::ptrdiff_t>(i));
      continue;
    }
    no_effect.push_back(why);
    ++i;
  }
  if (!skipped.empty())
    io.err << "sensitivity: left out " << joined_values(skipped)
           << ": every run recomputes (use_cache false) and only KV-cache runs are batched, so those cells could not change any run "
              "(name the batch axis in --cells to run them anyway)\n";
  const std::string cell_dir = (fs::path(o.out) / "cells").string();
  // Every cell's experiment files first: a forced cache cell refused costs no cell already run.
  std::vector<CellExperiments> experiments;
  for (const auto& cell : cells) experiments.emplace_back(specs, cell.at("cache"), cell_dir, cell_name(cell));
  const MatrixCost cost(o.model, specs);
  std::vector<CellEstimate> estimates;
  double estimated = 0;
  for (const auto& cell : cells) {
    estimates.push_back(cost.of(cell));
    estimated += estimates.back().seconds;
  }
  if (o.plan) return print_plan(o, cells, experiments, estimates, no_effect, cell_dir, io);
  // From here until the outputs are written a stop is taken between steps, never inside one: an
  // earlier matrix moved aside is always put back, and no child is left running.
  const StopSignalsHeld held;
  CellDirectory directory(o.out);
  io.err << "sensitivity: " << cells.size() << " cells (the reference, then one axis changed at a time), each a 'genrepro run' of "
         << o.inputs.size() << " experiment file(s), " << estimates.front().runs * cells.size() << " runs in all, roughly "
         << seconds_text(estimated) << " (--plan lists them); the evidence goes to " << cell_dir << "\n";
  for (std::size_t i = 0; i < cells.size(); ++i)
    if (!no_effect[i].empty()) io.err << "sensitivity: cell " << cell_name(cells[i]) << " cannot change any run: " << no_effect[i] << "\n";
  std::vector<SensitivityCell> made;
  double first_seconds = 0;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const std::string name = cell_name(cells[i]);
    const std::string evidence = (fs::path(cell_dir) / (name + ".json")).string();
    const std::string log = (fs::path(cell_dir) / (name + ".log")).string();
    const BlasLibrary blas = blas_library(cells[i].at("blas"));
    const char* inherited = std::getenv("LD_LIBRARY_PATH");
    const auto start = std::chrono::steady_clock::now();
    ChildExit exit;
    {
      experiments[i].write();
      const PreferredBlasDir preferred(blas);  // removed when the child is done
      exit = spawn_child(child_command(o, cells[i], evidence, preferred.library_path(inherited ? inherited : ""),
                                       experiments[i].paths()),
                         log);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (exit.signal == 0) exit.signal = held.pending();
    if (exit.signal != 0) {
      io.err << "sensitivity: stopped by " << signal_name(exit.signal) << " in cell " << (i + 1) << "/" << cells.size() << " " << name
             << "; its genrepro run got the signal too and ended (exit " << exit.code
             << "); no matrix was written, and an earlier one in --out is as it was\n";
      return interrupted_exit_code(exit.signal);
    }
    if (exit.code != 0)
      throw UsageError("sensitivity: cell " + name + ": genrepro run exited " + std::to_string(exit.code) + " (" + last_line_of(log) +
                       "); its output is in " + directory.failed_path(log));
    if (i == 0) first_seconds = seconds;
    char took[32];
    std::snprintf(took, sizeof took, "%.1f s", seconds);
    io.err << "sensitivity: cell " << (i + 1) << "/" << cells.size() << " " << name << ": " << took;
    // The reference cell measured this machine: the rest scaled by their estimates against its own.
    if (i == 0 && cells.size() > 1)
      io.err << " (the rest: about " << seconds_text(first_seconds * (estimated - estimates[0].seconds) / estimates[0].seconds) << ")";
    io.err << "\n";
    EvidenceFile f = read_evidence_file(evidence);
    check_blas_loaded(name, blas, f.evidence, evidence);
    made.push_back({name, cells[i], std::move(f), cells[i].at("cache") != kCacheAsWritten});
  }
  if (const int sig = held.pending()) {
    io.err << "sensitivity: stopped by " << signal_name(sig) << " after its last cell; no matrix was written, and an earlier one "
              "in --out is as it was\n";
    return interrupted_exit_code(sig);
  }
  write_outputs(build_sensitivity(std::move(made), 0), o.out, io);
  directory.commit();
  return kExitOk;
}

// A cell made elsewhere: its axes are what the evidence says decided or may have decided the bits.
std::map<std::string, std::string> recorded_axes(const Evidence& e) {
  std::map<std::string, std::string> axes;
  axes["cpu"] = e.environment.cpu.model.empty() ? "?" : e.environment.cpu.model;
  axes["blas_core"] = e.environment.blas.core.value_or(e.environment.blas.vendor);
  axes["numerics"] = e.numerics ? to_string(e.numerics->mode) : "reference";
  axes["runs_concurrently"] = e.environment.threads.runs_concurrently ? std::to_string(*e.environment.threads.runs_concurrently) : "?";
  axes["libtorch"] = e.environment.libtorch_version;
  axes["blas"] = e.environment.blas.resolved.value_or(e.environment.blas.vendor);
  return axes;
}

// An experiment's spec as the matrix compares it: use_cache removed wherever it is written, since
// the cache axis' cells run copies with it forced.
nlohmann::json spec_ignoring_use_cache(nlohmann::json spec) {
  if (!spec.is_object()) return spec;
  spec.erase("use_cache");
  if (spec.contains("runs") && spec["runs"].is_array())
    for (nlohmann::json& entry : spec["runs"])
      if (entry.is_object()) entry.erase("use_cache");
  return spec;
}

std::string hash_text(const std::string& sha256) { return sha256.substr(0, 12) + "…"; }

// A difference between two cells is the configuration's only when they ran the same model, the
// same tokenizer and the same experiments: anything else is refused, naming what differs.
void check_same_subject(const EvidenceFile& reference, const EvidenceFile& cell) {
  const std::string fix = "; a matrix compares one model's runs of one set of experiments across configurations: give evidence of "
                          "the same model files and experiments (the cache axis' forced use_cache excepted)";
  const ModelInfo& a = reference.evidence.model;
  const ModelInfo& b = cell.evidence.model;
  const std::string against = " differs from the reference " + short_value(reference.path, 200) + "'s";
  for (const auto& [name, file] : a.files) {
    const auto other = b.files.find(name);
    if (other == b.files.end())
      throw EvidenceError(short_value(cell.path, 200) + ": model.files has no \"" + name + "\", which the reference " +
                          short_value(reference.path, 200) + " records" + fix);
    if (other->second.sha256 != file.sha256)
      throw EvidenceError(short_value(cell.path, 200) + ": model.files[\"" + name + "\"].sha256 " + hash_text(other->second.sha256) +
                          against + " " + hash_text(file.sha256) + fix);
  }
  for (const auto& [name, file] : b.files)
    if (!a.files.count(name))
      throw EvidenceError(short_value(cell.path, 200) + ": model.files[\"" + name + "\"] is not in the reference " +
                          short_value(reference.path, 200) + fix);
  if (a.config != b.config) throw EvidenceError(short_value(cell.path, 200) + ": model.config" + against + fix);
  std::map<std::string, nlohmann::json> specs;
  for (const ExperimentRecord& x : reference.evidence.experiments) specs[x.name] = spec_ignoring_use_cache(x.spec);
  for (const ExperimentRecord& x : cell.evidence.experiments) {
    const auto it = specs.find(x.name);
    if (it == specs.end())
      throw EvidenceError(short_value(cell.path, 200) + ": experiment \"" + short_value(x.name, 80) + "\" is not among the reference " +
                          short_value(reference.path, 200) + "'s experiments" + fix);
    if (it->second != spec_ignoring_use_cache(x.spec))
      throw EvidenceError(short_value(cell.path, 200) + ": experiments[\"" + short_value(x.name, 80) + "\"].spec" + against + fix);
  }
}

int compare_files(const SensitivityOptions& o, Console& io) {
  std::vector<SensitivityCell> cells;
  std::set<std::string> names;
  std::size_t reference = 0;
  if (!o.reference.empty() && std::find(o.inputs.begin(), o.inputs.end(), o.reference) == o.inputs.end())
    throw UsageError("--reference " + short_value(o.reference, 200) + ": not one of the evidence files given; allowed: one of them, as written");
  check_inputs_survive(o);
  for (const std::string& path : o.inputs) {
    std::string name = fs::path(path).stem().string();
    for (int k = 2; names.count(name); ++k) name = fs::path(path).stem().string() + "-" + std::to_string(k);
    names.insert(name);
    if (!o.reference.empty() && path == o.reference) reference = cells.size();
    EvidenceFile f = read_evidence_file(path);
    // "identical" over no run would say nothing (diff, bless and replay refuse such files too).
    if (f.evidence.runs.empty())
      throw EvidenceError(short_value(path, 200) + ": holds no runs; there is nothing to compare (give evidence written by 'genrepro run')");
    std::map<std::string, std::string> axes = recorded_axes(f.evidence);
    cells.push_back({name, std::move(axes), std::move(f)});
  }
  for (std::size_t c = 0; c < cells.size(); ++c)
    if (c != reference) check_same_subject(cells[reference].evidence, cells[c].evidence);
  // The reference is known only now: a cell made with use_cache forced is paired ignoring it.
  for (std::size_t c = 0; c < cells.size(); ++c)
    if (c != reference && made_with_use_cache_forced(cells[reference].evidence.evidence, cells[c].evidence.evidence)) {
      cells[c].pair_ignoring_use_cache = true;
      cells[c].axes["cache"] = cells[c].evidence.evidence.runs.front().params.use_cache ? "cached" : "recompute";
    }
  make_out_directory(o.out);
  SensitivityMatrix m = build_sensitivity(std::move(cells), reference);
  for (std::size_t c = 0; c < m.cells.size(); ++c) {
    if (c == m.reference || m.summaries[c].missing < m.run_ids.size()) continue;
    throw EvidenceError(short_value(m.cells[c].evidence.path, 200) + ": shares no run with the reference " +
                        short_value(m.cells[m.reference].evidence.path, 200) +
                        " (every run id differs); give evidence of the same experiments' runs");
  }
  write_outputs(m, o.out, io);
  return kExitOk;
}

}  // namespace

void setup_sensitivity(CLI::App& app, VerbContext& ctx) {
  auto o = std::make_shared<SensitivityOptions>();
  CLI::App* cmd = app.add_subcommand(
      "sensitivity",
      "Which results can you trust: run the experiments once per configuration cell (BLAS kernel, threads,\n"
      "numerics mode, batching, BLAS library; the reference cell, then one axis changed at a time) and classify every run\n"
      "of every cell against the reference: identical, same tokens (different probabilities), or diverged at\n"
      "new token N, with the margins there. --compare builds the same matrix from evidence made anywhere.\n"
      "Writes DIR/sensitivity.json, DIR/sensitivity.md, DIR/sensitivity.html (heatmap and survival charts) and\n"
      "(without --compare) DIR/cells/. docs/sensitivity.md");
  cmd->add_option("inputs", o->inputs, "Experiment files (or, with --compare, evidence files)")->required();
  cmd->add_flag("--compare", o->compare, "The inputs are evidence files: build the matrix from them, run nothing");
  cmd->add_option("--out", o->out, "Directory for the matrix (created if missing)")->required()->type_name("PATH");
  cmd->add_option("--cells", o->cells,
                  "Axes and values to use, e.g. \"kernels=portable,native:SkylakeX;threads=1,2\" (the first value of\n"
                  "an axis is the reference's); axes: kernels, threads, numerics, batch (1, proven, 4-inexact,\n"
                  "16-inexact), cache (as-written, recompute, cached: every run forced to one path; by default\n"
                  "as-written and each path that changes a run), blas (openblas, the default, then each installed: reference, openblas-openmp,\n"
                  "openblas-serial, blis-pthread, blis-openmp, blis-serial, atlas). Default: every value this\n"
                  "machine offers")
      ->type_name("AXIS=V,...;...");
  cmd->add_option("--threads", o->threads, "The threads axis runs 1 to this many (default 2)")->type_name("INT");
  cmd->add_flag("--plan", o->plan,
                "Say which cells would run (each child's command) and roughly how long, and run nothing (no --compare)");
  cmd->add_option("--reference", o->reference, "--compare: the evidence file that is the reference cell (default: the first)")
      ->type_name("PATH");
  cmd->add_option("--max-runs", o->max_runs,
                  "Refuse experiments that expand to more runs than this, per cell (as run --max-runs; at most 1000000)")
      ->capture_default_str();
  add_model_flags(*cmd, o->model);
  on_verb(*cmd, ctx, [o, &ctx, cmd] {
    const auto given = [cmd](const char* flag) {
      const CLI::Option* opt = cmd->get_option_no_throw(flag);
      return opt != nullptr && opt->count() > 0;
    };
    if (o->compare) {
      // --compare reads evidence and runs nothing: a flag that shapes runs would be silently ignored.
      for (const char* flag : {"--plan", "--cells", "--threads", "--max-runs", "--model", "--require-real-model"})
        if (given(flag))
          throw UsageError(std::string(flag) + ": allowed without --compare only (--compare builds the matrix from the evidence "
                                               "given and runs nothing); drop " + flag + " or --compare");
    } else if (given("--reference")) {
      throw UsageError("--reference: allowed with --compare only (a matrix that runs its cells has the first cell as its reference; "
                       "choose it with the first value of each axis in --cells)");
    }
    checked_threads("--threads", o->threads);
    check_output_directory("--out", o->out);
    ctx.exit_code = o->compare ? compare_files(*o, ctx.io) : run_matrix(*o, ctx.io);
  });
}

}  // namespace genrepro::cli
