#include "golden/golden_journal.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>

#include "util/atomic_file.hpp"
#include "util/bounded_read.hpp"
#include "util/errors.hpp"

namespace genrepro {

namespace fs = std::filesystem;

namespace {

constexpr const char* kJournalHeader = "# genrepro bless journal 1: staged file, then the file it replaces";
constexpr const char* kJournalEnd = "# end";
constexpr const char* kStagedSuffix = ".bless-new";
constexpr std::uintmax_t kMaxJournalBytes = 1 << 20;

std::string staged_name(const std::string& target_name) { return "." + target_name + kStagedSuffix; }

void fsync_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

void rename_or_throw(const fs::path& from, const fs::path& to) {
  if (::rename(from.c_str(), to.c_str()) != 0)
    throw EvidenceError(to.string() + ": cannot rename " + from.string() + " over it: " + std::strerror(errno) +
                        "; the next 'genrepro bless' into this directory finishes the bless (" + kBlessJournalName + ")");
}

// A name the journal may hold: one file directly in DIR, nothing that climbs out of it.
bool plain_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// ".<name>.bless-new" (staged) or ".<name>.tmp-XXXXXX" (write_file_atomically's temporary).
bool leftover_name(const std::string& name) {
  if (name.size() < 2 || name[0] != '.') return false;
  if (ends_with(name, kStagedSuffix)) return true;
  const std::size_t tmp = name.rfind(".tmp-");
  if (tmp == std::string::npos || tmp == 0 || name.size() - tmp != 11) return false;
  for (std::size_t i = tmp + 5; i < name.size(); ++i)
    if (!std::isalnum(static_cast<unsigned char>(name[i]))) return false;
  return true;
}

}  // namespace

GoldenDirLock GoldenDirLock::acquire(const std::string& dir) {
  std::error_code ec;
  const bool created = !fs::exists(dir, ec) && fs::create_directories(dir, ec);
  if (ec) throw UsageError("--into " + dir + ": cannot create the golden directory: " + ec.message());
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw UsageError("--into " + dir + ": cannot open the golden directory: " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK)
      throw UsageError("--into " + dir + ": another genrepro bless is writing this golden directory; wait for it to " +
                       "finish (its decisions would otherwise be lost), then bless again");
    throw UsageError("--into " + dir + ": cannot lock the golden directory: " + std::strerror(err));
  }
  return GoldenDirLock(dir, fd, created);
}

GoldenDirLock::GoldenDirLock(GoldenDirLock&& other) noexcept
    : dir_(std::move(other.dir_)), fd_(other.fd_), created_(other.created_) {
  other.fd_ = -1;
}

GoldenDirLock::~GoldenDirLock() {
  if (fd_ < 0) return;
  // A directory this bless made and wrote nothing into goes again (rmdir refuses a non-empty one).
  if (created_) ::rmdir(dir_.c_str());
  ::close(fd_);
}

void write_golden_files(const std::string& dir, const std::vector<GoldenWrite>& writes,
                        const std::function<void(std::size_t)>& after_rename) {
  if (writes.empty()) return;
  std::vector<std::pair<fs::path, fs::path>> moves;  // staged -> target
  try {
    for (const GoldenWrite& w : writes) {
      const fs::path target(w.target);
      const fs::path staged = target.parent_path() / staged_name(target.filename().string());
      write_file_atomically(staged.string(), w.content);
      moves.emplace_back(staged, target);
    }
    std::string journal = std::string(kJournalHeader) + "\n";
    for (const auto& [staged, target] : moves) journal += staged.filename().string() + "\t" + target.filename().string() + "\n";
    journal += std::string(kJournalEnd) + "\n";
    // The decision is durable from here on: the next bless finishes it.
    write_file_atomically((fs::path(dir) / kBlessJournalName).string(), journal);
  } catch (const Error& e) {
    std::error_code ec;
    for (const auto& [staged, target] : moves) fs::remove(staged, ec);
    throw EvidenceError(std::string(e.what()) + " (golden file; nothing in " + dir + " was changed)");
  }
  for (std::size_t i = 0; i < moves.size(); ++i) {
    rename_or_throw(moves[i].first, moves[i].second);
    if (after_rename) after_rename(i);
  }
  fsync_dir(dir);
  std::error_code ec;
  fs::remove(fs::path(dir) / kBlessJournalName, ec);
  fsync_dir(dir);
}

std::vector<std::string> recover_interrupted_bless(const std::string& dir) {
  std::vector<std::string> done;
  std::set<std::string> journaled;
  const fs::path journal_path = fs::path(dir) / kBlessJournalName;
  std::error_code ec;
  if (fs::exists(journal_path, ec)) {
    const BoundedRead read = read_bounded(journal_path.string(), kMaxJournalBytes);
    const auto unreadable = [&](const std::string& why) {
      return EvidenceError(journal_path.string() + ": the journal of an interrupted bless " + why +
                           "; compare the golden files with git (git status " + dir + "), then remove it");
    };
    if (!read.ok()) throw unreadable(read.problem);
    std::istringstream in(read.text);
    std::vector<std::pair<std::string, std::string>> moves;
    std::string line;
    bool header = false, end = false;
    while (std::getline(in, line)) {
      if (line == kJournalHeader) {
        header = true;
      } else if (line == kJournalEnd) {
        end = true;
      } else {
        const auto tab = line.find('\t');
        if (tab == std::string::npos || !plain_name(line.substr(0, tab)) || !plain_name(line.substr(tab + 1)))
          throw unreadable("has a line that is not \"staged<TAB>target\" (" + line.substr(0, 80) + ")");
        moves.emplace_back(line.substr(0, tab), line.substr(tab + 1));
      }
    }
    if (!header || !end) throw unreadable("is incomplete");
    std::size_t renamed = 0;
    for (const auto& [staged, target] : moves) {
      journaled.insert(staged);
      const fs::path from = fs::path(dir) / staged;
      if (!fs::exists(from, ec)) continue;  // renamed before the bless was cut off
      rename_or_throw(from, fs::path(dir) / target);
      ++renamed;
    }
    fsync_dir(dir);
    fs::remove(journal_path, ec);
    fsync_dir(dir);
    done.push_back("bless: finished an interrupted bless of " + dir + " (" + std::to_string(moves.size()) +
                   " file(s), " + std::to_string(renamed) + " renamed now, from " + journal_path.string() + ")");
  }
  // Staged files no journal names are a bless cut off before it decided (rolled back here), and
  // write_file_atomically's ".<name>.tmp-XXXXXX" files one cut off mid-write.
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!leftover_name(name) || journaled.count(name) || !e.is_regular_file(ec)) continue;
    fs::remove(e.path(), ec);
    done.push_back("bless: removed " + e.path().string() + ", left by an interrupted bless (it had not decided; nothing was changed)");
  }
  return done;
}

}  // namespace genrepro
