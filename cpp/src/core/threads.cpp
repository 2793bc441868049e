// The CPU thread pool: cpu_threads() from IRONKERNELS_NUM_THREADS or the cores, parallel_for over
// contiguous chunks, and parallel_chunks with progress polls and cancellation.
#include "core/threads.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "ironkernels/core/error.hpp"
#include "ironkernels/core/runtime.hpp"

namespace ironkernels {
namespace {
// IRONKERNELS_NUM_THREADS: unset or empty for all cores, else an integer >= 1 (blanks around it
// allowed); anything else is an error, not silently all cores.
int default_threads() {
  const char* env = std::getenv("IRONKERNELS_NUM_THREADS");
  if (env != nullptr && *env != '\0') {
    const char* p = env;
    while (std::isspace(static_cast<unsigned char>(*p))) ++p;
    long long n = 0;
    bool digits = false, too_big = false;
    for (; std::isdigit(static_cast<unsigned char>(*p)); ++p) {
      digits = true;
      n = n * 10 + (*p - '0');
      if (n > 1000000) too_big = true, n = 1000000;
    }
    while (std::isspace(static_cast<unsigned char>(*p))) ++p;
    if (!digits || *p != '\0' || n < 1 || too_big)
      raise<ValueError>("IRONKERNELS_NUM_THREADS = '", env,
                        "'; accepted: an integer >= 1 (up to 1000000), or unset or empty for all cores");
    return static_cast<int>(n);
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

void parallel_chunks(std::int64_t n, std::int64_t chunk, int workers,
                     const std::function<void(int, std::int64_t, std::int64_t)>& fn,
                     const std::function<void(std::int64_t)>& poll) {
  if (n <= 0) return;
  chunk = std::max<std::int64_t>(chunk, 1);
  const std::int64_t chunks = (n + chunk - 1) / chunk;
  if (workers <= 0) workers = cpu_threads();
  const int threads = static_cast<int>(std::min<std::int64_t>(workers, chunks));
  std::atomic<std::int64_t> next{0}, done{0};
  std::atomic<bool> stop{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto fail = [&](std::exception_ptr e) {
    std::lock_guard<std::mutex> lock(error_mutex);
    if (!error) error = e;
    stop.store(true);
  };
  // Pulls chunks until none is left or one failed; the calling thread (worker 0) also polls.
  auto run = [&](int worker) {
    using clock = std::chrono::steady_clock;
    auto last_poll = clock::now();
    while (!stop.load(std::memory_order_relaxed)) {
      const std::int64_t c = next.fetch_add(1, std::memory_order_relaxed);
      if (c >= chunks) break;
      const std::int64_t begin = c * chunk, end = std::min(n, begin + chunk);
      try {
        fn(worker, begin, end);
      } catch (...) {
        fail(std::current_exception());
        break;
      }
      done.fetch_add(end - begin, std::memory_order_relaxed);
      if (worker == 0 && poll) {
        const auto now = clock::now();
        if (now - last_poll >= std::chrono::milliseconds(kPollIntervalMs)) {
          last_poll = now;
          try {
            poll(done.load(std::memory_order_relaxed));
          } catch (...) {
            fail(std::current_exception());
            break;
          }
        }
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(threads - 1));
  try {
    for (int t = 1; t < threads; ++t) pool.emplace_back(run, t);
  } catch (...) {  // no thread could be started: stop those that were, then report it
    fail(std::current_exception());
  }
  if (!stop.load()) run(0);
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}
}  // namespace detail
}  // namespace ironkernels
