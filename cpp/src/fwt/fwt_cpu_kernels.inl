// CPU FWT kernels. Compiled once per ISA level with IRONKERNELS_CPU_ISA set to baseline, avx2 or
// avx512 (and the matching -m flags); GCC vector extensions give portable SIMD of that width.
//
// Plan for a row of N = 2^n elements, with L the SIMD width in elements:
//   1. the low log2(L) bits inside each vector (a shuffle and a ±1 FMA per stage, exact);
//   2. the remaining bits as radix-8/4/2 passes over whole vectors (vertical adds only);
//   3. rows larger than an L1-sized block B use H_N = (H_{N/B} ⊗ I_B)(I_{N/B} ⊗ H_B): every block of
//      B is transformed while it sits in L1, then narrow column strips (in L2) take the rest.
// Stages for different bits commute, so this order gives exactly H_N (and the same rounding as any
// order up to the association of the adds, which is fixed, so results are deterministic).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/half.hpp"
#include "fwt/fwt_cpu.hpp"

#if defined(__AVX512F__) || defined(__F16C__)
#include <immintrin.h>
#endif

#ifndef IRONKERNELS_CPU_ISA
#error "IRONKERNELS_CPU_ISA must be defined"
#endif
#define IK_CAT2(a, b) a##b
#define IK_CAT(a, b) IK_CAT2(a, b)
// The per-vector stages are a few instructions each: GCC left them as calls (one per vector),
// which cost more than the stages.
#define IK_SIMD_INLINE inline __attribute__((always_inline))

