#include "compare/engine_parity.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "evidence/json_number.hpp"

namespace genrepro {

namespace {

double picked_prob(const Candidate& c, bool greedy) { return greedy ? c.prob_scaled : c.prob; }

// The largest |p_a - p_b| over the candidates both steps list.
double candidate_noise(const StepRecord& a, const StepRecord& b, bool greedy) {
  double noise = 0;
  for (const Candidate& ca : a.top)
    for (const Candidate& cb : b.top)
      if (ca.id == cb.id) noise = std::max(noise, std::fabs(picked_prob(ca, greedy) - picked_prob(cb, greedy)));
  return noise;
}

std::optional<double> deciding_margin(const StepRecord& s, bool greedy) {
  if (greedy) return s.margin;
  if (s.draw) return s.draw->margin;
  return std::nullopt;
}

// How far noise alone can move what decides the pick: two probabilities each by the noise floor
// (greedy), or a cumulative sum over the kept tokens, each by at most the floor (a draw's boundary).
double noise_reach(const StepRecord& s, bool greedy, double noise) {
  return greedy ? 2 * noise : static_cast<double>(std::max<int64_t>(s.kept, 1)) * noise;
}

RunParity parity_of(const RunRecord& a, const RunRecord& b) {
  RunParity p;
  p.id = a.id;
  p.engine_a = to_string(a.params.engine);
  p.engine_b = to_string(b.params.engine);
  const std::vector<int64_t>& ta = a.result.output_ids;
  const std::vector<int64_t>& tb = b.result.output_ids;
  p.tokens_a = static_cast<int64_t>(ta.size());
  p.tokens_b = static_cast<int64_t>(tb.size());
  p.tokens_equal = ta == tb;
  const size_t common = std::min(ta.size(), tb.size());
  size_t d = 0;
  while (d < common && ta[d] == tb[d]) ++d;
  if (d < common) p.divergence = static_cast<int64_t>(d);
  const bool greedy = a.params.sampling.mode == DecodeMode::greedy;
  const size_t steps = std::min(a.result.steps.size(), b.result.steps.size());
  const size_t comparable = std::min(steps, p.divergence ? d + 1 : steps);
  p.comparable_steps = static_cast<int64_t>(comparable);
  for (size_t k = 0; k < comparable; ++k) {
    const StepRecord& sa = a.result.steps[k];
    const StepRecord& sb = b.result.steps[k];
    if (!sa.top.empty() && !sb.top.empty() && sa.top.front().id == sb.top.front().id) ++p.same_top1;
    p.noise = std::max(p.noise, candidate_noise(sa, sb, greedy));
    if (k < d && sa.prob > 0 && sb.prob > 0)
      p.max_abs_dlogp = std::max(p.max_abs_dlogp, std::fabs(std::log(sa.prob) - std::log(sb.prob)));
  }
  if (p.divergence && d < steps) {
    const StepRecord& sa = a.result.steps[d];
    const StepRecord& sb = b.result.steps[d];
    p.margin_a = deciding_margin(sa, greedy);
    p.margin_b = deciding_margin(sb, greedy);
    p.near_tie = (p.margin_a && *p.margin_a <= noise_reach(sa, greedy, p.noise)) ||
                 (p.margin_b && *p.margin_b <= noise_reach(sb, greedy, p.noise));
  }
  return p;
}

std::string cell(const std::optional<double>& v) { return v ? json_number(*v) : std::string(); }

}  // namespace

std::vector<RunParity> engine_parity(const Evidence& a, const Evidence& b) {
  std::map<std::string, const RunRecord*> by_id;
  for (const RunRecord& r : b.runs) by_id[r.id] = &r;
  std::vector<RunParity> out;
  for (const RunRecord& r : a.runs) {
    const auto it = by_id.find(r.id);
    if (it != by_id.end() && it->second->params.engine != r.params.engine) out.push_back(parity_of(r, *it->second));
  }
  return out;
}

std::string parity_csv(const std::vector<RunParity>& runs) {
  std::ostringstream out;
  out << "run,engine_a,engine_b,tokens_a,tokens_b,tokens_equal,divergence_step,comparable_steps,same_top1,"
         "max_abs_dlogp,noise,margin_a,margin_b,near_tie\n";
  for (const RunParity& p : runs) {
    out << p.id << ',' << p.engine_a << ',' << p.engine_b << ',' << p.tokens_a << ',' << p.tokens_b << ','
        << (p.tokens_equal ? "true" : "false") << ',' << (p.divergence ? std::to_string(*p.divergence) : "") << ','
        << p.comparable_steps << ',' << p.same_top1 << ',' << json_number(p.max_abs_dlogp) << ','
        << json_number(p.noise) << ',' << cell(p.margin_a) << ',' << cell(p.margin_b) << ','
        << (p.near_tie ? "true" : "false") << '\n';
  }
  return out.str();
}

}  // namespace genrepro
