#pragma once
// The last step of a chain: the distribution the token is drawn from, and the draw. Three rules,
// as the frameworks pick:
//   argmax       greedy (the article's, and Hugging Face's after its processors): the first
//                maximum in id order; the distribution is that token alone.
//   race         torch.multinomial(softmax(scores), 1): the softmax over the whole vocabulary in
//                id order (the chain's RowMath), then the exponential race of params/portable_rng.hpp,
//                seeded once per chain. rng torch and rng portable both draw this way: the
//                portable race is torch's draw (docs/sampling.md, "Picking").
//   dist         llama.cpp's dist sampler over the candidates in their current order.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "params/portable_rng.hpp"
#include "params/run_params.hpp"
#include "sampling/candidates.hpp"
#include "sampling/llama_cpp_chain.hpp"
#include "sampling/row_math.hpp"
#include "util/errors.hpp"

namespace genrepro::sampling {

// How close a draw came to another token: the evidence's steps[].draw (docs/evidence-format.md).
struct DrawMargin {
  std::string rule;  // "exponential_race" (margin: ln of the best ratio over the second) or "inverse_cdf" (distance in u)
  double margin = 0;
  int64_t runner_up = -1;
};

// What a draw throws when the distribution to draw from is not one: `found` is "NaN or infinity",
// "a negative probability" or "no positive probability". The engine words it with the step.
class NoDistribution : public NumericsError {
 public:
  explicit NoDistribution(std::string found);
  std::string found;
};

struct Drawn {
  int64_t token = -1;
  std::optional<DrawMargin> margin;  // absent when no other token could have been drawn
};

class Draw {
 public:
  virtual ~Draw() = default;
  virtual const char* name() const = 0;  // "argmax", "exponential_race", "dist"
  // Sets every candidate's p to the distribution the token is drawn from, then draws (consuming
  // the generator) unless `pick` is false. Throws NoDistribution when there is nothing to draw from
  // (NaN or infinity in the distribution, or no positive probability).
  virtual std::optional<Drawn> draw(Candidates& cur, bool pick) = 0;
};

class ArgmaxDraw : public Draw {
 public:
  const char* name() const override { return "argmax"; }
  std::optional<Drawn> draw(Candidates& cur, bool pick) override;
};

class RaceDraw : public Draw {
 public:
  RaceDraw(uint64_t seed, const RowMath& math) : race_(seed), math_(math) {}
  const char* name() const override { return "exponential_race"; }
  std::optional<Drawn> draw(Candidates& cur, bool pick) override;

 private:
  PortableMultinomial race_;
  const RowMath& math_;
  std::vector<float> scores_;  // the row softmax reads, kept between steps: a new one is zero-filled first
};

class DistDraw : public Draw {
 public:
  explicit DistDraw(uint32_t seed) : dist_(seed) {}
  const char* name() const override { return "dist"; }
  std::optional<Drawn> draw(Candidates& cur, bool pick) override;

 private:
  llama_cpp::Dist dist_;
};

// The draw `s` makes: argmax when greedy (article, hf), the race for rng torch and portable, dist
// for rng llama.cpp. `s` is checked (check_run_params). `math` must outlive the draw.
std::unique_ptr<Draw> make_draw(const SamplingParams& s, bool greedy, const RowMath& math = aten_float_math());

}  // namespace genrepro::sampling
