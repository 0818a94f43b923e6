#include "strict/thread_team.hpp"

#include <chrono>
#include <stdexcept>
#include <string>

namespace genrepro::strict {

namespace {

// How long a worker keeps polling for the next run before it sleeps: a decoding step calls the
// team about 60 times a few hundred microseconds apart, and a wake-up through the kernel costs tens
// of microseconds each time.
constexpr std::chrono::microseconds kSpinBeforeSleep{200};

inline void cpu_relax() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

ThreadTeam::ThreadTeam(int threads) {
  if (threads < 1) throw std::invalid_argument("ThreadTeam: " + std::to_string(threads) + " threads; at least 1");
  workers_.reserve(static_cast<size_t>(threads - 1));
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { work_loop(); });
}

ThreadTeam::~ThreadTeam() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    ++generation_;
    published_.store(generation_, std::memory_order_release);
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadTeam::take_jobs() {
  for (;;) {
    if (failed_.load(std::memory_order_relaxed)) return;
    const size_t i = next_.fetch_add(1, std::memory_order_relaxed);
    if (i >= jobs_) return;
    try {
      (*job_)(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
      failed_.store(true, std::memory_order_relaxed);
    }
  }
}

void ThreadTeam::work_loop() {
  uint64_t seen = 0;
  for (;;) {
    const auto spin_until = std::chrono::steady_clock::now() + kSpinBeforeSleep;
    while (published_.load(std::memory_order_acquire) == seen && std::chrono::steady_clock::now() < spin_until)
      for (int i = 0; i < 64; ++i) cpu_relax();
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return generation_ != seen; });
      seen = generation_;
      if (stop_) return;
    }
    take_jobs();
    std::lock_guard<std::mutex> lock(mutex_);
    if (--busy_ == 0) finished_.notify_one();
  }
}

void ThreadTeam::run(size_t jobs, const std::function<void(size_t)>& job) {
  if (jobs == 0) return;
  if (workers_.empty() || jobs == 1) {
    for (size_t i = 0; i < jobs; ++i) job(i);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &job;
    jobs_ = jobs;
    next_.store(0, std::memory_order_relaxed);
    failed_.store(false, std::memory_order_relaxed);
    error_ = nullptr;
    busy_ = static_cast<int>(workers_.size());
    ++generation_;
    published_.store(generation_, std::memory_order_release);
  }
  wake_.notify_all();
  take_jobs();
  std::exception_ptr error;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    finished_.wait(lock, [&] { return busy_ == 0; });
    job_ = nullptr;
    error = error_;
    error_ = nullptr;
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace genrepro::strict

