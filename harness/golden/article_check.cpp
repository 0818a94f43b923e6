#include "golden/article_check.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <sstream>

#include "evidence/value_text.hpp"
#include "util/bounded_read.hpp"
#include "util/errors.hpp"
#include "util/json_text.hpp"

namespace genrepro {

namespace {

// Facts files are a few KB.
// Table columns: wide enough for "stop top-p-0.9-seed-43-eos" and a 40-character text excerpt.
constexpr int kFactColumn = 34;
constexpr int kValueColumn = 46;
constexpr std::size_t kExcerptChars = 40;
// How much of the text before a first difference an excerpt keeps, for orientation.
constexpr std::size_t kExcerptLeadChars = 12;

// U+2019 RIGHT SINGLE QUOTATION MARK in UTF-8: the article's typeset apostrophe.
constexpr const char kRightSingleQuote[] = "\xE2\x80\x99";

[[noreturn]] void bad_fact(const std::string& file, const std::string& path, const std::string& expected) {
  throw EvidenceError(file + ": " + path + ": expected " + expected +
                      "; restore golden/article/article-facts.json from git (schema " + kArticleFactsSchema + ")");
}

const OrderedJson& need(const OrderedJson& obj, const std::string& file, const std::string& path, const char* key) {
  if (!obj.is_object() || !obj.contains(key)) bad_fact(file, path + "." + key, "a value (the key is missing)");
  return obj[key];
}

std::string need_string(const OrderedJson& obj, const std::string& file, const std::string& path, const char* key) {
  const OrderedJson& v = need(obj, file, path, key);
  if (!v.is_string()) bad_fact(file, path + "." + key, "a string");
  return v.get<std::string>();
}

double need_number(const OrderedJson& obj, const std::string& file, const std::string& path, const char* key) {
  const OrderedJson& v = need(obj, file, path, key);
  if (!v.is_number()) bad_fact(file, path + "." + key, "a number");
  return v.get<double>();
}

// A count or a token id: a JSON integer from 0 to INT64_MAX. 2^70 is a number to JSON but fits
// no int64, and a fraction is no step; both are refused here, never cast.
int64_t need_count(const OrderedJson& obj, const std::string& file, const std::string& path, const char* key) {
  const OrderedJson& v = need(obj, file, path, key);
  const bool fits = v.is_number_unsigned() ? v.get<uint64_t>() <= uint64_t(INT64_MAX) : v.is_number_integer() && v.get<int64_t>() >= 0;
  if (!fits) bad_fact(file, path + "." + key, "an integer from 0 to " + std::to_string(INT64_MAX) + ", found " + v.dump());
  return v.get<int64_t>();
}

// Numbers and strings of a facts entry; absent or another type: empty.
std::optional<double> number_at(const OrderedJson& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key) || !obj[key].is_number()) return std::nullopt;
  return obj[key].get<double>();
}

// Where a stage sits in the run's sampler_order; -1 when its chain leaves the stage out.
int stage_position(const SamplingParams& s, SamplerStage stage) {
  const auto it = std::find(s.sampler_order.begin(), s.sampler_order.end(), stage);
  return it == s.sampler_order.end() ? -1 : static_cast<int>(it - s.sampler_order.begin());
}

// The article's configuration: torch.multinomial, its own top_p_filter, temperature before
// top-p (Hugging Face's order), no top-k.
bool is_article_sampler(const SamplingParams& s) {
  if (s.rng != Rng::torch || s.top_p_rule != TopPRule::article) return false;
  const int t = stage_position(s, SamplerStage::temperature), p = stage_position(s, SamplerStage::top_p);
  if (t >= 0 && p >= 0 && p < t) return false;
  return s.top_k == 0;
}

// The temperature and top-p a run actually applied: a stage left out of its chain is off.
double effective_temperature(const SamplingParams& s) {
  return stage_position(s, SamplerStage::temperature) >= 0 ? s.temperature : 1.0;
}
double effective_top_p(const SamplingParams& s) { return stage_position(s, SamplerStage::top_p) >= 0 ? s.top_p : 1.0; }

bool is_greedy(const SamplingParams& s) { return s.mode == DecodeMode::greedy || s.temperature == 0.0; }

