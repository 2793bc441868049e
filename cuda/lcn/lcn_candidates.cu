// GpuEvaluator: a drawing's per-edge crossing counts in device memory, exact vertex moves, and
// batched candidate positions for one vertex in one launch. The predicates are the CPU evaluator's
// (cpp/src/lcn/predicates.hpp, exact int64), so the figures equal Evaluator's.
//
// A candidate q for vertex v changes only the crossings of v's edges (v, w_j): with
//   base[f] = counts[f] - #{j : (p_v, w_j) crosses f}      for every edge f not incident to v,
// edge f has base[f] + #{j : (q, w_j) crosses f} crossings after the move, and v's edge j has the
// number of edges its new segment crosses. One block takes kCandidates candidates: its threads sweep
// the edges (and then the vertices, for legality) once for all of them.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/cuda_check.hpp"
#include "ironkernels/core/runtime.hpp"
#include "ironkernels/lcn.hpp"
#include "lcn/lcn_internal.hpp"
#include "lcn/predicates.hpp"

namespace ironkernels::lcn {
namespace {
using detail::cross_properly;
using detail::on_segment;
using detail::merge_k;  // (max, how many reach it) of partial reductions
using Pt = detail::Point;

constexpr long long kIncident = -1;  // base[] of an edge incident to the moving vertex
constexpr int kThreads = 256;
constexpr int kCandidates = 8;  // candidates per block

struct Neighbor {  // v's edge e to its neighbour w (at wx, wy)
  long long w, e, wx, wy;
};

__device__ __forceinline__ Pt point(const long long* xy, long long u) { return {xy[2 * u], xy[2 * u + 1]}; }

__global__ void base_kernel(const long long* xy, const long long* edges, const long long* counts, long long m,
                            long long v, const Neighbor* nbr, int deg, long long* base) {
  const long long f = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (f >= m) return;
  const long long s = edges[2 * f], t = edges[2 * f + 1];
  if (s == v || t == v) {
    base[f] = kIncident;
    return;
  }
  const Pt c = point(xy, s), d = point(xy, t), pv = point(xy, v);
  long long b = counts[f];
  for (int j = 0; j < deg; ++j) {
    if (s == nbr[j].w || t == nbr[j].w) continue;  // shares an endpoint: never crosses
    b -= cross_properly(pv, Pt{nbr[j].wx, nbr[j].wy}, c, d);
  }
  base[f] = b;
}

__global__ void __launch_bounds__(kThreads) candidates_kernel(
    const long long* __restrict__ xy, long long n, const long long* __restrict__ edges,
    const long long* __restrict__ base, long long m, long long v, const Neighbor* __restrict__ nbr, int deg,
    const long long* __restrict__ cand, long long count, long long width, long long height,
    long long* __restrict__ best, int* __restrict__ inc, int* __restrict__ illegal) {
  __shared__ long long qx[kCandidates], qy[kCandidates];
  __shared__ int bad[kCandidates];
  __shared__ long long red_max[kThreads / 32][kCandidates], red_cnt[kThreads / 32][kCandidates];
  const long long c0 = static_cast<long long>(blockIdx.x) * kCandidates;
  if (threadIdx.x < kCandidates) {
    const long long c = c0 + threadIdx.x;
    const bool real = c < count;
    qx[threadIdx.x] = real ? cand[2 * c] : 0;
    qy[threadIdx.x] = real ? cand[2 * c + 1] : 0;
    bad[threadIdx.x] = real && (qx[threadIdx.x] < 0 || qx[threadIdx.x] > width || qy[threadIdx.x] < 0 ||
                                qy[threadIdx.x] > height);
  }
  __syncthreads();
  long long mx[kCandidates], cnt[kCandidates];
#pragma unroll
  for (int k = 0; k < kCandidates; ++k) mx[k] = -1, cnt[k] = 0;

  // Warp-uniform sweep (every lane runs every iteration, so the ballots see the whole warp): a
  // crossing of v's new edge j is counted once per warp and candidate, by lane 0, as the ballot's
  // population; per-crossing atomics were the bottleneck on drawings with many crossings.
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (long long f0 = 0; f0 < m; f0 += kThreads) {
    const long long f = f0 + threadIdx.x;
    const long long b = f < m ? base[f] : kIncident;
    const bool active = b != kIncident;  // v's own edges are counted through `inc`
    const long long s = active ? edges[2 * f] : -1, t = active ? edges[2 * f + 1] : -1;
    const Pt c = active ? point(xy, s) : Pt{0, 0}, d = active ? point(xy, t) : Pt{0, 0};
    const detail::Box box = detail::box_of(c, d);
#pragma unroll
    for (int k = 0; k < kCandidates; ++k) {
      const Pt q{qx[k], qy[k]};
      if (active && on_segment(q, c, d)) bad[k] = 1;
      long long now = b;
      for (int j = 0; j < deg; ++j) {
        const Pt w{nbr[j].wx, nbr[j].wy};
        const bool crosses = active && s != nbr[j].w && t != nbr[j].w &&
                             detail::boxes_meet(detail::box_of(q, w), box) && cross_properly(q, w, c, d);
        now += crosses;
        const unsigned votes = __ballot_sync(0xffffffffu, crosses);
        if (lane == 0 && votes && c0 + k < count) atomicAdd(&inc[(c0 + k) * deg + j], __popc(votes));
      }
      if (active) merge_k(mx[k], cnt[k], now, 1LL);
    }
  }
  // Legality against the vertices: none at q, none on v's new edges.
  for (long long u = threadIdx.x; u < n; u += kThreads) {
    if (u == v) continue;
    const Pt pu = point(xy, u);
#pragma unroll
    for (int k = 0; k < kCandidates; ++k) {
      const Pt q{qx[k], qy[k]};
      if (pu.x == q.x && pu.y == q.y) bad[k] = 1;
      for (int j = 0; j < deg; ++j)
        if (u != nbr[j].w && on_segment(pu, q, Pt{nbr[j].wx, nbr[j].wy})) bad[k] = 1;
    }
  }
  // Block reduction of (max, count) per candidate.
#pragma unroll
  for (int k = 0; k < kCandidates; ++k) {
    for (int off = 16; off > 0; off >>= 1)
      merge_k(mx[k], cnt[k], __shfl_down_sync(0xffffffffu, mx[k], off), __shfl_down_sync(0xffffffffu, cnt[k], off));
    if (lane == 0) red_max[warp][k] = mx[k], red_cnt[warp][k] = cnt[k];
  }
  __syncthreads();
  if (threadIdx.x < kCandidates && c0 + threadIdx.x < count) {
    const int k = threadIdx.x;
    long long M = -1, C = 0;
    for (int w = 0; w < kThreads / 32; ++w) merge_k(M, C, red_max[w][k], red_cnt[w][k]);
    best[2 * (c0 + k)] = M;
    best[2 * (c0 + k) + 1] = C;
    illegal[c0 + k] = bad[k];
  }
}

// Per candidate: v's edges join the reduction; the total follows from their old and new counts.
__global__ void finalize_kernel(const long long* best, const int* inc, const int* illegal, long long count, int deg,
                                long long total_without_v, long long* out) {
  const long long c = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= count) return;
  long long mx = best[2 * c], cnt = best[2 * c + 1], total = total_without_v;
  for (int j = 0; j < deg; ++j) {
    const long long now = inc[c * deg + j];
    merge_k(mx, cnt, now, 1LL);
    total += now;
  }
  if (mx < 0) mx = 0, cnt = 0;  // no edges at all
  out[4 * c] = mx;
  out[4 * c + 1] = cnt;
  out[4 * c + 2] = total;
  out[4 * c + 3] = !illegal[c];
}

// counts[f] follows v's move for every edge f not incident to v; v's edges count their new crossings.
__global__ void move_kernel(long long* xy, const long long* edges, long long* counts, long long m, long long v, Pt to,
                            const Neighbor* nbr, int deg, int* new_counts) {
  const long long f = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (f >= m) return;
  const long long s = edges[2 * f], t = edges[2 * f + 1];
  if (s == v || t == v) return;
  const Pt c = point(xy, s), d = point(xy, t), from = point(xy, v);
  long long change = 0;
  for (int j = 0; j < deg; ++j) {
    if (s == nbr[j].w || t == nbr[j].w) continue;
    const Pt w{nbr[j].wx, nbr[j].wy};
    const bool now = cross_properly(to, w, c, d);
    change += int(now) - int(cross_properly(from, w, c, d));
    if (now) atomicAdd(&new_counts[j], 1);
  }
  counts[f] += change;
}

__global__ void finish_move_kernel(long long* xy, long long* counts, long long v, Pt to, const Neighbor* nbr, int deg,
                                   const int* new_counts) {
  for (int j = 0; j < deg; ++j) counts[nbr[j].e] = new_counts[j];
  xy[2 * v] = to.x;
  xy[2 * v + 1] = to.y;
}

unsigned blocks(long long items, int per_block) {
  const long long b = (items + per_block - 1) / per_block;
  if (b > 0x7fffffff) raise<ValueError>("lcn: ", items, " items are too many for one launch");
  return static_cast<unsigned>(b < 1 ? 1 : b);
}

template <class T>
T* as(const Buffer& b) {
  return static_cast<T*>(b.data());
}

}  // namespace

