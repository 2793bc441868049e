// Exact crossing counts of a grid drawing on the GPU, with the predicates of the CPU evaluator
// (exact int64, see ironkernels/lcn.hpp):
//  - all pairs, tiled through shared memory: one thread per edge counts its crossings with every other
//    edge (no atomics), O(m²) work — the choice up to kGridFromEdges edges;
//  - a uniform grid (broad phase) above: every edge is listed in the cells its bounding box covers,
//    the list is sorted by cell (CUB), and each pair of edges sharing a cell is tested in exactly one
//    cell, the one holding the lower-left corner of the intersection of their boxes. Drawings whose
//    boxes cover too many cells (long edges) fall back to all pairs.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <climits>
#include <cstdint>

#include "core/cuda_check.hpp"
#include "ironkernels/core/runtime.hpp"
#include "lcn/lcn_internal.hpp"
#include "lcn/predicates.hpp"

namespace ironkernels::lcn::detail {
namespace {

constexpr int kThreads = 256;

struct Seg {
  long long x0, y0, x1, y1;
  long long s, t;
};

// A proper crossing of two edges that share no endpoint (the CPU evaluator's predicates).
__device__ __forceinline__ bool crosses(const Seg& a, const Seg& b) {
  if (a.s == b.s || a.s == b.t || a.t == b.s || a.t == b.t) return false;
  const Point a0{a.x0, a.y0}, a1{a.x1, a.y1}, b0{b.x0, b.y0}, b1{b.x1, b.y1};
  return boxes_meet(box_of(a0, a1), box_of(b0, b1)) && cross_properly(a0, a1, b0, b1);
}

__device__ __forceinline__ Seg load_seg(const long long* xy, const long long* edges, long long e) {
  const long long s = edges[2 * e], t = edges[2 * e + 1];
  return {xy[2 * s], xy[2 * s + 1], xy[2 * t], xy[2 * t + 1], s, t};
}

__global__ void __launch_bounds__(kThreads) count_crossings_kernel(const long long* __restrict__ xy,
                                                                    const long long* __restrict__ edges, long long m,
                                                                    long long* __restrict__ counts) {
  __shared__ Seg tile[kThreads];
  const long long e = static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x;
  const bool active = e < m;
  const Seg mine = active ? load_seg(xy, edges, e) : Seg{0, 0, 0, 0, -1, -1};
  long long count = 0;
  for (long long base = 0; base < m; base += kThreads) {
    const long long f = base + threadIdx.x;
    if (f < m) tile[threadIdx.x] = load_seg(xy, edges, f);
    __syncthreads();
    const int len = static_cast<int>(m - base < kThreads ? m - base : kThreads);
    if (active)
      for (int j = 0; j < len; ++j) count += crosses(mine, tile[j]);
    __syncthreads();
  }
  if (active) counts[e] = count;
}

// The first invalid vertex (kind 0) or edge (kind 1), as (kind << 62) | index, by atomicMin.
__global__ void validate_kernel(const long long* xy, long long n, const long long* edges, long long m,
                                unsigned long long* first) {
  const long long i = static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x;
  if (i < n && coordinate_outside(xy[2 * i], xy[2 * i + 1]))
    atomicMin(first, static_cast<unsigned long long>(i));
  if (i < m && edge_invalid(edges[2 * i], edges[2 * i + 1], n))
    atomicMin(first, (1ull << 62) | static_cast<unsigned long long>(i));
}

// ------------------------------------------------------------------ uniform grid
constexpr long long kGridFromEdges = 32768;

struct GridShape {
  long long x0, y0, cell;  // origin and side of a cell
  long long nx, ny;        // cells per row and column
};

__device__ __forceinline__ void cell_range(const GridShape& g, const Seg& a, long long& cx0, long long& cy0,
                                           long long& cx1, long long& cy1) {
  cx0 = (min(a.x0, a.x1) - g.x0) / g.cell, cx1 = (max(a.x0, a.x1) - g.x0) / g.cell;
  cy0 = (min(a.y0, a.y1) - g.y0) / g.cell, cy1 = (max(a.y0, a.y1) - g.y0) / g.cell;
}

// Extent of all vertices used by edges: [min x, min y, -max x, -max y] by atomicMin.
__global__ void extent_kernel(const long long* xy, const long long* edges, long long m, long long* extent) {
  const long long e = static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x;
  if (e >= m) return;
  const Seg a = load_seg(xy, edges, e);
  atomicMin(&extent[0], min(a.x0, a.x1));
  atomicMin(&extent[1], min(a.y0, a.y1));
  atomicMin(&extent[2], -max(a.x0, a.x1));
  atomicMin(&extent[3], -max(a.y0, a.y1));
}

__global__ void cells_per_edge_kernel(const long long* xy, const long long* edges, long long m, GridShape g,
                                      unsigned long long limit, unsigned long long* cells) {
  const long long e = static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x;
  if (e >= m) return;
  long long cx0, cy0, cx1, cy1;
  cell_range(g, load_seg(xy, edges, e), cx0, cy0, cx1, cy1);
  // Clamped so that the sum cannot wrap: one edge above the limit already sends the drawing to all pairs.
  const unsigned long long covered = static_cast<unsigned long long>((cx1 - cx0 + 1) * (cy1 - cy0 + 1));
  cells[e] = covered < limit ? covered : limit;
}

__global__ void list_cells_kernel(const long long* xy, const long long* edges, long long m, GridShape g,
                                  const unsigned long long* offset, unsigned long long* cell_of, long long* edge_of) {
  const long long e = static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x;
  if (e >= m) return;
  long long cx0, cy0, cx1, cy1;
  cell_range(g, load_seg(xy, edges, e), cx0, cy0, cx1, cy1);
  unsigned long long at = offset[e];
  for (long long cy = cy0; cy <= cy1; ++cy)
    for (long long cx = cx0; cx <= cx1; ++cx, ++at) {
      cell_of[at] = static_cast<unsigned long long>(cy * g.nx + cx);
      edge_of[at] = e;
    }
}

// Entry i tests its edge against the later entries of the same cell.
__global__ void cell_pairs_kernel(const long long* xy, const long long* edges, GridShape g,
                                  const unsigned long long* cell_of, const long long* edge_of, long long entries,
                                  unsigned long long* counts) {
  const long long i = static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= entries) return;
  const unsigned long long cell = cell_of[i];
  const Seg a = load_seg(xy, edges, edge_of[i]);
  unsigned long long mine = 0;
  for (long long j = i + 1; j < entries && cell_of[j] == cell; ++j) {
    const long long f = edge_of[j];
    const Seg b = load_seg(xy, edges, f);
    // The pair belongs to the cell of the lower-left corner of the intersection of the boxes.
    const long long ix = max(min(a.x0, a.x1), min(b.x0, b.x1)), iy = max(min(a.y0, a.y1), min(b.y0, b.y1));
    const unsigned long long home =
        static_cast<unsigned long long>(((iy - g.y0) / g.cell) * g.nx + (ix - g.x0) / g.cell);
    if (home != cell || !crosses(a, b)) continue;
    ++mine;
    atomicAdd(&counts[f], 1ull);
  }
  if (mine) atomicAdd(&counts[edge_of[i]], mine);
}

// Returns false (and does nothing) when the boxes cover too many cells: all pairs is then the choice.
bool count_crossings_grid(const long long* xy, const long long* edges, long long m, long long* counts,
                          Device device, cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>((m + kThreads - 1) / kThreads);
  Buffer extent_buf(4 * sizeof(long long), device);
  const long long init[4] = {LLONG_MAX, LLONG_MAX, LLONG_MAX, LLONG_MAX};
  IK_CUDA_CHECK(cudaMemcpyAsync(extent_buf.data(), init, sizeof init, cudaMemcpyHostToDevice, stream));
  extent_kernel<<<blocks, kThreads, 0, stream>>>(xy, edges, m, static_cast<long long*>(extent_buf.data()));
  IK_CUDA_CHECK_LAUNCH("extent_kernel");
  long long extent[4];
  IK_CUDA_CHECK(cudaMemcpyAsync(extent, extent_buf.data(), sizeof extent, cudaMemcpyDeviceToHost, stream));
  IK_CUDA_CHECK(cudaStreamSynchronize(stream));
  // About two cells per edge over the drawing's box.
  GridShape g{extent[0], extent[1], 1, 1, 1};
  const double w = double(-extent[2] - extent[0]) + 1, h = double(-extent[3] - extent[1]) + 1;
  g.cell = std::max<long long>(1, static_cast<long long>(std::ceil(std::sqrt(w * h / (2.0 * m)))));
  g.nx = static_cast<long long>(w / g.cell) + 1, g.ny = static_cast<long long>(h / g.cell) + 1;

  Buffer cells(m * sizeof(unsigned long long), device), offset(m * sizeof(unsigned long long), device);
  auto* cells_p = static_cast<unsigned long long*>(cells.data());
  auto* offset_p = static_cast<unsigned long long*>(offset.data());
  const unsigned long long max_entries = 16ull * static_cast<unsigned long long>(m);
  cells_per_edge_kernel<<<blocks, kThreads, 0, stream>>>(xy, edges, m, g, max_entries + 1, cells_p);
  IK_CUDA_CHECK_LAUNCH("cells_per_edge_kernel");
  std::size_t temp_bytes = 0;
  IK_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, cells_p, offset_p, m, stream));
  Buffer temp(std::max<std::size_t>(temp_bytes, 1), device);
  IK_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.data(), temp_bytes, cells_p, offset_p, m, stream));
  unsigned long long last[2];
  IK_CUDA_CHECK(cudaMemcpyAsync(&last[0], offset_p + m - 1, sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream));
  IK_CUDA_CHECK(cudaMemcpyAsync(&last[1], cells_p + m - 1, sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream));
  IK_CUDA_CHECK(cudaStreamSynchronize(stream));
  const unsigned long long entries = last[0] + last[1];
  if (entries > max_entries) return false;  // long edges: all pairs

  Buffer cell_of(entries * sizeof(unsigned long long), device), edge_of(entries * sizeof(long long), device);
  Buffer cell_sorted(entries * sizeof(unsigned long long), device), edge_sorted(entries * sizeof(long long), device);
  list_cells_kernel<<<blocks, kThreads, 0, stream>>>(xy, edges, m, g, offset_p,
                                                     static_cast<unsigned long long*>(cell_of.data()),
                                                     static_cast<long long*>(edge_of.data()));
  IK_CUDA_CHECK_LAUNCH("list_cells_kernel");
  const int key_bits = std::max(1, 64 - __builtin_clzll(static_cast<unsigned long long>(g.nx * g.ny)));
  std::size_t sort_bytes = 0;
  IK_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, static_cast<unsigned long long*>(cell_of.data()),
                                                static_cast<unsigned long long*>(cell_sorted.data()),
                                                static_cast<long long*>(edge_of.data()),
                                                static_cast<long long*>(edge_sorted.data()),
                                                static_cast<std::int64_t>(entries), 0, key_bits, stream));
  Buffer sort_temp(std::max<std::size_t>(sort_bytes, 1), device);
  IK_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(sort_temp.data(), sort_bytes,
                                                static_cast<unsigned long long*>(cell_of.data()),
                                                static_cast<unsigned long long*>(cell_sorted.data()),
                                                static_cast<long long*>(edge_of.data()),
                                                static_cast<long long*>(edge_sorted.data()),
                                                static_cast<std::int64_t>(entries), 0, key_bits, stream));
  IK_CUDA_CHECK(cudaMemsetAsync(counts, 0, m * sizeof(long long), stream));
  cell_pairs_kernel<<<static_cast<unsigned>((entries + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
      xy, edges, g, static_cast<unsigned long long*>(cell_sorted.data()), static_cast<long long*>(edge_sorted.data()),
      static_cast<long long>(entries), reinterpret_cast<unsigned long long*>(counts));
  IK_CUDA_CHECK_LAUNCH("cell_pairs_kernel");
  IK_CUDA_CHECK(cudaStreamSynchronize(stream));  // the temporary buffers are freed on return
  return true;
}

}  // namespace

