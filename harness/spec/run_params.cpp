#include "spec/run_params.hpp"

namespace genrepro {

const char* to_string(DecodeMode m) {
  switch (m) {
    case DecodeMode::greedy: return "greedy";
    case DecodeMode::sample: return "sample";
  }
  return "?";
}

}  // namespace genrepro
