// llama.cpp's samplers over its candidate array (llama_cpp_chain.hpp). Every function states the
// rule it follows; the order of operations and the types are llama.cpp's on purpose (a float sum
// stays a float sum), since the comparison tests hold the result to llama.cpp's own library.
#include "sampling/llama_cpp_chain.hpp"

#include <algorithm>
#include <cassert>
#include <cfloat>
#include <climits>
#include <cmath>
#include <math.h>
#include <numeric>

namespace genrepro::llama_cpp {

namespace {

bool by_logit_descending(const Candidate& a, const Candidate& b) { return a.logit > b.logit; }

// int(x) as x86's cvttss2si computes it, which is what llama.cpp's `int(bucket_scale * val +
// bucket_inter)` compiles to: out of range (a -infinity logit) gives INT_MIN. Written out so the
// conversion is defined here whatever the optimiser does.
int truncate_like_cvttss2si(float x) {
  if (!(x > -2147483904.0f && x < 2147483648.0f)) return INT_MIN;
  return static_cast<int>(x);
}

// llama_token_data_array_partial_sort: the first `npartial` of `cur` by descending logit into
// `res` (cur unchanged). Logits are binned into 128 buckets over [-10, 10) (everything outside in
// the end buckets); the buckets above the one that completes npartial are sorted whole with
// std::sort, that one with std::partial_sort. `res` holds every candidate of those buckets.
void bucket_partial_sort(const Candidate* data, size_t size, int npartial, std::vector<Candidate>& res) {
  constexpr int kBuckets = 128;
  constexpr float kLow = -10.0f;
  constexpr float kHigh = 10.0f;
  constexpr float kScale = kBuckets / (kHigh - kLow);
  constexpr float kInter = -kLow * kScale;

  std::vector<int> bucket_of;
  std::vector<int> histogram(kBuckets, 0);
  std::vector<Candidate*> bucket_start;
  bucket_of.reserve(size);
  for (int i = 0; i < static_cast<int>(size); ++i) {
    const float value = data[i].logit;
    int b = truncate_like_cvttss2si(kScale * value + kInter);
    b = std::max(0, std::min(kBuckets - 1, b));
    bucket_of.push_back(b);
    ++histogram[b];
  }
  int have = 0;
  int last = kBuckets - 1;
  for (; last >= 0; --last) {
    have += histogram[last];
    if (have >= npartial) break;
  }
  res.resize(have);
  Candidate* out = res.data();
  bucket_start.reserve(kBuckets - last);
  for (int b = kBuckets - 1; b >= last; --b) {
    bucket_start.push_back(out);
    out += histogram[b];
  }
  for (int i = 0; i < static_cast<int>(size); ++i) {
    const int b = bucket_of[i];
    if (b >= last) *bucket_start[kBuckets - 1 - b]++ = data[i];
  }
  out = res.data();
  int done = 0;
  for (int b = kBuckets - 1; b > last; --b) {
    std::sort(out, out + histogram[b], by_logit_descending);
    out += histogram[b];
    done += histogram[b];
  }
  std::partial_sort(out, out + npartial - done, out + histogram[last], by_logit_descending);
}

// llama_token_data_array_partial_sort_inplace: keeps the top npartial, sorted.
void partial_sort_inplace(Candidates& cur, int npartial) {
  if (npartial <= 128) {
    std::partial_sort(cur.data, cur.data + npartial, cur.data + cur.size, by_logit_descending);
    cur.size = static_cast<size_t>(npartial);
    cur.sorted = true;
    return;
  }
  std::vector<Candidate> sorted;
  bucket_partial_sort(cur.data, cur.size, npartial, sorted);
  std::copy(sorted.data(), sorted.data() + npartial, cur.data);
  cur.size = static_cast<size_t>(npartial);
  cur.sorted = true;
}

// The largest logit: the first when the candidates are sorted (llama.cpp reads it there too).
float max_logit(const Candidates& cur) {
  float max_l = cur.data[0].logit;
  if (!cur.sorted)
    for (size_t i = 1; i < cur.size; ++i) max_l = std::max(max_l, cur.data[i].logit);
  return max_l;
}

// llama_sampler_softmax_impl: p = expf(logit - max) / (float sum), after sorting when asked.
void softmax(Candidates& cur, bool do_sort) {
  assert(cur.size > 0);
  if (do_sort && !cur.sorted) partial_sort_inplace(cur, static_cast<int>(cur.size));
  const float max_l = max_logit(cur);
  float sum = 0.0f;
  for (size_t i = 0; i < cur.size; ++i) {
    const float p = expf(cur.data[i].logit - max_l);
    cur.data[i].p = p;
    sum += p;
  }
  for (size_t i = 0; i < cur.size; ++i) cur.data[i].p /= sum;
}

// llama_sampler_temp_impl: divide by T; T <= 0 keeps the first maximum in the array's order and
// sets every other logit to -infinity.
void temperature(Candidates& cur, float temp) {
  if (cur.size == 0) return;
  if (temp <= 0.0f) {
    size_t max_i = 0;
    float max_l = cur.data[0].logit;
    for (size_t i = 1; i < cur.size; ++i) {
      if (cur.data[i].logit > max_l) {
        cur.data[max_i].logit = -INFINITY;
        max_i = i;
        max_l = cur.data[i].logit;
      } else {
        cur.data[i].logit = -INFINITY;
      }
    }
    return;
  }
  for (size_t i = 0; i < cur.size; ++i) cur.data[i].logit /= temp;
}

}  // namespace

PenaltyWindow penalty_window(const std::vector<int64_t>& history, int64_t last_n) {
  PenaltyWindow w;
  w.last_n = last_n;
  if (last_n == 0) return w;
  const size_t n = last_n < 0 ? history.size() : std::min(history.size(), static_cast<size_t>(last_n));
  for (size_t i = history.size() - n; i < history.size(); ++i) ++w.counts[static_cast<int32_t>(history[i])];
  return w;
}

// llama_sampler_logit_bias_apply: a token still at its own index (the array not yet reordered)
// gets its bias there; the others are searched for, the first matching entry of the list per
// candidate.
void logit_bias(Candidates& cur, const std::vector<std::pair<int32_t, float>>& biases) {
  if (biases.empty()) return;
  std::vector<std::pair<int32_t, float>> to_search;
  for (const auto& [token, bias] : biases) {
    if (token >= 0 && cur.size > static_cast<size_t>(token) && cur.data[token].id == token) {
      cur.data[token].logit += bias;
    } else {
      to_search.emplace_back(token, bias);
    }
  }
  if (to_search.empty()) return;
  for (size_t i = 0; i < cur.size; ++i) {
    for (const auto& [token, bias] : to_search) {
      if (cur.data[i].id == token) {
        cur.data[i].logit += bias;
        break;
      }
    }
  }
}

// llama_sampler_penalties_apply: every candidate seen `count` times in the window: logit <= 0
// is multiplied by the repeat penalty, else divided; then count * freq + present is subtracted.
void penalties(Candidates& cur, const PenaltyWindow& window, float repeat, float freq, float present) {
  // llama_sampler_init_penalties makes an empty sampler of a disabled one (last_n 0 gives an empty window).
  if (window.last_n == 0 || (repeat == 1.0f && freq == 0.0f && present == 0.0f)) return;
  for (size_t i = 0; i < cur.size; ++i) {
    const auto seen = window.counts.find(cur.data[i].id);
    if (seen == window.counts.end()) continue;
    const int count = seen->second;
    if (cur.data[i].logit <= 0) {
      cur.data[i].logit *= repeat;
    } else {
      cur.data[i].logit /= repeat;
    }
    cur.data[i].logit -= float(count) * freq + float(count > 0) * present;
  }
  cur.sorted = false;
}

// llama_sampler_top_n_sigma_apply: mask every logit below max - n * std, the mean and standard
// deviation over the candidates that are not -infinity (float sums; the square in double).
void top_n_sigma(Candidates& cur, float n) {
  if (n <= 0.0f || cur.size <= 1) return;
  float max = cur.data[0].logit;
  float sum = 0;
  size_t valid = 0;
  for (size_t i = 0; i < cur.size; ++i) {
    if (cur.data[i].logit != -INFINITY) {
      max = std::max(max, cur.data[i].logit);
      sum += cur.data[i].logit;
      valid++;
    }
  }
  const float mean = valid > 0 ? sum / valid : 0;
  float acc = 0;
  for (size_t i = 0; i < cur.size; ++i) {
    if (cur.data[i].logit != -INFINITY) acc += ::pow(cur.data[i].logit - mean, 2);
  }
  const float sd = valid > 0 ? ::sqrt(acc / valid) : 0;
  for (size_t i = 0; i < cur.size; ++i) {
    if (cur.data[i].logit < max - (n * sd)) cur.data[i].logit = -INFINITY;
  }
}

// llama_sampler_top_k_impl: exactly k (ties at the boundary broken by the sort), sorted.
void top_k(Candidates& cur, int32_t k) {
  if (k <= 0) return;
  k = std::min(k, static_cast<int>(cur.size));
  if (!cur.sorted) partial_sort_inplace(cur, k);
  cur.size = static_cast<size_t>(k);
}

// llama_sampler_typical_apply: softmax (sorted), entropy H = sum -p logf p (float), score
// |-logf p - H|, candidates by ascending score (std::sort of their indices); keep up to the
// first whose running float sum is strictly greater than p (and at least min_keep).
void typical(Candidates& cur, float p, size_t min_keep) {
  if (p >= 1.0f) return;
  softmax(cur, true);
  float entropy = 0.0f;
  for (size_t i = 0; i < cur.size; ++i) entropy += -cur.data[i].p * logf(cur.data[i].p);
  std::vector<float> shifted;
  for (size_t i = 0; i < cur.size; ++i) shifted.push_back(fabsf(-logf(cur.data[i].p) - entropy));
  std::vector<size_t> order(cur.size);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return shifted[a] < shifted[b]; });
  float cum = 0.0f;
  size_t last = order.size();
  for (size_t i = 0; i < order.size(); ++i) {
    cum += cur.data[order[i]].p;
    if (cum > p && (min_keep == 0 || i >= min_keep - 1)) {
      last = i + 1;
      break;
    }
  }
  std::vector<Candidate> kept;
  for (size_t i = 0; i < last; ++i) kept.push_back(cur.data[order[i]]);
  std::copy(kept.begin(), kept.end(), cur.data);
  cur.size = kept.size();
  cur.sorted = false;
}

