// genrepro: a reproducibility and evidence harness for the language-model generation loop.
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <dlfcn.h>

#include <CLI/CLI.hpp>

#include "build_info.hpp"
#include "cli/flag_kinds.hpp"
#include "cli/request_checks.hpp"
#include "cli/run_cli.hpp"
#include "cli/verbs.hpp"
#include "util/text_excerpt.hpp"
#include "evidence/environment.hpp"
#include "params/experiment_file.hpp"
#include "util/build_features.hpp"
#include "util/errors.hpp"

namespace genrepro::cli {

namespace {

void setup_verbs(CLI::App& app, VerbContext& ctx) {
  // The order here is the order --help lists them: the loop, then evidence, then tools.
  setup_generate(app, ctx);
  setup_tokenize(app, ctx);
  setup_sample(app, ctx);
  setup_plan(app, ctx);
  setup_run(app, ctx);
  setup_diff(app, ctx);
  setup_bless(app, ctx);
  setup_replay(app, ctx);
  setup_report(app, ctx);
  setup_check_article(app, ctx);
  setup_merge(app, ctx);
  setup_sensitivity(app, ctx);
  setup_env(app, ctx);
  setup_fixture(app, ctx);
  setup_export(app, ctx);
}

// The BLAS the engine would compute with: the library the loader resolves libblas.so.3 to (the
// engine library links it the same way), opened alone, without libtorch.
std::string blas_in_use() {
  if (::dlopen("libblas.so.3", RTLD_NOW | RTLD_GLOBAL) == nullptr) return "none found (libblas.so.3 is not installed)";
  const BlasInfo blas = probe_blas();
  std::string text = blas.resolved.value_or(blas.library.value_or("?")) + " (" + blas.vendor;
  if (blas.config) text += ", " + *blas.config;
  if (blas.core) text += ", kernel " + *blas.core;
  return text + ")";
}

std::string version_text() {
  return std::string("genrepro ") + GENREPRO_VERSION + " (commit " + GENREPRO_GIT_COMMIT + ")\n" +
         (kBuiltWithLibtorch ? std::string("libtorch ") + GENREPRO_LIBTORCH_VERSION + " (built against; loaded when a verb runs the model in reference or tiled numerics)\n"
                             : std::string("libtorch: none (a libtorch-free build: the model runs in strict numerics only)\n")) +
         "BLAS " + blas_in_use();
}

std::vector<std::string> verb_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* verb : app.get_subcommands([](const CLI::App* a) { return !a->get_name().empty(); }))
    names.push_back(verb->get_name());
  return names;
}

std::vector<std::string> long_flag_names(const CLI::App& verb) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : verb.get_options())
    for (const std::string& name : opt->get_lnames()) names.push_back("--" + name);
  return names;
}

// The verb a mistyped word was meant as: the one it begins ("gen" -> generate), else the nearest
// by edit distance ("smaple" -> sample); empty when none is near.
std::string nearest_verb(const std::string& word, const std::vector<std::string>& verbs) {
  std::vector<std::string> prefixed;
  for (const std::string& v : verbs)
    if (v.size() > word.size() && v.compare(0, word.size(), word) == 0) prefixed.push_back(v);
  if (word.size() >= 2 && prefixed.size() == 1) return prefixed.front();
  return nearest_key(word, verbs);
}

// The one-line error for a command line that did not parse, with the nearest verb or flag when
// the word looks like a typo of one (the same edit distance experiment files use for keys).
std::string parse_error_line(const CLI::App& app, const std::vector<std::string>& args, const CLI::ParseError& e) {
  const std::vector<CLI::App*> parsed = app.get_subcommands();
  if (parsed.empty()) {
    // No verb was recognized: the first word that is not a flag was meant as one.
    for (const std::string& word : args) {
      if (word.empty() || word[0] == '-') continue;
      const std::string verb = nearest_verb(word, verb_names(app));
      return "'" + word + "' is not a verb" + (verb.empty() ? "" : "; did you mean '" + verb + "'?") +
             " (see 'genrepro --help')";
    }
    for (const std::string& word : args)
      if (word.rfind("-", 0) == 0) return "unknown flag " + word + " before the verb (see 'genrepro --help')";
    std::string verbs;
    for (const std::string& v : verb_names(app)) verbs += (verbs.empty() ? "" : ", ") + v;
    return "give a verb: " + verbs + " (see 'genrepro --help')";
  }
  const CLI::App& verb = *parsed.front();
  std::string line = e.what();
  for (const std::string& word : args) {
    if (word.rfind("--", 0) != 0) continue;
    const std::string flag = word.substr(0, word.find('='));
    if (verb.get_option_no_throw(flag) != nullptr || flag == "--help" || flag == "--parse-only") continue;
    const std::string near = nearest_key(flag, long_flag_names(verb));
    line = "unknown flag " + flag + " for '" + verb.get_name() + "'" + (near.empty() ? "" : "; did you mean " + near + "?");
    break;
  }
  return line + " (see 'genrepro " + verb.get_name() + " --help')";
}