namespace ironkernels::detail::IK_CAT(cpu_, IRONKERNELS_CPU_ISA) {
namespace {

#if defined(__AVX512F__)
constexpr int kVecBytes = 64;
#elif defined(__AVX2__)
constexpr int kVecBytes = 32;
#else
constexpr int kVecBytes = 16;
#endif

// Vectors a group held in registers takes: 8 with AVX2's 16 registers (16 spill there), 16 with
// AVX-512's 32 (used for rows of 16 and 128 vectors: radix-16 passes and groups of 16 elsewhere
// measured no faster, bench/DECISIONS.md).
#if defined(__AVX512F__)
constexpr int kRegisterVectors = 16;
#else
constexpr int kRegisterVectors = 8;
#endif

template <class T>
struct Simd {
  static constexpr int L = kVecBytes / sizeof(T);
  typedef T V __attribute__((vector_size(kVecBytes), aligned(sizeof(T)), may_alias));
};

template <class T>
IK_SIMD_INLINE typename Simd<T>::V splat(T v) {
  typename Simd<T>::V r;
  for (int i = 0; i < Simd<T>::L; ++i) r[i] = v;
  return r;
}

// Integer vector of the same width, for __builtin_shuffle masks.
template <class T>
struct Mask;
template <>
struct Mask<float> {
  typedef std::int32_t M __attribute__((vector_size(kVecBytes)));
};
template <>
struct Mask<double> {
  typedef std::int64_t M __attribute__((vector_size(kVecBytes)));
};
template <>
struct Mask<std::uint32_t> {
  typedef std::int32_t M __attribute__((vector_size(kVecBytes)));
};
template <>
struct Mask<std::uint64_t> {
  typedef std::int64_t M __attribute__((vector_size(kVecBytes)));
};

// One butterfly stage on bit `b` inside a vector: r[i] = x[i^2^b] + (bit b of i ? -x[i] : x[i]).
template <class T, int B>
IK_SIMD_INLINE typename Simd<T>::V in_vector_stage(typename Simd<T>::V x) {
  using V = typename Simd<T>::V;
  using M = typename Mask<T>::M;
  M perm;
  V sign;
  for (int i = 0; i < Simd<T>::L; ++i) {
    perm[i] = i ^ (1 << B);
    sign[i] = (i >> B) & 1 ? T(-1) : T(1);
  }
  V partner = __builtin_shuffle(x, perm);
  return sign * x + partner;
}

template <class T, int B = 0>
IK_SIMD_INLINE typename Simd<T>::V in_vector_all(typename Simd<T>::V x) {
  if constexpr ((1 << B) < Simd<T>::L) {
    return in_vector_all<T, B + 1>(in_vector_stage<T, B>(x));
  } else {
    return x;
  }
}

template <class T>
IK_SIMD_INLINE void butterfly(typename Simd<T>::V& a, typename Simd<T>::V& b) {
  auto s = a + b;
  b = a - b;
  a = s;
}

// Radix-2^R over R bits of vector rows: rows p + t*hs (t < 2^R), each w vectors wide.
template <class T, int R>
inline void radix(typename Simd<T>::V* __restrict p, std::int64_t hs, std::int64_t w, bool scaled,
                  T scale) {
  using V = typename Simd<T>::V;
  constexpr int K = 1 << R;
  const V sv = splat<T>(scale);
  for (std::int64_t c = 0; c < w; ++c) {
    V a[K];
    for (int t = 0; t < K; ++t) a[t] = p[t * hs + c];
    for (int s = 0; s < R; ++s)
      for (int t = 0; t < K; ++t)
        if (!(t & (1 << s))) butterfly<T>(a[t], a[t | (1 << s)]);
    if (scaled)
      for (int t = 0; t < K; ++t) a[t] *= sv;
    for (int t = 0; t < K; ++t) p[t * hs + c] = a[t];
  }
}

// H_{2^a} along the rows of a (2^a × w)-vector block whose rows are `stride` vectors apart.
// Blocks too large for L2 are split in two halves of bits (recursively) to stay cache-resident.
template <class T>
void hadamard_rows(typename Simd<T>::V* x, int a, std::int64_t stride, std::int64_t w, bool scaled,
                   T scale) {
  constexpr std::int64_t kL2Bytes = 256 * 1024;
  if (a > 3 && (std::int64_t(1) << a) * w * kVecBytes > kL2Bytes) {
    int a2 = a / 2, a1 = a - a2;
    for (std::int64_t i = 0; i < (std::int64_t(1) << a1); ++i)
      hadamard_rows<T>(x + (i << a2) * stride, a2, stride, w, false, T(1));
    for (std::int64_t i = 0; i < (std::int64_t(1) << a2); ++i)
      hadamard_rows<T>(x + i * stride, a1, stride << a2, w, scaled, scale);
    return;
  }
  if (a == 0) {
    if (scaled) radix<T, 0>(x, stride, w, true, scale);
    return;
  }
  int s = 0;
  while (s < a) {
    const int step = (a - s) >= 3 ? 3 : (a - s);
    const bool last = s + step == a;
    const std::int64_t h = std::int64_t(1) << s, group = h << step;
    for (std::int64_t g = 0; g < (std::int64_t(1) << a); g += group)
      for (std::int64_t j = 0; j < h; ++j) {
        auto* p = x + (g + j) * stride;
        if (step == 3) radix<T, 3>(p, h * stride, w, last && scaled, scale);
        else if (step == 2) radix<T, 2>(p, h * stride, w, last && scaled, scale);
        else radix<T, 1>(p, h * stride, w, last && scaled, scale);
      }
    s += step;
  }
}

// A row of NV vectors that fits the vector registers (NV ≤ kRegisterVectors): one load,
// every stage in registers (transform_in_registers), one store. The loops are unrolled by pragma:
// GCC leaves 16-vector arrays on the stack otherwise.
template <class T, int NV>
inline void transform_in_registers(typename Simd<T>::V (&r)[NV], const typename Simd<T>::V* v) {
#pragma GCC unroll 16
  for (int i = 0; i < NV; ++i) r[i] = in_vector_all<T>(v[i]);
#pragma GCC unroll 4
  for (int s = 1; s < NV; s <<= 1)
#pragma GCC unroll 16
    for (int j = 0; j < NV; ++j)
      if (!(j & s)) butterfly<T>(r[j], r[j | s]);
}
template <class T, int NV>
inline void row_in_registers(T* row, bool scaled, typename Simd<T>::V sv) {
  using V = typename Simd<T>::V;
  V* v = reinterpret_cast<V*>(row);
  V r[NV];
  transform_in_registers<T, NV>(r, v);
  if (scaled)
#pragma GCC unroll 16
    for (int i = 0; i < NV; ++i) r[i] *= sv;
#pragma GCC unroll 16
  for (int i = 0; i < NV; ++i) v[i] = r[i];
}

// A row short enough for L1: groups of 8 vectors in registers (the in-vector stages and the 3 lowest
// vector bits, one load and store), then radix passes over the groups (rows of 16 and 128 vectors:
// groups of 16, two groups of 8 and their pairwise butterflies, or 16 in registers with AVX-512);
// shorter rows the in-vector stages and radix passes. The stages run in the same order either way,
// so the results are the same bits.
template <class T>
void row_in_cache(T* row, int log_n, bool scaled, T scale) {
  using V = typename Simd<T>::V;
  constexpr int L = Simd<T>::L;
  const std::int64_t nv = (std::int64_t(1) << log_n) / L;
  V* v = reinterpret_cast<V*>(row);
  const int a = log_n - __builtin_ctz(L);
  const V sv = splat<T>(scale);
  if (a >= 3) {
    // Two groups of 8: the second stays in registers for their butterflies (with 32 registers all
    // 16 at once).
    auto sixteen = [&](V* w, bool scale_them) {
      if constexpr (kRegisterVectors == 16) {
        row_in_registers<T, 16>(reinterpret_cast<T*>(w), scale_them, sv);
      } else {
        row_in_registers<T, 8>(reinterpret_cast<T*>(w), false, sv);
        V r[8];
        transform_in_registers<T, 8>(r, w + 8);
        for (int i = 0; i < 8; ++i) {
          V lo = w[i];
          butterfly<T>(lo, r[i]);
          w[i] = scale_them ? lo * sv : lo;
          w[i + 8] = scale_them ? r[i] * sv : r[i];
        }
      }
    };
    if (a == 4) return sixteen(v, scaled);
    if (a == 7) {  // groups of 16, then one radix-8 pass: two passes over the row instead of three
      for (std::int64_t g = 0; g < nv; g += 16) sixteen(v + g, false);
      hadamard_rows<T>(v, 3, 16, 16, scaled, scale);
      return;
    }
    for (std::int64_t g = 0; g < nv; g += 8) row_in_registers<T, 8>(row + g * L, scaled && a == 3, sv);
    if (a > 3) hadamard_rows<T>(v, a - 3, 8, 8, scaled, scale);
    return;
  }
  const bool scale_here = scaled && a == 0;
  for (std::int64_t i = 0; i < nv; ++i) {
    V r = in_vector_all<T>(v[i]);
    v[i] = scale_here ? r * sv : r;
  }
  if (a > 0) hadamard_rows<T>(v, a, 1, 1, scaled, scale);
}

// Rows shorter than one vector: plain scalar butterflies.
template <class T>
void row_scalar(T* x, int log_n, bool scaled, T scale) {
  const std::int64_t n = std::int64_t(1) << log_n;
  for (std::int64_t h = 1; h < n; h <<= 1)
    for (std::int64_t i = 0; i < n; i += 2 * h)
      for (std::int64_t j = i; j < i + h; ++j) {
        T a = x[j], b = x[j + h];
        x[j] = a + b;
        x[j + h] = a - b;
      }
  if (scaled)
    for (std::int64_t i = 0; i < n; ++i) x[i] *= scale;
}

// Rows longer than an L1-sized block B: (I_A ⊗ H_B), each block while it sits in L1; then
// (H_A ⊗ I_B), column strips of kStrip vectors. The rows of a strip are B elements apart, a
// power-of-two stride that maps them onto a few cache sets, so a strip is copied into a contiguous
// buffer, transformed there and copied back. Blocks (and strips) are independent of each other:
// one row may be spread over threads, blocks first, then strips.
template <class T>
struct RowSplit {
  static constexpr int kL1Bytes = 16 * 1024;
  static constexpr int log_b = __builtin_ctz(kL1Bytes / sizeof(T));
  static constexpr std::int64_t kStrip = 512 / kVecBytes > 0 ? 512 / kVecBytes : 1;
  static constexpr std::int64_t kMaxBuffered = std::int64_t(1) << 20;  // bytes of one buffered strip
  static std::int64_t blocks(int log_n) { return log_n > log_b ? std::int64_t(1) << (log_n - log_b) : 0; }
  static std::int64_t strips(int log_n) { return log_n > log_b ? (std::int64_t(1) << log_b) / Simd<T>::L / kStrip : 0; }
};

template <class T>
void row_blocks(T* x, int log_n, std::int64_t begin, std::int64_t end) {
  using S = RowSplit<T>;
  for (std::int64_t i = begin; i < end; ++i) row_in_cache<T>(x + (i << S::log_b), S::log_b, false, T(1));
}

template <class T>
void row_strips(T* x, int log_n, std::int64_t begin, std::int64_t end, T scale) {
  using V = typename Simd<T>::V;
  using S = RowSplit<T>;
  constexpr int L = Simd<T>::L;
  const bool scaled = scale != T(1);
  const std::int64_t A = S::blocks(log_n), bv = (std::int64_t(1) << S::log_b) / L, k_strip = S::kStrip;
  V* v = reinterpret_cast<V*>(x);
  if (A * k_strip * kVecBytes > S::kMaxBuffered) {
    for (std::int64_t c = begin * k_strip; c < end * k_strip; c += k_strip)
      hadamard_rows<T>(v + c, log_n - S::log_b, bv, k_strip, scaled, scale);
    return;
  }
  // Of T (std::vector drops the vector type's attributes), a vector's bytes over so that the strip
  // can start on a vector boundary (loads across two cache lines cost two).
  thread_local std::vector<T> buffer;
  buffer.resize(static_cast<std::size_t>(A * k_strip * L + L));
  const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(buffer.data());
  V* buf = reinterpret_cast<V*>(at + (-at & (kVecBytes - 1)));
  for (std::int64_t c = begin * k_strip; c < end * k_strip; c += k_strip) {
    for (std::int64_t i = 0; i < A; ++i)
      for (std::int64_t k = 0; k < k_strip; ++k) buf[i * k_strip + k] = v[i * bv + c + k];
    hadamard_rows<T>(buf, log_n - S::log_b, k_strip, k_strip, scaled, scale);
    for (std::int64_t i = 0; i < A; ++i)
      for (std::int64_t k = 0; k < k_strip; ++k) v[i * bv + c + k] = buf[i * k_strip + k];
  }
}

// One thread's long row, depth first: the 2^t sub-rows of the lower bits (each recursively, down to
// L1-sized blocks), then one radix-2^t pass over the whole of it, its 2^t streams 2^(n-t) apart,
// while it is still in cache (t = 3; the first level takes what is left). Every level's pass runs
// right after its sub-rows, so the row is read from memory about once per level above L2's size.
template <class T>
void row_depth_first(T* x, int log_n, bool scaled, T scale) {
  using V = typename Simd<T>::V;
  constexpr int L = Simd<T>::L, log_b = RowSplit<T>::log_b;
  if (log_n <= log_b) return row_in_cache<T>(x, log_n, scaled, scale);
  const int t = (log_n - log_b) % 3 ? (log_n - log_b) % 3 : 3, sub = log_n - t;
  for (std::int64_t i = 0; i < (std::int64_t(1) << t); ++i) row_depth_first<T>(x + (i << sub), sub, false, T(1));
  const std::int64_t w = (std::int64_t(1) << sub) / L;
  hadamard_rows<T>(reinterpret_cast<V*>(x), t, w, w, scaled, scale);
}

template <class T>
void fwt_row(T* x, int log_n, T scale) {
  const bool scaled = scale != T(1);
  if ((std::int64_t(1) << log_n) < Simd<T>::L) return row_scalar<T>(x, log_n, scaled, scale);
  row_depth_first<T>(x, log_n, scaled, scale);
}

// Flattened: each row's stages inlined into the row loop (as a call per row they cost more than
// the stages); row_in_cache keeps its own copy out of line, where inlining it spills.
template <class T, int NV>
__attribute__((flatten)) void rows_in_registers(T* x, std::int64_t rows, std::int64_t row_stride, T scale) {
  const bool scaled = scale != T(1);
  const auto sv = splat<T>(scale);
  for (std::int64_t r = 0; r < rows; ++r) row_in_registers<T, NV>(x + r * row_stride, scaled, sv);
}

template <class T>
void fwt_rows_impl(T* x, std::int64_t rows, std::int64_t row_stride, int log_n, T scale) {
  constexpr int L = Simd<T>::L;
  const std::int64_t nv = (std::int64_t(1) << log_n) / L;
  switch (nv) {  // rows that fit the registers: the row loop inside, one dispatch per call
    case 1: return rows_in_registers<T, 1>(x, rows, row_stride, scale);
    case 2: return rows_in_registers<T, 2>(x, rows, row_stride, scale);
    case 4: return rows_in_registers<T, 4>(x, rows, row_stride, scale);
    case 8: return rows_in_registers<T, 8>(x, rows, row_stride, scale);
    case 16:
      if constexpr (kRegisterVectors == 16) return rows_in_registers<T, 16>(x, rows, row_stride, scale);
      break;
    default: break;
  }
  if (nv >= 16 && log_n <= RowSplit<T>::log_b) {  // rows that fit L1, the row loop inside too
    const bool scaled = scale != T(1);
    for (std::int64_t r = 0; r < rows; ++r) row_in_cache<T>(x + r * row_stride, log_n, scaled, scale);
    return;
  }
  for (std::int64_t r = 0; r < rows; ++r) fwt_row<T>(x + r * row_stride, log_n, scale);
}

// ---------------------------------------------------------------- 16-bit rows
// float16: the hardware conversions (F16C in the avx2 variant, AVX-512F in the avx512 one, both
// rounding to nearest even from the immediate, not MXCSR) agree with core/half.hpp on every value
// but NaN: widening quiets a signalling NaN (half.hpp keeps the payload as it is), narrowing keeps
// the top payload bits (half.hpp returns sign | 0x7e00). A vector that holds a NaN is therefore
// redone lane by lane with the half.hpp routines, so the results are theirs bit for bit; NaN-free
// data (the usual case) costs one compare and one branch per vector.
void widen_fp16(const std::uint16_t* s, float* d, std::int64_t n) {
  std::int64_t i = 0;
#if defined(__AVX512F__)
  for (; i < n; i += 16) {
    const std::int64_t m = n - i < 16 ? n - i : 16;
    const __mmask16 k = static_cast<__mmask16>((1u << m) - 1u);
    const __m512 f = _mm512_maskz_cvtph_ps(k, _mm256_maskz_loadu_epi16(k, s + i));
    _mm512_mask_storeu_ps(d + i, k, f);
    if (_mm512_cmp_ps_mask(f, f, _CMP_UNORD_Q))
      for (std::int64_t j = i; j < i + m; ++j) d[j] = fp16_to_float(s[j]);
  }
#elif defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    const __m256 f = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i)));
    _mm256_storeu_ps(d + i, f);
    if (_mm256_movemask_ps(_mm256_cmp_ps(f, f, _CMP_UNORD_Q)))
      for (std::int64_t j = i; j < i + 8; ++j) d[j] = fp16_to_float(s[j]);
  }
#endif
  for (; i < n; ++i) d[i] = fp16_to_float(s[i]);
}

void round_fp16(const float* s, std::uint16_t* d, std::int64_t n) {
  std::int64_t i = 0;
#if defined(__AVX512F__)
  for (; i < n; i += 16) {
    const std::int64_t m = n - i < 16 ? n - i : 16;
    const __mmask16 k = static_cast<__mmask16>((1u << m) - 1u);
    const __m512 f = _mm512_maskz_loadu_ps(k, s + i);
    _mm256_mask_storeu_epi16(d + i, k, _mm512_maskz_cvtps_ph(k, f, _MM_FROUND_TO_NEAREST_INT));
    if (_mm512_cmp_ps_mask(f, f, _CMP_UNORD_Q))
      for (std::int64_t j = i; j < i + m; ++j) d[j] = float_to_fp16(s[j]);
  }
#elif defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    const __m256 f = _mm256_loadu_ps(s + i);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT));
    if (_mm256_movemask_ps(_mm256_cmp_ps(f, f, _CMP_UNORD_Q)))
      for (std::int64_t j = i; j < i + 8; ++j) d[j] = float_to_fp16(s[j]);
  }
#endif
  for (; i < n; ++i) d[i] = float_to_fp16(s[i]);
}