struct GpuEvaluator::Impl {
  Device device;
  std::int64_t n = 0, m = 0, width = 0, height = 0;
  std::vector<Pt> p;                                // positions (host mirror)
  std::vector<std::vector<Neighbor>> incident;      // per vertex: its edges and neighbours (without positions)
  Buffer xy, edges, counts, base;
  mutable Buffer scratch;                           // candidates, partial results, neighbour lists

  void* scratch_for(std::size_t bytes) const {
    if (bytes > scratch.bytes()) scratch = Buffer(bytes, device);
    return scratch.data();
  }
  std::vector<Neighbor> neighbors(std::int64_t v) const {
    std::vector<Neighbor> out = incident[v];
    for (auto& nb : out) nb.wx = p[nb.w].x, nb.wy = p[nb.w].y;
    return out;
  }
};

GpuEvaluator::GpuEvaluator(const ArrayView& xy_view, const ArrayView& edges_view, std::int64_t width, std::int64_t height,
                           Device device, Stream stream)
    : impl_(std::make_unique<Impl>()) {
  if (device.type != DeviceType::cuda) raise<ValueError>("lcn: GpuEvaluator needs a CUDA device, got ", device_name(device));
  const std::int64_t* xy = detail::host_pairs(xy_view, "xy");
  const std::int64_t* edges = detail::host_pairs(edges_view, "edges");
  const std::int64_t n = xy_view.shape[0], m = edges_view.shape[0];
  detail::validate_input(xy, n, edges, m, width, height);
  Impl& g = *impl_;
  g.device = device, g.n = n, g.m = m, g.width = width, g.height = height;
  g.p.resize(static_cast<std::size_t>(n));
  for (std::int64_t v = 0; v < n; ++v) g.p[v] = {xy[2 * v], xy[2 * v + 1]};
  g.incident.resize(static_cast<std::size_t>(n));
  for (std::int64_t e = 0; e < m; ++e) {
    const std::int64_t s = edges[2 * e], t = edges[2 * e + 1];
    g.incident[s].push_back({t, e, 0, 0});
    g.incident[t].push_back({s, e, 0, 0});
  }
  DeviceGuard guard(device);
  const std::size_t pair_bytes = sizeof(std::int64_t) * 2;
  g.xy = Buffer(std::max<std::size_t>(1, n * pair_bytes), device);
  g.edges = Buffer(std::max<std::size_t>(1, m * pair_bytes), device);
  g.counts = Buffer(std::max<std::size_t>(1, m * sizeof(std::int64_t)), device);
  g.base = Buffer(std::max<std::size_t>(1, m * sizeof(std::int64_t)), device);
  copy_bytes(g.xy.data(), device, xy, Device{}, n * pair_bytes, stream);
  copy_bytes(g.edges.data(), device, edges, Device{}, m * pair_bytes, stream);
  detail::count_crossings_cuda(as<std::int64_t>(g.xy), as<std::int64_t>(g.edges), m, as<std::int64_t>(g.counts),
                               device, static_cast<cudaStream_t>(stream));
  synchronize_stream(stream, device);
}

