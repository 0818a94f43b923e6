#pragma once
// Sets (or unsets, with nullopt) an environment variable for the lifetime of the guard, then puts
// back what was there. Tests run one at a time in a process, so the process-wide change is safe.
#include <stdlib.h>

#include <optional>
#include <string>

namespace genrepro::test {

class EnvGuard {
 public:
  EnvGuard(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value->c_str(), 1);
    else ::unsetenv(name);
  }
  ~EnvGuard() {
    if (old_) ::setenv(name_.c_str(), old_->c_str(), 1);
    else ::unsetenv(name_.c_str());
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace genrepro::test
