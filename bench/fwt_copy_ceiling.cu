// The copy rate of each FWT row structure, with no arithmetic: how close a kernel that holds a whole
// row per block can come to cudaMemcpy at all. Every thread loads its share of a row into registers
// (all loads first), then stores it; shared memory is reserved to fix the blocks per SM. The split
// lines hold half a row in registers and half in shared memory (SPLIT_TOP's structure). The staged
// lines add the long-row kernels' input stage (cp.async of the next row into the thread's own
// shared-memory slots) and, for 64 KB rows, their row buffer and bulk store; some take their rows
// in another order (Schedule), and print when the blocks ended (the first, the median, the last).
// The short-row lines (4 KB, 16-bit 2^11) compare one-warp blocks with rows over 2-8 warps, loaded
// into registers or staged by cp.async, with and without a float32-sized exchange between the warps,
// HadaCore's pattern with its 4-byte stores or 16-byte ones, and a warp-specialised ring of bulk
// loads (TMA). The column lines copy the strided column pass's pieces. 256 MB (or whole rounds of
// the grid), median of 20 launches (CUDA events), each line against cudaMemcpyAsync of the same
// bytes measured just before; each line's output is checked against its input. FWT_COPY_ROW_KB=4
// runs only the lines of that row size.
//
// Build: cmake -B build -DIRONKERNELS_BUILD_BENCH=ON && cmake --build build --target fwt_copy_ceiling
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_timing.cuh"
#include "common/ptx.cuh"
#include "fwt/fwt_tile.cuh"  // the bulk row stores, IK_CUDA_CHECK

namespace fg = ironkernels::detail::fwt_gpu;
namespace ptx = ironkernels::detail::ptx;

namespace {
constexpr std::size_t kBytes = std::size_t(256) << 20;
constexpr std::size_t kAllocBytes = std::size_t(288) << 20;  // room for whole rounds above 256 MB
void* d_x = nullptr;
void* d_y = nullptr;
// DYNAMIC's next row and blocks done (reset by the last block), then each block's start and finish
// time (%globaltimer, ns; blocks below kMaxBlocks).
int* d_counters = nullptr;
constexpr int kMaxBlocks = 4096;
constexpr std::size_t kCounterBytes = 2 * sizeof(int) + 2 * sizeof(unsigned long long) * kMaxBlocks;

// How a resident grid's blocks pick their rows: every gridDim.x-th row (STATIC; STATIC_BARRIER adds
// DYNAMIC's barrier per row), the next free row from a global counter, claimed a row ahead
// (DYNAMIC), or STATIC for the whole rounds and the last partial round spread evenly over all
// blocks as a flat copy (TAIL_FLAT: the bound of any split of the last rows).
enum Schedule { STATIC, STATIC_BARRIER, DYNAMIC, TAIL_FLAT };

// One row per iteration of a resident grid (or one block per row): loads, then stores.
template <int ROW_BYTES, int THREADS, bool EVICT_FIRST>
__global__ void __launch_bounds__(THREADS, 1) register_copy(const uint4* __restrict__ x, uint4* __restrict__ y, long rows,
                                                            int*) {
  constexpr int kVec = ROW_BYTES / 16 / THREADS;
  for (long row = blockIdx.x; row < rows; row += gridDim.x) {
    uint4 q[kVec];
#pragma unroll
    for (int j = 0; j < kVec; ++j) q[j] = x[row * (ROW_BYTES / 16) + j * THREADS + threadIdx.x];
#pragma unroll
    for (int j = 0; j < kVec; ++j) fg::store16<EVICT_FIRST>(y + row * (ROW_BYTES / 16) + j * THREADS + threadIdx.x, q[j]);
  }
}

// A split row's structure (SPLIT_TOP; one block per row): the first half loaded into registers, the
// second by cp.async into the thread's own shared-memory slots; the first half parked in those slots
// as the second comes out of them; both halves stored at the end.
template <int ROW_BYTES, int THREADS>
__global__ void __launch_bounds__(THREADS, 2) split_copy(const uint4* __restrict__ x, uint4* __restrict__ y, long rows,
                                                         int*) {
  constexpr int kVec = ROW_BYTES / 2 / 16 / THREADS, kHalf = ROW_BYTES / 2 / 16;
  extern __shared__ uint4 slots[];
  const long row = blockIdx.x;
  const uint4* xr = x + row * (ROW_BYTES / 16);
#pragma unroll
  for (int j = 0; j < kVec; ++j) ptx::cp_async_16(slots + j * THREADS + threadIdx.x, xr + kHalf + j * THREADS + threadIdx.x, true);
  ptx::cp_async_commit();
  uint4 q[kVec];
#pragma unroll
  for (int j = 0; j < kVec; ++j) q[j] = xr[j * THREADS + threadIdx.x];
  ptx::cp_async_wait<0>();
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    const uint4 second = slots[j * THREADS + threadIdx.x];
    slots[j * THREADS + threadIdx.x] = q[j];
    q[j] = second;
  }
  uint4* yr = y + row * (ROW_BYTES / 16);
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    yr[j * THREADS + threadIdx.x] = slots[j * THREADS + threadIdx.x];
    yr[kHalf + j * THREADS + threadIdx.x] = q[j];
  }
}

