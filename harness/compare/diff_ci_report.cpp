#include "compare/diff_ci_report.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <vector>

#include "compare/diff_format.hpp"
#include "evidence/value_text.hpp"
#include "util/utf8.hpp"

namespace genrepro {

namespace {

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

// Token text as a quoted, printable string: control characters become \n, \t or \uXXXX, so that
// neither XML nor a workflow command line ever holds a raw control byte.
std::string quoted_token(const std::string& raw) {
  const std::string text = replace_invalid_utf8(raw);
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else if (c < 0x20 || c == 0x7F) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\u%04X", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string describe_token(const char* which, const TokenAtStep& t, const char* prob_label, const std::optional<double>& p) {
  std::string s = std::string(which) + " token ";
  if (!t.id) return s + "(none: the run had stopped)";
  s += std::to_string(*t.id) + " " + quoted_token(t.text);
  if (p) s += std::string(" (") + prob_label + " " + number(*p) + ")";
  return s;
}

std::string experiment_of(const std::string& run_id) { return run_id.substr(0, run_id.find('/')); }

// XML 1.0 text: the five escapes, and no character XML forbids (the input is already printable
// except for \n and \t, which XML allows).
std::string xml_escape(const std::string& raw) {
  const std::string text = replace_invalid_utf8(raw);
  std::string out;
  for (unsigned char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (c < 0x20 && c != '\n' && c != '\t' && c != '\r') out += "?";
        else out += static_cast<char>(c);
    }
  }
  return out;
}

// GitHub workflow commands end at a newline and treat % specially: the documented escapes.
std::string annotation_escape(const std::string& text) {
  std::string out;
  for (char c : replace_invalid_utf8(text)) {
    if (c == '%') out += "%25";
    else if (c == '\r') out += "%0D";
    else if (c == '\n') out += "%0A";
    else out += c;
  }
  return out;
}

// A property value (file=..., title=...) also ends at ',' and ':'.
std::string annotation_property(const std::string& text) {
  std::string out;
  for (char c : annotation_escape(text)) {
    if (c == ':') out += "%3A";
    else if (c == ',') out += "%2C";
    else out += c;
  }
  return out;
}

void testcase(std::ostringstream& xml, const std::string& id, const std::string* failure_type,
              const std::string& message, bool skipped = false) {
  xml << "    <testcase name=\"" << xml_escape(id) << "\" classname=\"" << xml_escape(experiment_of(id))
      << "\" time=\"0\"";
  if (failure_type == nullptr) {
    xml << "/>\n";
    return;
  }
  if (skipped) {
    xml << ">\n      <skipped message=\"" << xml_escape(message) << "\"/>\n    </testcase>\n";
    return;
  }
  xml << ">\n      <failure type=\"" << xml_escape(*failure_type) << "\" message=\"" << xml_escape(message) << "\">"
      << xml_escape(message) << "</failure>\n    </testcase>\n";
}

// The run's message with its fragility label, when diff --sensitivity gave it one.
std::string with_label(const std::string& message, const CiFragility& f, const std::string& id) {
  const auto it = f.label_of_run.find(id);
  return it == f.label_of_run.end() ? message : message + "; numerics: " + it->second;
}

bool excused(const CiFragility& f, const std::string& id) { return f.excused && f.label_of_run.count(id) > 0; }

std::string environment_lines(const EvidenceDiff& diff) {
  std::string lines;
  for (const ValueDifference& v : diff.environment)
    lines += v.path + ": " + v.golden.dump() + " -> " + v.current.dump() + "\n";
  return lines;
}

// Longer values than this are summarized in an annotation: a workflow command is one line in
// the job's log and a box on the commit, and cpu.flags alone is ~1.5 KB of words.
constexpr std::size_t kAnnotationValueChars = 80;
// At most this many words of a word list (cpu.flags) named on each side.
constexpr std::size_t kAnnotationWords = 8;

std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string word_list(const std::vector<std::string>& words) {
  std::string s;
  for (std::size_t i = 0; i < words.size() && i < kAnnotationWords; ++i) s += (i ? " " : "") + words[i];
  if (words.size() > kAnnotationWords) s += " ... (" + std::to_string(words.size()) + ")";
  return s.empty() ? "none" : s;
}

// One environment difference for an annotation: short values whole; two long word lists (cpu.flags)
// as the words only one side has; any other long value cut (show_value). JUnit's <system-out>
// and --json keep every value whole.
std::string annotation_environment_line(const ValueDifference& v) {
  const bool long_value = v.golden.dump().size() > kAnnotationValueChars || v.current.dump().size() > kAnnotationValueChars;
  if (!long_value) return v.path + ": " + v.golden.dump() + " -> " + v.current.dump();
  if (v.golden.is_string() && v.current.is_string()) {
    const std::vector<std::string> g = words_of(v.golden.get<std::string>()), n = words_of(v.current.get<std::string>());
    if (g.size() > 1 || n.size() > 1) {
      std::vector<std::string> only_g, only_n;
      for (const std::string& w : g)
        if (std::find(n.begin(), n.end(), w) == n.end()) only_g.push_back(w);
      for (const std::string& w : n)
        if (std::find(g.begin(), g.end(), w) == g.end()) only_n.push_back(w);
      return v.path + ": " + std::to_string(only_g.size() + only_n.size()) + " of " + std::to_string(g.size()) + " -> " +
             std::to_string(n.size()) + " words differ; only in the golden: " + word_list(only_g) + "; only in the new: " +
             word_list(only_n);
    }
  }
  return v.path + ": " + show_value(v.golden) + " -> " + show_value(v.current);
}

std::string annotation_environment_lines(const EvidenceDiff& diff) {
  std::string lines;
  for (const ValueDifference& v : diff.environment) lines += annotation_environment_line(v) + "\n";
  return lines;
}

}  // namespace

