#pragma once
// Fast Walsh–Hadamard transform.
//
// Contract: y = scale · H_N · D · x along one axis, H_N the Sylvester Hadamard matrix in natural order,
// H[i][j] = (-1)^popcount(i & j), D the diagonal of the optional signs (else I). scale defaults to 1;
// normalized = true means 1/sqrt(N). N = 2^k, k = 0 … kFwtMaxLog2N, or N = m·2^k, m = 12, 20, 28
// (H_N = H_m ⊗ H_{2^k}, H_m Paley's second construction: every H_N is symmetric with H_N·H_N = N·I),
// or m the order of a caller's ±1 matrix with H_m·H_mᵀ = m·I, along any axis of any stride; the other
// dimensions may have any shape and strides. float16 and bfloat16 are computed in float32 and rounded once at the end (on
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
  /// Empty, or N values ±1 (int8, host; N the axis's whole length): the randomised Hadamard's
  /// diagonal D, applied to x before H (after Hᵀ with `inverse`). One more pass over memory on CUDA.
  ArrayView signs;
  /// Empty, or a caller's m × m base matrix (int8 ±1, host, H·Hᵀ = m·I, m <= kFwtMaxUserFactor) in place
  /// of the built-in H_m: H_N = H ⊗ H_{2^k} for N (or block) = m·2^k. Its H_m pass costs O(m) per element
  /// (one more pass over memory on CUDA).
  ArrayView hadamard;
  /// The inverse of the transform the other options make: x = D · H_Nᵀ · y / (L · scale), L = block or N
  /// (floating and complex dtypes; integers wrap and have none).
  bool inverse = false;
};

constexpr int kFwtMaxUserFactor = 512;

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
