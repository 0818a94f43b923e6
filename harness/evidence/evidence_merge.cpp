#include "evidence/evidence_merge.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>

#include "util/errors.hpp"
#include "params/experiment_file.hpp"

namespace genrepro {

namespace {

using nlohmann::json;

// An environment as merge compares it (runs_concurrently is volatile, so it may differ).
json environment_identity(const Environment& environment) {
  json env = json(environment_to_json(environment));
  env["threads"].erase("runs_concurrently");
  return env;
}

// The parts every shard must share, as JSON: what would make the merged file lie if it differed.
// The machine is not among them (shards of a CI matrix or a Slurm partition run on different
// CPUs): each run keeps its own environment. The build is: genrepro's version and commit, the
// compiler, libtorch and the BLAS library with its configuration; the numerics identity names
// the kernels loaded, so native shards on different kernels are still refused.
// What decides the bits of llama.cpp's runs (not where its library lies on this machine, nor
// its threads, which do not change them): shards computed by another build or CPU variant of
// llama.cpp are not one run.
json llama_cpp_identity(const LlamaCppRecord& r) {
  json j = json(llama_cpp_to_json(r));
  j.erase("library");
  j.erase("threads");
  return j;
}

json shared_parts(const Evidence& e) {
  const Environment& env = e.environment;
  const json build = {{"compiler", env.compiler},
                      {"libtorch_version", env.libtorch_version},
                      {"blas", {{"vendor", env.blas.vendor}, {"config", env.blas.config ? json(*env.blas.config) : json(nullptr)}}},
                      {"dtype", env.dtype},
                      {"device", env.device}};
  json experiments = json::array();
  for (const auto& x : e.experiments) experiments.push_back({{"name", x.name}, {"path", x.path}, {"sha256", x.sha256}, {"spec", x.spec}});
  return {{"schema", e.schema},
          {"genrepro", {{"version", e.genrepro.version}, {"git_commit", e.genrepro.git_commit}}},
          {"build", build},
          {"numerics", json(numerics_identity_json(e.numerics.value_or(NumericsRecord{})))},
          {"model", json(model_to_json(e.model))},
          {"experiments", experiments}};
}

// The runs an unsharded run of these experiments gives, in index order.
std::vector<ExpandedRun> expected_runs(const std::string& file, const Evidence& e) {
  std::vector<ExpandedRun> runs;
  for (size_t i = 0; i < e.experiments.size(); ++i) {
    const ExperimentRecord& x = e.experiments[i];
    try {
      ExperimentSpec spec = parse_experiment(x.spec.dump(), x.path);
      for (auto& r : spec.runs) runs.push_back(std::move(r));
    } catch (const SpecError& err) {
      throw EvidenceError(file + ": experiments[" + std::to_string(i) + "].spec is not a valid experiment: " + err.what());
    }
  }
  return runs;
}

// The CPU kernels, said as the flag that chose them: a shard made with --cpu-kernels native
// records another BLAS configuration and core than a portable one, which the generic "differs"
// would name only as a JSON path.
std::string kernels_setting(const Evidence& e) {
  if (!e.numerics || !e.numerics->kernels) return "";
  return e.numerics->kernels->setting == CpuKernels::portable ? "portable" : "native";
}

void refuse_other_kernels(const std::string& first_file, const Evidence& first, const std::string& file, const Evidence& e,
                          const std::string& diff) {
  const std::string a = kernels_setting(first), b = kernels_setting(e);
  if (a.empty() || b.empty()) return;
  if (a != b)
    throw EvidenceError(file + ": was run with --cpu-kernels " + b + ", " + first_file + " with --cpu-kernels " + a +
                        " (" + diff + " differs); shards of one run use one setting: run every shard with --cpu-kernels portable "
                        "(the default: the same bits on every x86-64 CPU with AVX2 and FMA)");
  if (a == "native" && (diff.rfind("build.blas", 0) == 0 || diff.rfind("numerics", 0) == 0)) {
    const auto core = [](const Evidence& x) { return x.numerics->kernels->blas_core + "/" + x.numerics->kernels->aten_capability; };
    throw EvidenceError(file + ": its --cpu-kernels native kernels are " + core(e) + ", " + first_file + "'s are " + core(first) + " (" +
                        diff + " differs): native lets each CPU choose, so its shards merge only from one kind of CPU; run "
                        "every shard with --cpu-kernels portable (the default)");
  }
}

}  // namespace

std::string first_difference(const json& a, const json& b, const std::string& where) {
  if (a.type() != b.type()) return where.empty() ? "(top level)" : where;
  if (a.is_object()) {
    for (const auto& item : a.items()) {
      const std::string at = where.empty() ? item.key() : where + "." + item.key();
      if (!b.contains(item.key())) return at;
      const std::string d = first_difference(item.value(), b[item.key()], at);
      if (!d.empty()) return d;
    }
    for (const auto& item : b.items()) {
      if (!a.contains(item.key())) return where.empty() ? item.key() : where + "." + item.key();
    }
    return {};
  }
  if (a.is_array()) {
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
      const std::string d = first_difference(a[i], b[i], where + "[" + std::to_string(i) + "]");
      if (!d.empty()) return d;
    }
    if (a.size() != b.size()) return where + "[" + std::to_string(std::min(a.size(), b.size())) + "]";
    return {};
  }
  return a == b ? std::string() : (where.empty() ? "(top level)" : where);
}

