#pragma once
// How an error message quotes untrusted text (a token, an input line, a name).
#include <cstddef>
#include <string>
#include <string_view>

namespace genrepro {

// JSON-quoted, so control characters are visible and invalid UTF-8 is replaced, cut to
// `max_bytes` bytes with "..." inside the quotes when cut.
std::string quoted_excerpt(std::string_view text, std::size_t max_bytes);

// The text up to its first line break: what a one-line message keeps of a multi-line one (a
// libtorch error's backtrace, git's output).
inline std::string first_line(std::string_view text) { return std::string(text.substr(0, text.find('\n'))); }

}  // namespace genrepro
