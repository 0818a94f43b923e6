#include "engine/step_evidence.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "evidence/logits_digest.hpp"

namespace genrepro {

namespace {

// The positive probabilities, in index order, as float64 [K]: what p.to(float64)[p > 0] holds,
// gathered in one pass instead of converting and masking all V.
torch::Tensor positive_as_double(const float* p, int64_t vocab) {
  std::vector<double> positive;
  for (int64_t i = 0; i < vocab; ++i)
    if (p[i] > 0) positive.push_back(p[i]);
  torch::Tensor out = torch::empty({static_cast<int64_t>(positive.size())}, torch::kFloat64);
  std::memcpy(out.data_ptr<double>(), positive.data(), positive.size() * sizeof(double));
  return out;
}

// Entropy in nats of a distribution given as probabilities (0 * log 0 counts as 0), in double:
// -(p * log p).sum() over the positive ones, the same torch ops on the same values in the same
// order as ever (the record's bits do not change).
double entropy_nats(const torch::Tensor& positive) {
  return -(positive * positive.log()).sum().item<double>();
}

}  // namespace

StepRecord describe_step(const StepInputs& in, std::optional<int64_t> chosen, const TokenText& token_text) {
  const int64_t vocab = in.logits.size(-1);
  const auto logits = in.logits.contiguous();
  const auto probs_t1 = torch::softmax(logits, 0).contiguous();
  const auto probs_scaled =
      in.table_temperature == 1 ? probs_t1 : torch::softmax(logits / in.table_temperature, 0).contiguous();
  const auto final_probs = in.final_probs.contiguous();
  const float* logit = logits.data_ptr<float>();
  const float* t1 = probs_t1.data_ptr<float>();
  const float* scaled = probs_scaled.data_ptr<float>();
  const float* final_p = final_probs.data_ptr<float>();

  StepRecord r;
  if (chosen) {
    r.token_id = *chosen;
    r.token_text = token_text(*chosen);
    r.prob = final_p[*chosen];
    r.prob_t1 = t1[*chosen];
  }
  const torch::Tensor positive = positive_as_double(final_p, vocab);
  r.kept = in.greedy ? 1 : positive.size(0);
  r.entropy = entropy_nats(positive);

  // The best candidates by logit (temperature and filters never reorder them); at least two for
  // the margins even when the record lists fewer.
  const int64_t listed = std::min(in.top_candidates, vocab);
  const int64_t wanted = std::min(std::max<int64_t>(listed, 2), vocab);
  const auto best_ids = std::get<1>(torch::topk(logits, wanted)).contiguous();
  const int64_t* best = best_ids.data_ptr<int64_t>();
  double listed_mass = 0;
  for (int64_t i = 0; i < listed; ++i) {
    Candidate c;
    c.id = best[i];
    c.text = token_text(c.id);
    c.prob = final_p[c.id];
    c.prob_scaled = scaled[c.id];
    listed_mass += c.prob_scaled;
    r.top.push_back(std::move(c));
  }
  r.rest_mass = 1 - listed_mass;
  if (wanted >= 2) {
    r.margin = static_cast<double>(scaled[best[0]]) - scaled[best[1]];
    r.logit_margin = static_cast<double>(logit[best[0]]) - logit[best[1]];
  }
  return r;
}

std::string logits_row_digest(const torch::Tensor& logits) {
  if (logits.dim() != 1 || logits.scalar_type() != torch::kFloat32)
    throw std::logic_error("logits_row_digest: expected a [V] float32 row");
  const torch::Tensor row = logits.contiguous();  // a batch's row is already contiguous: no copy
  return logits_digest(row.data_ptr<float>(), static_cast<std::size_t>(row.numel()));
}

}  // namespace genrepro
