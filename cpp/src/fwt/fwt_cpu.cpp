// The FWT on the CPU, for a plan fwt.cpp made: the row kernels of the ISA variant active_cpu_isa()
// picks, strided lines, the orders' permutations and the m·2^k factor, across cpu_threads().
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/cpu_isa.hpp"
#include "core/half.hpp"
#include "core/threads.hpp"
#include "fwt/fwt_cpu.hpp"
#include "fwt/fwt_plan.hpp"
#include "fwt/hadamard_factors.hpp"
#include "ironkernels/core/error.hpp"
#include "ironkernels/core/runtime.hpp"
#include "ironkernels/fwt.hpp"

namespace ironkernels {
namespace detail {
namespace {

// `fn(args...)` of the CPU kernel variant active_cpu_isa() picks (one per x86 ISA level).
#if defined(IRONKERNELS_X86_ISAS)
#define IK_CPU_ISA_CALL(fn, ...)                                             \
  switch (active_cpu_isa()) {                                                \
    case CpuIsa::avx512: return cpu_avx512::fn(__VA_ARGS__);                 \
    case CpuIsa::avx2: return cpu_avx2::fn(__VA_ARGS__);                     \
    default: return cpu_baseline::fn(__VA_ARGS__);                           \
  }
#else
#define IK_CPU_ISA_CALL(fn, ...) return cpu_baseline::fn(__VA_ARGS__);
#endif

template <class T>
void fwt_rows_dispatch(T* y, std::int64_t rows, std::int64_t stride, int log_n, T scale) {
  IK_CPU_ISA_CALL(fwt_rows, y, rows, stride, log_n, scale)
}

template <class T>
RowParts row_parts_dispatch(int log_n) {
  IK_CPU_ISA_CALL(fwt_row_parts, static_cast<const T*>(nullptr), log_n)
}
template <class T>
void row_blocks_dispatch(T* x, int log_n, std::int64_t b, std::int64_t e) {
  IK_CPU_ISA_CALL(fwt_row_blocks, x, log_n, b, e)
}
template <class T>
void row_strips_dispatch(T* x, int log_n, std::int64_t b, std::int64_t e, T scale) {
  IK_CPU_ISA_CALL(fwt_row_strips, x, log_n, b, e, scale)
}

// float16 / bfloat16: widen to float32, transform, round once on the way back (per ISA: the
// conversions use F16C / AVX-512 where the CPU has them, bit for bit those of core/half.hpp).
void fwt_rows_16bit_dispatch(Format16 f, const std::uint16_t* x, std::int64_t xs, std::uint16_t* y,
                             std::int64_t ys, std::int64_t rows, int log_n, float scale) {
  IK_CPU_ISA_CALL(fwt_rows_16bit, f, x, xs, y, ys, rows, log_n, scale)
}

}  // namespace

void widen_16bit_active(Format16 f, const std::uint16_t* src, float* dst, std::int64_t n) {
  IK_CPU_ISA_CALL(widen_16bit, f, src, dst, n)
}
void round_16bit_active(Format16 f, const float* src, std::uint16_t* dst, std::int64_t n) {
  IK_CPU_ISA_CALL(round_16bit, f, src, dst, n)
}
#undef IK_CPU_ISA_CALL

namespace {

// The element type the CPU kernels compute in: integers as unsigned (wrapping is defined there).
template <DType D>
struct CpuType;
template <>
struct CpuType<DType::float32> {
  using type = float;
};
template <>
struct CpuType<DType::float64> {
  using type = double;
};
template <>
struct CpuType<DType::int32> {
  using type = std::uint32_t;
};
template <>
struct CpuType<DType::int64> {
  using type = std::uint64_t;
};

template <class T>
T plan_scale(const FwtPlan& p) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<std::uint64_t>(p.int_scale));
  else return static_cast<T>(p.scale);
}

// Natural index of output k in sequency (Walsh) or dyadic (Paley) order.
std::uint64_t natural_index(std::uint64_t k, int log_n, FwtOrder order) {
  if (log_n == 0) return 0;
  const std::uint64_t g = order == FwtOrder::sequency ? k ^ (k >> 1) : k;
  std::uint64_t r = g;  // bit-reverse 64 bits, then keep the top log_n
  r = ((r >> 1) & 0x5555555555555555ull) | ((r & 0x5555555555555555ull) << 1);
  r = ((r >> 2) & 0x3333333333333333ull) | ((r & 0x3333333333333333ull) << 2);
  r = ((r >> 4) & 0x0f0f0f0f0f0f0f0full) | ((r & 0x0f0f0f0f0f0f0f0full) << 4);
  r = __builtin_bswap64(r);
  return r >> (64 - log_n);
}

// The order as a permutation of lines [begin, end) of y (elements of E bytes), right after their
// transform, through a buffer per line.
template <class E>
void reorder_rows(const FwtPlan& p, std::int64_t begin, std::int64_t end) {
  if (p.order == FwtOrder::natural) return;
  const std::int64_t n = std::int64_t(1) << p.log_n, ya = p.y_axis_stride;
  E* y = static_cast<E*>(p.y);
  thread_local std::vector<E> line;
  line.resize(static_cast<std::size_t>(n));
  for (std::int64_t r = begin; r < end; ++r) {
    std::int64_t xo, yo;
    p.row_offsets(r, xo, yo);
    for (std::int64_t k = 0; k < n; ++k) line[k] = y[yo + static_cast<std::int64_t>(natural_index(k, p.log_n, p.order)) * ya];
    for (std::int64_t k = 0; k < n; ++k) y[yo + k * ya] = line[k];
  }
}

// fn(b, e) over sub-ranges of [begin, end) of about 2^16 elements each when p has an order, so that
// each sub-range is reordered while it is still in cache; over the whole range otherwise.
template <class E, class F>
void rows_then_order(const FwtPlan& p, std::int64_t begin, std::int64_t end, F&& fn) {
  if (p.order == FwtOrder::natural) return fn(begin, end);
  const std::int64_t step = std::max<std::int64_t>(1, (std::int64_t(1) << 16) >> p.log_n);
  for (std::int64_t b = begin; b < end; b += step) {
    const std::int64_t e = std::min(end, b + step);
    fn(b, e);
    reorder_rows<E>(p, b, e);
  }
}

// Contiguous lines of 32/64-bit elements: copy them to out (unless in place), transform there. A
// one-dimensional batch goes to the kernel in one call (no per-row dispatch for short rows).
template <class T>
void cpu_rows_native(const FwtPlan& p, std::int64_t begin, std::int64_t end) {
  const std::int64_t n = std::int64_t(1) << p.log_n;
  const T* x = static_cast<const T*>(p.x);
  T* y = static_cast<T*>(p.y);
  const T scale = plan_scale<T>(p);
  if (p.batch_ndim <= 1) {
    const std::int64_t xs = p.batch_ndim ? p.x_stride[0] : n, ys = p.batch_ndim ? p.y_stride[0] : n;
    if (x != y || xs != ys)  // in place the rows need no copy (and no per-row loop)
      for (std::int64_t r = begin; r < end; ++r)
        if (x + r * xs != y + r * ys) std::memcpy(y + r * ys, x + r * xs, n * sizeof(T));
    return fwt_rows_dispatch<T>(y + begin * ys, end - begin, ys, p.log_n, scale);
  }
  for (std::int64_t r = begin; r < end; ++r) {
    std::int64_t xo, yo;
    p.row_offsets(r, xo, yo);
    if (x + xo != y + yo) std::memcpy(y + yo, x + xo, n * sizeof(T));
    fwt_rows_dispatch<T>(y + yo, 1, n, p.log_n, scale);
  }
}

void cpu_rows_16bit(const FwtPlan& p, Format16 f, std::int64_t begin, std::int64_t end) {
  const std::int64_t n = std::int64_t(1) << p.log_n;
  const auto* x = static_cast<const std::uint16_t*>(p.x);
  auto* y = static_cast<std::uint16_t*>(p.y);
  const float scale = static_cast<float>(p.scale);
  if (p.batch_ndim <= 1) {
    const std::int64_t xs = p.batch_ndim ? p.x_stride[0] : n, ys = p.batch_ndim ? p.y_stride[0] : n;
    return fwt_rows_16bit_dispatch(f, x + begin * xs, xs, y + begin * ys, ys, end - begin, p.log_n, scale);
  }
  for (std::int64_t r = begin; r < end; ++r) {
    std::int64_t xo, yo;
    p.row_offsets(r, xo, yo);
    fwt_rows_16bit_dispatch(f, x + xo, n, y + yo, n, 1, p.log_n, scale);
  }
}

// float16 / bfloat16 elements as the strided-line and m·2^k paths read and write them, and the
// conversions of a stored element S to the computed type T and back (16-bit: float32, rounded to
// nearest even on the way back; every other type: itself).
struct Fp16Bits {
  std::uint16_t bits;
};
struct Bf16Bits {
  std::uint16_t bits;
};
template <class T, class S>
T widen(S v) {
  if constexpr (std::is_same_v<S, Fp16Bits>) return fp16_to_float(v.bits);
  else if constexpr (std::is_same_v<S, Bf16Bits>) return bf16_to_float(v.bits);
  else return v;
}
template <class S, class T>
S narrow(T v) {
  if constexpr (std::is_same_v<S, Fp16Bits>) return S{float_to_fp16(v)};
  else if constexpr (std::is_same_v<S, Bf16Bits>) return S{float_to_bf16(v)};
  else return v;
}

// Lines along a strided axis: a group of `width` neighbouring lines (columns of the innermost batch
// dimension when it is contiguous) is gathered into rows of a buffer, transformed by the row kernels
// and scattered back. S is the stored type, T the computed one (float for 16-bit).
struct LineGroups {
  std::int64_t width = 1;   // lines per group
  std::int64_t groups = 0;  // groups = outer lines × ceil(inner / width)
  std::int64_t inner = 1;   // extent of the contiguous innermost batch dimension (1: none)
};

LineGroups line_groups(const FwtPlan& p) {
  LineGroups g;
  const std::int64_t n = std::int64_t(1) << p.log_n;
  const int last = p.batch_ndim - 1;
  if (last >= 0 && p.x_stride[last] == 1 && p.y_stride[last] == 1) g.inner = p.batch_shape[last];
  constexpr std::int64_t kGroupElements = std::int64_t(1) << 16;  // a buffer of 256 KB of float32
  g.width = std::max<std::int64_t>(1, std::min<std::int64_t>({16, g.inner, kGroupElements / n}));
  g.groups = (p.rows / g.inner) * ((g.inner + g.width - 1) / g.width);
  return g;
}

template <class S, class T>
void cpu_lines(const FwtPlan& p, const LineGroups& g, std::int64_t begin, std::int64_t end) {
  const std::int64_t n = std::int64_t(1) << p.log_n;
  const S* x = static_cast<const S*>(p.x);
  S* y = static_cast<S*>(p.y);
  const std::int64_t xa = p.x_axis_stride, ya = p.y_axis_stride, per = (g.inner + g.width - 1) / g.width;
  thread_local std::vector<T> buffer;
  if (buffer.size() < static_cast<std::size_t>(g.width * n)) buffer.resize(static_cast<std::size_t>(g.width * n));
  T* b = buffer.data();
  const T scale = plan_scale<T>(p);
  const bool ordered = p.order != FwtOrder::natural;
  for (std::int64_t i = begin; i < end; ++i) {
    const std::int64_t c0 = (i % per) * g.width, w = std::min(g.width, g.inner - c0);
    std::int64_t xo, yo;
    p.row_offsets((i / per) * g.inner + c0, xo, yo);
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t c = 0; c < w; ++c) b[c * n + j] = widen<T>(x[xo + j * xa + c]);
    fwt_rows_dispatch<T>(b, w, n, p.log_n, scale);
    for (std::int64_t j = 0; j < n; ++j) {  // stored in the order asked for
      const std::int64_t src = ordered ? static_cast<std::int64_t>(natural_index(j, p.log_n, p.order)) : j;
      for (std::int64_t c = 0; c < w; ++c) y[yo + j * ya + c] = narrow<S>(b[c * n + src]);
    }
  }
}