// Short rows (4 KB) in a block per row: loaded into registers or staged by cp.async (the whole row,
// each thread its own vectors), optionally through an exchange between the warps as a float32
// transform would need (twice the bytes, one barrier, each thread reading another warp's vectors),
// then stored from registers in 16-byte vectors.
template <int THREADS, bool CP_ASYNC, bool EXCHANGE>
__global__ void __launch_bounds__(THREADS) short_row_copy(const uint4* __restrict__ x, uint4* __restrict__ y, long rows,
                                                          int*) {
  constexpr int kRowVec = 4096 / 16, kVec = kRowVec / THREADS;
  extern __shared__ uint4 smem[];
  uint4* const exchange = smem + (CP_ASYNC ? kRowVec : 0);
  const uint4* xr = x + blockIdx.x * long(kRowVec);
  uint4 q[kVec];
  if constexpr (CP_ASYNC) {
#pragma unroll
    for (int j = 0; j < kVec; ++j) ptx::cp_async_16(smem + j * THREADS + threadIdx.x, xr + j * THREADS + threadIdx.x, true);
    ptx::cp_async_commit();
    ptx::cp_async_wait<0>();
#pragma unroll
    for (int j = 0; j < kVec; ++j) q[j] = smem[j * THREADS + threadIdx.x];
  } else {
#pragma unroll
    for (int j = 0; j < kVec; ++j) q[j] = xr[j * THREADS + threadIdx.x];
  }
  int at[kVec];
#pragma unroll
  for (int j = 0; j < kVec; ++j) at[j] = j * THREADS + threadIdx.x;
  if constexpr (EXCHANGE) {
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      exchange[2 * at[j]] = q[j];
      exchange[2 * at[j] + 1] = q[j];
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      at[j] ^= THREADS > 32 ? 32 : 1;  // another warp's vector
      q[j] = exchange[2 * at[j] + (threadIdx.x & 1)];
    }
  }
  uint4* yr = y + blockIdx.x * long(kRowVec);
#pragma unroll
  for (int j = 0; j < kVec; ++j) yr[at[j]] = q[j];
}

// HadaCore's 16-bit 2^11 memory pattern (a row per 4-warp block, 28 registers): each warp stages
// two 512-byte chunks by cp.async, a barrier, then every thread stores 8 words of 4 bytes, each
// warp's store touching four 64-byte runs 512 bytes apart (its second pass's index map). WORDS=false
// stores the same staged row in 16-byte vectors instead: do 4-byte stores change the DRAM rate?
template <bool WORDS>
__global__ void __launch_bounds__(128, 8) hadacore_pattern_copy(const uint4* __restrict__ x, uint4* __restrict__ y,
                                                                 long rows, int*) {
  __shared__ uint4 row_smem[256];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const uint4* xr = x + blockIdx.x * 256L;
#pragma unroll
  for (int k = 0; k < 2; ++k) ptx::cp_async_16(row_smem + (2 * warp + k) * 32 + lane, xr + (2 * warp + k) * 32 + lane, true);
  ptx::cp_async_commit();
  ptx::cp_async_wait<0>();
  __syncthreads();
  if constexpr (WORDS) {
    const uint32_t* words = reinterpret_cast<const uint32_t*>(row_smem);
    uint32_t* yr = reinterpret_cast<uint32_t*>(y + blockIdx.x * 256L);
#pragma unroll
    for (int k = 0; k < 2; ++k)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int reg = (lane & 1) == 0 ? j : (j + 2) % 4, rt = reg < 2 ? lane : lane ^ 1;
        const int idx = rt / 4 * 16 + rt % 4 * 2 + reg / 2 * 8 + reg % 2;
        const int at = 16 * (2 * warp + k) + (idx % 8) * 128 + (idx >> 3);
        yr[at] = words[at];
      }
  } else {
    uint4* yr = y + blockIdx.x * 256L;
#pragma unroll
    for (int k = 0; k < 2; ++k) yr[(2 * warp + k) * 32 + lane] = row_smem[(2 * warp + k) * 32 + lane];
  }
}

