// The annealer's chains on a CUDA device: one thread block per chain, every chain's drawing, crossing
// counts and best drawing resident in device memory. A round is one launch in which each block runs
// its chain's moves back to back — propose (thread 0), score (the block sweeps the vertices and the
// edges), accept (thread 0), apply and refresh (the block) — so no move waits for the host. The host
// reads the chains' best figures between rounds (anneal_driver.cpp).
//
// The per-move logic is the CPU chains' (anneal_cpu.cpp) step for step: the same proposals and
// acceptance (anneal_common.hpp), integer energies summed exactly, the edges at k listed in edge order,
// so a chain follows the same path on both backends.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/cuda_check.hpp"
#include "ironkernels/core/error.hpp"
#include "ironkernels/core/runtime.hpp"
#include "ironkernels/lcn_solve.hpp"
#include "lcn/anneal_driver.hpp"
#include "lcn/lcn_internal.hpp"

namespace ironkernels::lcn {
namespace anneal {
namespace {

using detail::on_segment;
using Pt = detail::Point;

struct ChainState {
  std::uint64_t rng;
  long long target, penalty;
  long long cur_k, cur_at, cur_total;
  long long best_k, best_at, best_total;
  int hot_count;
};

// The chains' arrays, chain c's slice at c * n2 (2n coordinates) or c * m (per edge).
struct Chains {
  int* pos;
  int* best_pos;
  int* counts;
  int* best_counts;
  int* delta;
  int* hot;
  ChainState* state;
};

// One chain's slices of the arrays.
struct Chain {
  int *pos, *best_pos, *counts, *best_counts, *delta, *hot;
};

struct Graph {
  int n, m;
  const int* ends;
  const int* first;
  const int* neighbour;
  const int* edge;
  const double* log_table;
  __device__ GraphView view() const { return {n, m, ends, first, neighbour, edge}; }
};

__device__ Chain slice(const Chains& c, const Graph& g, int chain) {
  const long long p = 2LL * g.n * chain, e = static_cast<long long>(g.m) * chain;
  return {c.pos + p, c.best_pos + p, c.counts + e, c.best_counts + e, c.delta + e, c.hot + e};
}

// The sign of the orientation of (a, b, c): the predicates' orientation() on int32 coordinates in [0, 2^30],
// whose differences fit int32 and whose products take one widening multiply each (exact, like int64).
__device__ __forceinline__ int orient(int ax, int ay, int bx, int by, int cx, int cy) {
  const long long d = static_cast<long long>(bx - ax) * (cy - ay) - static_cast<long long>(by - ay) * (cx - ax);
  return (d > 0) - (d < 0);
}
// c and d strictly on opposite sides of the line through a and b.
__device__ __forceinline__ bool opposite(int ax, int ay, int bx, int by, int cx, int cy, int dx, int dy) {
  const int oc = orient(ax, ay, bx, by, cx, cy), od = orient(ax, ay, bx, by, dx, dy);
  return oc != 0 && od != 0 && oc != od;
}

template <class T>
__device__ T block_sum(T v, T* scratch) {  // scratch: 32 entries; every thread gets the sum
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  T s = 0;
  for (int w = 0; w < warps; ++w) s += scratch[w];
  return s;
}

// The fixed part of a block's shared memory (v's neighbours follow it, in dynamic shared memory).
struct Shared {
  Proposal q;
  int skip, accepted, deg;
  int box[8];  // x0, y0, x1, y1 around v's old point and its neighbours; then around the new point and them
  ChainState st;
  long long lscratch[32];
  int iscratch[32], iscratch2[32];
};

// The current figures and the edges at the current k, in edge order. Each warp takes a contiguous range
// of edges, so that the ordered compaction needs one block barrier, not two per blockDim edges.
__device__ void refresh(const int* counts, int m, int* hot, Shared& sh) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const int per = ((m + warps - 1) / warps + 31) / 32 * 32;
  const int f_begin = min(m, warp * per), f_end = min(m, f_begin + per);
  int mx = 0;
  long long total = 0;
  for (int f = f_begin + lane; f < f_end; f += 32) mx = max(mx, counts[f]), total += counts[f];
  for (int o = 16; o > 0; o >>= 1) mx = max(mx, __shfl_xor_sync(0xffffffffu, mx, o));
  int at = 0;
  for (int f = f_begin + lane; f < f_end; f += 32) at += counts[f] == mx;
  for (int o = 16; o > 0; o >>= 1) {
    at += __shfl_xor_sync(0xffffffffu, at, o);
    total += __shfl_xor_sync(0xffffffffu, total, o);
  }
  __syncthreads();  // the scratch arrays are free
  if (lane == 0) sh.iscratch[warp] = mx, sh.iscratch2[warp] = at, sh.lscratch[warp] = total;
  __syncthreads();
  int k = 0;
  for (int w = 0; w < warps; ++w) k = max(k, sh.iscratch[w]);
  int before = 0, at_k = 0;
  long long sum = 0;
  for (int w = 0; w < warps; ++w) {
    const int c = sh.iscratch[w] == k ? sh.iscratch2[w] : 0;
    before += w < warp ? c : 0;
    at_k += c;
    sum += sh.lscratch[w];
  }
  if (mx == k)
    for (int f0 = f_begin; f0 < f_end; f0 += 32) {
      const int f = f0 + lane;
      const bool hit = f < f_end && counts[f] == k;
      const unsigned votes = __ballot_sync(0xffffffffu, hit);
      if (hit) hot[before + __popc(votes & ((1u << lane) - 1u))] = f;
      before += __popc(votes);
    }
  if (threadIdx.x == 0) {
    sh.st.cur_k = k;
    sh.st.cur_at = at_k;
    sh.st.cur_total = sum / 2;
    sh.st.hot_count = at_k;
  }
  __syncthreads();
}

// v's neighbours as a move reads them (shared memory): vertex, position, edge, and its new crossing count.
struct Star {
  int *w, *x, *y, *e, *inc;
};

// Loads v's neighbours; warp 0 also takes the boxes around v's old and new point and its neighbours, which
// cull the edges and vertices that a move cannot touch. Ends with a block barrier.
__device__ Star load_star(const Graph& g, const int* pos, Proposal q, int deg, int* smem, Shared& sh) {
  const Star nb{smem, smem + deg, smem + 2 * deg, smem + 3 * deg, smem + 4 * deg};
  const int b = g.first[q.v];
  for (int j = threadIdx.x; j < deg; j += blockDim.x) {
    const int w = g.neighbour[b + j];
    nb.w[j] = w, nb.x[j] = pos[2 * w], nb.y[j] = pos[2 * w + 1], nb.e[j] = g.edge[b + j], nb.inc[j] = 0;
  }
  if (threadIdx.x < 32) {
    int x0 = INT_MAX, y0 = INT_MAX, x1 = INT_MIN, y1 = INT_MIN;
    for (int j = threadIdx.x; j < deg; j += 32) {
      const int w = g.neighbour[b + j], x = pos[2 * w], y = pos[2 * w + 1];
      x0 = min(x0, x), y0 = min(y0, y), x1 = max(x1, x), y1 = max(y1, y);
    }
    for (int o = 16; o > 0; o >>= 1) {
      x0 = min(x0, __shfl_xor_sync(0xffffffffu, x0, o)), y0 = min(y0, __shfl_xor_sync(0xffffffffu, y0, o));
      x1 = max(x1, __shfl_xor_sync(0xffffffffu, x1, o)), y1 = max(y1, __shfl_xor_sync(0xffffffffu, y1, o));
    }
    if (threadIdx.x == 0) {
      const int ox = pos[2 * q.v], oy = pos[2 * q.v + 1];
      sh.box[0] = min(x0, ox), sh.box[1] = min(y0, oy), sh.box[2] = max(x1, ox), sh.box[3] = max(y1, oy);
      sh.box[4] = min(x0, q.x), sh.box[5] = min(y0, q.y), sh.box[6] = max(x1, q.x), sh.box[7] = max(y1, q.y);
    }
  }
  __syncthreads();
  return nb;
}

// Scores moving q.v to (q.x, q.y) on the drawing pos with crossing counts cnt, with the whole block: false
// (in every thread) if the move is illegal; else true, the energy rise in `rise` (every thread), each other
// edge's change in delta and the new counts of v's edges in nb.inc. Ends with a block barrier.
__device__ bool score_move(const Graph& g, const int* pos, const int* cnt, int* delta, Proposal q, int deg,
                           const Star& nb, long long target, long long penalty, Shared& sh, long long& rise) {
  const int old_x = pos[2 * q.v], old_y = pos[2 * q.v + 1];
  const int lane = threadIdx.x & 31;
  const int nx0 = sh.box[4], ny0 = sh.box[5], nx1 = sh.box[6], ny1 = sh.box[7];
  // Legality against the vertices: none at the new point, none on v's new edges.
  bool bad = false;
  for (int u = threadIdx.x; u < g.n && !bad; u += blockDim.x) {
    const Pt pu{pos[2 * u], pos[2 * u + 1]};
    if (u == q.v || pu.x < nx0 || pu.x > nx1 || pu.y < ny0 || pu.y > ny1) continue;
    if (pu.x == q.x && pu.y == q.y) bad = true;
    for (int j = 0; j < deg && !bad; ++j)
      if (u != nb.w[j] && on_segment(pu, Pt{q.x, q.y}, Pt{nb.x[j], nb.y[j]})) bad = true;
  }
  if (__syncthreads_or(bad)) return false;
  const int sx0 = min(sh.box[0], nx0), sy0 = min(sh.box[1], ny0), sx1 = max(sh.box[2], nx1), sy1 = max(sh.box[3], ny1);
  long long local = 0;
  // The loop is warp-uniform (f0 is the warp's first edge), so that the votes below take whole warps.
  for (int f0 = threadIdx.x - lane; f0 < g.m; f0 += blockDim.x) {
    const int f = f0 + lane;
    int s = q.v, t = q.v;
    if (f < g.m) s = g.ends[2 * f], t = g.ends[2 * f + 1];
    const bool other = s != q.v && t != q.v;  // v's own edges are counted through nb.inc
    int cx = 0, cy = 0, dx = 0, dy = 0;
    if (other) cx = pos[2 * s], cy = pos[2 * s + 1], dx = pos[2 * t], dy = pos[2 * t + 1];
    const int x0 = min(cx, dx), x1 = max(cx, dx), y0 = min(cy, dy), y1 = max(cy, dy);
    const bool on = other && x0 <= q.x && q.x <= x1 && y0 <= q.y && q.y <= y1 && orient(cx, cy, dx, dy, q.x, q.y) == 0;
    if (__any_sync(0xffffffffu, on)) {  // v's new point on edge f
      bad = bad || on;
      break;
    }
    // Edges outside the box around v's star cross none of its edges, old or new.
    const bool near = other && x0 <= sx1 && sx0 <= x1 && y0 <= sy1 && sy0 <= y1;
    int change = 0;
    if (__any_sync(0xffffffffu, near)) {
      // cross_properly(v, w, c, d) with the orientations of v's two positions against line cd taken once
      // per edge and that of w once per neighbour; int32 differences (|.| <= 2^30) and widening products.
      const int o_old = near ? orient(cx, cy, dx, dy, old_x, old_y) : 0;
      const int o_new = near ? orient(cx, cy, dx, dy, q.x, q.y) : 0;
      for (int j = 0; j < deg; ++j) {
        const int w = nb.w[j];
        bool was = false, now = false;
        if (near && s != w && t != w) {
          const int wx = nb.x[j], wy = nb.y[j];
          const bool old_meets = min(old_x, wx) <= x1 && x0 <= max(old_x, wx) && min(old_y, wy) <= y1 && y0 <= max(old_y, wy);
          const bool new_meets = min(q.x, wx) <= x1 && x0 <= max(q.x, wx) && min(q.y, wy) <= y1 && y0 <= max(q.y, wy);
          if (old_meets || new_meets) {
            const int o_w = orient(cx, cy, dx, dy, wx, wy);
            if (o_w != 0) {  // w on line cd: neither segment crosses cd properly
              was = old_meets && o_old != 0 && o_old != o_w && opposite(old_x, old_y, wx, wy, cx, cy, dx, dy);
              now = new_meets && o_new != 0 && o_new != o_w && opposite(q.x, q.y, wx, wy, cx, cy, dx, dy);
            }
          }
        }
        change += static_cast<int>(now) - static_cast<int>(was);
        if (now) atomicAdd(&nb.inc[j], 1);
      }
    }
    if (f < g.m) delta[f] = change;  // 0 for v's own edges
    if (change != 0) local += edge_energy(cnt[f] + change, target, penalty) - edge_energy(cnt[f], target, penalty);
  }
  if (__syncthreads_or(bad)) return false;  // also completes nb.inc
  for (int j = threadIdx.x; j < deg; j += blockDim.x)
    local += edge_energy(nb.inc[j], target, penalty) - edge_energy(cnt[nb.e[j]], target, penalty);
  rise = block_sum(local, sh.lscratch);
  return true;
}

__global__ void start_kernel(Graph g, Chains c, const int* xy, const int* counts, std::uint64_t seed) {
  const int chain = blockIdx.x;
  const long long n2 = 2LL * g.n;
  const Chain k = slice(c, g, chain);
  for (long long i = threadIdx.x; i < n2; i += blockDim.x) k.pos[i] = k.best_pos[i] = xy[i];
  for (int f = threadIdx.x; f < g.m; f += blockDim.x) k.counts[f] = k.best_counts[f] = counts[f];
  __syncthreads();
  __shared__ Shared sh;
  if (threadIdx.x == 0) sh.st = ChainState{};
  __syncthreads();
  refresh(k.counts, g.m, k.hot, sh);
  if (threadIdx.x == 0) {
    ChainState st = sh.st;
    st.rng = chain_seed(seed, chain);
    st.best_k = st.cur_k, st.best_at = st.cur_at, st.best_total = st.cur_total;
    st.target = st.best_k - 1;
    st.penalty = 0;
    sh.st = st;
  }
  __syncthreads();
  if (threadIdx.x == 0) c.state[chain] = sh.st;
}

// Chain c continues from chain from[c]'s best (read from a copy of the sources' best arrays, taken
// before any chain is overwritten).
__global__ void restart_kernel(Graph g, Chains c, const int* from, const int* src_pos, const int* src_counts,
                               const int* src_index, const ChainState* src_state) {
  const int chain = blockIdx.x;
  const int s = from[chain];
  if (s < 0) return;
  const int slot = src_index[chain];
  const long long n2 = 2LL * g.n;
  const Chain k = slice(c, g, chain);
  for (long long i = threadIdx.x; i < n2; i += blockDim.x) k.pos[i] = k.best_pos[i] = src_pos[slot * n2 + i];
  for (int f = threadIdx.x; f < g.m; f += blockDim.x)
    k.counts[f] = k.best_counts[f] = src_counts[static_cast<long long>(slot) * g.m + f];
  __shared__ Shared sh;
  if (threadIdx.x == 0) {
    sh.st = c.state[chain];
    const ChainState& o = src_state[slot];
    sh.st.best_k = o.best_k, sh.st.best_at = o.best_at, sh.st.best_total = o.best_total;
    sh.st.target = sh.st.best_k - 1;
  }
  __syncthreads();
  refresh(k.counts, g.m, k.hot, sh);
  if (threadIdx.x == 0) c.state[chain] = sh.st;
}

__global__ void copy_best_kernel(Graph g, Chains c, const int* sources, int count, int* dst_pos, int* dst_counts) {
  const int slot = blockIdx.x;
  if (slot >= count) return;
  const int chain = sources[slot];
  const long long n2 = 2LL * g.n;
  for (long long i = threadIdx.x; i < n2; i += blockDim.x) dst_pos[slot * n2 + i] = c.best_pos[chain * n2 + i];
  for (int f = threadIdx.x; f < g.m; f += blockDim.x)
    dst_counts[static_cast<long long>(slot) * g.m + f] = c.best_counts[static_cast<long long>(chain) * g.m + f];
}

constexpr int kMaxThreads = 1024;

__global__ void __launch_bounds__(kMaxThreads) round_kernel(Graph g, Chains c, Round round, long long moves) {
  extern __shared__ int nb[];  // deg entries each: w, x, y, edge, new count
  __shared__ Shared sh;
  const int chain = blockIdx.x;
  const long long n2 = 2LL * g.n;
  const Chain mine = slice(c, g, chain);
  int *pos = mine.pos, *best_pos = mine.best_pos, *cnt = mine.counts, *best_cnt = mine.best_counts;
  int *delta = mine.delta, *hot = mine.hot;
  const GraphView view = g.view();
  if (threadIdx.x == 0) {
    sh.st = c.state[chain];
    sh.st.penalty = round.penalty;
  }
  for (long long i = 0; i < moves; ++i) {
    __syncthreads();  // the previous move's shared values are read by every thread
    if (threadIdx.x == 0) {
      Rng rng{sh.st.rng};
      const Proposal q = propose(rng, round, view, pos, hot, sh.st.hot_count);
      sh.st.rng = rng.s;
      sh.q = q;
      sh.deg = g.first[q.v + 1] - g.first[q.v];
      sh.skip = pos[2 * q.v] == q.x && pos[2 * q.v + 1] == q.y;
    }
    __syncthreads();
    if (sh.skip) continue;  // moving to where it is: no change, no random number (as on the CPU)
    const Proposal q = sh.q;
    const int deg = sh.deg;
    const Star star = load_star(g, pos, q, deg, nb, sh);
    long long rise = 0;
    const bool legal = score_move(g, pos, cnt, delta, q, deg, star, sh.st.target, sh.st.penalty, sh, rise);
    if (threadIdx.x == 0) {
      bool ok = legal;
      if (ok) {
        Rng rng{sh.st.rng};
        ok = accept(rng, rise, round.temperature, g.log_table);
        sh.st.rng = rng.s;
      }
      sh.accepted = ok;
    }
    __syncthreads();
    if (!sh.accepted) continue;
    for (int f = threadIdx.x; f < g.m; f += blockDim.x) cnt[f] += delta[f];
    __syncthreads();
    for (int j = threadIdx.x; j < deg; j += blockDim.x) cnt[star.e[j]] = star.inc[j];
    if (threadIdx.x == 0) pos[2 * q.v] = q.x, pos[2 * q.v + 1] = q.y;
    __syncthreads();
    refresh(cnt, g.m, hot, sh);
    const ChainState& st = sh.st;
    if (better(st.cur_k, st.cur_at, st.cur_total, st.best_k, st.best_at, st.best_total)) {
      for (long long k = threadIdx.x; k < n2; k += blockDim.x) best_pos[k] = pos[k];
      for (int f = threadIdx.x; f < g.m; f += blockDim.x) best_cnt[f] = cnt[f];
      __syncthreads();
      if (threadIdx.x == 0) {
        sh.st.best_k = sh.st.cur_k, sh.st.best_at = sh.st.cur_at, sh.st.best_total = sh.st.cur_total;
        sh.st.target = min(sh.st.target, sh.st.best_k - 1);
      }
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) c.state[chain] = sh.st;
}

// The first-phase energy rises of count proposals on the input drawing xy (kIllegalMove where illegal):
// block b scores proposals b, b + gridDim.x, ... with chain b's delta as scratch.
__global__ void __launch_bounds__(kMaxThreads) probe_kernel(Graph g, Chains c, const int* xy, const int* counts,
                                                            const Proposal* q, int count, long long* rises) {
  extern __shared__ int nb[];
  __shared__ Shared sh;
  int* delta = slice(c, g, blockIdx.x).delta;
  for (int i = blockIdx.x; i < count; i += gridDim.x) {
    const Proposal p = q[i];
    if (xy[2 * p.v] == p.x && xy[2 * p.v + 1] == p.y) {
      if (threadIdx.x == 0) rises[i] = 0;
      continue;
    }
    __syncthreads();  // the previous proposal's star is read by every thread
    const Star star = load_star(g, xy, p, g.first[p.v + 1] - g.first[p.v], nb, sh);
    long long rise = 0;
    const bool legal = score_move(g, xy, counts, delta, p, g.first[p.v + 1] - g.first[p.v], star, 0, 0, sh, rise);
    if (threadIdx.x == 0) rises[i] = legal ? rise : kIllegalMove;
  }
}

template <class T>
T* device_array(Buffer& b, std::size_t count, Device d) {
  b = Buffer(std::max<std::size_t>(count, 1) * sizeof(T), d);
  return static_cast<T*>(b.data());
}

class CudaBackend final : public Backend {
 public:
  CudaBackend(const Problem& p, Device device, cudaStream_t stream)
      : p_(p), device_(device), stream_(stream), start_(device), stop_(device) {
    const std::vector<double> table = log_table();
    g_.n = p.n;
    g_.m = p.m;
    g_.ends = upload(ends_, p.ends);
    g_.first = upload(first_, p.first);
    g_.neighbour = upload(neighbour_, p.neighbour);
    g_.edge = upload(edge_, p.edge);
    g_.log_table = upload(log_table_, table);
    xy0_ = upload(xy_buf_, p.xy);
    counts0_ = upload(counts_buf_, p.counts);
    threads_ = block_threads(p.m);
  }

  // A chain's moves run one after another, so a large drawing gets a whole SM per chain (up to 1024
  // threads, ~16 edges each), and a small one a warp, with many chains per SM.
  static int block_threads(std::int64_t m) {
    const std::int64_t t = (m / 16 + 31) / 32 * 32;
    return static_cast<int>(std::max<std::int64_t>(32, std::min<std::int64_t>(kMaxThreads, t)));
  }
  static std::int64_t chains_per_sm(int threads) { return std::max(1, std::min(16, kMaxThreads / threads)); }

  void start(std::int64_t chains, std::uint64_t seed) override {
    chains_ = chains;
    const std::size_t n2 = 2 * static_cast<std::size_t>(p_.n), m = static_cast<std::size_t>(p_.m);
    c_.pos = device_array<int>(pos_, n2 * chains, device_);
    c_.best_pos = device_array<int>(best_pos_, n2 * chains, device_);
    c_.counts = device_array<int>(cnt_, m * chains, device_);
    c_.best_counts = device_array<int>(best_cnt_, m * chains, device_);
    c_.delta = device_array<int>(delta_, m * chains, device_);
    c_.hot = device_array<int>(hot_, m * chains, device_);
    c_.state = device_array<ChainState>(state_, chains, device_);
    start_kernel<<<static_cast<unsigned>(chains), threads_, 0, stream_>>>(g_, c_, xy0_, counts0_, seed);
    IK_CUDA_CHECK_LAUNCH("lcn anneal start_kernel");
    smem_ = 5 * sizeof(int) * static_cast<std::size_t>(std::max(p_.max_degree, 1));
    if (smem_ > 48 * 1024)
      for (const void* kernel : {reinterpret_cast<const void*>(round_kernel), reinterpret_cast<const void*>(probe_kernel)})
        IK_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem_)));
  }