template <class S, class T>
void cpu_lines_all(const FwtPlan& p) {
  const LineGroups g = line_groups(p);
  const std::int64_t n = std::int64_t(1) << p.log_n;
  // Groups of at least 2^16 elements each; very long lines one at a time (one buffer).
  const std::int64_t grain = g.width * n * sizeof(T) > (std::int64_t(64) << 20) ? g.groups
                             : std::max<std::int64_t>(1, (std::int64_t(1) << 16) / (g.width * n));
  parallel_for(g.groups, grain, [&](std::int64_t b, std::int64_t e) { cpu_lines<S, T>(p, g, b, e); });
}

// Fewer long rows than threads: each row over all threads, its blocks (copied from x as they are
// taken) and then its strips. From rows of 2 MB: below, starting the threads twice per row costs
// more than they gain (2 threads of the development VM: float32 2^18 0.88×, float64 2^18 1.58×,
// float32 2^20 1.24×, 2^22 1.83×).
template <class T>
bool cpu_rows_shared(const FwtPlan& p) {
  constexpr std::int64_t kMinRowBytes = std::int64_t(2) << 20;
  if (p.rows >= cpu_threads() || cpu_threads() == 1 || (std::int64_t(sizeof(T)) << p.log_n) < kMinRowBytes) return false;
  const RowParts parts = row_parts_dispatch<T>(p.log_n);
  if (parts.blocks < 2 * cpu_threads()) return false;
  const T* x = static_cast<const T*>(p.x);
  T* y = static_cast<T*>(p.y);
  const std::int64_t block = (std::int64_t(1) << p.log_n) / parts.blocks;
  for (std::int64_t r = 0; r < p.rows; ++r) {
    std::int64_t xo, yo;
    p.row_offsets(r, xo, yo);
    parallel_for(parts.blocks, 1, [&](std::int64_t b, std::int64_t e) {
      if (x + xo != y + yo) std::memcpy(y + yo + b * block, x + xo + b * block, (e - b) * block * sizeof(T));
      row_blocks_dispatch<T>(y + yo, p.log_n, b, e);
    });
    parallel_for(parts.strips, 1, [&](std::int64_t b, std::int64_t e) {
      row_strips_dispatch<T>(y + yo, p.log_n, b, e, plan_scale<T>(p));
    });
    reorder_rows<T>(p, r, r + 1);
  }
  return true;
}