bool generation_matches(const RunRecord& run, const OrderedJson& fact_params, const std::string& prompt) {
  if (run.prompt != prompt) return false;
  const SamplingParams& s = run.params.sampling;
  if (static_cast<double>(run.params.max_new_tokens) != number_at(fact_params, "max_new_tokens")) return false;
  if (fact_params["mode"] == "greedy") return is_greedy(s);
  if (is_greedy(s) || !is_article_sampler(s)) return false;
  return effective_temperature(s) == number_at(fact_params, "temperature").value_or(1.0) &&
         effective_top_p(s) == number_at(fact_params, "top_p").value_or(1.0) &&
         static_cast<double>(s.seed) == number_at(fact_params, "seed");
}

bool nucleus_matches(const RunRecord& run, double temperature, double top_p, const std::string& prompt) {
  const SamplingParams& s = run.params.sampling;
  return run.prompt == prompt && !is_greedy(s) && is_article_sampler(s) && effective_temperature(s) == temperature &&
         effective_top_p(s) == top_p;
}

std::string quoted(const std::string& s) { return OrderedJson(s).dump(-1, ' ', false, OrderedJson::error_handler_t::replace); }

// A short, escaped excerpt starting a little before `from`.
std::string excerpt(const std::string& s, std::size_t from) {
  const std::size_t start = from > kExcerptLeadChars ? from - kExcerptLeadChars : 0;
  std::string out = quoted(s.substr(start, kExcerptChars));
  if (start > 0) out = "..." + out;
  if (start + kExcerptChars < s.size()) out += "...";
  return out;
}

std::string fmt_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string stop_text(const std::string& reason, int64_t step) { return reason + " at new token " + std::to_string(step); }

class Checker {
 public:
  Checker(const OrderedJson& facts, const std::string& facts_path, const EvidenceFile& evidence, ArticleCheck& out)
      : facts_(facts), file_(facts_path), evidence_(evidence.evidence), out_(out) {
    prompt_ = need_string(facts_, file_, "", "prompt");
  }

  void run() {
    const OrderedJson& gens = need(facts_, file_, "", "generations");
    if (!gens.is_array()) bad_fact(file_, "generations", "an array");
    for (std::size_t i = 0; i < gens.size(); ++i) check_generation(gens[i], "generations[" + std::to_string(i) + "]");
    const OrderedJson& sizes = need(facts_, file_, "", "nucleus_sizes");
    if (!sizes.is_array()) bad_fact(file_, "nucleus_sizes", "an array");
    for (std::size_t i = 0; i < sizes.size(); ++i) check_nucleus(sizes[i], "nucleus_sizes[" + std::to_string(i) + "]");
    check_eos();
  }

 private:
  std::vector<const RunRecord*> runs_where(const std::function<bool(const RunRecord&)>& pred) const {
    std::vector<const RunRecord*> out;
    for (const RunRecord& r : evidence_.runs)
      if (pred(r)) out.push_back(&r);
    return out;
  }

  void check_generation(const OrderedJson& g, const std::string& at) {
    const std::string name = need_string(g, file_, at, "name");
    const OrderedJson& params = need(g, file_, at, "params");
    if (!params.is_object() || !params.contains("mode") || !params.contains("max_new_tokens"))
      bad_fact(file_, at + ".params", "an object with mode and max_new_tokens");
    const std::string text = need_string(g, file_, at, "text");
    const OrderedJson& stop = need(g, file_, at, "stop");
    const std::string stop_reason = need_string(stop, file_, at + ".stop", "reason");
    const int64_t stop_step = need_count(stop, file_, at + ".stop", "step");
    const std::string seed_source = g.contains("seed_source") && g["seed_source"].is_string() ? g["seed_source"].get<std::string>() : "stated";
    const bool counted = seed_source == "stated";

    const std::vector<const RunRecord*> runs = runs_where([&](const RunRecord& r) { return generation_matches(r, params, prompt_); });
    FactCheck t{"text " + name, excerpt(text, 0), "", FactStatus::missing, counted, "", {}, {}};
    FactCheck s{"stop " + name, stop_text(stop_reason, stop_step), "", FactStatus::missing, counted, "", {}, {}};
    if (runs.empty()) {
      t.found = s.found = "(no run with these parameters)";
      t.note = s.note = "add a run with " + params.dump() + " to the experiments";
    } else {
      t.status = s.status = FactStatus::match;
      for (const RunRecord* r : runs) t.runs.push_back(r->index);
      s.runs = t.runs;
      for (const RunRecord* r : runs) {
        compare_text(t, text, r->text, r->id);
        compare_stop(s, stop_reason, stop_step, *r);
      }
      if (runs.size() > 1) {
        t.note += (t.note.empty() ? "" : "; ") + std::to_string(runs.size()) + " runs checked";
        s.note += (s.note.empty() ? "" : "; ") + std::to_string(runs.size()) + " runs checked";
      }
    }
    if (!counted) {
      const std::string why = "seed " + seed_source + " (not printed in the article): not counted";
      t.note += (t.note.empty() ? "" : "; ") + why;
      s.note += (s.note.empty() ? "" : "; ") + why;
    }
    out_.facts.push_back(std::move(t));
    out_.facts.push_back(std::move(s));
  }

