// `run --resume` reading a checkpoint (evidence/checkpoint.hpp) on arbitrary bytes: the lines are
// split and parsed, the key compared with a real one, and the runs checked against a real header
// (tests/cli/data/diff/golden.json's), as a resume does. Only a genrepro::Error may come out, and
// runs that pass the checks must write back to the bytes the evidence writer gives them.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "evidence/checkpoint.hpp"
#include "evidence/evidence.hpp"
#include "util/errors.hpp"

namespace {

const genrepro::Evidence& header() {
  static const genrepro::Evidence h = [] {
    genrepro::Evidence e = genrepro::read_evidence(GENREPRO_SOURCE_DIR "/tests/cli/data/diff/golden.json");
    e.runs.clear();
    return e;
  }();
  return h;
}

// The checkpoint is opened by path and locked, as run does: a plain file, private to this process.
const std::string& scratch_path() {
  static const std::string p = "/dev/shm/genrepro-checkpoint-fuzz-" + std::to_string(::getpid());
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = scratch_path();
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  try {
    genrepro::CheckpointFile file = genrepro::CheckpointFile::open(path);
    const genrepro::CheckpointContents c = file.read();
    if (c.complete_bytes > size) __builtin_trap();
    if (c.empty) return 0;
    (void)genrepro::checkpoint_key_mismatch(c.key, genrepro::checkpoint_key(header(), "1/1"));
    for (const genrepro::RunRecord& r : genrepro::checkpoint_runs(c, header(), path))
      (void)genrepro::run_to_json(r).dump();
  } catch (const genrepro::Error&) {
  }
  return 0;
}