template <DType D>
void cpu_native(const FwtPlan& p) {
  using T = typename CpuType<D>::type;
  if (!p.unit_axis_stride()) return cpu_lines_all<T, T>(p);
  if (cpu_rows_shared<T>(p)) return;
  const std::int64_t grain = std::max<std::int64_t>(1, (std::int64_t(1) << 16) >> p.log_n);
  parallel_for(p.rows, grain, [&](std::int64_t b, std::int64_t e) {
    rows_then_order<T>(p, b, e, [&](std::int64_t rb, std::int64_t re) { cpu_rows_native<T>(p, rb, re); });
  });
}

void cpu_16bit(const FwtPlan& p, Format16 f) {
  if (!p.unit_axis_stride())
    return f == Format16::float16 ? cpu_lines_all<Fp16Bits, float>(p) : cpu_lines_all<Bf16Bits, float>(p);
  const std::int64_t grain = std::max<std::int64_t>(1, (std::int64_t(1) << 16) >> p.log_n);
  parallel_for(p.rows, grain, [&](std::int64_t b, std::int64_t e) {
    rows_then_order<std::uint16_t>(p, b, e, [&](std::int64_t rb, std::int64_t re) { cpu_rows_16bit(p, f, rb, re); });
  });
}

void fwt_cpu_natural(const FwtPlan& p) {
  switch (p.dtype) {
    case DType::float32: return cpu_native<DType::float32>(p);
    case DType::float64: return cpu_native<DType::float64>(p);
    case DType::int32: return cpu_native<DType::int32>(p);
    case DType::int64: return cpu_native<DType::int64>(p);
    case DType::float16: return cpu_16bit(p, Format16::float16);
    case DType::bfloat16: return cpu_16bit(p, Format16::bfloat16);
    case DType::complex64:
    case DType::complex128: return;  // planned as their real views
    case DType::int8:
    case DType::uint8: return;  // refused by make_plan
  }
}

