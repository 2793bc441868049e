#pragma once
// Minimal test harness for the ctest executables: CHECK prints and counts, main returns failures.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ironkernels/core/array.hpp"

inline int failures = 0;
#define CHECK(cond, ...)                               \
  do {                                                 \
    if (!(cond)) {                                     \
      std::printf("FAIL %s:%d: ", __FILE__, __LINE__); \
      std::printf(__VA_ARGS__);                        \
      std::printf("\n");                               \
      ++failures;                                      \
    }                                                  \
  } while (0)

/// ctest's skip code (SKIP_RETURN_CODE): a test whose premise this machine or build lacks.
constexpr int kSkipped = 77;

/// Whether IRONKERNELS_CPU_ISA asks for a variant other than `active` (the machine or the build lacks
/// it, and the runtime took a lower one): then the test says so and is skipped, not passed.
inline bool requested_isa_missing(const char* active) {
  const char* want = std::getenv("IRONKERNELS_CPU_ISA");
  if (!want || !*want || std::strcmp(want, active) == 0) return false;
  std::printf("skipped: IRONKERNELS_CPU_ISA=%s, but this machine or build runs %s\n", want, active);
  return true;
}

inline int report_and_exit_code() {
  std::printf("%s (%d failures)\n", failures ? "FAILED" : "OK", failures);
  return failures ? 1 : 0;
}

/// `rows` (x, y) or (source, target) pairs at `data` as the lcn API's (rows, 2) int64 host array.
inline ironkernels::ArrayView lcn_pairs(const std::int64_t* data, std::int64_t rows) {
  return ironkernels::ArrayView::contiguous(const_cast<std::int64_t*>(data), ironkernels::DType::int64, {rows, 2});
}