// A warp-specialised ring for short rows (sm_90): in a resident block, one producer lane keeps S
// rows of 4 KB in flight to shared memory, each by one bulk copy (TMA) completing on the stage's
// mbarrier; CONSUMERS warps take the rows in turn, read theirs into registers (8 vectors per lane),
// free the stage and store from registers. Loads no longer wait for a warp to finish its last row.
template <int CONSUMERS, int S>
__global__ void __launch_bounds__(32 * (CONSUMERS + 1)) tma_ring_copy(const uint4* __restrict__ x, uint4* __restrict__ y,
                                                                      long rows, int*) {
  constexpr int kRowVec = 256;
  extern __shared__ uint4 ring[];  // S rows of 4 KB
  __shared__ unsigned long long full[S], empty[S];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], 1);
    }
    ptx::fence_mbarrier_init();
  }
  __syncthreads();
  const long my_rows = rows > blockIdx.x ? (rows - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
  if (warp == CONSUMERS) {  // the producer
    if (lane == 0)
      for (long i = 0; i < my_rows; ++i) {
        const int s = int(i % S);
        ptx::mbarrier_wait_parity(&empty[s], unsigned((i / S) & 1) ^ 1u);
        ptx::mbarrier_arrive_expect_tx(&full[s], 4096);
        ptx::cp_async_bulk_global_to_shared(ring + s * kRowVec, x + (blockIdx.x + i * gridDim.x) * long(kRowVec), 4096, &full[s]);
      }
    return;
  }
  for (long i = warp; i < my_rows; i += CONSUMERS) {
    const int s = int(i % S);
    ptx::mbarrier_wait_parity(&full[s], unsigned((i / S) & 1));
    uint4 q[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) q[j] = ring[s * kRowVec + j * 32 + lane];
    __syncwarp();
    if (lane == 0) ptx::mbarrier_arrive(&empty[s]);
    uint4* yr = y + (blockIdx.x + i * gridDim.x) * long(kRowVec);
#pragma unroll
    for (int j = 0; j < 8; ++j) yr[j * 32 + lane] = q[j];
  }
}

