#pragma once
// Independent jobs 0..count-1 on a fixed number of worker threads. Results are stored by index
// by the caller, so nothing that is recorded depends on the thread count or finishing order.
#include <cstddef>
#include <functional>

namespace genrepro {

// Calls job(k) for every k in [0, count), on `threads` workers (1 = the calling thread), each
// taking the next unclaimed index. The first exception stops further jobs from starting and is
// rethrown once every worker has finished.
void for_each_index(std::size_t count, int threads, const std::function<void(std::size_t)>& job);

}  // namespace genrepro
