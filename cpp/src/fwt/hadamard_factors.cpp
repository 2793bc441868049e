#include "fwt/hadamard_factors.hpp"

#include <map>
#include <mutex>

namespace ironkernels::detail {
namespace {

// Quadratic character of GF(q), q prime: 0, 1 (a nonzero square) or -1.
std::vector<int> quadratic_character(int q) {
  std::vector<int> chi(q, -1);
  chi[0] = 0;
  for (int a = 1; a < q; ++a) chi[(a * a) % q] = 1;
  return chi;
}

// The (q+1)×(q+1) matrix [[0, 1ᵀ], [sign·1, Q]], Q[i][j] = χ(j - i): skew for q ≡ 3 (mod 4) with
// sign = -1, symmetric (a conference matrix) for q ≡ 1 (mod 4) with sign = +1.
std::vector<int> paley_core(int q, int sign) {
  const std::vector<int> chi = quadratic_character(q);
  const int n = q + 1;
  std::vector<int> s(static_cast<std::size_t>(n * n), 0);
  for (int j = 1; j < n; ++j) s[j] = 1, s[j * n] = sign;
  for (int i = 0; i < q; ++i)
    for (int j = 0; j < q; ++j) s[(i + 1) * n + (j + 1)] = chi[((j - i) % q + q) % q];
  return s;
}

std::vector<std::int8_t> build(int m) {
  std::vector<std::int8_t> h(static_cast<std::size_t>(m * m));
  if (m == 12 || m == 20) {  // Paley I: H = I + S, S skew
    const std::vector<int> s = paley_core(m - 1, -1);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < m; ++j) h[i * m + j] = static_cast<std::int8_t>(s[i * m + j] + (i == j));
  } else if (m == 28) {  // Paley II: H = S ⊗ [[1, 1], [1, -1]] + I ⊗ [[1, -1], [-1, -1]], S symmetric of order 14
    const int n = 14;
    const std::vector<int> s = paley_core(13, 1);
    const int a[2][2] = {{1, 1}, {1, -1}}, b[2][2] = {{1, -1}, {-1, -1}};
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        for (int u = 0; u < 2; ++u)
          for (int v = 0; v < 2; ++v)
            h[(2 * i + u) * m + (2 * j + v)] = static_cast<std::int8_t>(s[i * n + j] * a[u][v] + (i == j) * b[u][v]);
  } else {
    h.assign(1, 1);
  }
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