  std::vector<std::int64_t> probe(const std::vector<Proposal>& q, int) override {
    if (q.empty()) return {};
    Buffer b_q, b_rises;
    const Proposal* d_q = upload(b_q, q);
    long long* d_rises = device_array<long long>(b_rises, q.size(), device_);
    const auto blocks = static_cast<unsigned>(std::min<std::int64_t>(chains_, static_cast<std::int64_t>(q.size())));
    probe_kernel<<<blocks, threads_, smem_, stream_>>>(g_, c_, xy0_, counts0_, d_q, static_cast<int>(q.size()), d_rises);
    IK_CUDA_CHECK_LAUNCH("lcn anneal probe_kernel");
    std::vector<std::int64_t> rises(q.size());
    copy_bytes(rises.data(), Device{}, d_rises, device_, rises.size() * sizeof(long long), stream_);
    synchronize_stream(stream_, device_);
    return rises;
  }

  void run_round(const Round& round, std::int64_t moves) override {
    start_.record(stream_);
    round_kernel<<<static_cast<unsigned>(chains_), threads_, smem_, stream_>>>(g_, c_, round, moves);
    IK_CUDA_CHECK_LAUNCH("lcn anneal round_kernel");
    stop_.record(stream_);
    stop_.synchronize();
    busy_ += stop_.elapsed_ms_since(start_) * 1e-3;
  }

