// Evidence and golden reading on arbitrary bytes, as diff, merge, bless, replay and report take
// them: the file is read, and if it is accepted, diffed against itself (which must agree), so
// that every field the comparison touches is exercised. Only a genrepro::Error may come out.
#include <cstdint>

#include "compare/diff_format.hpp"
#include "evidence/evidence.hpp"
#include "compare/evidence_diff.hpp"
#include "fuzz_input.hpp"
#include "util/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const genrepro::fuzz::MemoryFile file(data, size);
  try {
    const genrepro::EvidenceFile evidence = genrepro::read_evidence_file(file.path());
    const genrepro::EvidenceDiff d = genrepro::diff_evidence({evidence}, evidence, genrepro::EvidenceDiffOptions{});
    if (!d.agree()) __builtin_trap();  // a valid file always agrees with itself
    (void)genrepro::format_diff_text(d);
  } catch (const genrepro::Error&) {
  }
  return 0;
}
