#pragma once
// Fast Walsh–Hadamard transform.
//
// Contract: y = scale · H_N · x along one axis, H_N the Sylvester Hadamard matrix in natural order,
// H[i][j] = (-1)^popcount(i & j). scale defaults to 1; normalized = true means 1/sqrt(N).
// N = 2^k, k = 0 … kFwtMaxLog2N, or N = m·2^k, m = 12, 20, 28 (H_N = H_m ⊗ H_{2^k}, H_m Paley's second
// construction: every H_N is symmetric with H_N·H_N = N·I), along any axis of any stride; the other dimensions may have any shape and strides. float16 and bfloat16 are computed in float32 and rounded once at the end (on
// CUDA, N > 2^15 takes two or three passes over memory and rounds once per pass);
// float32 in float32; float64 in float64; complex64 and complex128 as their real and imaginary parts
// (each a float32 / float64 transform); int32 and int64 exactly modulo 2^32 / 2^64 (two's-complement
// wrapping, the result of exact integer arithmetic reduced to the type's width), with an integer
// scale (normalized is refused for integers).
// `out` may be the same array as `x` (in place); any other overlap is rejected.
// Host arrays run on the CPU (all of cpu_threads()), CUDA arrays on their device, ordered on
// `stream`; the call does not synchronize.
#include <cstdint>
#include <optional>

#include "ironkernels/core/array.hpp"
#include "ironkernels/core/export.hpp"

namespace IRONKERNELS_EXPORT ironkernels {

/// The order of the output: natural (Hadamard, H_N as above), sequency (Walsh: output k is the
/// coefficient of the row with k sign changes, natural index bitreverse(k ^ (k >> 1))) or dyadic
/// (Paley: natural index bitreverse(k)), for N = 2^k. On CUDA the input is gathered in the inverse
/// permutation first (both ordered matrices are symmetric): one more pass, and in place a
/// stream-ordered workspace the size of x.
enum class FwtOrder { natural, sequency, dyadic };

struct FwtOptions {
  int axis = -1;                ///< the transformed axis (negative: from the end)
  FwtOrder order = FwtOrder::natural;
  std::optional<double> scale;  ///< overrides `normalized`
  bool normalized = false;      ///< scale = 1/sqrt(N) (1/sqrt(block) with a block)
  /// > 0: the block-diagonal transform, H_block on each run of `block` consecutive elements along
  /// the axis (a divisor of N of a length the transform takes); the order applies within each block.
  std::int64_t block = 0;
};

constexpr int kFwtMaxLog2N = 30;

/// Validates everything (throws TypeError / ValueError before touching `out`), then transforms.
void fwt(const ArrayView& x, const ArrayView& out, const FwtOptions& options = {},
         Stream stream = nullptr);

/// Convenience for contiguous host rows: transforms `rows` rows of length `n` in place.
template <class T>
void fwt_inplace(T* data, std::int64_t rows, std::int64_t n, const FwtOptions& options = {}) {
  ArrayView v = ArrayView::contiguous(data, dtype_of<T>::value, {rows, n});
  fwt(v, v, options);
}

}  // namespace ironkernels
