#pragma once
#include <cstdint>
#include <functional>

namespace ironkernels::detail {
/// Runs fn(begin, end) over [0, n) split into contiguous chunks across cpu_threads() threads;
/// serially when n is below `grain` items per extra thread. Exceptions propagate to the caller.
void parallel_for(std::int64_t n, std::int64_t grain,
                  const std::function<void(std::int64_t, std::int64_t)>& fn);
}  // namespace ironkernels::detail