  std::vector<Figures> bests() override {
    std::vector<ChainState> st(static_cast<std::size_t>(chains_));
    copy_bytes(st.data(), Device{}, c_.state, device_, st.size() * sizeof(ChainState), stream_);
    synchronize_stream(stream_, device_);
    std::vector<Figures> b;
    for (const ChainState& s : st) b.push_back({s.best_k, s.best_at, s.best_total});
    return b;
  }

  void restart(const std::vector<std::int32_t>& from) override {
    std::vector<std::int32_t> sources, index(from.size(), -1), slot_of(from.size(), -1);
    for (std::size_t c = 0; c < from.size(); ++c)
      if (from[c] >= 0) {
        if (slot_of[from[c]] < 0) slot_of[from[c]] = static_cast<std::int32_t>(sources.size()), sources.push_back(from[c]);
        index[c] = slot_of[from[c]];
      }
    if (sources.empty()) return;
    const std::size_t n2 = 2 * static_cast<std::size_t>(p_.n), m = static_cast<std::size_t>(p_.m), s = sources.size();
    Buffer b_from, b_index, b_sources, b_pos, b_cnt, b_state;
    int* d_from = upload(b_from, from);
    int* d_index = upload(b_index, index);
    int* d_sources = upload(b_sources, sources);
    int* d_pos = device_array<int>(b_pos, n2 * s, device_);
    int* d_cnt = device_array<int>(b_cnt, m * s, device_);
    copy_best_kernel<<<static_cast<unsigned>(s), threads_, 0, stream_>>>(g_, c_, d_sources, static_cast<int>(s), d_pos, d_cnt);
    IK_CUDA_CHECK_LAUNCH("lcn anneal copy_best_kernel");
    std::vector<ChainState> all(static_cast<std::size_t>(chains_)), src(s);
    copy_bytes(all.data(), Device{}, c_.state, device_, all.size() * sizeof(ChainState), stream_);
    synchronize_stream(stream_, device_);
    for (std::size_t i = 0; i < s; ++i) src[i] = all[sources[i]];
    ChainState* d_state = upload(b_state, src);
    restart_kernel<<<static_cast<unsigned>(chains_), threads_, 0, stream_>>>(g_, c_, d_from, d_pos, d_cnt, d_index, d_state);
    IK_CUDA_CHECK_LAUNCH("lcn anneal restart_kernel");
    synchronize_stream(stream_, device_);  // the temporary buffers die here
  }

