// genrepro: a reproducibility and evidence harness for the language-model generation loop.
#include <algorithm>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "build_info.hpp"
#include "cli/run_cli.hpp"
#include "cli/verbs.hpp"
#include "util/errors.hpp"

namespace genrepro::cli {

namespace {

void setup_verbs(CLI::App& app, VerbContext& ctx) {
  // The order here is the order --help lists them: the loop, then evidence, then tools.
  setup_generate(app, ctx);
  setup_tokenize(app, ctx);
  setup_run(app, ctx);
  setup_diff(app, ctx);
  setup_bless(app, ctx);
  setup_replay(app, ctx);
  setup_report(app, ctx);
  setup_check_article(app, ctx);
  setup_merge(app, ctx);
  setup_env(app, ctx);
  setup_fixture(app, ctx);
}

// libtorch's c10::Error carries a multi-line backtrace; the first line says what happened.
std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

int run_cli(const std::vector<std::string>& args, Console& io, EngineVerbs& engine) {
  CLI::App app{
      "genrepro: reproducible GPT-2 generation runs and the evidence they leave.\n"
      "Runs the generation loop (greedy, temperature, top-k, top-p, EOS, token cap) on libtorch,\n"
      "CPU float32, writes evidence.json, and compares runs against blessed golden evidence.\n"
      "Exit codes: 0 ok/agree, 1 differ, 2 bad input, 3 internal error.",
      "genrepro"};
  app.set_version_flag("--version", std::string("genrepro ") + GENREPRO_VERSION + " (" + GENREPRO_GIT_COMMIT + ")");
  app.require_subcommand(1, 1);
  app.fallthrough();
  VerbContext ctx{io, engine};
  setup_verbs(app, ctx);
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
    io.err << "genrepro: error: " << e.what() << " (see 'genrepro " << (args.empty() ? "" : args.front())
           << " --help')" << std::endl;
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
