// Where the evidence came from: schema, build, environment, model files, experiments.
#include "report/report_section_kit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include "evidence/run_environment_groups.hpp"
#include "report/report_compare.hpp"
#include "report/report_text.hpp"

namespace genrepro::sections {

namespace {

// Blocks made for a plain list (report_compare.hpp's), appended through the builder.
void append_blocks(const std::vector<ReportBlock>& blocks, Builder& b) {
  for (const ReportBlock& block : blocks) {
    switch (block.kind) {
      case ReportBlock::Kind::note: b.note(block.text); break;
      case ReportBlock::Kind::table: b.table(block.table); break;
      case ReportBlock::Kind::fold_begin: b.fold_begin(block.text); break;
      case ReportBlock::Kind::fold_end: b.fold_end(); break;
      default: b.paragraph(block.text); break;
    }
  }
}

// Merged evidence from mixed machines: the table above is one environment of several; which runs
// ran in it, and where the others differ from it.
void add_other_environments(const Evidence& e, Builder& b) {
  if (e.run_environments.empty()) return;
  const std::vector<RunEnvironmentGroup> groups = run_environment_groups(e, e.environment);
  if (groups.front().number == 1)
    b.paragraph("The table above is environment 1, where " + runs_text(groups.front().runs) +
                " ran; the other runs ran elsewhere (shards merged from different machines).");
  std::vector<ReportBlock> blocks;
  add_run_environments(e, e.environment, "environment 1", "environment 1", blocks);
  append_blocks(blocks, b);
}

}  // namespace

void add_sources(const Inputs& in, Builder& b) {
  b.heading("Where this came from");
  for (const ReportDocument& d : in.documents) {
    const Evidence& e = d.evidence;
    const Environment& env = e.environment;
    b.heading("Evidence " + quoted_token(d.name), 3);
    ReportTable t;
    t.header = {"field", "value"};
    t.numeric = {false, false};
    const auto row = [&](const std::string& name, const std::string& value) { t.rows.push_back({name, value}); };
    row("schema", e.schema);
    row("genrepro", or_not_recorded(e.genrepro.version) + " (commit " + or_not_recorded(e.genrepro.git_commit) + ")");
    row("created (UTC)", or_not_recorded(e.created_utc));
    row("libtorch", or_not_recorded(env.libtorch_version));
    row("ATen CPU capability", or_not_recorded(env.cpu_capability));
    row("BLAS", env.blas.vendor + ", " + or_not_recorded(env.blas.resolved ? env.blas.resolved : env.blas.library) +
                    (env.blas.core ? ", core " + *env.blas.core : "") +
                    (env.blas.threads ? ", " + std::to_string(*env.blas.threads) + " threads" : ""));
    row("threads (intra-op / inter-op)", std::to_string(env.threads.intra_op) + " / " + std::to_string(env.threads.inter_op));
    row("CPU", or_not_recorded(env.cpu.model) + " (" + std::to_string(env.cpu.logical_cores) + " logical cores, " +
                   std::to_string(env.cpu.usable_cores) + " usable)");
    row("float control", env.float_control ? std::string("flush-to-zero ") + (env.float_control->flush_to_zero ? "on" : "off") +
                                                 ", denormals-are-zero " + (env.float_control->denormals_are_zero ? "on" : "off") +
                                                 ", rounding " + env.float_control->rounding
                                           : "not recorded");
    std::vector<std::string> vars;
    for (const auto& [name, value] : env.numerics_env) {
      if (value) vars.push_back(name + "=" + *value);
    }
    row("numerics variables set", vars.empty() ? "none" : join(vars, " "));
    row("compiler", or_not_recorded(env.compiler));
    row("OS / kernel", or_not_recorded(env.os) + " / " + or_not_recorded(env.kernel));
    row("dtype / device", env.dtype + " / " + env.device);
    row("model", or_not_recorded(e.model.source) + ": " + or_not_recorded(e.model.path));
    row("EOS token id / context length", std::to_string(e.model.eos_token_id) + " / " + std::to_string(e.model.n_positions));
    b.table(std::move(t));
    add_other_environments(e, b);
    if (e.model.files.empty()) {
      b.note("The evidence records no model file checksums.");
    } else {
      ReportTable f;
      f.header = {"model file", "bytes", "sha256"};
      f.numeric = {false, true, false};
      for (const auto& [name, info] : e.model.files) {  // a std::map: a fixed, sorted order
        f.rows.push_back({name, format_count(static_cast<int64_t>(info.bytes)), info.sha256});
      }
      b.table(std::move(f));
    }
    if (!e.experiments.empty()) {
      ReportTable x;
      x.header = {"experiment", "file", "sha256"};
      x.numeric = {false, false, false};
      for (const auto& ex : e.experiments) x.rows.push_back({ex.name, ex.path, ex.sha256});
      b.table(std::move(x));
    }
  }
}

}  // namespace genrepro::sections
