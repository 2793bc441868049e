#pragma once
// CPU parallelism for the kernels: parallel_for and parallel_chunks over cpu_threads() threads.
#include <cstdint>
#include <functional>

namespace ironkernels::detail {
/// Runs fn(begin, end) over [0, n) split into contiguous chunks across cpu_threads() threads;
/// serially when n is below `grain` items per extra thread. Exceptions propagate to the caller.
void parallel_for(std::int64_t n, std::int64_t grain,
                  const std::function<void(std::int64_t, std::int64_t)>& fn);

/// How often (at most) parallel_chunks calls its poll, in milliseconds.
constexpr int kPollIntervalMs = 50;

/// Runs fn(worker, begin, end) over [0, n) in chunks of `chunk` items that `workers` threads (the
/// calling one included; at most one per chunk; 0: cpu_threads()) pull from a shared counter, so
/// uneven chunks balance themselves. `worker` is in [0, workers): per-worker scratch (one count array
/// per worker, say) needs no locking. Between its own chunks the calling thread calls poll(done),
/// done = items finished so far, at most every kPollIntervalMs (never when poll is empty): a poll that
/// throws, like a chunk that throws, stops the handing out of chunks; the workers finish the chunk in
/// hand, are joined, and the first exception propagates to the caller.
void parallel_chunks(std::int64_t n, std::int64_t chunk, int workers,
                     const std::function<void(int worker, std::int64_t begin, std::int64_t end)>& fn,
                     const std::function<void(std::int64_t done)>& poll = {});
}  // namespace ironkernels::detail
