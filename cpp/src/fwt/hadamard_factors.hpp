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
/// Arithmetic of GF(q), q = 5, 9, 13, on the elements 0 … q−1: q prime modulo q; q = 9 as GF(3)[ι],
/// ι² = −1, element a + 3b standing for a + b·ι.
IRONKERNELS_HD constexpr int sub(int q, int x, int y) {
  if (q != 9) return ((x - y) % q + q) % q;
  return (x % 3 - y % 3 + 3) % 3 + 3 * ((x / 3 - y / 3 + 3) % 3);
}
IRONKERNELS_HD constexpr int square(int q, int x) {
  if (q != 9) return x * x % q;
  const int a = x % 3, b = x / 3;
  return ((a * a - b * b) % 3 + 3) % 3 + 3 * (2 * a * b % 3);
}
/// Quadratic character of GF(q): 0, 1 (a nonzero square) or −1.
IRONKERNELS_HD constexpr int chi(int q, int a) {
  if (a == 0) return 0;
  for (int x = 1; x < q; ++x)
    if (square(q, x) == a) return 1;
  return -1;
}
/// Entry (i, j) of the symmetric conference matrix [[0, 1ᵀ], [1, Q]] of order q + 1, Q[x][y] = χ(y − x)
/// (q ≡ 1 mod 4: C = Cᵀ, C·C = q·I).
IRONKERNELS_HD constexpr int conference(int q, int i, int j) {
  return i == 0 ? (j == 0 ? 0 : 1) : j == 0 ? 1 : chi(q, sub(q, j - 1, i - 1));
}
}  // namespace paley

/// H_m[i][j] (±1), m = 12, 20, 28: Paley's second construction from GF(q), q = m/2 − 1 = 5, 9, 13,
/// H = C ⊗ [[1, 1], [1, −1]] + I ⊗ [[1, −1], [−1, −1]] with C the conference matrix above. Symmetric,
/// H·H = m·I, so every H_N the FWT applies is its own inverse up to N. constexpr, so that the CUDA
/// pass's signs are compile-time constants.
IRONKERNELS_HD constexpr int hadamard_factor_entry(int m, int i, int j) {
  const int a[2][2] = {{1, 1}, {1, -1}}, b[2][2] = {{1, -1}, {-1, -1}};
  const int u = i & 1, v = j & 1;
  return paley::conference(m / 2 - 1, i >> 1, j >> 1) * a[u][v] + (i >> 1 == j >> 1) * b[u][v];
}

/// H_m row-major, built once per process from hadamard_factor_entry.
const std::vector<std::int8_t>& hadamard_factor(int m);

}  // namespace ironkernels::detail
