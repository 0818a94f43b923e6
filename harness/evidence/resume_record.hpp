#pragma once
// What `genrepro run --resume` records in the evidence it writes (docs/resume.md,
// docs/evidence-format.md): that some runs were not computed by this invocation but kept from a
// checkpoint, which one, and how many. Volatile (strip_volatile drops it, a golden has none):
// a kept run's record is byte for byte what running it again gives, so only where the runs came
// from differs; a person reading the evidence, or bless, can still see it was resumed.
#include <cstdint>
#include <optional>
#include <string>

#include "util/json_text.hpp"

namespace genrepro {

struct ResumeRecord {
  std::string checkpoint;  // the checkpoint's path, as `run` named it ("<out>.checkpoint")
  std::string sha256;      // of the checkpoint's complete lines as they were read (the runs kept)
  int64_t runs_kept = 0;
};

// {"checkpoint": ..., "sha256": ..., "runs_kept": N}
OrderedJson resume_to_json(const ResumeRecord& r);
// The evidence's "resumed" block, if present; throws EvidenceError naming `file` and the path
// for a block of the wrong shape.
std::optional<ResumeRecord> resume_from_json(const OrderedJson& evidence, const std::string& file);

}  // namespace genrepro