  static void compare_text(FactCheck& c, const std::string& expected, const std::string& found, const std::string& id) {
    if (c.status == FactStatus::mismatch) return;  // keep the first mismatching run
    if (found == expected) {
      c.found = excerpt(found, 0);
      return;
    }
    const std::string ne = normalize_article_text(expected), nf = normalize_article_text(found);
    if (ne == nf) {
      c.found = excerpt(found, 0);
      c.note = "match after typography normalization (’ -> ', line breaks)";
      return;
    }
    const std::size_t k = static_cast<std::size_t>(std::mismatch(ne.begin(), ne.end(), nf.begin(), nf.end()).first - ne.begin());
    c.status = FactStatus::mismatch;
    c.expected = excerpt(ne, k);
    c.found = excerpt(nf, k);
    c.note = "run " + id + ": first difference at byte " + std::to_string(k) + " (normalized)";
  }

  static void compare_stop(FactCheck& c, const std::string& reason, int64_t step, const RunRecord& run) {
    if (c.status == FactStatus::mismatch) return;
    c.found = stop_text(to_string(run.result.stop_reason), run.result.stop_step);
    if (to_string(run.result.stop_reason) != reason || run.result.stop_step != step) {
      c.status = FactStatus::mismatch;
      c.note = "run " + run.id;
    }
  }

  void check_nucleus(const OrderedJson& n, const std::string& at) {
    const double temperature = need_number(n, file_, at, "temperature");
    const double top_p = need_number(n, file_, at, "top_p");
    const int64_t step = need_count(n, file_, at, "step");
    const int64_t kept = need_count(n, file_, at, "kept");
    FactCheck c{"nucleus T=" + fmt_number(temperature) + " p=" + fmt_number(top_p) + " at " + new_token_label(step),
                std::to_string(kept), "", FactStatus::missing, true, "", {}, {}};
    std::vector<int64_t> found;
    for (const RunRecord* r : runs_where([&](const RunRecord& r) { return nucleus_matches(r, temperature, top_p, prompt_); })) {
      const std::vector<StepRecord>& steps = r->result.steps;
      if (step < 0 || static_cast<int64_t>(steps.size()) <= step) continue;
      const int64_t kept = steps[static_cast<std::size_t>(step)].kept;
      if (std::find(found.begin(), found.end(), kept) == found.end()) found.push_back(kept);
      c.runs.push_back(r->index);
    }
    if (found.empty()) {
      c.found = "(no run with these parameters)";
      c.note = "add a run with temperature " + fmt_number(temperature) + ", top_p " + fmt_number(top_p) + " to the experiments";
    } else {
      for (std::size_t i = 0; i < found.size(); ++i) c.found += (i ? " / " : "") + std::to_string(found[i]);
      c.status = found.size() == 1 && found[0] == kept ? FactStatus::match : FactStatus::mismatch;
      if (found.size() > 1) c.note = "runs with these parameters disagree at " + new_token_label(step);
    }
    out_.facts.push_back(std::move(c));
  }

  void check_eos() {
    const OrderedJson& eos = need(facts_, file_, "", "eos");
    const int64_t id = need_count(eos, file_, "eos", "token_id");
    const std::string text = need_string(eos, file_, "eos", "text");
    const int64_t found = evidence_.model.eos_token_id;
    out_.facts.push_back(FactCheck{"eos token id", std::to_string(id), std::to_string(found),
                                   found == id ? FactStatus::match : FactStatus::mismatch, true, "from the model's config", {}, {}});

    // The token's text, wherever the evidence shows the EOS id: as a picked token or a candidate.
    FactCheck t{"eos token text", quoted(text), "", FactStatus::unchecked, false, "", {}, {}};
    if (const std::optional<std::pair<const RunRecord*, std::string>> shown = eos_text(found)) {
      t.found = quoted(shown->second);
      t.note = "run " + shown->first->id;
      t.runs.push_back(shown->first->index);
      t.counted = true;
      t.status = t.found == quoted(text) ? FactStatus::match : FactStatus::mismatch;
    } else {
      t.found = "(EOS never picked nor listed)";
      t.note = "no run shows the EOS token: not counted";
    }
    out_.facts.push_back(std::move(t));
  }

