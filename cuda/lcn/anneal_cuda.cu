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

__device__ int block_max(int v, int* scratch) {
  for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  int s = scratch[0];
  for (int w = 1; w < warps; ++w) s = max(s, scratch[w]);
  return s;
}

// The current figures and the edges at the current k, in edge order (a block-wide ordered compaction).
__device__ void refresh(const int* counts, int m, int* hot, ChainState& st, long long* lscratch, int* iscratch) {
  int mx = 0;
  long long total = 0;
  for (int f = threadIdx.x; f < m; f += blockDim.x) mx = max(mx, counts[f]), total += counts[f];
  const int k = block_max(mx, iscratch);
  total = block_sum(total, lscratch);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  int base = 0;
  for (int f0 = 0; f0 < m; f0 += blockDim.x) {
    const int f = f0 + threadIdx.x;
    const bool at = f < m && counts[f] == k;
    const unsigned votes = __ballot_sync(0xffffffffu, at);
    __syncthreads();
    if (lane == 0) iscratch[warp] = __popc(votes);
    __syncthreads();
    int before = base;
    for (int w = 0; w < warp; ++w) before += iscratch[w];
    if (at) hot[before + __popc(votes & ((1u << lane) - 1u))] = f;
    for (int w = 0; w < warps; ++w) base += iscratch[w];
  }
  if (threadIdx.x == 0) {
    st.cur_k = k;
    st.cur_at = base;
    st.cur_total = total / 2;
    st.hot_count = base;
  }
  __syncthreads();
}

// Shared memory of a block: v's neighbours (w, position, edge, new crossing count) after the fixed part.
struct Shared {
  Proposal q;
  int skip, illegal, accepted, deg;
  ChainState st;
  long long lscratch[32];
  int iscratch[32];
};

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
  refresh(k.counts, g.m, k.hot, sh.st, sh.lscratch, sh.iscratch);
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
  refresh(k.counts, g.m, k.hot, sh.st, sh.lscratch, sh.iscratch);
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
      sh.illegal = 0;
    }
    __syncthreads();
    if (sh.skip) continue;  // moving to where it is: no change, no random number (as on the CPU)
    const Proposal q = sh.q;
    const int deg = sh.deg, b = g.first[q.v];
    int* nw = nb;
    int* nx = nb + deg;
    int* ny = nb + 2 * deg;
    int* ne = nb + 3 * deg;
    int* ninc = nb + 4 * deg;
    for (int j = threadIdx.x; j < deg; j += blockDim.x) {
      const int w = g.neighbour[b + j];
      nw[j] = w, nx[j] = pos[2 * w], ny[j] = pos[2 * w + 1], ne[j] = g.edge[b + j], ninc[j] = 0;
    }
    __syncthreads();
    const int old_x = pos[2 * q.v], old_y = pos[2 * q.v + 1];
    const Pt new_v{q.x, q.y};
    // Legality against the vertices: none at the new point, none on v's new edges.
    bool bad = false;
    for (int u = threadIdx.x; u < g.n && !bad; u += blockDim.x) {
      if (u == q.v) continue;
      const Pt pu{pos[2 * u], pos[2 * u + 1]};
      if (pu.x == new_v.x && pu.y == new_v.y) bad = true;
      for (int j = 0; j < deg && !bad; ++j)
        if (u != nw[j] && on_segment(pu, new_v, Pt{nx[j], ny[j]})) bad = true;
    }
    if (bad) sh.illegal = 1;
    __syncthreads();
    long long rise = 0;
    if (!sh.illegal) {
      for (int f = threadIdx.x; f < g.m; f += blockDim.x) {
        const int s = g.ends[2 * f], t = g.ends[2 * f + 1];
        if (s == q.v || t == q.v) {
          delta[f] = 0;
          continue;
        }
        // cross_properly(v, w, c, d) with the orientations of v's two positions against line cd taken once
        // per edge and that of w once per neighbour; int32 differences (|.| <= 2^30) and widening products.
        const int cx = pos[2 * s], cy = pos[2 * s + 1], dx = pos[2 * t], dy = pos[2 * t + 1];
        const int x0 = min(cx, dx), x1 = max(cx, dx), y0 = min(cy, dy), y1 = max(cy, dy);
        const int o_old = orient(cx, cy, dx, dy, old_x, old_y), o_new = orient(cx, cy, dx, dy, q.x, q.y);
        if (o_new == 0 && x0 <= q.x && q.x <= x1 && y0 <= q.y && q.y <= y1) {  // v's new point on edge f
          sh.illegal = 1;
          break;
        }
        int change = 0;
        for (int j = 0; j < deg; ++j) {
          const int w = nw[j];
          if (s == w || t == w) continue;
          const int wx = nx[j], wy = ny[j];
          const bool old_meets = min(old_x, wx) <= x1 && x0 <= max(old_x, wx) && min(old_y, wy) <= y1 && y0 <= max(old_y, wy);
          const bool new_meets = min(q.x, wx) <= x1 && x0 <= max(q.x, wx) && min(q.y, wy) <= y1 && y0 <= max(q.y, wy);
          if (!old_meets && !new_meets) continue;
          const int o_w = orient(cx, cy, dx, dy, wx, wy);
          if (o_w == 0) continue;  // w on line cd: neither segment crosses cd properly
          const bool was = old_meets && o_old != 0 && o_old != o_w && opposite(old_x, old_y, wx, wy, cx, cy, dx, dy);
          const bool now = new_meets && o_new != 0 && o_new != o_w && opposite(q.x, q.y, wx, wy, cx, cy, dx, dy);
          change += static_cast<int>(now) - static_cast<int>(was);
          if (now) atomicAdd(&ninc[j], 1);
        }
        delta[f] = change;
        if (change != 0) rise += edge_energy(cnt[f] + change, sh.st.target, sh.st.penalty) -
                                 edge_energy(cnt[f], sh.st.target, sh.st.penalty);
      }
    }
    rise = block_sum(rise, sh.lscratch);  // synchronises: ninc and illegal are complete
    if (threadIdx.x == 0) {
      bool ok = !sh.illegal;
      if (ok) {
        for (int j = 0; j < deg; ++j)
          rise += edge_energy(ninc[j], sh.st.target, sh.st.penalty) - edge_energy(cnt[ne[j]], sh.st.target, sh.st.penalty);
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
    for (int j = threadIdx.x; j < deg; j += blockDim.x) cnt[ne[j]] = ninc[j];
    if (threadIdx.x == 0) pos[2 * q.v] = q.x, pos[2 * q.v + 1] = q.y;
    __syncthreads();
    refresh(cnt, g.m, hot, sh.st, sh.lscratch, sh.iscratch);
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
      IK_CUDA_CHECK(cudaFuncSetAttribute(round_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem_)));
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

SolveResult solve_cuda(const std::int64_t* xy, std::int64_t n, const std::int64_t* edges, std::int64_t m,
                       std::int64_t width, std::int64_t height, const SolveOptions& options, Device device,
                       Stream stream, const SolveCallback& callback) {
  if (device.type != DeviceType::cuda) raise<ValueError>("lcn.solve: solve_cuda needs a CUDA device");
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
