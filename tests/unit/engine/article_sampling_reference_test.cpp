// The engine's chain (RunChain: the article preset with libtorch's row math, as every run steps it)
// against the article's own PyTorch code on fixed logits (tests/reference/article_sampling.py
// --fixed-logits, run with /usr/bin/python3): the same logits, temperatures, top-p values and seeds,
// one generator per case visiting every vector in order. Every pick must be identical, for rng
// "torch" and rng "portable".
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/run_chain.hpp"
#include "support/torch_rows.hpp"

namespace genrepro {
namespace {

std::string run_command(const std::string& cmd) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  if (!pipe) throw std::runtime_error("popen failed: " + cmd);
  std::string out;
  std::array<char, 65536> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe.get())) > 0) out.append(buf.data(), n);
  const int status = pclose(pipe.release());
  if (status != 0) throw std::runtime_error("command failed (status " + std::to_string(status) + "): " + cmd);
  return out;
}

// The Python side's JSON: under ctest, the file reference.article_sampled_loop.python wrote in the
// process that runs the article's loops ($GENREPRO_ARTICLE_FIXED_LOGITS, one Python start fewer);
// run by hand, the binary runs Python itself.
nlohmann::json article_fixed_logits() {
  if (const char* made = std::getenv("GENREPRO_ARTICLE_FIXED_LOGITS"); made != nullptr && *made != '\0') {
    std::ifstream in(made);
    if (!in) throw std::runtime_error(std::string(made) + ": cannot read ($GENREPRO_ARTICLE_FIXED_LOGITS)");
    return nlohmann::json::parse(in);
  }
  return nlohmann::json::parse(run_command(std::string(GENREPRO_TEST_PYTHON) + " " + GENREPRO_SOURCE_DIR +
                                           "/tests/reference/article_sampling.py --fixed-logits"));
}

TEST(ArticleSamplingReference, SamePicksAsTheArticlesPyTorchCodeOnFixedLogits) {
  const nlohmann::json ref = article_fixed_logits();
  std::vector<torch::Tensor> vectors;
  for (const auto& v : ref.at("logits"))  // float32 values stored exactly as doubles
    vectors.push_back(torch::tensor(v.get<std::vector<double>>(), torch::kFloat64).to(torch::kFloat32));
  const int rounds = ref.at("rounds").get<int>();

  int64_t compared = 0;
  for (const auto& c : ref.at("cases")) {
    SamplingParams s;
    s.mode = DecodeMode::sample;
    s.temperature = c.at("temperature").get<double>();
    s.top_p = c.at("top_p").get<double>();
    s.seed = c.at("seed").get<uint64_t>();
    const auto expected = c.at("picks").get<std::vector<int64_t>>();
    for (Rng rng : kRngs) {
      s.rng = rng;
      RunChain chain = test::torch_run_chain(s, {}, -1);  // one generator per case, as the article's rng
      std::vector<int64_t> picks;
      for (int r = 0; r < rounds; ++r)
        for (const auto& logits : vectors) picks.push_back(*chain.step(test::row_of(logits), static_cast<int64_t>(picks.size()), true).token);
      EXPECT_EQ(picks, expected) << "T " << s.temperature << " p " << s.top_p << " seed " << s.seed
                                 << " rng " << to_string(rng);
      compared += static_cast<int64_t>(picks.size());
    }
  }
  // 6 (T, p) cases x 15 seeds x 2 rounds x 7 vectors, for each of the two rngs.
  EXPECT_EQ(compared, 6 * 15 * 2 * 7 * 2);
  RecordProperty("draws_compared", std::to_string(compared));
}

}  // namespace
}  // namespace genrepro