// bfloat16: half.hpp's integer formulas on whole vectors (GCC vector extensions, any width).
constexpr int kLanes32 = kVecBytes / 4;
typedef std::uint32_t U32 __attribute__((vector_size(kVecBytes)));
typedef std::int32_t I32 __attribute__((vector_size(kVecBytes)));
typedef std::uint16_t U16 __attribute__((vector_size(kVecBytes / 2)));

void widen_bf16(const std::uint16_t* s, float* d, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + kLanes32 <= n; i += kLanes32) {
    U16 h;
    std::memcpy(&h, s + i, sizeof h);
    const U32 u = __builtin_convertvector(h, U32) << 16;
    std::memcpy(d + i, &u, sizeof u);
  }
  for (; i < n; ++i) d[i] = bf16_to_float(s[i]);
}

void round_bf16(const float* s, std::uint16_t* d, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + kLanes32 <= n; i += kLanes32) {
    U32 u;
    std::memcpy(&u, s + i, sizeof u);
    const I32 nan = reinterpret_cast<I32>(u & 0x7fffffffu) > 0x7f800000;  // NaN stays NaN
    const U32 rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    const U32 r = nan ? ((u >> 16) | 0x40u) : rounded;
    const U16 h = __builtin_convertvector(r, U16);
    std::memcpy(d + i, &h, sizeof h);
  }
  for (; i < n; ++i) d[i] = float_to_bf16(s[i]);
}

}  // namespace

