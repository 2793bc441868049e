#pragma once
// The non-power-of-two Hadamard factors of N = m·2^k, m ∈ {12, 20, 28}: H_N = H_m ⊗ H_{2^k}
// (N = 40·2^k is 20·2^(k+1)).
#include <cstdint>
#include <vector>

#include "core/host_device.hpp"

namespace ironkernels::detail {

/// The factor m of a transform length n = m·2^k: 1 for a power of two, 12, 20 or 28 (the odd part
/// 3, 5 or 7, times 4, and n ≥ m), else 0 (no transform of that length).
int hadamard_factor_of(std::int64_t n);

namespace paley {
/// Quadratic character of GF(q), q prime: 0, 1 (a nonzero square) or -1.
IRONKERNELS_HD constexpr int chi(int q, int a) {
  a = ((a % q) + q) % q;
  if (a == 0) return 0;
  for (int x = 1; x < q; ++x)
    if (x * x % q == a) return 1;
  return -1;
}
/// Entry (i, j) of the (q+1)×(q+1) matrix [[0, 1ᵀ], [sign·1, Q]], Q[i][j] = χ(j - i): skew for
/// q ≡ 3 (mod 4) with sign = -1, symmetric (a conference matrix) for q ≡ 1 (mod 4) with sign = +1.
IRONKERNELS_HD constexpr int core(int q, int sign, int i, int j) {
  return i == 0 ? (j == 0 ? 0 : 1) : j == 0 ? sign : chi(q, j - i);
}
}  // namespace paley

/// H_m[i][j] (±1), H_m·H_mᵀ = m·I: Paley's first construction for 12 and 20 (q = 11, 19: H = I + S,
/// S skew), the second for 28 (q = 13: H = S ⊗ [[1, 1], [1, -1]] + I ⊗ [[1, -1], [-1, -1]], S
/// symmetric of order 14). constexpr, so that the CUDA pass's signs are compile-time constants.
IRONKERNELS_HD constexpr int hadamard_factor_entry(int m, int i, int j) {
  if (m == 12 || m == 20) return paley::core(m - 1, -1, i, j) + (i == j);
  const int a[2][2] = {{1, 1}, {1, -1}}, b[2][2] = {{1, -1}, {-1, -1}};
  const int u = i & 1, v = j & 1;
  return paley::core(13, 1, i >> 1, j >> 1) * a[u][v] + (i >> 1 == j >> 1) * b[u][v];
}

/// H_m row-major, built once per process from hadamard_factor_entry.
const std::vector<std::int8_t>& hadamard_factor(int m);

}  // namespace ironkernels::detail