// The staged kernels' structure: the next row in flight to shared memory while this one is stored,
// from registers or (BULK) through a row buffer and one bulk copy, awaited a row later.
template <int ROW_BYTES, int THREADS, bool BULK, Schedule SCHEDULE = STATIC>
__global__ void __launch_bounds__(THREADS, 1) staged_copy(const uint4* __restrict__ x, uint4* __restrict__ y, long rows,
                                                          int* counters) {
  constexpr int kVec = ROW_BYTES / 16 / THREADS;
  constexpr long kRowVec = ROW_BYTES / 16;
  extern __shared__ uint4 smem[];
  __shared__ long next_rows[2];
  uint4* const stage = smem;
  uint4* const row_buffer = smem + ROW_BYTES / 16;
  const long whole_rows = SCHEDULE == TAIL_FLAT ? rows / gridDim.x * gridDim.x : rows;
  unsigned long long* const times = reinterpret_cast<unsigned long long*>(counters + 2) + 2 * blockIdx.x;
  if (threadIdx.x == 0 && blockIdx.x < kMaxBlocks) times[0] = ptx::global_timer_ns();
  auto stage_row = [&](long row) {
    if (row < whole_rows)
#pragma unroll
      for (int j = 0; j < kVec; ++j)
        ptx::cp_async_16(stage + j * THREADS + threadIdx.x, x + row * kRowVec + j * THREADS + threadIdx.x, true);
    ptx::cp_async_commit();
  };
  auto claim = [&] { return SCHEDULE == DYNAMIC ? long(gridDim.x) + atomicAdd(counters, 1) : 0L; };
  long row = blockIdx.x, staged = row + gridDim.x, claimed = 0;
  if (SCHEDULE == DYNAMIC) {
    if (threadIdx.x == 0) next_rows[0] = claim();
    __syncthreads();
    staged = next_rows[0];
    if (threadIdx.x == 0) claimed = claim();  // the row after: its latency hides behind a whole row
  }
  stage_row(row);
  for (int i = 0; row < whole_rows; ++i) {
    ptx::cp_async_wait<0>();
    uint4 q[kVec];
#pragma unroll
    for (int j = 0; j < kVec; ++j) q[j] = stage[j * THREADS + threadIdx.x];
    stage_row(staged);  // only this thread reads and writes its slots
    if (SCHEDULE == DYNAMIC && threadIdx.x == 0) {
      next_rows[(i + 1) & 1] = claimed;
      claimed = claim();
    }
    if constexpr (BULK) {
      if (threadIdx.x == 0) fg::bulk_wait<true>();  // the previous row's copy has read the buffer
      __syncthreads();
#pragma unroll
      for (int j = 0; j < kVec; ++j) row_buffer[j * THREADS + threadIdx.x] = q[j];
      ptx::fence_proxy_async_shared();
      __syncthreads();
      if (threadIdx.x == 0) fg::bulk_store<false>(y + row * kRowVec, row_buffer, ROW_BYTES);
    } else {
#pragma unroll
      for (int j = 0; j < kVec; ++j) y[row * kRowVec + j * THREADS + threadIdx.x] = q[j];
    }
    row = staged;
    if (SCHEDULE == DYNAMIC) {
      __syncthreads();
      staged = next_rows[(i + 1) & 1];
    } else {
      if (SCHEDULE == STATIC_BARRIER) __syncthreads();
      staged += gridDim.x;
    }
  }
  if (BULK && threadIdx.x == 0) fg::bulk_wait<false>();
  if (SCHEDULE == TAIL_FLAT)
    for (long v = whole_rows * kRowVec + blockIdx.x * long(THREADS) + threadIdx.x; v < rows * kRowVec; v += long(gridDim.x) * THREADS)
      y[v] = x[v];
  if (threadIdx.x == 0 && blockIdx.x < kMaxBlocks) times[1] = ptx::global_timer_ns();
  if (SCHEDULE == DYNAMIC) __threadfence();
  if (SCHEDULE == DYNAMIC && threadIdx.x == 0 && atomicAdd(counters + 1, 1) == int(gridDim.x) - 1) {
    counters[0] = 0;  // every block has claimed its last row: ready for the next launch
    counters[1] = 0;
  }
}

// The strided-axis column pass's memory pattern (fwt_cluster_columns.cu) as a copy: a block per
// tile of 2^LB lines x WB bytes, lines STRIDE bytes apart, RANKS consecutive blocks the consecutive
// line ranges of one column (a cluster's CTAs, launched here without a cluster), the whole tile in
// flight by 16-byte cp.async, then stored from shared memory to the same positions. "Rows" are the
// tiles. The bound of any one-pass kernel reading these pieces, whatever its arithmetic.
template <int WB, int LB, int RANKS, int STRIDE, int THREADS>
__global__ void __launch_bounds__(THREADS) column_copy(const uint4* __restrict__ x, uint4* __restrict__ y, long,
                                                       int*) {
  extern __shared__ uint4 column_copy_smem[];
  constexpr int kCopies = WB / 16, kItems = kCopies << LB, kSegments = STRIDE / WB;
  constexpr long kLine = STRIDE / 16;  // 16-byte units between lines
  const long column = blockIdx.x / RANKS, r = column / kSegments, seg = column % kSegments;
  const long base = (r * (RANKS << LB) + long(blockIdx.x % RANKS) * (1 << LB)) * kLine + seg * kCopies;
  for (int i = threadIdx.x; i < kItems; i += THREADS)
    ptx::cp_async_16(column_copy_smem + i, x + base + (i / kCopies) * kLine + i % kCopies, true);
  ptx::cp_async_commit();
  ptx::cp_async_wait<0>();
  __syncthreads();
  for (int i = threadIdx.x; i < kItems; i += THREADS) __stwb(y + base + (i / kCopies) * kLine + i % kCopies, column_copy_smem[i]);
}

