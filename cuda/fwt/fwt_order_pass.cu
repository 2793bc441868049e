// The output orders (sequency, dyadic) on CUDA: a gather of the input, z[j] = x[σ⁻¹(j)], before a
// natural-order transform; σ(i) = bitreverse(i) for dyadic, bitreverse(gray(i)) for sequency.
// Memory-bound: one read and one write of each element.
//
// Lines of at least 2^10 unit-stride elements (complex values and other contiguous groups of up
// to 16 bytes taken as one element) go through shared memory in tiles of 32 × 32 chosen so that
// both sides are 32 runs of 32 contiguous elements. σ is linear over GF(2), so it maps the coset
// t·2^5 + V of V = span{e0..e4, D, e(n-4)..e(n-1)} onto a coset of span{o0..o4, o(n-5)..o(n-1)}:
// the bits σ spreads the output's low 5 bits from are the input's top 4 and D (the inverse Gray
// code of e(n-5) is every bit up to n - 5: D = bits 5..n-5; dyadic: D = e(n-5)), and the input's
// low 5 bits land in the output's top 5. Shorter or strided lines gather element by element.
#include <cuda_runtime.h>

#include <cstdint>

#include "core/cuda_check.hpp"
#include "fwt/fwt_line_launch.cuh"
#include "fwt/fwt_line_passes.hpp"
#include "fwt/fwt_values.cuh"

namespace ironkernels::detail::fwt_gpu {
namespace {

// Each thread gathers kOrderItems outputs a block apart, all loads before the stores (enough bytes
// in flight per thread for the memory system; one element per thread leaves it latency-bound).
constexpr int kOrderItems = 8;

template <class T>
__global__ void __launch_bounds__(kLineThreads) fwt_order_kernel(const LinePassArgs pass) {
  const KernelArgs& a = pass.lines;
  const std::int64_t items = a.rows << a.log_n, mask = (std::int64_t(1) << a.log_n) - 1;
  const T* src = static_cast<const T*>(a.x);
  T* dst = static_cast<T*>(a.y);
  for (std::int64_t base = blockIdx.x * std::int64_t(kLineThreads * kOrderItems); base < items;
       base += std::int64_t(gridDim.x) * kLineThreads * kOrderItems) {
    T v[kOrderItems];
    std::int64_t to[kOrderItems];
#pragma unroll
    for (int j = 0; j < kOrderItems; ++j) {
      const std::int64_t i = base + j * kLineThreads + threadIdx.x;
      to[j] = -1;
      if (i >= items) continue;
      const std::uint32_t k = static_cast<std::uint32_t>(i & mask);
      std::int64_t xo, yo;
      row_offsets(a, i >> a.log_n, xo, yo);
      v[j] = src[xo + std::int64_t(inverse_order_index(k, a.log_n, pass.sequency)) * a.x_axis_stride];
      to[j] = yo + k * a.y_axis_stride;
    }
#pragma unroll
    for (int j = 0; j < kOrderItems; ++j)
      if (to[j] >= 0) dst[to[j]] = v[j];
  }
}

constexpr int kTileBits = 5, kTileSide = 1 << kTileBits;  // tiles of 32 runs of 32
constexpr int kTileThreads = 256;
constexpr int kMinTileLog2N = 2 * kTileBits;

// A block per tile: the coset t·2^5 + V of one line read as 32 runs, written as 32 runs.
template <class T>
__global__ void __launch_bounds__(kTileThreads) fwt_order_tile_kernel(const LinePassArgs pass) {
  const KernelArgs& a = pass.lines;
  const int n = a.log_n;
  const std::uint32_t tiles_per_line = 1u << (n - kMinTileLog2N);
  const std::int64_t line = blockIdx.x / tiles_per_line;
  const std::uint32_t i0 = (blockIdx.x % tiles_per_line) << kTileBits;
  const std::uint32_t d = pass.sequency ? ((1u << (n - 4)) - 1) & ~std::uint32_t(kTileSide - 1) : 1u << (n - 5);
  std::int64_t xo, yo;
  row_offsets(a, line, xo, yo);
  const T* src = static_cast<const T*>(a.x) + xo;
  T* dst = static_cast<T*>(a.y) + yo;
  __shared__ T tile[kTileSide][kTileSide + 1];
  constexpr int kPerThread = kTileSide * kTileSide / kTileThreads;
  const int c = threadIdx.x % kTileSide, u_base = threadIdx.x / kTileSide;
  T v[kPerThread];
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const std::uint32_t u = u_base + k * (kTileThreads / kTileSide);
    v[k] = src[i0 ^ c ^ (u & 1 ? d : 0) ^ ((u >> 1) << (n - 4))];
  }
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) tile[u_base + k * (kTileThreads / kTileSide)][c] = v[k];
  __syncthreads();
  const std::uint32_t top = std::uint32_t(kTileSide - 1) << (n - kTileBits);
  const std::uint32_t j0 = order_index(i0, n, pass.sequency) & ~(top | (kTileSide - 1));
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const std::uint32_t r = u_base + k * (kTileThreads / kTileSide);
    const std::uint32_t j = j0 | (r << (n - kTileBits)) | c;
    const std::uint32_t i = inverse_order_index(j, n, pass.sequency);
    dst[j] = tile[i >> (n - kTileBits)][i % kTileSide];
  }
}