// llama_sampler_top_p_apply: softmax (unsorted), then by descending logit the first whose running
// float sum reaches p (>=), at least min_keep. Over 1,024 unsorted candidates it sorts the top 256
// first and the rest only if the sum has not reached p by then.
void top_p(Candidates& cur, float p, size_t min_keep, std::vector<Candidate>& scratch) {
  if (p >= 1.0f) return;
  softmax(cur, false);
  size_t k = cur.size;
  Candidate* pdata = cur.data;
  if (!cur.sorted && cur.size > 1024) {
    k = std::min<size_t>(256, cur.size);
    bucket_partial_sort(cur.data, cur.size, static_cast<int>(k), scratch);
    pdata = scratch.data();
  } else if (!cur.sorted) {
    partial_sort_inplace(cur, static_cast<int>(k));
  }
  float cum = 0.0f;
  size_t last = cur.size;
  for (size_t i = 0; i < cur.size; ++i) {
    cum += pdata[i].p;
    if (cum >= p && i + 1 >= min_keep) {
      last = i + 1;
      break;
    }
    if (!cur.sorted && i == k - 1) {
      k = cur.size;
      bucket_partial_sort(cur.data, cur.size, static_cast<int>(k), scratch);
      pdata = scratch.data();
    }
  }
  if (!cur.sorted) {
    std::copy(scratch.data(), scratch.data() + last, cur.data);
    cur.sorted = true;
  }
  cur.size = last;
}

