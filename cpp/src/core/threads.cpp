#include "core/threads.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "ironkernels/core/error.hpp"
#include "ironkernels/core/runtime.hpp"

namespace ironkernels {
namespace {
int default_threads() {
  if (const char* env = std::getenv("IRONKERNELS_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n > 0) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}
std::atomic<int> g_threads{0};
}  // namespace

int cpu_threads() {
  int n = g_threads.load();
  if (n == 0) {
    n = default_threads();
    g_threads.store(n);
  }
  return n;
}

void set_cpu_threads(int n) {
  if (n < 1) raise<ValueError>("set_cpu_threads: n must be >= 1, got ", n);
  g_threads.store(n);
}

namespace detail {
void parallel_for(std::int64_t n, std::int64_t grain,
                  const std::function<void(std::int64_t, std::int64_t)>& fn) {
  if (n <= 0) return;
  std::int64_t threads = std::min<std::int64_t>(cpu_threads(), std::max<std::int64_t>(1, n / std::max<std::int64_t>(grain, 1)));
  if (threads <= 1) {
    fn(0, n);
    return;
  }
  std::exception_ptr error;
  std::mutex error_mutex;
  auto run = [&](std::int64_t t) {
    std::int64_t begin = n * t / threads, end = n * (t + 1) / threads;
    try {
      fn(begin, end);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (std::int64_t t = 1; t < threads; ++t) pool.emplace_back(run, t);
  run(0);
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}
}  // namespace detail
}  // namespace ironkernels
