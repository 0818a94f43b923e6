#include "evidence/control_text_consistency.hpp"

#include <nlohmann/json.hpp>

#include "params/framework_params.hpp"
#include "util/errors.hpp"

namespace genrepro {

void control_texts_are_encoded(const RunRecord& r, const Gpt2Tokenizer& tokenizer, const std::string& file, const std::string& at) {
  const FrameworkControls& c = r.params.sampling.controls;
  if (c.texts.empty()) return;
  const ControlTextRule rule = control_text_rule(r.params.sampling.framework);
  EncodeOptions options;
  options.special_tokens = rule.special_tokens;
  options.prefix_space = rule.prefix_space;
  for (size_t i = 0; i < c.texts.size(); ++i) {
    const ControlText& t = c.texts[i];
    const std::vector<int64_t> encoded = tokenizer.encode(t.text, options);
    if (encoded == t.ids) continue;
    throw EvidenceError(file + ": " + at + ".params.control_texts[" + std::to_string(i) + "].ids: found " +
                        nlohmann::json(t.ids).dump() + "; allowed: " + nlohmann::json(encoded).dump() + " (" + rule.name +
                        " applied to its text " + nlohmann::json(t.text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                        ", as " + t.control + " encodes it); " + kRegenerateEvidenceHint);
  }
}

}  // namespace genrepro