// llama_sampler_min_p_apply: keep logit >= max + logf(p) (p_i >= p * p_max in logit space),
// in the array's order; when fewer than min_keep pass (or the array is sorted), sort and keep the
// sorted prefix that passes, at least min_keep.
void min_p(Candidates& cur, float p, size_t min_keep) {
  if (p <= 0.0f || !cur.size) return;
  bool applied = false;
  if (!cur.sorted) {
    std::vector<Candidate> kept;
    float max_logit = -FLT_MAX;
    for (size_t i = 0; i < cur.size; ++i) max_logit = std::max(max_logit, cur.data[i].logit);
    const float min_logit = max_logit + logf(p);
    for (size_t i = 0; i < cur.size; ++i)
      if (cur.data[i].logit >= min_logit) kept.push_back(cur.data[i]);
    if (!kept.empty() && kept.size() >= min_keep) {
      std::copy(kept.begin(), kept.end(), cur.data);
      cur.size = kept.size();
      applied = true;
    }
  }
  if (!applied) {
    if (!cur.sorted) partial_sort_inplace(cur, static_cast<int>(cur.size));
    const float min_logit = cur.data[0].logit + logf(p);
    size_t i = 1;
    for (; i < cur.size; ++i)
      if (cur.data[i].logit < min_logit && i >= min_keep) break;
    cur.size = i;
  }
}

