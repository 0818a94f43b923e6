#include "engine/step_evidence.hpp"

#include <algorithm>

#include "evidence/logits_digest.hpp"

namespace genrepro {

namespace {

// The positive probabilities, in index order, as float64: what p.to(float64)[p > 0] holds,
// gathered in one pass instead of converting and masking all V.
std::vector<double> positive_as_double(const std::vector<float>& p) {
  std::vector<double> positive;
  for (float v : p)
    if (v > 0) positive.push_back(v);
  return positive;
}

}  // namespace

StepRecord describe_step(const StepInputs& in, std::optional<int64_t> chosen, const TokenText& token_text,
                         const StepMath& math) {
  const int64_t vocab = static_cast<int64_t>(in.logits.size());
  const std::vector<float> probs_t1 = math.softmax_at(in.logits, 1);
  const std::vector<float> probs_scaled =
      in.table_temperature == 1 ? probs_t1 : math.softmax_at(in.logits, in.table_temperature);
  const std::vector<float>& final_p = in.final_probs;

  StepRecord r;
  if (chosen) {
    r.token_id = *chosen;
    r.token_text = token_text(*chosen);
    r.prob = final_p[static_cast<size_t>(*chosen)];
    r.prob_t1 = probs_t1[static_cast<size_t>(*chosen)];
  }
  const std::vector<double> positive = positive_as_double(final_p);
  r.kept = in.greedy ? 1 : static_cast<int64_t>(positive.size());
  r.entropy = math.entropy(positive);

  // The best candidates by logit (temperature and filters never reorder them); at least two for
  // the margins even when the record lists fewer.
  const int64_t listed = std::min(in.top_candidates, vocab);
  const int64_t wanted = std::min(std::max<int64_t>(listed, 2), vocab);
  const std::vector<int64_t> best = math.best_ids(in.logits, wanted);
  double listed_mass = 0;
  for (int64_t i = 0; i < listed; ++i) {
    Candidate c;
    c.id = best[static_cast<size_t>(i)];
    c.text = token_text(c.id);
    c.prob = final_p[static_cast<size_t>(c.id)];
    c.prob_scaled = probs_scaled[static_cast<size_t>(c.id)];
    listed_mass += c.prob_scaled;
    r.top.push_back(std::move(c));
  }
  r.rest_mass = 1 - listed_mass;
  if (wanted >= 2) {
    r.margin = static_cast<double>(probs_scaled[static_cast<size_t>(best[0])]) - probs_scaled[static_cast<size_t>(best[1])];
    r.logit_margin = static_cast<double>(in.logits[static_cast<size_t>(best[0])]) - in.logits[static_cast<size_t>(best[1])];
  }
  return r;
}

std::string logits_row_digest(const std::vector<float>& logits) {
  return logits_digest(logits.data(), logits.size());
}

}  // namespace genrepro