GpuEvaluator::~GpuEvaluator() = default;
GpuEvaluator::GpuEvaluator(GpuEvaluator&&) noexcept = default;
GpuEvaluator& GpuEvaluator::operator=(GpuEvaluator&&) noexcept = default;

std::vector<std::int64_t> GpuEvaluator::edge_crossings(Stream stream) const {
  const Impl& g = *impl_;
  std::vector<std::int64_t> out(static_cast<std::size_t>(g.m));
  copy_bytes(out.data(), Device{}, g.counts.data(), g.device, g.m * sizeof(std::int64_t), stream);
  synchronize_stream(stream, g.device);
  return out;
}

void GpuEvaluator::move(std::int64_t v, std::int64_t x, std::int64_t y, Stream stream) {
  Impl& g = *impl_;
  detail::check_vertex_index(v, g.n);
  detail::check_position(x, y);
  DeviceGuard guard(g.device);
  auto s = static_cast<cudaStream_t>(stream);
  const std::vector<Neighbor> nbr = g.neighbors(v);
  const int deg = static_cast<int>(nbr.size());
  auto* scratch = static_cast<unsigned char*>(g.scratch_for(deg * (sizeof(Neighbor) + sizeof(int)) + 256));
  auto* d_nbr = reinterpret_cast<Neighbor*>(scratch);
  auto* d_new = reinterpret_cast<int*>(scratch + deg * sizeof(Neighbor));
  copy_bytes(d_nbr, g.device, nbr.data(), Device{}, deg * sizeof(Neighbor), stream);
  fill_bytes(d_new, g.device, 0, deg * sizeof(int), stream);
  const Pt to{x, y};
  if (g.m) {
    move_kernel<<<blocks(g.m, kThreads), kThreads, 0, s>>>(as<long long>(g.xy), as<long long>(g.edges),
                                                            as<long long>(g.counts), g.m, v, to, d_nbr, deg, d_new);
    IK_CUDA_CHECK_LAUNCH("move_kernel");
  }
  finish_move_kernel<<<1, 1, 0, s>>>(as<long long>(g.xy), as<long long>(g.counts), v, to, d_nbr, deg, d_new);
  IK_CUDA_CHECK_LAUNCH("finish_move_kernel");
  synchronize_stream(stream, g.device);  // the neighbour list in scratch is reused by the next call
  g.p[v] = to;
}

