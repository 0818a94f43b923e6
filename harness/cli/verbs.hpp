#pragma once
// One file per verb (harness/cli/<verb>.cpp). Each declares its flags in setup_<verb>, and its
// callback calls only the library and stores the process exit code in `exit_code`:
// 0 success / agree, 1 differ (diff, replay, --check-equivalence), 2 bad input.
#include <CLI/CLI.hpp>

namespace genrepro::cli {

void setup_fixture(CLI::App& app, int& exit_code);
void setup_generate(CLI::App& app, int& exit_code);
void setup_tokenize(CLI::App& app, int& exit_code);
void setup_run(CLI::App& app, int& exit_code);
void setup_merge(CLI::App& app, int& exit_code);
void setup_env(CLI::App& app, int& exit_code);
void setup_diff(CLI::App& app, int& exit_code);
void setup_bless(CLI::App& app, int& exit_code);
void setup_check_article(CLI::App& app, int& exit_code);
void setup_report(CLI::App& app, int& exit_code);
void setup_replay(CLI::App& app, int& exit_code);

}  // namespace genrepro::cli
