#pragma once
// Text and number formatting for reports. Generated text may hold anything: markup, control
// characters, <|endoftext|>, pieces of UTF-8 characters. Every string that reaches a report goes
// through visible_text() first (so nothing is invisible or invalid) and then through the escaper
// of the output it lands in. Numbers have fixed formats so that the same evidence always gives
// byte-identical reports, whatever the locale.
#include <cstdint>
#include <string>

namespace genrepro {

// Valid UTF-8 in which nothing is hidden: ill-formed bytes become U+FFFD, C0 controls other than
// newline and tab become their Control Pictures (U+2400 + c, so '\x07' shows as '␇'), DEL shows
// as '␡', C1 controls as "\u0085"-style text. With keep_layout false, newline and tab are shown
// too ('↵', '⇥'), for one-line places such as table cells, chart labels and legends.
std::string visible_text(const std::string& raw, bool keep_layout);

// A token as the article's tables show it: in double quotes, on one line, visible; '"' and '\'
// inside are backslash-escaped as in JSON (the token (" shows as "(\"").
std::string quoted_token(const std::string& raw);

// Escapers for text that is already visible_text(): &, <, >, " and ' become entities.
std::string html_escape(const std::string& text);
std::string xml_escape(const std::string& text);  // the same set; SVG is XML
// Markdown inline text: every ASCII punctuation character Markdown could read as syntax is
// backslash-escaped, '&' becomes "&amp;" so entities stay literal, and '|' cannot end a table cell.
std::string markdown_inline(const std::string& text);
// A fence for a Markdown code block around `text`: backticks, one longer than the longest run
// of backticks inside it (at least three), so generated text cannot close the block.
std::string markdown_fence(const std::string& text);

// Fixed-format numbers. A NaN or infinite value prints as kNotANumber, never "nan" or "inf" (the
// charts map such values to the axis first: report_svg.hpp).
inline constexpr const char* kNotANumber = "n/a";
// The same gate for sentences whose numbers another layer printed with %g (diff's reasons and
// summary): a whole word "nan", "-nan", "inf" or "-inf" becomes kNotANumber. Never for evidence
// text (a token may be the word "nan").
std::string numbers_gated(const std::string& generated_sentence);
std::string format_prob(double p);        // 0.1234 (4 decimals); below 0.0001 as 1.23e-05
std::string format_count(int64_t n);      // 14,905 (the article's thousands separator)
std::string format_param(double v);       // shortest of %.6g: 0.001, 1, 0.9, 2
std::string format_fixed(double v, int decimals);  // plain %.Nf, for coordinates and seconds

}  // namespace genrepro
