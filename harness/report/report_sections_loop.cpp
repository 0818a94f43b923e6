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
// The text of the repeated token span: its tokens' texts joined, so the sentence quotes the very
// span it counts. (A longest repeated passage searched byte by byte in the decoded text could be
// another passage altogether, across token boundaries: "a span of 10 tokens occurs 2 times" then
// quoted 19 other bytes.) A character split over two tokens shows as U+FFFD pieces, as the step
// records hold it.
std::string span_text(const RunRecord& r, size_t from, size_t length) {
  std::string text;
  for (size_t i = from; i < from + length && i < r.result.steps.size(); ++i) text += r.result.steps[i].token_text;
  return text;
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
      b.paragraph("Repetition: a span of " + std::to_string(rep.length) + " tokens occurs " + std::to_string(rep.count) +
                  " times (from new token " + std::to_string(rep.first + 1) + " and again from new token " +
                  std::to_string(rep.second + 1) + "): " + quoted_token(span_text(*r, rep.first, rep.length)) + ".");
    } else {
      b.paragraph("Repetition: no span of " + std::to_string(kMinRepeatTokens) + " or more tokens occurs twice.");
    }
  }
}

}  // namespace genrepro::sections
