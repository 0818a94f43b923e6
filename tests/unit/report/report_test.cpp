// The report stage on small hand-made evidence: the article's tables (top-5 with the
// everything-else row, nucleus sizes, temperature, seeds, EOS, sampler order) appear with the
// numbers put in, text from the model cannot become markup, SVG is well-formed, the same
// evidence gives the same bytes, and sections without matching runs say so.
#include <algorithm>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "unit/evidence/evidence_builders.hpp"
#include "util/errors.hpp"
#include "evidence/evidence.hpp"
#include "report/report.hpp"
#include "report/report_svg.hpp"
#include "report/report_text.hpp"

namespace genrepro {
namespace {

using nlohmann::json;

constexpr int64_t kEos = 50256;
const std::vector<SamplerStage> kDefaultOrder = {SamplerStage::temperature, SamplerStage::top_k, SamplerStage::top_p};
const std::vector<SamplerStage> kLlamaOrder = {SamplerStage::top_k, SamplerStage::top_p, SamplerStage::temperature};
// The hostile text every rendering must keep inert.
const std::string kHostile = "<script>alert(\"x\")</script> & 'q' <|endoftext|>\x07\xFF";

// ---- hand-made evidence ----

RunParams params(DecodeMode mode, double t, double p, uint64_t seed, int64_t max_new,
                 const std::vector<SamplerStage>& order = kDefaultOrder) {
  RunParams r;
  r.sampling.mode = mode;
  r.sampling.temperature = t;
  r.sampling.top_p = p;
  r.sampling.seed = seed;
  r.sampling.sampler_order = order;
  r.max_new_tokens = max_new;
  return r;
}

// The first prediction after "the river bank was": five candidates with the given
// probabilities (softmax(logits / T)) and the rest mass as the evidence stores it.
StepRecord first_step(const std::vector<double>& probs, double rest, int64_t kept, std::optional<int64_t> token_id,
                      const std::string& text) {
  const std::vector<std::pair<int64_t, std::string>> tokens = {{257, " a"}, {262, " the"}, {4838, " closed"}, {407, " not"}, {635, " also"}};
  StepRecord s;
  s.token_id = token_id;
  s.token_text = text;
  s.prob = s.prob_t1 = 0.2;
  s.kept = kept;
  for (size_t i = 0; i < probs.size(); ++i) s.top.push_back({tokens[i].first, tokens[i].second, probs[i], probs[i]});
  s.rest_mass = rest;
  return s;
}

StepRecord later_step(int64_t step, int64_t id, const std::string& text, int64_t kept, double prob) {
  StepRecord s;
  s.step = step;
  s.token_id = id;
  s.token_text = text;
  s.prob = s.prob_t1 = prob;
  s.kept = kept;
  s.top = {{id, text, prob, prob}};
  // Four small runners-up, so the list is as long as the run's top_candidates (5).
  for (int64_t k = 1; k <= 4; ++k) s.top.push_back({49000 + k, " filler", 0.01, 0.01});
  s.rest_mass = 1 - prob - 0.04;
  return s;
}

const std::vector<double> kTopT1 = {0.2010, 0.1005, 0.0502, 0.0401, 0.0298};

// Hand-chosen first predictions at each temperature: the top-5 probabilities and the rest mass.
struct FirstPrediction {
  std::vector<double> top;
  double rest;
};
FirstPrediction first_prediction(double t) {
  if (t == 0.001) return {{1.0, 1.2e-30, 0.0, 0.0, 0.0}, 0.0};
  if (t == 0.5) return {{0.5123, 0.1281, 0.0320, 0.0205, 0.0115}, 0.29561};
  if (t == 2.0) return {{0.0412, 0.0291, 0.0206, 0.0184, 0.0160}, 0.87472};
  return {kTopT1, 0.5784};
}

// A run producing `ids` (token text " w<id>"), its first step from kTopT1. The ids and
// experiment names are deliberately not the article's: runs are recognized by their parameters.
RunRecord run(const std::string& id, const std::string& experiment, const RunParams& p, const std::vector<int64_t>& ids,
              StopReason stop, int64_t kept = 1279, const std::string& text_suffix = "") {
  RunRecord r;
  r.id = id;
  r.experiment = experiment;
  r.prompt = "the river bank was";
  r.params = p;
  r.result.prompt_ids = {1169, 7850, 3331, 373};
  r.result.output_ids = ids;
  for (size_t i = 0; i < ids.size(); ++i) {
    const std::string piece = ids[i] == kEos ? "<|endoftext|>" : " w" + std::to_string(ids[i]);
    r.continuation += piece;
    const bool greedy = p.sampling.mode == DecodeMode::greedy;
    const FirstPrediction f = first_prediction(greedy ? 1.0 : p.sampling.temperature);
    // Greedy keeps one token (docs/validation.md); a sampled run keeps `kept` at its first step.
    const int64_t kept_here = greedy ? 1 : i == 0 ? kept : kept / 2 + static_cast<int64_t>(i);
    r.result.steps.push_back(i == 0 ? first_step(f.top, f.rest, kept_here, ids[0], piece)
                                    : later_step(static_cast<int64_t>(i), ids[i], piece, kept_here, 0.3));
  }
  r.continuation += text_suffix;
  r.text = r.prompt + r.continuation;
  r.result.stop_reason = stop;
  r.result.stop_step = static_cast<int64_t>(ids.size());
  return r;
}

RunRecord probe(const std::string& id, double t, int64_t kept) {
  RunRecord r = run(id, "probe", params(DecodeMode::sample, t, 0.9, 0, 0), {}, StopReason::max_new_tokens);
  r.result.steps = {first_step(first_prediction(t).top, first_prediction(t).rest, kept, std::nullopt, "")};
  return r;
}

Evidence evidence(std::vector<RunRecord> runs) {
  Evidence e;
  e.genrepro = {"0.1.0", "abc123"};
  e.created_utc = "2026-11-30T12:00:00Z";
  e.environment.libtorch_version = "1.13.0";
  e.environment.cpu_capability = "AVX2";
  e.environment.threads = {1, 1, 1, 1};
  e.model.source = "fixture";
  e.model.path = "/m";
  e.model.config = {{"vocab_size", 50257}};
  e.model.eos_token_id = kEos;
  e.model.n_positions = 1024;
  e.model.files["model.safetensors"] = {"deadbeef", 548105171};
  e.runs = std::move(runs);
  for (size_t i = 0; i < e.runs.size(); ++i) e.runs[i].index = static_cast<int64_t>(i);
  return e;
}

// The article's runs in miniature.
Evidence article_evidence() {
  const std::vector<int64_t> greedy = {257, 1688, 2723, 13, 257, 1688, 2723, 13};  // " a major source." twice
  const auto sample = DecodeMode::sample;
  const auto cap = StopReason::max_new_tokens;
  return evidence({
      run("g", "one", params(DecodeMode::greedy, 1.0, 1.0, 0, 8), greedy, cap),
      run("t-cold", "one", params(sample, 0.001, 1.0, 42, 8), greedy, cap),
      run("t-one", "one", params(sample, 1.0, 1.0, 42, 8), {257, 1688, 5, 6, 7, 8, 9, 10}, cap, 50257),
      run("t-hot", "one", params(sample, 2.0, 1.0, 42, 8), {11, 12, 13, 14, 15, 16, 17, 18}, cap, 50257, kHostile),
      probe("a", 0.5, 35),
      probe("b", 1.0, 1279),
      probe("c", 2.0, 14905),
      run("s1", "two", params(sample, 1.0, 0.9, 41, 8), {21, 22, 23, 24, 25, 26, 27, 28}, cap),
      run("s2", "two", params(sample, 1.0, 0.9, 43, 8), {21, 22, kEos}, StopReason::eos),
      run("o1", "three", params(sample, 2.0, 0.9, 42, 2), {31, 32}, cap, 14905),
      run("o2", "three", params(sample, 2.0, 0.9, 42, 2, kLlamaOrder), {31, 33}, cap, 1279),
  });
}

std::string file_content(const std::vector<ReportFile>& files, const std::string& name) {
  for (const auto& f : files) if (f.name == name) return f.content;
  ADD_FAILURE() << "the report has no file " << name;
  return "";
}

std::vector<ReportFile> render(const Evidence& e) { return render_report({ReportDocument{"evidence.json", e}}); }

// ---- a tiny XML checker: tags balance, attribute values and text hold no raw '<' or bare '&' ----

std::string xml_problem(const std::string& s) {
  std::vector<std::string> open;
  const auto entity_ok = [&](size_t at) {
    for (const char* e : {"&amp;", "&lt;", "&gt;", "&quot;", "&#39;"}) {
      if (s.compare(at, std::string(e).size(), e) == 0) return true;
    }
    return false;
  };
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '&' && !entity_ok(i)) return "bare '&' at byte " + std::to_string(i);
    if (s[i] != '<') continue;
    const size_t end = s.find('>', i);
    if (end == std::string::npos) return "unclosed tag at byte " + std::to_string(i);
    std::string tag = s.substr(i + 1, end - i - 1);
    // '>' may appear in attribute values only escaped, so the first '>' ends the tag; a '<'
    // inside it would mean an unescaped value.
    if (tag.find('<') != std::string::npos) return "'<' inside a tag at byte " + std::to_string(i);
    for (size_t k = 0; k < tag.size(); ++k) {
      if (tag[k] == '&' && !entity_ok(i + 1 + k)) return "bare '&' in a tag at byte " + std::to_string(i);
    }
    if (std::count(tag.begin(), tag.end(), '"') % 2 != 0) return "unbalanced quotes in <" + tag + ">";
    i = end;
    if (tag.empty()) return "empty tag";
    if (tag[0] == '/') {
      const std::string name = tag.substr(1);
      if (open.empty() || open.back() != name) return "</" + name + "> closes " + (open.empty() ? "nothing" : "<" + open.back() + ">");
      open.pop_back();
    } else if (tag.back() != '/') {
      open.push_back(tag.substr(0, tag.find_first_of(" \n")));
    }
  }
  return open.empty() ? "" : "<" + open.back() + "> never closed";
}