// A word that is no verb, given with --help ("genrepro smaple --help"), is still no verb: CLI11
// alone would print the top-level help and exit 0, so a script's typo would pass. --help is
// dropped for it, and the word gets the usual error, exit 2.
std::vector<std::string> without_help_for_unknown_verb(const CLI::App& app, std::vector<std::string> args) {
  const std::vector<std::string> verbs = verb_names(app);
  for (const std::string& word : args) {
    if (word.empty() || word[0] == '-') continue;
    if (word == "help" || std::find(verbs.begin(), verbs.end(), word) != verbs.end()) return args;
    args.erase(std::remove_if(args.begin(), args.end(), [](const std::string& a) { return a == "--help" || a == "-h"; }), args.end());
    return args;
  }
  return args;
}

// `genrepro help [VERB]` is `genrepro [VERB] --help`: people type it (git, cargo, go), and before
// it was a word CLI11 read as a missing verb's argument ("GOLDEN is required").
// A word that is no verb is passed on without --help, so it gets the usual "'dif' is not a verb;
// did you mean 'diff'?" (with --help, CLI11 would print the top-level help and exit 0).
std::vector<std::string> with_help_verb_spelled_out(const CLI::App& app, std::vector<std::string> args) {
  const std::size_t at = !args.empty() && args.front() == "--parse-only" ? 1 : 0;
  if (args.size() <= at || args[at] != "help") return args;
  std::vector<std::string> out(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(at));
  if (args.size() > at + 1) {
    const std::vector<std::string> verbs = verb_names(app);
    out.push_back(args[at + 1]);
    if (std::find(verbs.begin(), verbs.end(), args[at + 1]) == verbs.end()) return out;
  }
  out.push_back("--help");
  return out;
}

}  // namespace

void on_verb(CLI::App& verb, VerbContext& ctx, std::function<void()> action) {
  verb.callback([&ctx, action = std::move(action)] {
    if (!ctx.parse_only) action();
  });
}

std::vector<IntegerFlag> integer_flags() {
  // The verbs are only declared here, never run, so neither stream nor engine is used.
  struct NoEngine final : EngineVerbs {
    int generate(const GenerateRequest&, Console&) override { return kExitInternal; }
    int run(const RunRequest&, Console&) override { return kExitInternal; }
    int replay(const ReplayRequest&, Console&) override { return kExitInternal; }
    int env(const EnvRequest&, Console&) override { return kExitInternal; }
  } engine;
  std::istringstream in;
  std::ostringstream out;
  Console io{in, out, out};
  CheckedEngine checked(engine);
  VerbContext ctx{io, checked, kExitOk, false, {}};
  CLI::App app;
  setup_verbs(app, ctx);
  std::vector<IntegerFlag> flags;
  for (const CLI::App* verb : app.get_subcommands([](const CLI::App*) { return true; }))
    for (const CLI::Option* opt : verb->get_options()) {
      const std::string type = opt->get_type_name();
      if ((type == "INT" || type == "UINT") && !opt->get_lnames().empty())
        flags.push_back({verb->get_name(), "--" + opt->get_lnames().front(), type == "UINT"});
    }
  return flags;
}

int run_cli(const std::vector<std::string>& given, Console& io, EngineVerbs& engine) {
  CLI::App app{
      "genrepro: reproducible GPT-2 generation runs and the evidence they leave.\n"
      "Runs the generation loop (greedy, temperature, top-k, top-p, EOS, token cap) on libtorch,\n"
      "CPU float32, writes evidence.json, and compares runs against blessed golden evidence.\n"
      "Exit codes: 0 ok/agree, 1 differ, 2 bad input, 3 internal error.\n"
      "'genrepro help VERB' is 'genrepro VERB --help'.",
      "genrepro"};
  app.set_version_flag("--version", version_text, "Print the version, the git commit, libtorch and the BLAS in use");
  app.require_subcommand(1, 1);
  app.fallthrough();
  // Every request is checked once more where it crosses into the engine (request_checks.hpp).
  CheckedEngine checked(engine);
  VerbContext ctx{io, checked, kExitOk, false, given};
  // --parse-only (first, before the verb): check that a command line parses (the verb, its flags,
  // value types, required arguments) and run nothing; how the CI recipes' lines are tested.
  ctx.parse_only = !given.empty() && given.front() == "--parse-only";
  app.add_flag("--parse-only", ctx.parse_only, "Check that the command line parses; run nothing")->group("");
  setup_verbs(app, ctx);
  read_numbers_as_decimal(app);
  name_path_placeholders(app);
  refuse_empty_paths(app);
  const std::vector<std::string> args = with_help_verb_spelled_out(app, without_help_for_unknown_verb(app, given));
  // CLI11 takes a vector in reverse order (it pops arguments from the back).
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, io.out, io.err);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e, io.out, io.err);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e, io.out, io.err);
  } catch (const CLI::ParseError& e) {
    // CLI11's own codes (106, 109, ...) are not a contract anyone can rely on: bad flags are bad input.
    io.err << "genrepro: error: " << parse_error_line(app, args, e) << std::endl;
    return kExitBadInput;
  } catch (const genrepro::Error& e) {
    io.err << "genrepro: error: " << e.what() << std::endl;
    return kExitBadInput;
  } catch (const std::exception& e) {
    io.err << "genrepro: internal error (please report): " << first_line(e.what()) << std::endl;
    return kExitInternal;
  }
  io.out.flush();
  return ctx.exit_code;
}

}  // namespace genrepro::cli
