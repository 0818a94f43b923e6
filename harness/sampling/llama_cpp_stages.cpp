#include "sampling/llama_cpp_stages.hpp"

#include <memory>
#include <stdexcept>
#include <utility>

#include "params/framework_params.hpp"

namespace genrepro::sampling {

PenaltiesStage::PenaltiesStage(int64_t last_n, float repeat, float frequency, float presence)
    : repeat_(repeat), frequency_(frequency), presence_(presence) {
  window_.last_n = last_n;
}

void PenaltiesStage::apply(Candidates& cur, const StageContext&) {
  llama_cpp::penalties(cur, window_, repeat_, frequency_, presence_);
}

void PenaltiesStage::accept(int64_t token) {
  if (window_.last_n == 0) return;
  const auto id = static_cast<int32_t>(token);
  recent_.push_back(id);
  ++window_.counts[id];
  if (window_.last_n > 0 && static_cast<int64_t>(recent_.size()) > window_.last_n) {
    // The ring buffer is full: the oldest token leaves the window (and the map, at count 0).
    const int32_t oldest = recent_.front();
    recent_.pop_front();
    if (--window_.counts[oldest] == 0) window_.counts.erase(oldest);
  }
}

void PenaltiesStage::reset() {
  window_.counts.clear();
  recent_.clear();
}

namespace {

std::unique_ptr<Stage> make_llama_cpp_stage(SamplerStage stage, const SamplingParams& s) {
  const FrameworkControls& c = s.controls;
  const auto min_keep = static_cast<size_t>(c.min_keep);
  const auto array = [stage](ArrayStage::Rule rule) { return std::make_unique<ArrayStage>(stage, std::move(rule)); };
  switch (stage) {
    case SamplerStage::logit_bias: {
      std::vector<std::pair<int32_t, float>> biases;
      for (const TokenBias& b : c.logit_bias) biases.emplace_back(static_cast<int32_t>(b.token), static_cast<float>(b.bias));
      return array([biases](Candidates& cur) { llama_cpp::logit_bias(cur, biases); });
    }
    case SamplerStage::penalties:
      return std::make_unique<PenaltiesStage>(c.repeat_last_n, static_cast<float>(c.repeat_penalty),
                                              static_cast<float>(c.frequency_penalty), static_cast<float>(c.presence_penalty));
    case SamplerStage::top_n_sigma: {
      const auto n = static_cast<float>(c.top_n_sigma);
      return array([n](Candidates& cur) { llama_cpp::top_n_sigma(cur, n); });
    }
    case SamplerStage::top_k: {
      const auto k = static_cast<int32_t>(s.top_k);
      return array([k](Candidates& cur) { llama_cpp::top_k(cur, k); });
    }
    case SamplerStage::typical_p: {
      const auto p = static_cast<float>(c.typical_p);
      return array([p, min_keep](Candidates& cur) { llama_cpp::typical(cur, p, min_keep); });
    }
    case SamplerStage::top_p: {
      // llama.cpp's top-p keeps a scratch buffer between calls (its buf_sort); the stage owns it.
      const auto p = static_cast<float>(s.top_p);
      auto scratch = std::make_shared<std::vector<llama_cpp::Candidate>>();
      return array([p, min_keep, scratch](Candidates& cur) { llama_cpp::top_p(cur, p, min_keep, *scratch); });
    }
    case SamplerStage::min_p: {
      const auto p = static_cast<float>(c.min_p);
      return array([p, min_keep](Candidates& cur) { llama_cpp::min_p(cur, p, min_keep); });
    }
    case SamplerStage::temperature: {
      const auto t = static_cast<float>(s.temperature);
      const auto range = static_cast<float>(c.dynatemp_range);
      const auto exponent = static_cast<float>(c.dynatemp_exponent);
      return array([t, range, exponent](Candidates& cur) { llama_cpp::temp_ext(cur, t, range, exponent); });
    }
    default: break;
  }
  throw std::logic_error("not a llama.cpp stage");  // a bug: active_stages lists only these
}

}  // namespace

std::vector<std::unique_ptr<Stage>> llama_cpp_stages(const SamplingParams& s) {
  std::vector<std::unique_ptr<Stage>> stages;
  for (SamplerStage stage : active_stages(s, /*greedy=*/false)) stages.push_back(make_llama_cpp_stage(stage, s));
  return stages;
}

}  // namespace genrepro::sampling