// ---- text and numbers ----

TEST(ReportText, VisibleTextShowsControlsAndReplacesInvalidUtf8) {
  EXPECT_EQ(visible_text("a\x07" "b", true), "a\xE2\x90\x87" "b");        // ␇
  EXPECT_EQ(visible_text("x\x7F", true), "x\xE2\x90\xA1");                 // ␡
  EXPECT_EQ(visible_text("\xFF", true), "\xEF\xBF\xBD");                   // U+FFFD
  EXPECT_EQ(visible_text("\xC0\xAF", true), "\xEF\xBF\xBD\xEF\xBF\xBD");   // overlong '/': two bad bytes
  EXPECT_EQ(visible_text("\xED\xA0\x80", true), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
  EXPECT_EQ(visible_text("\xE2\x80", true), "\xEF\xBF\xBD");   // half of ’: one maximal subpart, as Python shows it
  EXPECT_EQ(visible_text("city\xE2\x80\x99s", true), "city\xE2\x80\x99s");  // whole ’ stays
  EXPECT_EQ(visible_text("\xC2\x85", true), "\\u0085");                    // a C1 control
  EXPECT_EQ(visible_text("a\nb\tc", true), "a\nb\tc");
  EXPECT_EQ(visible_text("a\nb\tc", false), "a\xE2\x86\xB5" "b\xE2\x87\xA5" "c");  // ↵ ⇥
  EXPECT_EQ(visible_text(std::string("n\0l", 3), true), "n\xE2\x90\x80l");  // ␀
}

TEST(ReportText, EscapersLeaveNoMarkup) {
  EXPECT_EQ(html_escape("<script>alert(\"x\")</script> & 'q'"),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;");
  EXPECT_EQ(xml_escape("<|endoftext|>"), "&lt;|endoftext|&gt;");
  EXPECT_EQ(markdown_inline("a|b <i>*x*</i> `c` $5 & [l](u) ~s~ _u_ \\"),
            "a\\|b \\<i\\>\\*x\\*\\</i\\> \\`c\\` \\$5 &amp; \\[l\\](u) \\~s\\~ \\_u\\_ \\\\");
  EXPECT_EQ(markdown_fence("plain"), "```");
  EXPECT_EQ(markdown_fence("a ```` b ` c"), "`````");
  EXPECT_EQ(quoted_token(" a"), "\" a\"");
  EXPECT_EQ(quoted_token("(\""), "\"(\\\"\"");
  EXPECT_EQ(quoted_token("\n"), "\"\xE2\x86\xB5\"");
}

TEST(ReportText, NumbersHaveFixedFormats) {
  EXPECT_EQ(format_prob(0.51234), "0.5123");
  EXPECT_EQ(format_prob(0.29561), "0.2956");
  EXPECT_EQ(format_prob(1.0), "1.0000");
  EXPECT_EQ(format_prob(0.0), "0.0000");
  EXPECT_EQ(format_prob(1.2e-30), "1.20e-30");
  EXPECT_EQ(format_prob(0.0001), "0.0001");
  EXPECT_EQ(format_count(35), "35");
  EXPECT_EQ(format_count(1279), "1,279");
  EXPECT_EQ(format_count(14905), "14,905");
  EXPECT_EQ(format_count(1000000), "1,000,000");
  EXPECT_EQ(format_count(-50257), "-50,257");
  EXPECT_EQ(format_param(0.001), "0.001");
  EXPECT_EQ(format_param(0.9), "0.9");
  EXPECT_EQ(format_param(2.0), "2");
  EXPECT_EQ(format_fixed(-0.01, 1), "0.0");
  EXPECT_EQ(format_fixed(-0.06, 1), "-0.1");
}

// ---- the article's tables ----

TEST(Report, FirstPredictionTableHasTopFiveAndEverythingElseAtEachTemperature) {
  const auto files = render(article_evidence());
  const std::string md = file_content(files, "report.md");
  EXPECT_NE(md.find("| rank | token | id | T = 0.001 | T = 0.5 | T = 1 | T = 2 |"), std::string::npos) << md;
  // T = 0.001 comes from the cold run's first step, the others from the first-prediction runs.
  EXPECT_NE(md.find("| 1 | \" a\" | 257 | 1.0000 | 0.5123 | 0.2010 | 0.0412 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 2 | \" the\" | 262 | 1.20e-30 | 0.1281 | 0.1005 | 0.0291 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 5 | \" also\" | 635 | 0.0000 | 0.0115 | 0.0298 | 0.0160 |"), std::string::npos) << md;
  EXPECT_NE(md.find("|  | everything else |  | 0.0000 | 0.2956 | 0.5784 | 0.8747 |"), std::string::npos) << md;
  EXPECT_NE(md.find("From the first step of: t-cold, a, b, c."), std::string::npos) << md;
  EXPECT_EQ(md.find("Runs with the same first prediction disagree"), std::string::npos) << md;
  const std::string html = file_content(files, "report.html");
  EXPECT_NE(html.find("<td>everything else</td><td class=\"num\"></td><td class=\"num\">0.0000</td>"
                      "<td class=\"num\">0.2956</td><td class=\"num\">0.5784</td><td class=\"num\">0.8747</td>"),
            std::string::npos);
  const std::string svg = file_content(files, "first-prediction.svg");
  EXPECT_NE(svg.find(">everything else</text>"), std::string::npos);
  EXPECT_NE(svg.find(">T = 0.5</text>"), std::string::npos);
}

TEST(Report, RunsWithTheSameFirstPredictionMustAgree) {
  Evidence e = article_evidence();
  e.runs[3].result.steps[0].top[1].prob_scaled = 0.0300;  // t-hot against probe c's 0.0291 at T = 2
  const std::string md = file_content(render(e), "report.md");
  EXPECT_NE(md.find("> Runs with the same first prediction disagree: c has \" the\" 0.0291, t-hot has \" the\" 0.0300 at rank 2."),
            std::string::npos) << md;
}

TEST(Report, NucleusSizesAppearPerTemperatureWithTheArticlesSeparator) {
  const auto files = render(article_evidence());
  const std::string md = file_content(files, "report.md");
  EXPECT_NE(md.find("| 0.9 | off | temperature → top\\_k → top\\_p | 0.5 | 35 | a |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 0.9 | off | temperature → top\\_k → top\\_p | 1 | 1,279 | b |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 0.9 | off | temperature → top\\_k → top\\_p | 2 | 14,905 | c |"), std::string::npos) << md;
  // The llama.cpp order keeps the T = 1 nucleus at T = 2: its own group and its own row.
  EXPECT_NE(md.find("| 0.9 | off | top\\_k → top\\_p → temperature | 2 | 1,279 | o2 |"), std::string::npos) << md;
  const std::string svg = file_content(files, "nucleus-sizes.svg");
  for (const char* label : {">35</text>", ">1,279</text>", ">14,905</text>", ">T = 0.5</text>", ">100,000</text>"}) {
    EXPECT_NE(svg.find(label), std::string::npos) << label;
  }
}

TEST(Report, RunsWithTheSameFirstStepParametersMustAgreeOnTheNucleus) {
  Evidence e = article_evidence();
  e.runs[7].result.steps[0].kept = 1280;  // seed 41 at T = 1, p = 0.9 against probe b's 1,279
  const std::string md = file_content(render(e), "report.md");
  EXPECT_NE(md.find("Runs with the same first-step parameters disagree: b keeps 1,279, s1 keeps 1,280."), std::string::npos) << md;
}

TEST(Report, GreedyRepetitionTemperatureSeedsAndEosAreRecognizedByParameters) {
  const std::string md = file_content(render(article_evidence()), "report.md");
  EXPECT_NE(md.find("Repetition: a span of 4 tokens occurs 2 times (from new token 1 and again from new token 5): "
                    "\" w257 w1688 w2723 w13\"."), std::string::npos) << md;
  EXPECT_NE(md.find("| 0.001 | 42 | reached the limit (8 new tokens) | identical (8 tokens) | t-cold |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 1 | 42 | reached the limit (8 new tokens) | first differs at new token 3 | t-one |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 43 | EOS at new token 3 | first differs at new token 3 | s2 |"), std::string::npos) << md;
  EXPECT_NE(md.find("T=1 top\\_p=0.9 seed=43 selected EOS as its 3rd new token, before the limit of 8. "
                    "The token is the model's EOS id 50256 (from its config)."), std::string::npos) << md;
}

TEST(Report, SamplerOrdersAreComparedSideBySideWithKeptSizes) {
  const std::string md = file_content(render(article_evidence()), "report.md");
  EXPECT_NE(md.find("| step | temperature → top\\_k → top\\_p: token | kept | top\\_k → top\\_p → temperature: token | kept | same token |"),
            std::string::npos) << md;
  EXPECT_NE(md.find("| 1 | \" w31\" | 14,905 | \" w31\" | 1,279 | yes |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 2 | \" w32\" | 7,453 | \" w33\" | 640 | no |"), std::string::npos) << md;
}

TEST(Report, EnvironmentAndModelChecksumsAreShown) {
  const std::string md = file_content(render(article_evidence()), "report.md");
  EXPECT_NE(md.find("| model.safetensors | 548,105,171 | deadbeef |"), std::string::npos) << md;
  EXPECT_NE(md.find("| libtorch | 1.13.0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| created (UTC) | 2026-11-30T12:00:00Z |"), std::string::npos) << md;
  EXPECT_NE(md.find("| genrepro | 0.1.0 (commit abc123) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| BLAS | none, not recorded |"), std::string::npos) << md;
  EXPECT_NE(md.find("| EOS token id / context length | 50256 / 1024 |"), std::string::npos) << md;
}

TEST(Report, FixtureEvidenceOpensWithTheNoiseBanner) {
  Evidence e = article_evidence();
  const std::string md = file_content(render(e), "report.md");
  const std::string html = file_content(render(e), "report.html");
  EXPECT_NE(md.find("> **Notice:** Random-weight fixture: evidence.json ran on genrepro's tiny fixture model"), std::string::npos) << md;
  EXPECT_LT(md.find("Random-weight fixture"), md.find("Regenerated from the evidence")) << "the banner comes first";
  EXPECT_NE(html.find("<p class=\"banner\">Random-weight fixture: evidence.json"), std::string::npos);
  e.model.source = "hf-cache";  // real weights: no banner
  EXPECT_EQ(file_content(render(e), "report.md").find("Random-weight fixture"), std::string::npos);
}

// ---- hostile text ----

TEST(Report, GeneratedTextCannotBecomeMarkup) {
  const auto files = render(article_evidence());
  const std::string html = file_content(files, "report.html");
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<|endoftext|>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39; &lt;|endoftext|&gt;\xE2\x90\x87\xEF\xBF\xBD"),
            std::string::npos);
  const size_t body = html.find("<body>");
  EXPECT_EQ(xml_problem(html.substr(body, html.find("</body>") + 7 - body)), "");
  const std::string md = file_content(files, "report.md");
  // In Markdown the text sits in a fenced block, as written but visible; outside fences nothing
  // of it is raw HTML (the EOS token in the stopping table is escaped).
  EXPECT_NE(md.find("```text\nthe river bank was w11 w12 w13 w14 w15 w16 w17 w18<script>alert(\"x\")</script> & 'q' <|endoftext|>\xE2\x90\x87\xEF\xBF\xBD\n```"),
            std::string::npos) << md;
  EXPECT_NE(md.find("\"\\<\\|endoftext\\|\\>\" (id 50256)"), std::string::npos) << md;
}

TEST(Report, SvgFilesAreWellFormedEvenWithHostileLabels) {
  Evidence e = article_evidence();
  e.runs[1].result.steps[0].top[0].text = "<b>&\"'\x01";  // the first column's candidate labels the groups
  const auto files = render(e);
  int svgs = 0;
  for (const auto& f : files) {
    if (f.name.size() < 4 || f.name.compare(f.name.size() - 4, 4, ".svg") != 0) continue;
    ++svgs;
    EXPECT_EQ(f.content.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u) << f.name;
    EXPECT_EQ(xml_problem(f.content), "") << f.name;
  }
  // nucleus sizes, first prediction, kept per step (5 sampled runs: 2 panels), chosen-token probability (6 runs: 2 panels)
  EXPECT_EQ(svgs, 6);
  EXPECT_NO_THROW(file_content(files, "kept-per-step-2.svg"));
  EXPECT_NO_THROW(file_content(files, "chosen-token-probability-2.svg"));
  EXPECT_NE(file_content(files, "first-prediction.svg").find("&quot;&lt;b&gt;&amp;\\&quot;&#39;\xE2\x90\x81&quot;"), std::string::npos);
}

TEST(ReportSvg, LogAxisSpansTheDecadesOfTheData) {
  BarChartSpec spec;
  spec.title = "t";
  spec.log_y = true;
  spec.categories = {"a", "b"};
  spec.values = {35, 14905};
  const std::string svg = svg_bar_chart(spec);
  EXPECT_NE(svg.find(">1</text>"), std::string::npos);
  EXPECT_NE(svg.find(">100,000</text>"), std::string::npos);
  EXPECT_EQ(svg.find(">1,000,000</text>"), std::string::npos);
  EXPECT_EQ(xml_problem(svg), "");
}

// ---- determinism ----

// As the writer makes it (ids, grid points): this evidence goes through the reader.
Evidence consistent_article_evidence() {
  Evidence e = article_evidence();
  for (RunRecord& r : e.runs)
    for (StepRecord& s : r.result.steps) {  // rest_mass and margin as the writer derives them
      double listed = 0;
      for (const Candidate& c : s.top) listed += c.prob_scaled;
      if (!s.top.empty()) s.rest_mass = 1 - listed;
      if (s.top.size() >= 2) s.margin = s.top[0].prob_scaled - s.top[1].prob_scaled;
      const bool argmax = r.params.sampling.mode == DecodeMode::greedy || r.params.sampling.temperature == 0;
      const bool t1 = argmax || r.params.sampling.temperature == 1;
      int64_t positive = 0;
      for (const Candidate& c : s.top) {
        positive += c.prob > 0 ? 1 : 0;
        if (!s.token_id || c.id != *s.token_id) continue;
        s.prob = c.prob;  // the chosen token's entries are its candidate's
        s.token_text = c.text;
        if (t1) s.prob_t1 = c.prob_scaled;
      }
      if (argmax) s.prob_t1 = s.prob;
      if (!argmax) s.kept = std::max(s.kept, positive);
    }
  test::make_consistent(e);
  return e;
}

TEST(Report, TheSameEvidenceGivesTheSameBytes) {
  const Evidence e = consistent_article_evidence();
  const auto first = render(e);
  // The second render reads the evidence back from its JSON text, as the CLI would.
  const auto second = render(evidence_from_json(json::parse(evidence_text(e)), "evidence.json"));
  ASSERT_EQ(first.size(), second.size());
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].name, second[i].name);
    EXPECT_TRUE(first[i].content == second[i].content) << first[i].name << " differs between two renders";
  }
  EXPECT_EQ(first[0].name, "report.md");
  EXPECT_EQ(first[1].name, "report.html");
}