std::vector<CandidateFigures> GpuEvaluator::candidates(std::int64_t v, const ArrayView& xy_view, Stream stream) const {
  const Impl& g = *impl_;
  detail::check_vertex_index(v, g.n);
  const std::int64_t* xy = detail::host_pairs(xy_view, "xy");
  const std::int64_t count = xy_view.shape[0];
  detail::check_candidates(xy, count);
  std::vector<CandidateFigures> out(static_cast<std::size_t>(count));
  if (count == 0) return out;
  DeviceGuard guard(g.device);
  auto s = static_cast<cudaStream_t>(stream);
  const std::vector<Neighbor> nbr = g.neighbors(v);
  const int deg = static_cast<int>(nbr.size());
  // Total crossings without v's edges, from the current counts (v's edges never cross each other).
  const std::vector<std::int64_t> counts = edge_crossings(stream);
  std::int64_t total2 = 0, v_edges = 0;
  for (std::int64_t c : counts) total2 += c;
  for (const auto& nb : nbr) v_edges += counts[nb.e];
  const std::int64_t total_without_v = total2 / 2 - v_edges;

  // Chunks of candidates bound the scratch memory (inc holds one int per candidate and v's edge).
  const std::int64_t chunk = std::min<std::int64_t>(count, std::max<std::int64_t>(4096, (std::int64_t(64) << 20) / (4 * std::max(deg, 1) + 64)));
  auto align = [](std::size_t b) { return (b + 255) / 256 * 256; };
  const std::size_t nbr_bytes = align(deg * sizeof(Neighbor)), cand_bytes = align(chunk * 16), best_bytes = align(chunk * 16),
                    inc_bytes = align(chunk * std::max(deg, 1) * sizeof(int)), ill_bytes = align(chunk * sizeof(int)),
                    out_bytes = align(chunk * 32);
  auto* base = static_cast<unsigned char*>(
      g.scratch_for(nbr_bytes + cand_bytes + best_bytes + inc_bytes + ill_bytes + out_bytes));
  auto* d_nbr = reinterpret_cast<Neighbor*>(base);
  auto* d_cand = reinterpret_cast<long long*>(base + nbr_bytes);
  auto* d_best = reinterpret_cast<long long*>(base + nbr_bytes + cand_bytes);
  auto* d_inc = reinterpret_cast<int*>(base + nbr_bytes + cand_bytes + best_bytes);
  auto* d_ill = reinterpret_cast<int*>(base + nbr_bytes + cand_bytes + best_bytes + inc_bytes);
  auto* d_out = reinterpret_cast<long long*>(base + nbr_bytes + cand_bytes + best_bytes + inc_bytes + ill_bytes);
  copy_bytes(d_nbr, g.device, nbr.data(), Device{}, deg * sizeof(Neighbor), stream);
  if (g.m) {
    base_kernel<<<blocks(g.m, kThreads), kThreads, 0, s>>>(as<long long>(g.xy), as<long long>(g.edges),
                                                            as<long long>(g.counts), g.m, v, d_nbr, deg,
                                                            as<long long>(g.base));
    IK_CUDA_CHECK_LAUNCH("base_kernel");
  }
  std::vector<long long> figures(static_cast<std::size_t>(chunk) * 4);
  for (std::int64_t c0 = 0; c0 < count; c0 += chunk) {
    const std::int64_t len = std::min(chunk, count - c0);
    copy_bytes(d_cand, g.device, xy + 2 * c0, Device{}, len * 16, stream);
    fill_bytes(d_inc, g.device, 0, len * std::max(deg, 1) * sizeof(int), stream);
    candidates_kernel<<<blocks(len, kCandidates), kThreads, 0, s>>>(
        as<long long>(g.xy), g.n, as<long long>(g.edges), as<long long>(g.base), g.m, v, d_nbr, deg, d_cand, len,
        g.width, g.height, d_best, d_inc, d_ill);
    IK_CUDA_CHECK_LAUNCH("candidates_kernel");
    finalize_kernel<<<blocks(len, kThreads), kThreads, 0, s>>>(d_best, d_inc, d_ill, len, deg, total_without_v, d_out);
    IK_CUDA_CHECK_LAUNCH("finalize_kernel");
    copy_bytes(figures.data(), Device{}, d_out, g.device, len * 32, stream);
    synchronize_stream(stream, g.device);
    for (std::int64_t c = 0; c < len; ++c) {
      CandidateFigures& f = out[c0 + c];
      f.k = figures[4 * c];
      f.edges_at_k = figures[4 * c + 1];
      f.total_crossings = figures[4 * c + 2];
      f.legal = figures[4 * c + 3] != 0;
    }
  }
  return out;
}

}  // namespace ironkernels::lcn
