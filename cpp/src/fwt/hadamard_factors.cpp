// The m×m Hadamard factors of N = m·2^k: which m a length takes, the matrices built once per process,
// and the build-time proof that each is symmetric with H·H = m·I.
#include "fwt/hadamard_factors.hpp"

#include <map>
#include <mutex>

namespace ironkernels::detail {
namespace {

std::vector<std::int8_t> build(int m) {
  std::vector<std::int8_t> h(static_cast<std::size_t>(m * m));
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j) h[i * m + j] = static_cast<std::int8_t>(hadamard_factor_entry(m, i, j));
  return h;
}

// Checked where the matrices are made: symmetric with entries ±1 and H·H = m·I, so H_N = H_m ⊗ H_{2^k}
// is symmetric and H_N·H_N = N·I for every N the transform takes.
constexpr bool symmetric_involution(int m) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j) {
      const int e = hadamard_factor_entry(m, i, j);
      if ((e != 1 && e != -1) || e != hadamard_factor_entry(m, j, i)) return false;
      int dot = 0;
      for (int c = 0; c < m; ++c) dot += hadamard_factor_entry(m, i, c) * hadamard_factor_entry(m, c, j);
      if (dot != (i == j ? m : 0)) return false;
    }
  return true;
}
static_assert(symmetric_involution(12) && symmetric_involution(20) && symmetric_involution(28));

}  // namespace

int hadamard_factor_of(std::int64_t n) {
  if (n < 1) return 0;
  const std::int64_t odd = n >> __builtin_ctzll(static_cast<unsigned long long>(n));
  if (odd == 1) return 1;
  const std::int64_t m = 4 * odd;  // 12, 20, 28: the odd part times 4, and N at least m
  return (odd == 3 || odd == 5 || odd == 7) && n >= m ? static_cast<int>(m) : 0;
}

const std::vector<std::int8_t>& hadamard_factor(int m) {
  static std::mutex mutex;
  static std::map<int, std::vector<std::int8_t>> built;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = built.find(m);
    if (it != built.end()) return it->second;
  }
  std::vector<std::int8_t> h = build(m);
  std::lock_guard<std::mutex> lock(mutex);
  return built.emplace(m, std::move(h)).first->second;
}

}  // namespace ironkernels::detail