__global__ void fill_index(unsigned* p, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    p[i] = unsigned(i);
}

template <class F>
double median_ms(F&& launch) { return median_launch_ms(launch, 3, 20); }

// One line: `smem` bytes of dynamic shared memory per block fix the blocks per SM; a resident grid
// loops over the rows, otherwise one block per row. WHOLE_ROUNDS: the rows rounded up to a multiple
// of the resident grid (no partial last round).
template <int ROW_BYTES, int THREADS, class Kernel>
void line(const char* what, Kernel kernel, int smem, bool resident, bool whole_rounds = false) {
  static const char* only_kb = std::getenv("FWT_COPY_ROW_KB");  // only the rows of this many KB
  if (only_kb && std::atoi(only_kb) != ROW_BYTES / 1024) return;
  IK_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int per_sm = 0, sms = 0;
  IK_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, THREADS, smem));
  IK_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const long resident_grid = long(sms) * per_sm;
  long rows = long(kBytes / ROW_BYTES);
  if (whole_rounds) rows = (rows + resident_grid - 1) / resident_grid * resident_grid;
  const long grid = resident ? std::min<long>(rows, resident_grid) : rows;
  const std::size_t bytes = std::size_t(rows) * ROW_BYTES;
  const double copy_ms = median_ms([&] { IK_CUDA_CHECK(cudaMemcpyAsync(d_y, d_x, bytes, cudaMemcpyDeviceToDevice)); });
  const double ms = median_ms([&] {
    kernel<<<unsigned(grid), THREADS, smem>>>(static_cast<const uint4*>(d_x), static_cast<uint4*>(d_y), rows, d_counters);
    IK_CUDA_CHECK(cudaGetLastError());
  });
  // One more launch into a zeroed output: every line is a copy, so it must reproduce the input's
  // pattern; staged kernels also record their blocks' finish times, printed as when the first and the
  // median block ended, as fractions of the time the last one ended (all from the first start).
  IK_CUDA_CHECK(cudaMemset(d_y, 0, bytes));
  IK_CUDA_CHECK(cudaMemset(d_counters + 2, 0, 2 * sizeof(unsigned long long) * kMaxBlocks));
  kernel<<<unsigned(grid), THREADS, smem>>>(static_cast<const uint4*>(d_x), static_cast<uint4*>(d_y), rows, d_counters);
  IK_CUDA_CHECK(cudaGetLastError());
  std::vector<unsigned> out(bytes / 4);
  IK_CUDA_CHECK(cudaMemcpy(out.data(), d_y, bytes, cudaMemcpyDeviceToHost));
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < out.size(); ++i) wrong += out[i] != unsigned(i);
  char spread[64] = "";
  if (resident && grid <= kMaxBlocks) {
    std::vector<unsigned long long> t(2 * grid, 0);
    IK_CUDA_CHECK(cudaMemcpy(t.data(), d_counters + 2, t.size() * sizeof(t[0]), cudaMemcpyDeviceToHost));
    if (t[0] != 0) {
      unsigned long long t0 = ~0ull;
      std::vector<double> fin;
      for (long b = 0; b < grid; ++b) t0 = std::min(t0, t[2 * b]);
      for (long b = 0; b < grid; ++b) fin.push_back(double(t[2 * b + 1] - t0));
      std::sort(fin.begin(), fin.end());
      std::snprintf(spread, sizeof spread, "  blocks end at %.3f / %.3f / 1", fin.front() / fin.back(), fin[fin.size() / 2] / fin.back());
    }
  }
  std::printf("%-52s %3d KB rows x %4ld, %4d threads, %d blocks/SM: %7.1f GB/s  %.3f of copy%s%s\n", what, ROW_BYTES / 1024,
              rows, THREADS, per_sm, 2.0 * bytes / ms / 1e6, copy_ms / ms, spread, wrong ? "  WRONG OUTPUT" : "");
}
}  // namespace

