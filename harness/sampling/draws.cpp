#include "sampling/draws.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

#include "util/errors.hpp"

namespace genrepro::sampling {

namespace {

void check_distribution(const std::vector<float>& probs) {
  bool finite = true, non_negative = true, any_positive = false;
  for (float p : probs) {
    finite = finite && std::isfinite(p);
    non_negative = non_negative && !(p < 0);
    any_positive = any_positive || p > 0;
  }
  if (finite && non_negative && any_positive) return;
  throw NoDistribution(!finite ? "NaN or infinity" : !non_negative ? "a negative probability" : "no positive probability");
}

}  // namespace

NoDistribution::NoDistribution(std::string what_found)
    : NumericsError("the distribution to draw from holds " + what_found +
                    "; the logits or the sampling parameters left float32's range (a temperature near its minimum); "
                    "check the temperature and the logits"),
      found(std::move(what_found)) {}

std::optional<Drawn> ArgmaxDraw::draw(Candidates& cur, bool pick) {
  if (cur.size == 0) throw NumericsError("no token is left to pick");
  // torch.argmax: the first maximum (a NaN counts as the maximum, as there).
  size_t best = 0;
  for (size_t i = 1; i < cur.size; ++i)
    if (std::isnan(cur.data[i].logit) ? !std::isnan(cur.data[best].logit) : cur.data[i].logit > cur.data[best].logit) best = i;
  for (size_t i = 0; i < cur.size; ++i) cur.data[i].p = i == best ? 1.0f : 0.0f;
  if (!pick) return std::nullopt;
  return Drawn{cur.data[best].id, std::nullopt};
}

std::optional<Drawn> RaceDraw::draw(Candidates& cur, bool pick) {
  // probs = torch.softmax(scores, dim=-1), over the whole row in id order
  scores_.resize(cur.size);
  for (size_t i = 0; i < cur.size; ++i) scores_[i] = cur.data[i].logit;
  const std::vector<float> probs = math_.softmax(scores_);
  check_distribution(probs);
  for (size_t i = 0; i < cur.size; ++i) cur.data[i].p = probs[i];
  if (!pick) return std::nullopt;
  // next_id = torch.multinomial(probs, num_samples=1, generator=rng)
  const RacePick drawn = race_.race(probs.data(), probs.size());
  Drawn out{cur.data[static_cast<size_t>(drawn.token)].id, std::nullopt};
  if (drawn.margin)
    out.margin = DrawMargin{"exponential_race", drawn.margin->margin, cur.data[static_cast<size_t>(drawn.margin->runner_up)].id};
  return out;
}

std::optional<Drawn> DistDraw::draw(Candidates& cur, bool pick) {
  if (!pick) {
    llama_cpp::Dist::probabilities(cur);
    return std::nullopt;
  }
  const std::optional<llama_cpp::CdfEdge> edge = dist_.apply(cur);
  if (cur.selected < 0) throw NumericsError("no token is left to pick");
  Drawn out{cur.data[cur.selected].id, std::nullopt};
  if (edge) out.margin = DrawMargin{"inverse_cdf", edge->distance, edge->runner_up};
  return out;
}

std::unique_ptr<Draw> make_draw(const SamplingParams& s, bool greedy, const RowMath& math) {
  if (s.rng == Rng::llama_cpp) return std::make_unique<DistDraw>(static_cast<uint32_t>(s.seed));
  if (greedy) return std::make_unique<ArgmaxDraw>();
  switch (s.rng) {
    case Rng::torch:
    case Rng::portable: return std::make_unique<RaceDraw>(s.seed, math);
    case Rng::llama_cpp: break;
  }
  throw std::logic_error("Rng out of range");  // a bug: every enumerator is handled above
}

}  // namespace genrepro::sampling
