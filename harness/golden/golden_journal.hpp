#pragma once
// A bless is one transaction on the golden directory (docs/bless.md, "A second bless, and a
// kill"): one bless at a time holds DIR's lock, and the files it writes (golden files and
// blessed.tsv, whose line is the provenance of each) are first staged complete beside their
// targets, then named in a journal, and only then renamed into place. A bless killed after the
// journal is finished by the next one (every staged file renamed); one killed before it is rolled
// back (the staged files removed). Either way no golden changes without its blessed.tsv line.
#include <functional>
#include <string>
#include <vector>

namespace genrepro {

// The journal's name in DIR; staged files are ".<target>.bless-new". Both start with a dot, so
// no glob of DIR/*.json takes them for evidence.
inline constexpr const char* kBlessJournalName = ".bless-journal";

// flock(2) on DIR itself, so no lock file is ever left to commit. Created when missing (and
// removed again on release if it is still empty, when this lock created it). Throws UsageError
// when another process holds it ("another genrepro bless is writing DIR ...").
class GoldenDirLock {
 public:
  static GoldenDirLock acquire(const std::string& dir);
  GoldenDirLock(GoldenDirLock&& other) noexcept;
  GoldenDirLock& operator=(GoldenDirLock&&) = delete;
  GoldenDirLock(const GoldenDirLock&) = delete;
  ~GoldenDirLock();

 private:
  GoldenDirLock(std::string dir, int fd, bool created) : dir_(std::move(dir)), fd_(fd), created_(created) {}
  std::string dir_;
  int fd_ = -1;
  bool created_ = false;
};

struct GoldenWrite {
  std::string target;   // a file directly in DIR
  std::string content;  // its whole new content
};

// Stages every write, writes the journal, renames each staged file over its target, removes the
// journal. `after_rename(i)` is called after the i-th rename (tests stop there, as a kill would).
// Throws EvidenceError naming the file; a failure while staging removes what was staged.
void write_golden_files(const std::string& dir, const std::vector<GoldenWrite>& writes,
                        const std::function<void(std::size_t)>& after_rename = {});

// Run with DIR's lock held, before a bless reads DIR: finishes a journaled bless that was cut off,
// removes staged and temporary files no journal names. Returns one line per thing done (empty:
// DIR was clean). Throws EvidenceError for a journal it cannot read (naming it and the fix).
std::vector<std::string> recover_interrupted_bless(const std::string& dir);

}  // namespace genrepro
