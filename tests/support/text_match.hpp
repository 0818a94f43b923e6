#pragma once
// Regex checks on a command's output with the same rules as the subprocess checker
// (tests/cli/check_command.py: Python's re.search with re.S): PCRE2, '.' also matches a newline,
// '^' is the start of the text, '$' its end (or just before a final newline).
#include <string>

#include <gtest/gtest.h>

namespace genrepro::test {

// True when `pattern` matches somewhere in `text`. A pattern that does not compile throws
// std::invalid_argument naming the pattern and the offset of the problem.
bool regex_search(const std::string& pattern, const std::string& text);

// For EXPECT_TRUE: says which pattern failed to match what.
::testing::AssertionResult Searches(const std::string& pattern, const std::string& text);

}  // namespace genrepro::test
