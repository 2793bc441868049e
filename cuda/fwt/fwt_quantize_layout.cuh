#pragma once
// Where the single-pass fwt_quantize kernel (fwt_quantize_fused.cu) keeps each element of a block's
// span: plain integer functions, checked on the host (tests/cpp/test_fwt_layouts.cu).
//
// Thread t holds the run [t·E, t·E + E) in its registers; lanes hold consecutive runs. The corner
// turn of rotations past one warp's run trades the bits [s, s + R) (s = log2 E + 5) with the
// register bits: register i = j·2^R + mid then holds the element with bits `mid` there, of run
// rho = j·threads + t (rho's low s bits below them, the rest above s + R). Rotations of m·2^k add
// the H_m stage across the m blocks of 2^k, through shared memory.
#include "core/host_device.hpp"

namespace ironkernels::detail::fwt_gpu::quantize_layout {

template <int E>
IRONKERNELS_HD constexpr int log_run() {
  static_assert(E == 16 || E == 32, "runs of 16 or 32 elements");
  return E == 16 ? 4 : 5;
}
/// The first bit the turn moves: a warp holds 32 runs.
template <int E>
IRONKERNELS_HD constexpr int turn_shift() {
  return log_run<E>() + 5;
}

/// The shared-memory word of span element e. Bits 2 .. log2 E - 1 (the 16-byte vector within a run)
/// are XOR-ed with bits 5-6 (E = 16) or 5-7 (E = 32): the threads of an 8-lane phase then store and
/// load their 16-byte vectors on distinct bank groups, and 32 consecutive elements (a warp's scalar
/// access in the turn) stay one row of banks. Bits from s up are untouched.
template <int E>
IRONKERNELS_HD constexpr int smem_word(int e) {
  return E == 16 ? e ^ (((e >> 5) & 3) << 2) : e ^ (((e >> 5) & 7) << 2);
}

/// The span element register i of thread t (of `threads`) holds during the turn over R bits.
template <int E, int R>
IRONKERNELS_HD constexpr int turn_element(int i, int t, int threads) {
  constexpr int s = turn_shift<E>();
  const int rho = (i >> R) * threads + t;
  return (rho & ((1 << s) - 1)) | (i & ((1 << R) - 1)) << s | (rho >> s) << (s + R);
}

/// The word of register j·2^R's element: register j·2^R + mid is at that word + (mid << s) (the
/// swizzle leaves bits from s up alone).
template <int E, int R>
IRONKERNELS_HD constexpr int turn_run_word(int j, int t, int threads) {
  return smem_word<E>(turn_element<E, R>(j << R, t, threads));
}

/// Rotations of m·2^k (H_m ⊗ H_{2^k}): after the 2^k stages, column `col` of the span (rotation
/// col >> k, position j = col mod 2^k) gathers its m elements c·2^k + j, c < m, for H_m. Consecutive
/// columns are consecutive words (2^k >= 32).
IRONKERNELS_HD constexpr int factor_element(int col, int c, int log_chunk, int m) {
  return ((col >> log_chunk) * m + c) << log_chunk | (col & ((1 << log_chunk) - 1));
}

}  // namespace ironkernels::detail::fwt_gpu::quantize_layout
