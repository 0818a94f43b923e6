#pragma once
// A fixed team of threads for the strict forward. The caller makes it with the thread count it
// chose and recorded (no hidden default, no global pool) and passes it to every call. Jobs split
// outputs only (column panels, rows, heads), never a reduction, so the team's size changes the
// speed and never a bit.
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace genrepro::strict {

class ThreadTeam {
 public:
  // `threads` >= 1 threads in all, the caller included: threads - 1 workers start now and wait
  // for jobs until the team is destroyed. 1: every job runs on the calling thread.
  explicit ThreadTeam(int threads);
  ~ThreadTeam();
  ThreadTeam(const ThreadTeam&) = delete;
  ThreadTeam& operator=(const ThreadTeam&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls job(i) for every i in [0, jobs) on the team, the caller taking jobs too, and returns
  // when all have finished. The first exception stops jobs not yet started and is rethrown here.
  // One run at a time: the team is not shared between threads that call run concurrently.
  void run(size_t jobs, const std::function<void(size_t)>& job);

 private:
  void work_loop();
  void take_jobs();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;      // workers: a new run, or stop
  std::condition_variable finished_;  // caller: the last worker left the run
  uint64_t generation_ = 0;           // under mutex_; one per run
  std::atomic<uint64_t> published_{0};  // generation_, read by spinning workers without the lock
  bool stop_ = false;
  const std::function<void(size_t)>* job_ = nullptr;
  size_t jobs_ = 0;
  std::atomic<size_t> next_{0};
  std::atomic<bool> failed_{false};
  int busy_ = 0;  // workers still inside the current run, under mutex_
  std::exception_ptr error_;
};

}  // namespace genrepro::strict
