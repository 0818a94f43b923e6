// genrepro sensitivity EXPERIMENTS... --out DIR: the experiments run once per configuration cell
// (each a child `genrepro run`, its environment set before the BLAS and libtorch load), every
// cell compared with the reference cell. genrepro sensitivity --compare EVIDENCE... --out DIR:
// the same matrix from evidence made anywhere (other machines, builds, CI runners).
// docs/sensitivity.md.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

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
  ModelChoice model;
};

// Every value each axis offers here; the first is the reference cell's.
std::map<std::string, std::vector<std::string>> offered_axes(int threads) {
  std::map<std::string, std::vector<std::string>> axes;
  axes["kernels"] = {"portable"};
  // Every OpenBLAS core this CPU can execute (one it lacks the instructions for would crash).
  for (const std::string& core : executable_openblas_cores(this_cpu_flags())) axes["kernels"].push_back("native:" + core);
  for (int t = 1; t <= threads; ++t) axes["threads"].push_back(std::to_string(t));
  axes["numerics"] = {"reference", "tiled"};
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

ChosenAxes chosen_axes(const std::string& text, int threads) {
  ChosenAxes chosen{offered_axes(threads), {}};
  std::map<std::string, std::vector<std::string>>& axes = chosen.values;
  for (const std::string& item : split(text, ';')) {
    const std::size_t eq = item.find('=');
    const std::string axis = item.substr(0, eq);
    if (eq == std::string::npos || !axes.count(axis))
      throw UsageError("--cells " + item + ": allowed: AXIS=VALUE[,VALUE...] with AXIS one of kernels, threads, numerics, batch, cache, blas");
    std::vector<std::string> values;
    for (const std::string& v : split(item.substr(eq + 1), ',')) {
      const std::vector<std::string>& offered = axes[axis];
      if (std::find(offered.begin(), offered.end(), v) == offered.end()) {
        std::string allowed;
        for (const std::string& o : offered) allowed += (allowed.empty() ? "" : ", ") + o;
        throw UsageError("--cells " + axis + "=" + v + ": not offered on this machine; allowed: " + allowed);
      }
      values.push_back(v);
    }
    if (values.empty()) throw UsageError("--cells " + item + ": give at least one value");
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
  c.env_unset = {kOpenblasCoretypeEnv, kAtenCpuCapabilityEnv};
  if (kernels == "portable" && !blas_library(cell.at("blas")).openblas) {
    // run refuses portable with a BLAS that is not OpenBLAS (it cannot pin Haswell kernels
    // there); native with ATen pinned to portable's AVX2 keeps every kernel but the BLAS's.
    c.args.insert(c.args.end(), {"--cpu-kernels", "native"});
    c.env_set[kAtenCpuCapabilityEnv] = kPortableAtenEnv;
  } else if (kernels.rfind("native:", 0) == 0) {
    c.args.insert(c.args.end(), {"--cpu-kernels", "native"});
    c.env_set[kOpenblasCoretypeEnv] = kernels.substr(std::strlen("native:"));
  }
  if (cell.at("numerics") == "tiled") c.args.insert(c.args.end(), {"--numerics", "tiled"});
  if (!library_path.empty()) c.env_set["LD_LIBRARY_PATH"] = library_path;
  const std::string& batch = cell.at("batch");
  if (batch == "1") c.args.insert(c.args.end(), {"--batch", "1"});
  if (batch.find("-inexact") != std::string::npos)
    c.args.insert(c.args.end(), {"--batch", batch.substr(0, batch.find('-')), "--allow-inexact-batch"});
  return c;
}

// Runs genrepro (this very binary) as a child with stdout and stderr into `log`; its exit code.
int spawn_child(const ChildCommand& c, const std::string& log) {
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
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw Error(std::string("sensitivity: could not start genrepro run: ") + std::strerror(rc));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string last_line_of(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

void write_outputs(const SensitivityMatrix& m, const std::string& dir, Console& io) {
  const std::string json_path = (fs::path(dir) / "sensitivity.json").string();
  const std::string md_path = (fs::path(dir) / "sensitivity.md").string();
  const std::string html_path = (fs::path(dir) / "sensitivity.html").string();
  write_file_atomically(json_path, json_document_text(sensitivity_to_json(m)) + "\n");
  write_file_atomically(md_path, sensitivity_markdown(m));
  write_file_atomically(html_path, sensitivity_html(m));
  for (std::size_t c = 0; c < m.cells.size(); ++c) {
    const CellSummary& s = m.summaries[c];
    io.out << "sensitivity: " << m.cells[c].name << (c == m.reference ? " (reference)" : "") << ": " << s.identical << " identical, "
           << s.same_tokens << " same tokens, " << s.diverged << " diverged, " << s.missing << " missing\n";
  }
  io.out << "wrote " << json_path << ", " << md_path << " and " << html_path << "\n";
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
               const std::string& cell_dir, Console& io) {
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
                                     : "") << "\n  "
           << command_text(child_command(o, cells[i], evidence, library, experiments[i].paths())) << "\n";
    total += estimates[i].seconds;
    runs += estimates[i].runs;
  }
  io.out << "plan: " << cells.size() << " cells, " << runs << " runs, roughly " << seconds_text(total)
         << " (genrepro plan's cost model plus " << kCellStartSeconds << " s to start each cell; a rough estimate)\n";
  return kExitOk;
}

int run_matrix(const SensitivityOptions& o, Console& io) {
  ChosenAxes axes = chosen_axes(o.cells, o.threads);
  check_cells_make_sense(one_factor_cells(axes.values));  // --cells' own errors first, before any file is read
  // Read once: the cache axis' default, its forced copies and the time estimate all use them.
  const std::vector<ExperimentSpec> specs = load_experiments(o.inputs, kMaxRunsCeiling);
  if (!axes.named.count("cache")) axes.values["cache"] = default_cache_values(specs);
  const std::vector<std::map<std::string, std::string>> cells = one_factor_cells(axes.values);
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
  if (o.plan) return print_plan(o, cells, experiments, estimates, cell_dir, io);
  fs::create_directories(cell_dir);
  io.err << "sensitivity: " << cells.size() << " cells (the reference, then one axis changed at a time), each a 'genrepro run' of "
         << o.inputs.size() << " experiment file(s), " << estimates.front().runs * cells.size() << " runs in all, roughly "
         << seconds_text(estimated) << " (--plan lists them); the evidence goes to " << cell_dir << "\n";
  std::vector<SensitivityCell> made;
  double first_seconds = 0;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const std::string name = cell_name(cells[i]);
    const std::string evidence = (fs::path(cell_dir) / (name + ".json")).string();
    const std::string log = (fs::path(cell_dir) / (name + ".log")).string();
    const BlasLibrary blas = blas_library(cells[i].at("blas"));
    const char* inherited = std::getenv("LD_LIBRARY_PATH");
    const auto start = std::chrono::steady_clock::now();
    int exit = 0;
    {
      experiments[i].write();
      const PreferredBlasDir preferred(blas);  // removed when the child is done
      exit = spawn_child(child_command(o, cells[i], evidence, preferred.library_path(inherited ? inherited : ""),
                                       experiments[i].paths()),
                         log);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (exit != 0)
      throw UsageError("sensitivity: cell " + name + ": genrepro run exited " + std::to_string(exit) + " (" + last_line_of(log) +
                       "); its output is in " + log);
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
  write_outputs(build_sensitivity(std::move(made), 0), o.out, io);
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

int compare_files(const SensitivityOptions& o, Console& io) {
  std::vector<SensitivityCell> cells;
  std::set<std::string> names;
  std::size_t reference = 0;
  for (const std::string& path : o.inputs) {
    std::string name = fs::path(path).stem().string();
    for (int k = 2; names.count(name); ++k) name = fs::path(path).stem().string() + "-" + std::to_string(k);
    names.insert(name);
    if (!o.reference.empty() && path == o.reference) reference = cells.size();
    EvidenceFile f = read_evidence_file(path);
    std::map<std::string, std::string> axes = recorded_axes(f.evidence);
    cells.push_back({name, std::move(axes), std::move(f)});
  }
  // The reference is known only now: a cell made with use_cache forced is paired ignoring it.
  for (std::size_t c = 0; c < cells.size(); ++c)
    if (c != reference && made_with_use_cache_forced(cells[reference].evidence.evidence, cells[c].evidence.evidence)) {
      cells[c].pair_ignoring_use_cache = true;
      cells[c].axes["cache"] = cells[c].evidence.evidence.runs.front().params.use_cache ? "cached" : "recompute";
    }
  if (!o.reference.empty() && std::find(o.inputs.begin(), o.inputs.end(), o.reference) == o.inputs.end())
    throw UsageError("--reference " + o.reference + ": not one of the evidence files given; allowed: one of them, as written");
  fs::create_directories(o.out);
  write_outputs(build_sensitivity(std::move(cells), reference), o.out, io);
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
  add_model_flags(*cmd, o->model);
  on_verb(*cmd, ctx, [o, &ctx] {
    checked_threads("--threads", o->threads);
    check_output_directory("--out", o->out);
    if (o->compare && o->plan) throw UsageError("--plan: allowed without --compare only (--compare runs nothing)");
    ctx.exit_code = o->compare ? compare_files(*o, ctx.io) : run_matrix(*o, ctx.io);
  });
}

}  // namespace genrepro::cli
