// genrepro fixture: its flags, its refusals (one line, exit 2), and the tiny model it writes.
// (The pinned sha256 of the tiny fixture is checked by ctest's fixture.tiny_sha256_pinned.)
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli_inprocess/cli_case.hpp"

namespace genrepro::test {
namespace {

const std::string kKeep = "a file the fixture command must not overwrite\n";

// Each case runs in a scratch directory holding nonempty/keep.txt and a-file.
class Fixture : public ::testing::TestWithParam<CliCase> {};
TEST_P(Fixture, ExitAndOutput) {
  const ScratchDir scratch("fixture");
  scratch.write("nonempty/keep.txt", kKeep);
  scratch.write("a-file", "not a directory\n");
  const std::vector<std::string> args = case_args(GetParam(), scratch);
  expect_result(GetParam(), args, genrepro(args));
  EXPECT_EQ(read_bytes(scratch / "nonempty/keep.txt"), kKeep);
  EXPECT_FALSE(std::filesystem::exists(scratch / "never"));
}

const std::vector<CliCase> kCases = {
    {"help", {"fixture", "--help"}, 0, R"re(Options:.*--out.*--preset.*tiny.*gpt2-124m-shape.*--tokenizer-dir.*--force)re", ""},
    {"refuses_nonempty_dir", {"fixture", "--out", "{scratch}/nonempty"}, 2, "",
     R"re(genrepro: error: --out .*nonempty is not empty; pass --force)re", Stderr::one_line},
    {"refuses_a_file", {"fixture", "--out", "{scratch}/a-file", "--force"}, 2, "", R"re(--out .*a-file exists and is not a directory)re",
     Stderr::one_line},
    {"unknown_preset", {"fixture", "--out", "{scratch}/never", "--preset", "gpt3"}, 2, "",
     R"re(--preset gpt3 is not a fixture preset; allowed: tiny, gpt2-124m-shape)re", Stderr::one_line},
    {"needs_out", {"fixture"}, 2, "", R"re(--out is required)re", Stderr::one_line},
    {"missing_tokenizer_files", {"fixture", "--out", "{scratch}/never", "--tokenizer-dir", "{scratch}/nonempty"}, 2, "",
     R"re(tokenizer directory .*/nonempty: missing vocab.json \(or encoder.json\); run scripts/setup.sh)re", Stderr::one_line},
};
INSTANTIATE_TEST_SUITE_P(Fixture, Fixture, ::testing::ValuesIn(kCases), CaseName{});

// With the default tokenizer directory ($GENREPRO_TOKENIZER_DIR), then again with --force into the
// now non-empty directory: the same bytes as the fixture every engine test loads.
TEST(Fixture, WritesTinyThenForceOverwrites) {
  const ScratchDir scratch("fixture");
  expect_case({"writes_tiny", {"fixture", "--out", scratch / "fresh", "--force"}, 0, R"re(wrote fixture model 'tiny' to .*/fresh)re", ""});
  const std::string weights = read_bytes(tiny_model() + "/model.safetensors");
  EXPECT_TRUE(read_bytes(scratch / "fresh/model.safetensors") == weights) << "not the tiny fixture's weights";
  scratch.write("fresh/model.safetensors", "overwritten below");
  expect_case({"force_overwrites", {"fixture", "--out", scratch / "fresh", "--force"}, 0, R"re(wrote fixture model 'tiny')re", ""});
  EXPECT_TRUE(read_bytes(scratch / "fresh/model.safetensors") == weights) << "--force did not rewrite the weights";
}

}  // namespace
}  // namespace genrepro::test
