#include "support/text_match.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <memory>
#include <stdexcept>

namespace genrepro::test {

bool regex_search(const std::string& pattern, const std::string& text) {
  int error = 0;
  PCRE2_SIZE error_offset = 0;
  std::unique_ptr<pcre2_code, decltype(&pcre2_code_free)> code(
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), PCRE2_DOTALL | PCRE2_UTF | PCRE2_MATCH_INVALID_UTF,
                    &error, &error_offset, nullptr),
      &pcre2_code_free);
  if (!code) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof message);
    throw std::invalid_argument("regex /" + pattern + "/ at offset " + std::to_string(error_offset) + ": " +
                                reinterpret_cast<const char*>(message));
  }
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> match(
      pcre2_match_data_create_from_pattern(code.get(), nullptr), &pcre2_match_data_free);
  const int rc = pcre2_match(code.get(), reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), 0, 0, match.get(), nullptr);
  if (rc == PCRE2_ERROR_NOMATCH) return false;
  if (rc < 0) throw std::runtime_error("regex /" + pattern + "/: pcre2_match failed with " + std::to_string(rc));
  return true;
}

::testing::AssertionResult Searches(const std::string& pattern, const std::string& text) {
  if (regex_search(pattern, text)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "/" << pattern << "/ does not match:\n" << text;
}

}  // namespace genrepro::test