// H_m along the factor's dimension of y (m lines 2^k·s apart), in place, and the scale: for each
// line, chunks of up to 256 of its 2^k neighbours at once (contiguous where s = 1).
template <class S, class T>
void apply_factor(const FwtPlan& p) {
  const int m = p.factor;
  const std::vector<std::int8_t>& h = p.factor_matrix ? *p.factor_matrix : hadamard_factor(m);
  const std::int64_t k_len = std::int64_t(1) << p.log_n, ya = p.y_axis_stride, step = k_len * ya;
  constexpr std::int64_t kChunk = 256;
  const std::int64_t chunks = (k_len + kChunk - 1) / kChunk;
  S* y = static_cast<S*>(p.y);
  const T scale = plan_scale<T>(p);
  parallel_for(p.rows * chunks, 1, [&](std::int64_t b, std::int64_t e) {
    std::vector<T> in(static_cast<std::size_t>(m * kChunk)), out(static_cast<std::size_t>(kChunk));
    for (std::int64_t i = b; i < e; ++i) {
      std::int64_t xo, yo;
      p.row_offsets(i / chunks, xo, yo);
      const std::int64_t c0 = (i % chunks) * kChunk, w = std::min(kChunk, k_len - c0);
      S* base = y + yo + c0 * ya;
      for (int a = 0; a < m; ++a)
        for (std::int64_t c = 0; c < w; ++c) in[a * kChunk + c] = widen<T>(base[a * step + c * ya]);
      for (int r = 0; r < m; ++r) {
        for (std::int64_t c = 0; c < w; ++c) out[c] = T(0);
        for (int a = 0; a < m; ++a) {
          const T* src = &in[a * kChunk];
          if (h[r * m + a] > 0)
            for (std::int64_t c = 0; c < w; ++c) out[c] += src[c];
          else
            for (std::int64_t c = 0; c < w; ++c) out[c] -= src[c];
        }
        for (std::int64_t c = 0; c < w; ++c) base[r * step + c * ya] = narrow<S>(T(out[c] * scale));
      }
    }
  });
}