  std::vector<std::int32_t> best_drawing(std::int64_t c) override {
    std::vector<std::int32_t> xy(2 * static_cast<std::size_t>(p_.n));
    copy_bytes(xy.data(), Device{}, c_.best_pos + c * 2 * static_cast<std::int64_t>(p_.n), device_, xy.size() * sizeof(int),
               stream_);
    synchronize_stream(stream_, device_);
    return xy;
  }

  double busy_seconds() override { return busy_; }

 private:
  template <class T>
  T* upload(Buffer& b, const std::vector<T>& v) {
    T* d = device_array<T>(b, v.size(), device_);
    if (!v.empty()) copy_bytes(d, device_, v.data(), Device{}, v.size() * sizeof(T), stream_);
    synchronize_stream(stream_, device_);  // v may be a temporary
    return d;
  }

  const Problem& p_;
  Device device_;
  cudaStream_t stream_;
  Event start_, stop_;
  Graph g_{};
  Chains c_{};
  Buffer ends_, first_, neighbour_, edge_, log_table_, xy_buf_, counts_buf_;
  Buffer pos_, best_pos_, cnt_, best_cnt_, delta_, hot_, state_;
  const int* xy0_ = nullptr;
  const int* counts0_ = nullptr;
  int threads_ = 32;
  std::size_t smem_ = 0;
  std::int64_t chains_ = 0;
  double busy_ = 0;
};

}  // namespace
}  // namespace anneal

