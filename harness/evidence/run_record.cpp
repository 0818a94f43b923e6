#include "evidence/run_record.hpp"

namespace genrepro {

const char* to_string(StopReason r) {
  switch (r) {
    case StopReason::eos: return "eos";
    case StopReason::max_new_tokens: return "max_new_tokens";
    case StopReason::context_full: return "context_full";
  }
  return "?";
}

const char* to_string(DrawRule r) {
  switch (r) {
    case DrawRule::exponential_race: return "exponential_race";
    case DrawRule::inverse_cdf: return "inverse_cdf";
  }
  return "?";
}

}  // namespace genrepro