// N = m·2^k: H_{2^k} along the 2^k neighbours (x into y, scale 1), then H_m across them.
void fwt_cpu_factor(const FwtPlan& p) {
  FwtPlan inner = p;
  inner.factor = 1;
  inner.scale = 1.0;
  inner.int_scale = 1;
  inner.rows = p.rows * p.factor;
  inner.batch_shape[inner.batch_ndim] = p.factor;
  inner.x_stride[inner.batch_ndim] = (std::int64_t(1) << p.log_n) * p.x_axis_stride;
  inner.y_stride[inner.batch_ndim] = (std::int64_t(1) << p.log_n) * p.y_axis_stride;
  ++inner.batch_ndim;
  fwt_cpu_natural(inner);
  switch (p.dtype) {
    case DType::float32: return apply_factor<float, float>(p);
    case DType::float64: return apply_factor<double, double>(p);
    case DType::int32: return apply_factor<std::uint32_t, std::uint32_t>(p);
    case DType::int64: return apply_factor<std::uint64_t, std::uint64_t>(p);
    case DType::float16: return apply_factor<Fp16Bits, float>(p);
    case DType::bfloat16: return apply_factor<Bf16Bits, float>(p);
    case DType::complex64:
    case DType::complex128: return;  // planned as their real views
    case DType::int8:
    case DType::uint8: return;  // refused by make_plan
  }
}

}  // namespace

void fwt_cpu(const FwtPlan& p) { return p.factor > 1 || p.factor_matrix ? fwt_cpu_factor(p) : fwt_cpu_natural(p); }

namespace {
template <class U>
void flip_lines(const FwtPlan& p, std::int64_t n, const std::int8_t* signs, bool integer) {
  const U bit = U(1) << (8 * sizeof(U) - 1);
  const auto* x = static_cast<const U*>(p.x);
  U* y = static_cast<U*>(p.y);
  parallel_for(p.rows, std::max<std::int64_t>(1, 4096 / std::max<std::int64_t>(n, 1)), [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t r = b; r < e; ++r) {
      std::int64_t xo, yo;
      p.row_offsets(r, xo, yo);
      for (std::int64_t j = 0; j < n; ++j) {
        const U v = x[xo + j * p.x_axis_stride];
        y[yo + j * p.y_axis_stride] = signs[j] > 0 ? v : integer ? U(U(0) - v) : U(v ^ bit);
      }
    }
  });
}
}  // namespace

void fwt_signs_cpu(const FwtPlan& p, std::int64_t n, const std::int8_t* signs) {
  switch (dtype_size(p.dtype)) {
    case 2: return flip_lines<std::uint16_t>(p, n, signs, false);
    case 4: return flip_lines<std::uint32_t>(p, n, signs, p.is_integer());
    default: return flip_lines<std::uint64_t>(p, n, signs, p.is_integer());
  }
}

}  // namespace detail
}  // namespace ironkernels