  // The first step (in run order) that picked or listed `eos`: its run id and the token's text.
  std::optional<std::pair<const RunRecord*, std::string>> eos_text(int64_t eos) const {
    for (const RunRecord& r : evidence_.runs)
      for (const StepRecord& s : r.result.steps) {
        std::optional<std::string> text;
        if (s.token_id == eos) text = s.token_text;
        for (const Candidate& c : s.top)
          if (!text && c.id == eos) text = c.text;
        if (text) return std::make_pair(&r, *text);
      }
    return std::nullopt;
  }

  const OrderedJson& facts_;
  const std::string& file_;
  const Evidence& evidence_;
  ArticleCheck& out_;
  std::string prompt_;
};

// Which environments that differ from the reference each fact's runs ran in.
void name_fact_environments(ArticleCheck& check) {
  for (FactCheck& f : check.facts) {
    f.environments.clear();
    for (int64_t index : f.runs)
      if (const RunEnvironmentGroup* g = group_of_run(check.environments, index))
        if (std::find(f.environments.begin(), f.environments.end(), g->number) == f.environments.end()) f.environments.push_back(g->number);
    std::sort(f.environments.begin(), f.environments.end());
  }
}

std::string pad(const std::string& s, int width) {
  // Pads by bytes; good enough for the mostly-ASCII excerpts (they are JSON-escaped).
  return s.size() >= static_cast<std::size_t>(width) ? s + " " : s + std::string(static_cast<std::size_t>(width) - s.size(), ' ');
}

}  // namespace

const char* to_string(FactStatus s) {
  switch (s) {
    case FactStatus::match: return "match";
    case FactStatus::mismatch: return "MISMATCH";
    case FactStatus::missing: return "MISSING";
    case FactStatus::unchecked: return "unchecked";
  }
  return "?";
}

std::size_t ArticleCheck::count(FactStatus s, bool counted_only) const {
  return static_cast<std::size_t>(
      std::count_if(facts.begin(), facts.end(), [&](const FactCheck& f) { return f.status == s && (f.counted || !counted_only); }));
}

std::string normalize_article_text(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 3, kRightSingleQuote) == 0) {
      out += '\'';
      i += 2;
    } else if (text[i] == '\n') {
      if (out.empty() || out.back() != '\n') out += '\n';
    } else {
      out += text[i];
    }
  }
  return out;
}

OrderedJson load_article_facts(const std::string& path) {
  const BoundedRead read = read_bounded(path, kMaxArticleFactsBytes, Expect::json_object);
  if (!read.ok()) throw EvidenceError(path + ": " + read.problem + "; give golden/article/article-facts.json");
  ParsedJson<OrderedJson> parsed = parse_ordered_json_text(read.text);
  if (!parsed.ok()) throw EvidenceError(path + ": " + parsed.problem + "; restore golden/article/article-facts.json from git");
  OrderedJson facts = std::move(parsed.value);
  if (!facts.is_object() || !facts.contains("schema") || facts["schema"] != kArticleFactsSchema)
    throw EvidenceError(path + ": not an article-facts file (schema must be \"" + kArticleFactsSchema +
                        "\"); the first argument is golden/article/article-facts.json, the second the evidence");
  return facts;
}

ArticleCheck check_article(const OrderedJson& facts, const std::string& facts_path, const EvidenceFile& evidence) {
  return check_article(facts, facts_path, evidence, evidence.evidence.environment, "the evidence's environment");
}

ArticleCheck check_article(const OrderedJson& facts, const std::string& facts_path, const EvidenceFile& evidence,
                           const Environment& reference, const std::string& reference_name) {
  ArticleCheck out;
  out.facts_path = facts_path;
  out.evidence_path = evidence.path;
  out.model_source = evidence.evidence.model.source;
  out.environment_reference = reference_name;
  Checker(facts, facts_path, evidence, out).run();
  for (RunEnvironmentGroup& g : run_environment_groups(evidence.evidence, reference))
    if (!g.differences.empty()) out.environments.push_back(std::move(g));
  name_fact_environments(out);
  return out;
}

