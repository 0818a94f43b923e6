#pragma once
// The report's kept set per stage: for runs of the Hugging Face and llama.cpp chains,
// how many tokens each stage left at each step (evidence: steps[].stages), as the article's
// nucleus tables show top-p's kept set. Its own file beside the other sections
// (report_section_kit.hpp lists them); report_sections.cpp puts it after the sampler order.
#include "report/report_section_kit.hpp"

namespace genrepro::sections {

// A summary table (every framework run: its chain at new token 1, the final kept size there and
// its median over the run), then one table per run: a row per step, a column per stage. A note
// instead when no run used a framework's chain.
void add_stage_kept(const Inputs& in, Builder& b);

}  // namespace genrepro::sections
