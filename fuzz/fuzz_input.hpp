#pragma once
// The fuzzer's bytes as a file the readers can open by path: an anonymous in-memory file
// (memfd_create), named /proc/self/fd/N, so that readers are fuzzed through their real file path
// (size checks, mmap) without touching the disk.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>

namespace genrepro::fuzz {

class MemoryFile {
 public:
  MemoryFile(const uint8_t* data, size_t size) : fd_(::memfd_create("genrepro-fuzz", 0)) {
    size_t done = 0;
    while (fd_ >= 0 && done < size) {
      const ssize_t n = ::write(fd_, data + done, size - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
  }
  ~MemoryFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

}  // namespace genrepro::fuzz