std::string fact_environment_text(const ArticleCheck& check, const FactCheck& fact) {
  std::string text;
  for (std::size_t number : fact.environments)
    for (const RunEnvironmentGroup& g : check.environments) {
      if (g.number != number) continue;
      std::vector<int64_t> runs;
      for (int64_t index : fact.runs)
        if (std::binary_search(g.runs.begin(), g.runs.end(), index)) runs.push_back(index);
      text += (text.empty() ? "" : "; ") + std::string("environment ") + std::to_string(number) + " (" + runs_text(runs) +
              "): " + differences_text(g.differences, 1);
    }
  return text;
}

std::string format_article_check(const ArticleCheck& check) {
  std::ostringstream o;
  o << "check-article: " << check.facts_path << " vs " << check.evidence_path
    << (check.model_source.empty() ? "" : " (model source: " + check.model_source + ")") << "\n";
  o << pad("fact", kFactColumn) << pad("article", kValueColumn) << pad("evidence", kValueColumn) << "status\n";
  for (const FactCheck& f : check.facts) {
    o << pad(f.fact, kFactColumn) << pad(f.expected, kValueColumn) << pad(f.found, kValueColumn) << to_string(f.status);
    const std::string where = fact_environment_text(check, f);
    if (!f.note.empty() || !where.empty()) o << "  (" << f.note << (f.note.empty() || where.empty() ? "" : "; ") << where << ")";
    o << "\n";
  }
  for (const RunEnvironmentGroup& g : check.environments)
    o << "environment " << g.number << " (" << runs_text(g.runs) << ") differs from " << check.environment_reference << " in "
      << g.differences.size() << " field(s): " << differences_text(g.differences, g.differences.size()) << "\n";
  const std::size_t not_counted = static_cast<std::size_t>(
      std::count_if(check.facts.begin(), check.facts.end(), [](const FactCheck& f) { return !f.counted; }));
  if (check.model_source == "fixture")
    o << "note: the model is a fixture (model.source \"fixture\"): its weights are deterministic noise, not GPT-2's, so the "
         "article's texts, stops and nucleus sizes are not expected to match; the EOS id comes from GPT-2's config and should.\n";
  o << "check-article: " << check.count(FactStatus::match) << " of " << check.facts.size() - not_counted << " counted facts match, "
    << check.count(FactStatus::mismatch) << " mismatch, " << check.count(FactStatus::missing) << " missing; " << not_counted
    << " not counted (seed not printed in the article, or not observable in this evidence): "
    << (check.passed() ? "the evidence reproduces the article" : "the evidence does not reproduce the article") << "\n";
  return o.str();
}

namespace {
// The JSON names are lower case; to_string shouts the failing ones for the table.
const char* json_status(FactStatus s) {
  switch (s) {
    case FactStatus::match: return "match";
    case FactStatus::mismatch: return "mismatch";
    case FactStatus::missing: return "missing";
    case FactStatus::unchecked: return "unchecked";
  }
  return "unchecked";
}
}  // namespace

OrderedJson article_check_to_json(const ArticleCheck& check) {
  OrderedJson facts = OrderedJson::array();
  for (const FactCheck& f : check.facts)
    facts.push_back({{"fact", f.fact},
                     {"expected", f.expected},
                     {"found", f.found},
                     {"status", json_status(f.status)},
                     {"counted", f.counted},
                     {"note", f.note},
                     {"runs", f.runs},
                     {"environments", f.environments}});
  OrderedJson environments = OrderedJson::array();
  for (const RunEnvironmentGroup& g : check.environments) {
    OrderedJson fields = OrderedJson::array();
    for (const EnvironmentFieldDifference& d : g.differences) fields.push_back({{"field", d.field}, {"reference", d.reference}, {"value", d.value}});
    environments.push_back({{"environment", g.number}, {"runs", g.runs}, {"differences", std::move(fields)}});
  }
  OrderedJson counts = OrderedJson::object();
  for (FactStatus s : {FactStatus::match, FactStatus::mismatch, FactStatus::missing, FactStatus::unchecked})
    counts[json_status(s)] = check.count(s);
  return {{"schema", "genrepro.article-check/1"},
          {"passed", check.passed()},
          {"facts_file", check.facts_path},
          {"evidence", check.evidence_path},
          {"model_source", check.model_source},
          {"counted", counts},
          {"facts", facts},
          {"environment_reference", check.environment_reference},
          {"environments", std::move(environments)}};
}

}  // namespace genrepro