template <int Bytes>
struct Storage;
template <> struct Storage<2> { using type = std::uint16_t; };
template <> struct Storage<4> { using type = std::uint32_t; };
template <> struct Storage<8> { using type = std::uint64_t; };
template <> struct Storage<16> { using type = uint4; };

template <int Bytes>
void launch_order_tiles(const LinePassArgs& pass, cudaStream_t stream) {
  fwt_order_tile_kernel<typename Storage<Bytes>::type>
      <<<static_cast<unsigned>(pass.lines.rows << (pass.lines.log_n - kMinTileLog2N)), kTileThreads, 0, stream>>>(pass);
  IK_CUDA_CHECK_LAUNCH("fwt_order_tile_kernel");
}

// The tiled pass's lines, if `a`'s are unit-stride, or contiguous groups of g elements whose
// axis stride is g (a batch dimension of extent g and stride 1 on both sides: complex parts)
// that make 4, 8 or 16 aligned bytes. Returns the element bytes, 0 if the lines do not fit it.
int order_tile_lines(const LinePassArgs& a, int bytes, LinePassArgs& tiled) {
  const KernelArgs& l = a.lines;
  if (l.log_n < kMinTileLog2N || l.log_n > 31 || (l.rows << (l.log_n - kMinTileLog2N)) >= (std::int64_t(1) << 31))
    return 0;
  tiled = a;
  if (l.x_axis_stride == 1 && l.y_axis_stride == 1) return bytes;
  const std::int64_t g = l.x_axis_stride;
  if (g != l.y_axis_stride || g < 2 || g * bytes > 16 || (g & (g - 1))) return 0;
  KernelArgs& t = tiled.lines;
  int kept = 0;
  bool found = false;
  for (int d = 0; d < l.batch_ndim; ++d) {
    if (!found && l.shape[d] == g && l.xs[d] == 1 && l.ys[d] == 1) {
      found = true;
      continue;
    }
    if (l.xs[d] % g || l.ys[d] % g) return 0;
    t.shape[kept] = l.shape[d];
    t.xs[kept] = l.xs[d] / g;
    t.ys[kept] = l.ys[d] / g;
    ++kept;
  }
  const int wide = int(g) * bytes;
  if (!found || (reinterpret_cast<std::uintptr_t>(l.x) | reinterpret_cast<std::uintptr_t>(l.y)) % wide) return 0;
  t.batch_ndim = kept;
  t.rows = l.rows / g;
  t.x_axis_stride = t.y_axis_stride = 1;
  return wide;
}

template <class T>
struct OrderLaunch {
  static void run(const LinePassArgs& a, cudaStream_t stream) {
    LinePassArgs tiled;
    switch (order_tile_lines(a, int(sizeof(T)), tiled)) {
      case 2: return launch_order_tiles<2>(tiled, stream);
      case 4: return launch_order_tiles<4>(tiled, stream);
      case 8: return launch_order_tiles<8>(tiled, stream);
      case 16: return launch_order_tiles<16>(tiled, stream);
    }
    fwt_order_kernel<T><<<line_grid(a, kOrderItems), kLineThreads, 0, stream>>>(a);
    IK_CUDA_CHECK_LAUNCH("fwt_order_kernel");
  }
};

}  // namespace

void launch_order_pass(DType dtype, const LinePassArgs& a, cudaStream_t stream) { by_dtype<OrderLaunch>(dtype, a, stream); }

}  // namespace ironkernels::detail::fwt_gpu