void validate_cuda(const std::int64_t* xy, std::int64_t n, const std::int64_t* edges, std::int64_t m, Device device,
                   cudaStream_t stream) {
  if (n == 0 && m == 0) return;
  Buffer flag(sizeof(unsigned long long), device);
  IK_CUDA_CHECK(cudaMemsetAsync(flag.data(), 0xff, sizeof(unsigned long long), stream));
  const long long items = n > m ? n : m;
  validate_kernel<<<static_cast<unsigned>((items + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
      reinterpret_cast<const long long*>(xy), n, reinterpret_cast<const long long*>(edges), m,
      static_cast<unsigned long long*>(flag.data()));
  IK_CUDA_CHECK_LAUNCH("validate_kernel");
  unsigned long long first = 0;
  IK_CUDA_CHECK(cudaMemcpyAsync(&first, flag.data(), sizeof first, cudaMemcpyDeviceToHost, stream));
  IK_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (first == ~0ull) return;
  // Bring the offending pair back and let the host checks word the error.
  const bool is_edge = first >> 62;
  const std::int64_t index = static_cast<std::int64_t>(first & ((1ull << 62) - 1));
  std::int64_t pair[2];
  IK_CUDA_CHECK(cudaMemcpy(pair, (is_edge ? edges : xy) + 2 * index, sizeof pair, cudaMemcpyDeviceToHost));
  if (is_edge) check_edge(index, pair[0], pair[1], n);
  check_vertex_coordinates(index, pair[0], pair[1]);
}

void count_crossings_cuda(const std::int64_t* xy, const std::int64_t* edges, std::int64_t m, std::int64_t* counts,
                          Device device, cudaStream_t stream) {
  if (m == 0) return;
  if (m >= kGridFromEdges &&
      count_crossings_grid(reinterpret_cast<const long long*>(xy), reinterpret_cast<const long long*>(edges), m,
                           reinterpret_cast<long long*>(counts), device, stream))
    return;
  const long long blocks = (m + kThreads - 1) / kThreads;
  count_crossings_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      reinterpret_cast<const long long*>(xy), reinterpret_cast<const long long*>(edges), m,
      reinterpret_cast<long long*>(counts));
  IK_CUDA_CHECK_LAUNCH("count_crossings_kernel");
}

}  // namespace ironkernels::lcn::detail
