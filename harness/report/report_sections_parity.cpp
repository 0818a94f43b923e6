// "Parity between engines": two evidence files whose runs pair by id but ran on different engines
// (genrepro's own forward and llama.cpp's; docs/engines.md), compared run by run with
// compare/engine_parity.hpp's numbers, which parity.csv holds too.
#include <algorithm>
#include <cstdio>

#include "compare/engine_parity.hpp"
#include "report/report_section_kit.hpp"

namespace genrepro::sections {

namespace {

std::string fixed(double v, const char* format) {
  char text[48];
  std::snprintf(text, sizeof text, format, v);
  return text;
}
std::string sci(double v) { return fixed(v, "%.2e"); }
std::string percent(int64_t part, int64_t whole) {
  return whole == 0 ? "-" : fixed(100.0 * static_cast<double>(part) / static_cast<double>(whole), "%.1f %%");
}

// What decides each side's bits, one row per thing, so the lines that differ stand side by side.
ReportTable environment_table(const ReportDocument& a, const ReportDocument& b) {
  const auto lines = [](const Evidence& e) {
    std::vector<std::pair<std::string, std::string>> l;
    if (e.numerics) {
      l.push_back({"genrepro numerics", std::string(to_string(e.numerics->mode)) +
                                            (e.numerics->kernel_revision.empty() ? "" : " (" + e.numerics->kernel_revision + ")")});
    }
    if (e.llama_cpp) {
      const LlamaCppRecord& r = *e.llama_cpp;
      l.push_back({"llama.cpp release", "ggml " + r.ggml_version + " (" + r.ggml_commit + ")"});
      l.push_back({"llama.cpp CPU backend", r.cpu_backend});
      l.push_back({"llama.cpp KV cache", r.kv_type});
      l.push_back({"llama.cpp flash attention", r.flash_attn});
      l.push_back({"llama.cpp physical batch", std::to_string(r.n_ubatch)});
      l.push_back({"GGUF sha256", r.gguf_sha256});
    }
    l.push_back({"CPU", e.environment.cpu.model});
    return l;
  };
  ReportTable t;
  t.header = {"what decides the bits", a.shown(), b.shown()};
  t.numeric = {false, false, false};
  const auto la = lines(a.evidence), lb = lines(b.evidence);
  std::vector<std::string> keys;
  for (const auto& side : {la, lb})
    for (const auto& [k, v] : side)
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  const auto find = [](const std::vector<std::pair<std::string, std::string>>& l, const std::string& k) {
    for (const auto& [key, v] : l)
      if (key == k) return v;
    return std::string("-");
  };
  for (const std::string& k : keys) {
    const std::string va = find(la, k), vb = find(lb, k);
    t.rows.push_back({k, va, vb});
    t.marked.push_back({false, va != vb, va != vb});
  }
  return t;
}

// The share of runs whose tokens are still identical after n new tokens, n = 0 .. the longest run.
LineChartSpec survival_chart(const std::vector<RunParity>& runs) {
  int64_t longest = 0;
  for (const RunParity& p : runs) longest = std::max({longest, p.tokens_a, p.tokens_b});
  LineSeries s;
  s.label = "tokens identical";
  for (int64_t n = 0; n <= longest; ++n) {
    int64_t alive = 0;
    for (const RunParity& p : runs) alive += !p.divergence || *p.divergence >= n ? 1 : 0;
    s.x.push_back(static_cast<double>(n));
    s.y.push_back(static_cast<double>(alive) / static_cast<double>(runs.size()));
  }
  LineChartSpec c;
  c.title = "Runs whose tokens are still identical between the engines";
  c.x_label = "new tokens";
  c.y_label = "share of runs";
  c.fixed_y = true;
  c.y_min = 0;
  c.y_max = 1;
  c.series.push_back(std::move(s));
  return c;
}

void add_pair(const ReportDocument& a, const ReportDocument& b, const std::vector<RunParity>& runs, Builder& out) {
  out.heading("Parity between engines: " + a.shown() + " and " + b.shown());
  int64_t equal = 0, comparable = 0, same = 0, near = 0;
  double dlogp = 0;
  for (const RunParity& p : runs) {
    equal += p.tokens_equal ? 1 : 0;
    comparable += p.comparable_steps;
    same += p.same_top1;
    near += p.near_tie ? 1 : 0;
    dlogp = std::max(dlogp, p.max_abs_dlogp);
  }
  const int64_t parted = static_cast<int64_t>(std::count_if(runs.begin(), runs.end(), [](const RunParity& p) { return p.divergence.has_value(); }));
  out.paragraph(std::to_string(runs.size()) + (runs.size() == 1 ? " run" : " runs") + " of the same experiments ran on engine " + runs.front().engine_a + " in " +
                a.shown() + " and on engine " + runs.front().engine_b + " in " + b.shown() +
                " (run ids pair them; docs/engines.md). Tokens identical in " + std::to_string(equal) + " of " +
                std::to_string(runs.size()) + "; " + std::to_string(parted) + " part, " + std::to_string(near) +
                " of them at a near-tie. Largest |\u0394 ln p| of the chosen token while the tokens agree: " + sci(dlogp) +
                ". Same best candidate at " + std::to_string(same) + " of " + std::to_string(comparable) +
                " steps with the same input (" + percent(same, comparable) +
                "). The noise floor is the largest |\u0394p| between the engines over the candidates both list at the "
                "steps with the same input. A divergence is a near-tie when noise alone can cross either run's deciding "
                "margin there: greedy, best minus second-best probability at most twice the floor; sampled, the draw's "
                "distance to the nearest boundary of the cumulative sum at most kept \u00d7 the floor. parity.csv holds "
                "every number of the table.");
  ReportTable t;
  t.header = {kRunIdColumn, "tokens", "first divergence", "same top-1", "max |\u0394 ln p|", "noise", "margins there", "near-tie"};
  t.numeric = {false, false, false, true, true, true, false, false};
  for (const RunParity& p : runs) {
    const std::string tokens = p.tokens_equal ? "identical (" + std::to_string(p.tokens_a) + ")"
                                              : std::to_string(p.tokens_a) + " vs " + std::to_string(p.tokens_b);
    const std::string divergence = p.divergence ? "new token " + std::to_string(*p.divergence + 1) + " (steps[" +
                                                      std::to_string(*p.divergence) + "])"
                                                : p.tokens_equal ? "-" : "one run is longer";
    const std::string margins = p.divergence ? (p.margin_a ? sci(*p.margin_a) : "-") + " / " + (p.margin_b ? sci(*p.margin_b) : "-") : "-";
    t.rows.push_back({p.id, tokens, divergence, percent(p.same_top1, p.comparable_steps), sci(p.max_abs_dlogp), sci(p.noise),
                      margins, p.divergence ? (p.near_tie ? "yes" : "no") : "-"});
    t.marked.push_back({false, !p.tokens_equal, p.divergence.has_value(), false, false, false, false, p.divergence && !p.near_tie});
  }
  out.table(std::move(t));
  out.figure(out.figure_name("engine-survival"),
             "Share of runs whose tokens are still identical between " + a.shown() + " and " + b.shown() + " after n new tokens.",
             svg_line_chart(survival_chart(runs)));
  out.heading("What decided each side's bits", 3);
  out.table(environment_table(a, b));
}

}  // namespace

void add_engine_parity(const Inputs& in, Builder& b) {
  for (size_t d = 1; d < in.documents.size(); ++d) {
    const std::vector<RunParity> runs = engine_parity(in.documents[0].evidence, in.documents[d].evidence);
    if (!runs.empty()) add_pair(in.documents[0], in.documents[d], runs, b);
  }
}

}  // namespace genrepro::sections