std::string run_difference_line(const RunDiff& r) {
  std::string line = to_string(r.verdict);
  if (r.divergence) {
    const Divergence& d = *r.divergence;
    line += " at " + new_token_label(d.step) + ": " +
            describe_token("golden", d.golden, "p", d.golden.prob_in_golden) + ", " +
            describe_token("new", d.current, "p", d.current.prob_in_new);
  } else if (r.first_difference_step) {
    line += " at " + new_token_label(*r.first_difference_step);
  }
  if (!r.reason.empty()) line += "; " + r.reason;
  return line;
}

std::string pair_difference_line(const PairedRun& p) {
  std::string line = "paired run " + p.golden_id + " \u2192 " + p.new_id + ": " + pair_verdict(p);
  if (p.diff.divergence) {
    const Divergence& d = *p.diff.divergence;
    line += "; parts at " + new_token_label(d.step) + ": " + describe_token("golden", d.golden, "p", d.golden.prob_in_golden) +
            ", " + describe_token("new", d.current, "p", d.current.prob_in_new);
  } else {
    line += "; the same tokens";
  }
  return line + " (other ids: still a failure of the gate)";
}

std::string diff_to_junit(const EvidenceDiff& diff, const CiFragility& fragility) {
  const std::size_t cases = diff.runs.size() + diff.pairs.size() + diff.missing.size() + diff.extra.size();
  std::size_t skipped = 0;
  for (const RunDiff& r : diff.runs)
    if (r.verdict != Verdict::agree && excused(fragility, r.id)) ++skipped;
  const std::size_t failures = diff.differing() - skipped + diff.pairs.size() + diff.missing.size() + diff.extra.size();
  std::ostringstream xml;
  xml << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<testsuites name=\"genrepro diff\" tests=\"" << cases << "\" failures=\"" << failures
      << "\" errors=\"0\" time=\"0\">\n"
      << "  <testsuite name=\"genrepro diff\" tests=\"" << cases << "\" failures=\"" << failures
      << "\" errors=\"0\" skipped=\"" << skipped << "\" time=\"0\">\n";
  xml << "    <properties>\n      <property name=\"evidence\" value=\"" << xml_escape(diff.evidence_file) << "\"/>\n";
  for (const std::string& g : diff.golden_files)
    xml << "      <property name=\"golden\" value=\"" << xml_escape(g) << "\"/>\n";
  xml << "      <property name=\"prob_tolerance\" value=\"" << number(diff.prob_tolerance) << "\"/>\n    </properties>\n";
  for (const RunDiff& r : diff.runs) {
    const std::string type = json_name(r.verdict);
    testcase(xml, r.id, r.verdict == Verdict::agree ? nullptr : &type,
             with_label("run " + r.id + ": " + run_difference_line(r), fragility, r.id), excused(fragility, r.id));
  }
  const std::string missing = "missing", extra = "extra", paired = "paired";
  for (const PairedRun& p : diff.pairs) testcase(xml, p.golden_id, &paired, pair_difference_line(p));
  for (const std::string& id : diff.missing)
    testcase(xml, id, &missing, "missing run " + id + ": in golden, not in the new evidence");
  for (const std::string& id : diff.extra)
    testcase(xml, id, &extra, "extra run " + id + ": in the new evidence, not in golden");
  xml << "    <system-out>" << xml_escape(environment_lines(diff) + diff_summary_line(diff) + "\n") << "</system-out>\n"
      << "  </testsuite>\n</testsuites>\n";
  return xml.str();
}

std::string diff_to_github_annotations(const EvidenceDiff& diff, const CiFragility& fragility) {
  std::string out;
  const std::string file = diff.evidence_file;
  for (const RunDiff& r : diff.runs) {
    if (r.verdict == Verdict::agree) continue;
    out += std::string(excused(fragility, r.id) ? "::warning" : "::error") + " file=" + annotation_property(file) +
           ",title=" + annotation_property("genrepro diff " + r.id) + "::" +
           annotation_escape(with_label("run " + r.id + ": " + run_difference_line(r), fragility, r.id)) + "\n";
  }
  for (const PairedRun& p : diff.pairs)
    out += "::error file=" + annotation_property(file) + ",title=" + annotation_property("genrepro diff " + p.golden_id) +
           "::" + annotation_escape(pair_difference_line(p)) + "\n";
  for (const std::string& id : diff.missing)
    out += "::error title=genrepro diff missing run::" + annotation_escape("missing run " + id + ": in golden, not in " + file) + "\n";
  for (const std::string& id : diff.extra)
    out += "::error title=genrepro diff extra run::" + annotation_escape("extra run " + id + ": in " + file + ", not in golden") + "\n";
  if (!diff.environment.empty())
    out += "::warning title=genrepro diff environment::" +
           annotation_escape("likely causes, not failures: " + annotation_environment_lines(diff)) + "\n";
  return out;
}

}  // namespace genrepro
