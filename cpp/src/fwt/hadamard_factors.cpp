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