// llama_sampler_temp_ext_apply: delta > 0 is dynamic temperature (the entropy of the sorted
// softmax, normalised by log(size), mapped into [T - delta, T + delta] by powf(., exponent)),
// then p recomputed in double; otherwise plain temperature.
void temp_ext(Candidates& cur, float temp, float delta, float exponent) {
  if (delta > 0) {
    const float min_temp = std::max(0.0f, temp - delta);
    const float max_temp = temp + delta;
    if (cur.size <= 1) return;
    const float max_entropy = -logf(1.0f / cur.size);
    softmax(cur, true);
    float entropy = 0.0f;
    for (size_t i = 0; i < cur.size; ++i) {
      const float prob = cur.data[i].p;
      if (prob > 0.0f) entropy -= prob * logf(prob);
    }
    const float normalized = entropy / max_entropy;
    const float dyn_temp = min_temp + (max_temp - min_temp) * powf(normalized, exponent);
    temperature(cur, dyn_temp);
    const double max_l = cur.data[0].logit;
    double sum = 0.0;
    for (size_t i = 0; i < cur.size; ++i) {
      const double p = exp(cur.data[i].logit - max_l);
      cur.data[i].p = p;
      sum += p;
    }
    for (size_t i = 0; i < cur.size; ++i) cur.data[i].p /= sum;
    return;
  }
  temperature(cur, temp);
}

// dist's weights: p_i = expf(logit_i - max) as floats, their sum in double (llama_sampler_dist_apply
// and the p a first-prediction record shows must be the same bits, so both come from here).
// Returns the sum; the p are left unnormalised.
double Dist::unnormalised_weights(Candidates& cur) {
  const float max_l = max_logit(cur);
  double sum = 0.0f;
  for (size_t i = 0; i < cur.size; ++i) {
    const float p = expf(cur.data[i].logit - max_l);
    cur.data[i].p = p;
    sum += p;
  }
  return sum;
}

void Dist::probabilities(Candidates& cur) {
  if (cur.size == 0) return;
  if (cur.size == 1) {
    cur.data[0].p = 1.0f;
    return;
  }
  const double sum = unnormalised_weights(cur);
  for (size_t i = 0; i < cur.size; ++i) cur.data[i].p /= sum;
}

namespace {

// The edges of candidate i's interval (before, after] of the running sum, and the nearest
// candidate with weight on each side: what could have been drawn instead. Reads the unnormalised
// p (before dist normalises them).
std::optional<CdfEdge> nearest_edge(const Candidates& cur, size_t i, double before, double after, double target, double sum) {
  std::optional<CdfEdge> edge;
  const auto offer = [&](double distance, size_t j) {
    if (!edge || distance < edge->distance) edge = CdfEdge{distance, cur.data[j].id};
  };
  for (size_t j = i; j-- > 0;)
    if (cur.data[j].p > 0) {
      offer(target - before, j);
      break;
    }
  for (size_t j = i + 1; j < cur.size; ++j)
    if (cur.data[j].p > 0) {
      offer(after - target, j);
      break;
    }
  if (edge) edge->distance /= sum;
  return edge;
}

}  // namespace

// llama_sampler_dist_apply.
std::optional<CdfEdge> Dist::apply(Candidates& cur) {
  if (cur.size == 0) {
    cur.selected = -1;
    return std::nullopt;
  }
  cur.selected = 0;
  std::uniform_real_distribution<double> uniform(0.0f, 1.0f);
  if (cur.size == 1) {
    uniform(rng_);  // llama.cpp draws once per output, one candidate or many
    cur.data[0].p = 1.0f;
    return std::nullopt;
  }
  const double sum = unnormalised_weights(cur);
  const double u = uniform(rng_);
  double running = 0.0f;
  const double target = sum * u;
  bool found = false;
  std::optional<CdfEdge> edge;
  for (size_t i = 0; i < cur.size; ++i) {
    if (!found) {
      const double before = running;
      running += cur.data[i].p;
      if (running >= target) {
        cur.selected = static_cast<int64_t>(i);
        found = true;
        edge = nearest_edge(cur, i, before, running, target, sum);
      }
    }
  }
  for (size_t i = 0; i < cur.size; ++i) cur.data[i].p /= sum;
  // Not found only if rounding left the running sum short of sum * u: llama.cpp then takes the
  // last candidate, and no edge was crossed.
  if (!found) cur.selected = static_cast<int64_t>(cur.size) - 1;
  return edge;
}

}  // namespace genrepro::llama_cpp
