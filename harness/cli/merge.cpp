// genrepro merge: joins the evidence of --shard runs into the evidence of the unsharded run.
#include <memory>
#include <string>
#include <vector>

#include "cli/flag_kinds.hpp"
#include "cli/verbs.hpp"
#include "evidence/evidence.hpp"
#include "evidence/evidence_merge.hpp"
#include "util/atomic_file.hpp"
#include "util/bounded_read.hpp"
#include "util/errors.hpp"

namespace genrepro::cli {

namespace {

struct MergeOptions {
  std::vector<std::string> files;
  std::string out;
};

void run_merge(const MergeOptions& o, Console& io) {
  check_output_file("--out", o.out, o.files);
  const Evidence merged = merge_evidence_files(o.files);
  // Each shard fit its readers; their union may not, and a file no reader accepts is no merge.
  const std::string text = evidence_text(merged);
  if (text.size() > kMaxEvidenceBytes)
    throw EvidenceError("merge: the merged evidence of " + std::to_string(merged.runs.size()) + " runs would be " +
                        std::to_string(text.size()) + " bytes, more than the " + std::to_string(kMaxEvidenceBytes >> 20) +
                        " MiB every evidence reader accepts; nothing was written to " + o.out +
                        "; keep the shards apart (each stays readable) or merge fewer of them at a time");
  write_file_atomically(o.out, text);
  io.out << "wrote " << o.out << " (" << merged.runs.size() << " runs from " << o.files.size() << " files)\n";
}

}  // namespace

void setup_merge(CLI::App& app, VerbContext& ctx) {
  auto o = std::make_shared<MergeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "merge",
      "Join the evidence files of the shards of one run (genrepro run --shard I/N) into the evidence\n"
      "the unsharded run gives. Refuses files from different environments, models or experiments,\n"
      "and names any run that is missing or given twice.");
  cmd->add_option("files", o->files, "Evidence files of the shards")->type_name("PATH...")->required();
  cmd->add_option("--out", o->out, "Where to write the merged evidence (atomically; missing parent directories are created)")
      ->type_name("PATH")
      ->required();
  on_verb(*cmd, ctx, [o, &ctx] {
    run_merge(*o, ctx.io);
    ctx.exit_code = 0;
  });
}

}  // namespace genrepro::cli