// Rows go through a float32 buffer of at most 16 KB (several short rows at a time, one row when
// N >= 4096), so a row is widened, transformed and rounded while it is in L1.
void fwt_rows_16bit(Format16 fmt, const std::uint16_t* x, std::int64_t x_stride, std::uint16_t* y,
                    std::int64_t y_stride, std::int64_t rows, int log_n, float scale) {
  const std::int64_t n = std::int64_t(1) << log_n;
  const std::int64_t per = log_n >= 12 ? 1 : std::int64_t(1) << (12 - log_n);
  const std::int64_t chunk = per < rows ? per : rows;
  thread_local std::vector<float> buffer;
  if (buffer.size() < static_cast<std::size_t>(chunk * n)) buffer.resize(static_cast<std::size_t>(chunk * n));
  float* b = buffer.data();
  auto widen = fmt == Format16::float16 ? widen_fp16 : widen_bf16;
  auto round = fmt == Format16::float16 ? round_fp16 : round_bf16;
  for (std::int64_t r0 = 0; r0 < rows; r0 += chunk) {
    const std::int64_t k = rows - r0 < chunk ? rows - r0 : chunk;
    if (x_stride == n) widen(x + r0 * n, b, k * n);
    else
      for (std::int64_t j = 0; j < k; ++j) widen(x + (r0 + j) * x_stride, b + j * n, n);
    fwt_rows_impl<float>(b, k, n, log_n, scale);
    if (y_stride == n) round(b, y + r0 * n, k * n);
    else
      for (std::int64_t j = 0; j < k; ++j) round(b + j * n, y + (r0 + j) * y_stride, n);
  }
}

