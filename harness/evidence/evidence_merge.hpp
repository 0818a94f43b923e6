#pragma once
// `genrepro merge`: joins the evidence of the shards of one run (--shard I/N) into exactly the
// evidence an unsharded run gives (apart from the volatile fields, and apart from where each run
// ran: shards from different machines keep their environments, docs/evidence-format.md). The
// shards must agree on what would make the merged file lie: the genrepro build (version, commit,
// compiler, libtorch, BLAS), the numerics (mode, CPU kernels), model and experiments. The
// expected runs are recomputed from the experiment specs the files record, so a missing shard,
// a shard given twice, or a run from another experiment is named, never silently merged.
#include <string>
#include <utility>
#include <vector>

#include "evidence/evidence.hpp"

namespace genrepro {

// Each pair is (file name for messages, its evidence). Throws EvidenceError on any mismatch,
// duplicate or missing run. The result's runs are in index order; created_utc is the latest of
// the shards'.
Evidence merge_evidence(const std::vector<std::pair<std::string, Evidence>>& shards);

// Reads the files (read_evidence) and merges them.
Evidence merge_evidence_files(const std::vector<std::string>& paths);

// The first JSON path at which a and b differ ("environment.cpu.model"), or empty if equal.
std::string first_difference(const nlohmann::json& a, const nlohmann::json& b, const std::string& where = "");

}  // namespace genrepro
