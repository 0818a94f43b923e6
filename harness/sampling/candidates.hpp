#pragma once
// The candidate array every stage of a chain works on: llama.cpp's llama_token_data_array, one
// {id, logit, p} per token, in float32. Hugging Face's and the article's stages keep it whole and
// in id order (they mask with -infinity, as their torch code does on a [V] tensor); llama.cpp's
// shrink and reorder it (top-k sorts by logit, typical by its own score), and its dist scans it in
// its current order. No libtorch.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace genrepro::sampling {

// llama_token_data.
struct Candidate {
  int32_t id;
  float logit;
  float p;
};

// llama_token_data_array over a buffer it owns: `data` points into its storage (llama.cpp lets a
// sampler move it; none here does), `size` shrinks as stages cut, `sorted` says data is in
// descending logit order, `selected` is the index a draw picked.
class Candidates {
 public:
  // Every token of the vocabulary in id order, logits as given, p 0: what llama_sampler_sample
  // builds from the logits.
  Candidates(const float* logits, size_t n);
  Candidates(const Candidates& other);
  Candidates& operator=(const Candidates& other);
  // A move keeps the buffer, so `data` stays valid.
  Candidates(Candidates&& other) noexcept = default;
  Candidates& operator=(Candidates&& other) noexcept = default;

  Candidate* data = nullptr;
  size_t size = 0;
  int64_t selected = -1;
  bool sorted = false;

  // The candidates whose logit is not -infinity: a stage's kept-set count.
  int64_t finite_count() const;
  // Their ids, ascending.
  std::vector<int32_t> finite_ids() const;

 private:
  std::vector<Candidate> storage_;
};

}  // namespace genrepro::sampling
