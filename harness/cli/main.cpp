// genrepro: a reproducibility and evidence harness for the language-model generation loop.
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "build_info.hpp"
#include "cli/verbs.hpp"
#include "core/errors.hpp"

namespace {

constexpr int kExitBadInput = 2;
constexpr int kExitInternal = 3;

void setup_verbs(CLI::App& app, int& exit_code) {
  using namespace genrepro::cli;
  // The order here is the order --help lists them: the loop, then evidence, then tools.
  setup_generate(app, exit_code);
  setup_tokenize(app, exit_code);
  setup_run(app, exit_code);
  setup_diff(app, exit_code);
  setup_bless(app, exit_code);
  setup_replay(app, exit_code);
  setup_report(app, exit_code);
  setup_check_article(app, exit_code);
  setup_merge(app, exit_code);
  setup_env(app, exit_code);
  setup_fixture(app, exit_code);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "genrepro: reproducible GPT-2 generation runs and the evidence they leave.\n"
      "Runs the generation loop (greedy, temperature, top-k, top-p, EOS, token cap) on libtorch,\n"
      "CPU float32, writes evidence.json, and compares runs against blessed golden evidence.\n"
      "Exit codes: 0 ok/agree, 1 differ, 2 bad input, 3 internal error.",
      "genrepro"};
  app.set_version_flag("--version", std::string("genrepro ") + GENREPRO_VERSION + " (" + GENREPRO_GIT_COMMIT + ")");
  app.require_subcommand(1, 1);
  app.fallthrough();
  int exit_code = 0;
  setup_verbs(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11's own codes (106, 109, ...) are not a contract anyone can rely on: bad flags are bad input.
    std::cerr << "genrepro: error: " << e.what() << " (see 'genrepro " << (argc > 1 ? argv[1] : "") << " --help')\n";
    return kExitBadInput;
  } catch (const genrepro::Error& e) {
    std::cerr << "genrepro: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    // libtorch's c10::Error carries a multi-line backtrace; the first line says what happened.
    const std::string what = e.what();
    std::cerr << "genrepro: internal error (please report): " << what.substr(0, what.find('\n')) << "\n";
    return kExitInternal;
  }
  return exit_code;
}