Evidence merge_evidence(const std::vector<std::pair<std::string, Evidence>>& shards) {
  if (shards.empty()) throw UsageError("merge: no evidence files given; e.g. genrepro merge shard1.json shard2.json --out all.json");
  const auto& [first_file, first] = shards.front();
  const json reference = shared_parts(first);
  for (size_t i = 1; i < shards.size(); ++i) {
    const std::string diff = first_difference(reference, shared_parts(shards[i].second));
    if (!diff.empty()) refuse_other_kernels(first_file, first, shards[i].first, shards[i].second, diff);
    if (!diff.empty()) {
      throw EvidenceError(shards[i].first + ": " + diff + " differs from " + first_file +
                          "; only shards of one run (same genrepro build, numerics, model and experiments) can be merged");
    }
  }
  // A shard holds the llama_cpp block only when some of its runs ran on llama.cpp's engine; the
  // blocks the shards hold must be one.
  std::optional<std::pair<std::string, LlamaCppRecord>> llama;
  for (const auto& [file, e] : shards) {
    if (!e.llama_cpp) continue;
    if (!llama) llama.emplace(file, *e.llama_cpp);
    const std::string diff = first_difference(llama_cpp_identity(llama->second), llama_cpp_identity(*e.llama_cpp), "llama_cpp");
    if (!diff.empty())
      throw EvidenceError(file + ": " + diff + " differs from " + llama->first +
                          "; only shards that ran one llama.cpp (library, CPU backend, settings, GGUF) can be merged");
  }
  const std::vector<ExpandedRun> expected = expected_runs(first_file, first);
  std::vector<const RunRecord*> slot(expected.size(), nullptr);
  std::vector<std::string> slot_file(expected.size());
  for (const auto& [file, e] : shards) {
    for (size_t i = 0; i < e.runs.size(); ++i) {
      const RunRecord& r = e.runs[i];
      const std::string at = file + ": runs[" + std::to_string(i) + "]";
      if (r.index < 0 || static_cast<size_t>(r.index) >= expected.size())
        throw EvidenceError(at + ": index " + std::to_string(r.index) + " is outside the " + std::to_string(expected.size()) +
                            " runs its experiments expand to");
      const size_t k = static_cast<size_t>(r.index);
      if (r.id != expected[k].id)
        throw EvidenceError(at + ": id " + r.id + " is not the run with index " + std::to_string(k) + " (" + expected[k].id +
                            "); the file was not written by genrepro run for these experiments");
      if (slot[k] != nullptr)
        throw EvidenceError(at + ": run " + r.id + " (index " + std::to_string(k) + ") is also in " + slot_file[k] +
                            "; give each shard once");
      slot[k] = &r;
      slot_file[k] = file;
    }
  }
  std::string missing;
  size_t missing_count = 0;
  constexpr size_t kMissingShown = 5;
  for (size_t k = 0; k < slot.size(); ++k) {
    if (slot[k] != nullptr) continue;
    if (missing_count++ < kMissingShown) missing += (missing.empty() ? "" : ", ") + std::to_string(k);
  }
  if (missing_count > 0) {
    throw EvidenceError("merge: " + std::to_string(missing_count) + " of " + std::to_string(slot.size()) +
                        " runs are in none of the files (indices " + missing + (missing_count > kMissingShown ? ", ..." : "") +
                        "); give the evidence of every shard");
  }
  // Each run's environment, grouped: the first shard's is the merged file's own; runs from any
  // other are listed under run_environments (docs/evidence-format.md).
  std::map<int64_t, const Environment*> env_of;
  for (const auto& [file, e] : shards)
    for (const RunRecord& r : e.runs) env_of[r.index] = &environment_of_run(e, r.index);
  const json own = environment_identity(first.environment);
  std::vector<std::pair<json, RunEnvironment>> others;
  for (const RunRecord* r : slot) {
    const Environment& env = *env_of.at(r->index);
    const json id = environment_identity(env);
    if (id == own) continue;
    auto it = std::find_if(others.begin(), others.end(), [&](const auto& o) { return o.first == id; });
    if (it == others.end()) {
      others.emplace_back(id, RunEnvironment{env, {}});
      it = std::prev(others.end());
    }
    it->second.runs.push_back(r->index);
  }
  Evidence merged = first;
  merged.runs.clear();
  for (const RunRecord* r : slot) merged.runs.push_back(*r);
  if (llama) merged.llama_cpp = llama->second;
  merged.run_environments.clear();
  for (auto& o : others) merged.run_environments.push_back(std::move(o.second));
  for (const auto& shard : shards) merged.created_utc = std::max(merged.created_utc, shard.second.created_utc);
  return merged;
}

Evidence merge_evidence_files(const std::vector<std::string>& paths) {
  std::vector<std::pair<std::string, Evidence>> shards;
  for (const auto& path : paths) shards.emplace_back(path, read_evidence(path));
  return merge_evidence(shards);
}

}  // namespace genrepro