// ---- missing sections ----

TEST(Report, SectionsWithoutMatchingRunsAreNotedNotFailed) {
  const Evidence only_greedy = evidence({run("g", "one", params(DecodeMode::greedy, 1.0, 1.0, 0, 4), {1, 2, 3, 4}, StopReason::max_new_tokens)});
  const auto files = render(only_greedy);
  const std::string md = file_content(files, "report.md");
  for (const char* note : {
           "> Not in this evidence: no sampled or first-prediction run with a temperature \\> 0",
           "> Not in this evidence: no sampled run without top-k and top-p filters",
           "> Not in this evidence: no run with top-p \\< 1 and a recorded first step",
           "> Not in this evidence: no runs that differ only in their sampler order.",
           "> Not in this evidence: no sampled runs that differ only in their seed.",
           "> No run in this evidence stopped at EOS",
           "> Not in this evidence: no sampled run with more than one step, so there is no kept-set chart.",
           "Repetition: no span of 4 or more tokens occurs twice."}) {
    EXPECT_NE(md.find(note), std::string::npos) << note << "\n" << md;
  }
  EXPECT_EQ(files.size(), 3u);  // report.md, report.html, chosen-token probability
  const std::string empty_md = file_content(render(evidence({})), "report.md");
  EXPECT_NE(empty_md.find("> The evidence holds no runs."), std::string::npos);
  EXPECT_NE(empty_md.find("> Not in this evidence: no greedy run with max\\_new\\_tokens \\> 0"), std::string::npos);
}