int main() {
  IK_CUDA_CHECK(cudaMalloc(&d_x, kAllocBytes));
  IK_CUDA_CHECK(cudaMalloc(&d_y, kAllocBytes));
  IK_CUDA_CHECK(cudaMalloc(&d_counters, kCounterBytes));
  fill_index<<<4096, 256>>>(static_cast<unsigned*>(d_x), kAllocBytes / 4);
  IK_CUDA_CHECK(cudaGetLastError());
  IK_CUDA_CHECK(cudaMemset(d_counters, 0, kCounterBytes));
  constexpr int k128 = 128 << 10, k64 = 64 << 10, k32 = 32 << 10;
  constexpr int kOnePerSm = 200 << 10;  // shared memory that leaves room for one block per SM
  const double copy_ms = median_ms([] { IK_CUDA_CHECK(cudaMemcpyAsync(d_y, d_x, kBytes, cudaMemcpyDeviceToDevice)); });
  std::printf("cudaMemcpy: %.1f GB/s\n", 2.0 * kBytes / copy_ms / 1e6);
  // The strided-axis column pass's pieces (2^13 lines: a column over 8 blocks): 64-byte pieces
  // 256 bytes and 16 KB apart (float32 inner 64 and 4096), 128-byte pieces 16 KB apart on 2^9 and
  // 2^10 lines a block.
  line<k64, 256>("columns: 64 B pieces 256 B apart, 2^10 lines", column_copy<64, 10, 8, 256, 256>, k64, false);
  line<k64, 256>("columns: 64 B pieces 16 KB apart, 2^10 lines", column_copy<64, 10, 8, 16 << 10, 256>, k64, false);
  line<k64, 256>("columns: 128 B pieces 16 KB apart, 2^9 lines", column_copy<128, 9, 16, 16 << 10, 256>, k64, false);
  line<k128, 256>("columns: 128 B pieces 16 KB apart, 2^10 lines", column_copy<128, 10, 8, 16 << 10, 256>, k128, false);
  line<k64, 256>("columns: 32 B pieces 16 KB apart, 2^11 lines", column_copy<32, 11, 4, 16 << 10, 256>, k64, false);
  line<k128, 256>("registers, resident grid", register_copy<k128, 256, false>, kOnePerSm, true);
  line<k128, 256>("registers, a block per row", register_copy<k128, 256, false>, kOnePerSm, false);
  line<k128, 256>("registers, streaming stores", register_copy<k128, 256, true>, kOnePerSm, true);
  line<k128, 512>("registers, 16 warps", register_copy<k128, 512, false>, kOnePerSm, true);
  line<k128, 256>("cp.async stage (float32 2^15's structure)", staged_copy<k128, 256, false>, k128, true);
  line<k128, 256>("cp.async stage, whole rounds", staged_copy<k128, 256, false>, k128, true, true);
  line<k128, 256>("cp.async stage, rows from a counter", staged_copy<k128, 256, false, DYNAMIC>, k128, true);
  line<k128, 256>("cp.async stage, a barrier per row", staged_copy<k128, 256, false, STATIC_BARRIER>, k128, true);
  line<k128, 256>("cp.async stage, last round spread over all blocks", staged_copy<k128, 256, false, TAIL_FLAT>, k128, true);
  line<k128, 512>("cp.async stage, 16 warps", staged_copy<k128, 512, false>, k128, true);
  line<k128, 512>("cp.async stage, 16 warps, rows from a counter", staged_copy<k128, 512, false, DYNAMIC>, k128, true);
  line<k128, 256>("split rows (float32 2^15's), 2 blocks per SM", split_copy<k128, 256>, 96 << 10, false);
  line<k128, 256>("split rows, 1 block per SM", split_copy<k128, 256>, kOnePerSm, false);
  line<k64, 256>("registers, resident grid", register_copy<k64, 256, false>, kOnePerSm, true);
  line<k64, 256>("registers, 2 blocks per SM", register_copy<k64, 256, false>, 100 << 10, true);
  line<k64, 256>("registers, 3 blocks per SM", register_copy<k64, 256, false>, k64, true);
  line<k64, 256>("cp.async stage", staged_copy<k64, 256, false>, 120 << 10, true);
  line<k64, 256>("stage, row buffer, bulk store (16-bit 2^15's)", staged_copy<k64, 256, true>, 2 * k64, true);
  line<k64, 256>("the same, whole rounds", staged_copy<k64, 256, true>, 2 * k64, true, true);
  line<k64, 512>("the same, 16 warps", staged_copy<k64, 512, true>, 2 * k64, true);
  line<k64, 256>("the same, rows from a counter", staged_copy<k64, 256, true, DYNAMIC>, 2 * k64, true);
  line<k64, 256>("the same, a third barrier per row", staged_copy<k64, 256, true, STATIC_BARRIER>, 2 * k64, true);
  line<k64, 256>("the same, last round spread over all blocks", staged_copy<k64, 256, true, TAIL_FLAT>, 2 * k64, true);
  line<k64, 256>("split rows (16-bit 2^15 with a 64 KB park), 2 blocks/SM", split_copy<k64, 256>, 96 << 10, false);
  line<k64, 256>("split rows, 3 blocks per SM", split_copy<k64, 256>, 72 << 10, false);
  line<k32, 256>("registers, resident grid", register_copy<k32, 256, false>, kOnePerSm, true);
  line<k32, 256>("registers, 3 blocks per SM", register_copy<k32, 256, false>, k64, true);
  // Short rows (16-bit 2^11): a row per one-warp block, or spread over four warps (as HadaCore's).
  constexpr int k4 = 4 << 10;
  // Two rounds: the differences are about 1%.
  for (int round = 0; round < 2; ++round) {
    line<k4, 32>("registers, one-warp blocks", register_copy<k4, 32, false>, 0, false);
    line<k4, 32>("split, one-warp blocks", split_copy<k4, 32>, 6 << 10, false);
    line<k4, 128>("registers, 4-warp blocks", register_copy<k4, 128, false>, 0, false);
    line<k4, 128>("split, 4-warp blocks", split_copy<k4, 128>, 2 << 10, false);
    line<k4, 32>("cp.async, one-warp blocks", short_row_copy<32, true, false>, k4, false);
    line<k4, 128>("cp.async, 4-warp blocks", short_row_copy<128, true, false>, k4, false);
    line<k4, 128>("cp.async, 4-warp blocks, 8/SM", short_row_copy<128, true, false>, 27 << 10, false);
    line<k4, 128>("cp.async + exchange, 4-warp blocks", short_row_copy<128, true, true>, 3 * k4, false);
    line<k4, 128>("cp.async + exchange, 4-warp blocks, 8/SM", short_row_copy<128, true, true>, 27 << 10, false);
    line<k4, 128>("registers + exchange, 4-warp blocks", short_row_copy<128, false, true>, 2 * k4, false);
    line<k4, 64>("cp.async + exchange, 2-warp blocks", short_row_copy<64, true, true>, 3 * k4, false);
    line<k4, 64>("cp.async, 2-warp blocks", short_row_copy<64, true, false>, k4, false);
    line<k4, 256>("cp.async + exchange, 8-warp blocks", short_row_copy<256, true, true>, 3 * k4, false);
    line<k4, 128>("HadaCore's pattern, 4-byte stores", hadacore_pattern_copy<true>, 0, false);
    line<k4, 128>("HadaCore's pattern, 16-byte stores", hadacore_pattern_copy<false>, 0, false);
    line<k4, 160>("TMA ring, 4 consumer warps, 8 stages", tma_ring_copy<4, 8>, 72 << 10, true);
    line<k4, 288>("TMA ring, 8 consumer warps, 32 stages", tma_ring_copy<8, 32>, 2 * k64, true);
    line<k4, 544>("TMA ring, 16 consumer warps, 32 stages", tma_ring_copy<16, 32>, 2 * k64, true);
  }
  IK_CUDA_CHECK(cudaFree(d_x));
  IK_CUDA_CHECK(cudaFree(d_y));
  IK_CUDA_CHECK(cudaFree(d_counters));
  return 0;
}
