// The report opens: the fixture banner, the introduction, then greedy decoding and its repetition
// (the article's "The loop" and "How you pick").
#include "report/report_section_kit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include "report/report_compare.hpp"
#include "report/report_text.hpp"
#include "report/token_repeats.hpp"

namespace genrepro::sections {

namespace {

// Shortest token span the greedy section calls a repetition: shorter spans (", the") repeat in
// any text.
constexpr size_t kMinRepeatTokens = 4;
// The repeated passage is searched byte by byte (quadratic time); longer continuations skip it.
constexpr size_t kMaxPassageSearchBytes = 8192;

// The longest passage of `text` that occurs twice without overlapping, cut to whole UTF-8
// characters. Token texts cannot give it: a character split over two tokens (’ in GPT-2) shows
// as two U+FFFD pieces in the step records, but whole in the decoded text.
std::string longest_repeated_passage(const std::string& text) {
  const size_t n = text.size();
  if (n > kMaxPassageSearchBytes) return "";
  size_t best_len = 0;
  size_t best_start = 0;
  std::vector<size_t> prev(n + 1, 0), cur(n + 1, 0);
  for (size_t i = 1; i <= n; ++i) {
    std::fill(cur.begin(), cur.end(), 0);
    for (size_t j = i + 1; j <= n; ++j) {
      if (text[i - 1] != text[j - 1]) continue;
      cur[j] = std::min(prev[j - 1] + 1, j - i);
      if (cur[j] > best_len) best_len = cur[j], best_start = i - cur[j];
    }
    std::swap(prev, cur);
  }
  const auto continuation_byte = [&](size_t k) { return k < n && (static_cast<unsigned char>(text[k]) & 0xC0) == 0x80; };
  size_t begin = best_start;
  size_t end = best_start + best_len;
  while (begin < end && continuation_byte(begin)) ++begin;
  while (end > begin && continuation_byte(end)) --end;
  return text.substr(begin, end - begin);
}


}  // namespace

// Evidence made on the random-weight fixture says so before anything else: its texts and
// probabilities are noise by design, and a reader must not take them for GPT-2's.
void add_fixture_banner(const Inputs& in, Builder& b) {
  std::vector<std::string> on_fixture;
  for (const auto& d : in.documents)
    if (d.evidence.model.source == "fixture") on_fixture.push_back(d.name);
  if (on_fixture.empty()) return;
  b.banner("Random-weight fixture: " + join(on_fixture, ", ") +
           " ran on genrepro's tiny fixture model, whose weights are deterministic noise. Its texts and "
           "probabilities are noise by design: this report checks the pipeline, not GPT-2 (run with --model "
           "for real weights).");
}

void add_intro(const Inputs& in, Builder& b) {
  std::vector<std::string> names;
  for (const auto& d : in.documents) {
    names.push_back(d.name + " (created " + or_not_recorded(d.evidence.created_utc) + ", model source " +
                    or_not_recorded(d.evidence.model.source) + ", " + std::to_string(d.evidence.runs.size()) + " runs)");
  }
  b.paragraph("Regenerated from the evidence in " + join(names, "; ") +
              ". Runs are recognized by their parameters (mode, temperature, top-p, seed, max_new_tokens, sampler order), "
              "so any experiment with such runs fills these sections. Generated text is model output, shown as "
              "written: control characters appear as visible symbols and invalid bytes as U+FFFD.");
}

void add_greedy(const Inputs& in, Builder& b) {
  b.heading("Greedy decoding and its repetition");
  Runs greedy;
  for (const RunRecord* r : in.runs) if (is_greedy(*r) && is_generating(*r)) greedy.push_back(r);
  if (greedy.empty()) {
    b.note("Not in this evidence: no greedy run with max_new_tokens > 0, so there is no greedy output to show.");
    return;
  }
  b.paragraph("Every step takes the most probable token (argmax).");
  for (const RunRecord* r : greedy) {
    b.paragraph(in.legend(*r) + " (run " + r->id + "): " + stop_text(*r) + ".");
    b.generated(r->text);
    const TokenRepeat rep = longest_repeat(r->result.output_ids);
    if (rep.length >= kMinRepeatTokens) {
      const std::string passage = longest_repeated_passage(r->continuation);
      b.paragraph("Repetition: a span of " + std::to_string(rep.length) + " tokens occurs " + std::to_string(rep.count) +
                  " times (from new token " + std::to_string(rep.first + 1) + " and again from new token " +
                  std::to_string(rep.second + 1) + ")" +
                  (passage.empty() ? std::string(".") : ". The longest passage the text repeats: " + quoted_token(passage)));
    } else {
      b.paragraph("Repetition: no span of " + std::to_string(kMinRepeatTokens) + " or more tokens occurs twice.");
    }
  }
}

}  // namespace genrepro::sections