void widen_16bit(Format16 f, const std::uint16_t* src, float* dst, std::int64_t n) {
  f == Format16::float16 ? widen_fp16(src, dst, n) : widen_bf16(src, dst, n);
}
void round_16bit(Format16 f, const float* src, std::uint16_t* dst, std::int64_t n) {
  f == Format16::float16 ? round_fp16(src, dst, n) : round_bf16(src, dst, n);
}

#define IK_ROW_PARTS(T)                                                                              \
  RowParts fwt_row_parts(const T*, int log_n) { return {RowSplit<T>::blocks(log_n), RowSplit<T>::strips(log_n)}; } \
  void fwt_row_blocks(T* x, int log_n, std::int64_t begin, std::int64_t end) { row_blocks<T>(x, log_n, begin, end); } \
  void fwt_row_strips(T* x, int log_n, std::int64_t begin, std::int64_t end, T scale) {          \
    row_strips<T>(x, log_n, begin, end, scale);                                                  \
  }
IK_ROW_PARTS(float)
IK_ROW_PARTS(double)
IK_ROW_PARTS(std::uint32_t)
IK_ROW_PARTS(std::uint64_t)
#undef IK_ROW_PARTS

void fwt_rows(float* x, std::int64_t rows, std::int64_t row_stride, int log_n, float scale) {
  fwt_rows_impl<float>(x, rows, row_stride, log_n, scale);
}
void fwt_rows(double* x, std::int64_t rows, std::int64_t row_stride, int log_n, double scale) {
  fwt_rows_impl<double>(x, rows, row_stride, log_n, scale);
}
void fwt_rows(std::uint32_t* x, std::int64_t rows, std::int64_t row_stride, int log_n, std::uint32_t scale) {
  fwt_rows_impl<std::uint32_t>(x, rows, row_stride, log_n, scale);
}
void fwt_rows(std::uint64_t* x, std::int64_t rows, std::int64_t row_stride, int log_n, std::uint64_t scale) {
  fwt_rows_impl<std::uint64_t>(x, rows, row_stride, log_n, scale);
}

}  // namespace ironkernels::detail::IK_CAT(cpu_, IRONKERNELS_CPU_ISA)
