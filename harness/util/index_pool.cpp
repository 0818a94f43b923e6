#include "util/index_pool.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace genrepro {

void for_each_index(std::size_t count, int threads, const std::function<void(std::size_t)>& job) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first_error;
  std::mutex error_mutex;
  const auto worker = [&] {
    try {
      for (std::size_t k = next++; k < count && !failed; k = next++) job(k);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!first_error) first_error = std::current_exception();
      failed = true;
    }
  };
  // No more workers than jobs, and the calling thread is one of them: the batched decoder calls
  // this every step, often for a single run, and then starts no thread at all.
  const std::size_t workers = std::min<std::size_t>(count, threads < 1 ? 1 : static_cast<std::size_t>(threads));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < workers; ++t) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace genrepro
