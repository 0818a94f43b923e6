// fixture's progress: a person at a terminal sees one line redrawn in place and erased at the
// end; a log (stderr not a terminal) gets no line per tensor (gpt2-124m-shape printed 160
// `fixture: tensor i/160` lines into every CI log).
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "support/env_guard.hpp"
#include "support/scratch_dir.hpp"
#include "unit/cli/no_engine.hpp"

namespace genrepro::cli {
namespace {

struct Written {
  int exit;
  std::string out, err;
};

Written fixture(const std::string& out_dir, bool err_is_terminal) {
  test_support::NoEngine engine;
  std::istringstream in;
  std::ostringstream so, se;
  Console io{in, so, se, false, err_is_terminal};
  const int exit = run_cli({"fixture", "--out", out_dir}, io, engine);
  return {exit, so.str(), se.str()};
}

TEST(FixtureProgress, OnATerminalOneLineRedrawnThenErased) {
  test::EnvGuard ci("CI", std::nullopt);
  test::EnvGuard term("TERM", "xterm");
  test::ScratchDir scratch("fixture-progress");
  const Written w = fixture(scratch / "model", true);
  ASSERT_EQ(w.exit, 0) << w.err;
  EXPECT_NE(w.err.find("\rfixture: tensor 1/"), std::string::npos) << w.err;
  EXPECT_EQ(w.err.find('\n'), std::string::npos) << "a terminal's line is redrawn, never a new line per tensor";
  EXPECT_EQ(w.err.substr(w.err.size() - 4), "\r\x1b[K") << "the line is erased at the end";
  EXPECT_EQ(w.out, "wrote fixture model 'tiny' to " + scratch / "model" + "\n");
}

TEST(FixtureProgress, OffATerminalNoLinePerTensor) {
  test::ScratchDir scratch("fixture-progress");
  const Written w = fixture(scratch / "model", false);
  ASSERT_EQ(w.exit, 0) << w.err;
  EXPECT_EQ(w.err, "");  // a fast write logs nothing; a slow one a line at most every 10 s
  test::EnvGuard ci("CI", "true");
  const Written in_ci = fixture(scratch / "model2", true);
  EXPECT_EQ(in_ci.err, "") << "CI set: a log, whatever isatty says";
}

}  // namespace
}  // namespace genrepro::cli
