#pragma once
// The non-power-of-two Hadamard factors of N = m·2^k, m ∈ {12, 20, 28}: H_N = H_m ⊗ H_{2^k}
// (N = 40·2^k is 20·2^(k+1)).
#include <cstdint>
#include <vector>

namespace ironkernels::detail {

/// The factor m of a transform length n = m·2^k: 1 for a power of two, 12, 20 or 28 (the odd part
/// 3, 5 or 7, times 4, and n ≥ m), else 0 (no transform of that length).
int hadamard_factor_of(std::int64_t n);
/// H_m row-major, entries ±1, H_m·H_mᵀ = m·I: Paley's first construction for 12 and 20 (q = 11, 19),
/// the second for 28 (q = 13). Built once per process.
const std::vector<std::int8_t>& hadamard_factor(int m);

}  // namespace ironkernels::detail