SolveResult solve_cuda(const ArrayView& xy_view, const ArrayView& edge_view, std::int64_t width, std::int64_t height,
                       const SolveOptions& options, Device device, Stream stream, const SolveCallback& callback) {
  if (device.type != DeviceType::cuda) raise<ValueError>("lcn.solve: solve_cuda needs a CUDA device");
  const std::int64_t* xy = detail::host_pairs(xy_view, "xy");
  const std::int64_t* edges = detail::host_pairs(edge_view, "edges");
  const std::int64_t n = xy_view.shape[0], m = edge_view.shape[0];
  if (options.chains < 0) raise<ValueError>("lcn.solve: chains must be >= 0, got ", options.chains);
  if (options.max_moves < 0) raise<ValueError>("lcn.solve: max_moves must be >= 0, got ", options.max_moves);
  const anneal::Problem p = anneal::make_problem(xy, n, edges, m, width, height, "lcn.solve");
  if (5 * sizeof(int) * static_cast<std::size_t>(p.max_degree) > 200 * 1024)
    raise<ValueError>("lcn.solve: the CUDA solver takes vertices of degree up to ", 200 * 1024 / (5 * sizeof(int)),
                      ", this graph has one of degree ", p.max_degree, "; use device='cpu'");
  DeviceGuard guard(device);
  std::int64_t chains = options.chains;
  if (chains == 0) {
    int sms = 0;
    IK_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device.id));
    const int threads = anneal::CudaBackend::block_threads(p.m);
    chains = static_cast<std::int64_t>(sms) * anneal::CudaBackend::chains_per_sm(threads);
  }
  anneal::CudaBackend backend(p, device, static_cast<cudaStream_t>(stream));
  return anneal::run_search(p, options, chains, backend, callback);
}

}  // namespace ironkernels::lcn