// ---- reading and writing files ----

class ReportFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("genrepro-report-test-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "-" +
            std::to_string(::getpid()));  // two suites at once (worktrees on one machine) must not share it
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(const std::string& name, const std::string& content) { std::ofstream(dir_ / name) << content; }
  std::filesystem::path dir_;
};

// Bad files are the evidence reader's to name (evidence_test.cpp checks its messages); the
// report must pass them on as EvidenceError naming the path, which the CLI turns into exit 2.
TEST_F(ReportFiles, BadEvidenceFilesAreEvidenceErrorsNamingThePath) {
  write("bad.json", "{\"schema\": ");
  write("other.json", "{\"hello\": 1}");
  for (const std::string name : {"none.json", "bad.json", "other.json"}) {
    const std::string path = (dir_ / name).string();
    try {
      read_report_evidence(path);
      ADD_FAILURE() << "no error for " << name;
    } catch (const EvidenceError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind(path + ": ", 0), 0u) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

TEST_F(ReportFiles, WritesEveryFileAndLeavesNoTemporaries) {
  write("ev.json", evidence_text(consistent_article_evidence()));
  const auto files = render_report({read_report_evidence((dir_ / "ev.json").string())});
  const auto out = dir_ / "out" / "nested";
  const auto paths = write_report(files, out.string());
  ASSERT_EQ(paths.size(), files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    std::ifstream in(paths[i], std::ios::binary);
    std::stringstream content;
    content << in.rdbuf();
    EXPECT_TRUE(content.str() == files[i].content) << paths[i];
  }
  size_t entries = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(out)) ++entries;
  EXPECT_EQ(entries, files.size());
  // The document's name, not its path, is what the report shows.
  EXPECT_NE(files[0].content.find("Regenerated from the evidence in ev.json (created 2026-11-30T12:00:00Z"), std::string::npos);
  EXPECT_EQ(files[0].content.find(dir_.string()), std::string::npos);
}

TEST_F(ReportFiles, AnOutputPathThatIsAFileIsRefused) {
  write("taken", "x");
  const std::string taken = (dir_ / "taken").string();
  try {
    write_report({{"report.md", "x"}}, taken);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(taken), std::string::npos) << e.what();
  }
}

TEST(ReportEvidence, TheCommittedHandMadeEvidenceRenders) {
  const auto doc = read_report_evidence(std::string(GENREPRO_SOURCE_DIR) + "/tests/cli/data/report-evidence.json");
  EXPECT_EQ(doc.evidence.runs.size(), 12u);
  const auto files = render_report({doc});
  const std::string md = file_content(files, "report.md");
  EXPECT_NE(md.find("| 2 | 14,905 |"), std::string::npos);
  EXPECT_NE(md.find("selected EOS as its 5th new token"), std::string::npos);
}

}  // namespace
}  // namespace genrepro
