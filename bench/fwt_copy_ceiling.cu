// The copy rate of each FWT row structure, with no arithmetic: how close a kernel that holds a whole
// row per block can come to cudaMemcpy at all. Every thread loads its share of a row into registers
// (all loads first), then stores it; shared memory is reserved to fix the blocks per SM. The staged
// lines add the long-row kernels' input stage (cp.async of the next row into the thread's own
// shared-memory slots) and, for 64 KB rows, their row buffer and bulk store. 256 MB, median of 20
// launches (CUDA events), each line against cudaMemcpyAsync of the same bytes measured just before.
//
// Build (from the repository root; no library needed):
//   nvcc -std=c++17 -O3 --expt-relaxed-constexpr -arch=sm_90a -Icpp/include -Icpp/src -Icuda \
//        bench/fwt_copy_ceiling.cu cpp/src/core/array.cpp -ldl -o fwt_copy_ceiling
#include <algorithm>
#include <cstdio>
#include <vector>

#include "fwt/fwt_tile.cuh"  // cp.async and bulk-copy wrappers, IK_CUDA_CHECK

namespace fg = ironkernels::detail::fwt_gpu;

namespace {
constexpr std::size_t kBytes = std::size_t(256) << 20;
void* d_x = nullptr;
void* d_y = nullptr;
double copy_ms = 0;

// One row per iteration of a resident grid (or one block per row): loads, then stores.
template <int ROW_BYTES, int THREADS, bool EVICT_FIRST>
__global__ void __launch_bounds__(THREADS, 1) register_copy(const uint4* __restrict__ x, uint4* __restrict__ y, long rows) {
  constexpr int kVec = ROW_BYTES / 16 / THREADS;
  for (long row = blockIdx.x; row < rows; row += gridDim.x) {
    uint4 q[kVec];
#pragma unroll
    for (int j = 0; j < kVec; ++j) q[j] = x[row * (ROW_BYTES / 16) + j * THREADS + threadIdx.x];
#pragma unroll
    for (int j = 0; j < kVec; ++j) fg::store16<EVICT_FIRST>(y + row * (ROW_BYTES / 16) + j * THREADS + threadIdx.x, q[j]);
  }
}

// The staged kernels' structure: the next row in flight to shared memory while this one is stored,
// from registers or (BULK) through a row buffer and one bulk copy, awaited a row later.
template <int ROW_BYTES, int THREADS, bool BULK>
__global__ void __launch_bounds__(THREADS, 1) staged_copy(const uint4* __restrict__ x, uint4* __restrict__ y, long rows) {
  constexpr int kVec = ROW_BYTES / 16 / THREADS;
  extern __shared__ uint4 smem[];
  uint4* const stage = smem;
  uint4* const row_buffer = smem + ROW_BYTES / 16;
  auto stage_row = [&](long row) {
    if (row < rows)
#pragma unroll
      for (int j = 0; j < kVec; ++j)
        fg::cp_async_16(stage + j * THREADS + threadIdx.x, x + row * (ROW_BYTES / 16) + j * THREADS + threadIdx.x, true);
    fg::cp_async_commit();
  };
  stage_row(blockIdx.x);
  for (long row = blockIdx.x; row < rows; row += gridDim.x) {
    fg::cp_async_wait<0>();
    uint4 q[kVec];
#pragma unroll
    for (int j = 0; j < kVec; ++j) q[j] = stage[j * THREADS + threadIdx.x];
    stage_row(row + gridDim.x);  // only this thread reads and writes its slots
    if constexpr (BULK) {
      if (threadIdx.x == 0) fg::bulk_wait<true>();  // the previous row's copy has read the buffer
      __syncthreads();
#pragma unroll
      for (int j = 0; j < kVec; ++j) row_buffer[j * THREADS + threadIdx.x] = q[j];
      fg::fence_proxy_async_shared();
      __syncthreads();
      if (threadIdx.x == 0) fg::bulk_store<false>(y + row * (ROW_BYTES / 16), row_buffer, ROW_BYTES);
    } else {
#pragma unroll
      for (int j = 0; j < kVec; ++j) y[row * (ROW_BYTES / 16) + j * THREADS + threadIdx.x] = q[j];
    }
  }
  if (BULK && threadIdx.x == 0) fg::bulk_wait<false>();
}

template <class F>
double median_ms(F&& launch) {
  cudaEvent_t start, stop;
  IK_CUDA_CHECK(cudaEventCreate(&start));
  IK_CUDA_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < 3; ++i) launch();
  std::vector<float> times;
  for (int i = 0; i < 20; ++i) {
    IK_CUDA_CHECK(cudaEventRecord(start));
    launch();
    IK_CUDA_CHECK(cudaEventRecord(stop));
    IK_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    IK_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(ms);
  }
  IK_CUDA_CHECK(cudaEventDestroy(start));
  IK_CUDA_CHECK(cudaEventDestroy(stop));
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// One line: `smem` bytes of dynamic shared memory per block fix the blocks per SM; a resident grid
// loops over the rows, otherwise one block per row.
template <int ROW_BYTES, int THREADS, class Kernel>
void line(const char* what, Kernel kernel, int smem, bool resident) {
  IK_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int per_sm = 0, sms = 0;
  IK_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, THREADS, smem));
  IK_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const long rows = long(kBytes / ROW_BYTES), grid = resident ? std::min<long>(rows, long(sms) * per_sm) : rows;
  const double ms = median_ms([&] {
    kernel<<<unsigned(grid), THREADS, smem>>>(static_cast<const uint4*>(d_x), static_cast<uint4*>(d_y), rows);
    IK_CUDA_CHECK(cudaGetLastError());
  });
  std::printf("%-48s %3d KB rows, %4d threads, %d blocks/SM: %7.1f GB/s  %.3f of copy\n", what, ROW_BYTES / 1024, THREADS,
              per_sm, 2.0 * kBytes / ms / 1e6, copy_ms / ms);
}
}  // namespace

int main() {
  IK_CUDA_CHECK(cudaMalloc(&d_x, kBytes));
  IK_CUDA_CHECK(cudaMalloc(&d_y, kBytes));
  IK_CUDA_CHECK(cudaMemset(d_x, 1, kBytes));
  constexpr int k128 = 128 << 10, k64 = 64 << 10, k32 = 32 << 10;
  constexpr int kOnePerSm = 200 << 10;  // shared memory that leaves room for one block per SM
  copy_ms = median_ms([] { IK_CUDA_CHECK(cudaMemcpyAsync(d_y, d_x, kBytes, cudaMemcpyDeviceToDevice)); });
  std::printf("cudaMemcpy: %.1f GB/s\n", 2.0 * kBytes / copy_ms / 1e6);
  line<k128, 256>("registers, resident grid", register_copy<k128, 256, false>, kOnePerSm, true);
  line<k128, 256>("registers, a block per row", register_copy<k128, 256, false>, kOnePerSm, false);
  line<k128, 256>("registers, streaming stores", register_copy<k128, 256, true>, kOnePerSm, true);
  line<k128, 512>("registers, 16 warps", register_copy<k128, 512, false>, kOnePerSm, true);
  line<k128, 256>("cp.async stage (float32 2^15's structure)", staged_copy<k128, 256, false>, k128, true);
  line<k128, 512>("cp.async stage, 16 warps", staged_copy<k128, 512, false>, k128, true);
  line<k64, 256>("registers, resident grid", register_copy<k64, 256, false>, kOnePerSm, true);
  line<k64, 256>("registers, 2 blocks per SM", register_copy<k64, 256, false>, 100 << 10, true);
  line<k64, 256>("registers, 3 blocks per SM", register_copy<k64, 256, false>, k64, true);
  line<k64, 256>("cp.async stage", staged_copy<k64, 256, false>, 120 << 10, true);
  line<k64, 256>("stage, row buffer, bulk store (16-bit 2^15's)", staged_copy<k64, 256, true>, 2 * k64, true);
  line<k32, 256>("registers, resident grid", register_copy<k32, 256, false>, kOnePerSm, true);
  line<k32, 256>("registers, 3 blocks per SM", register_copy<k32, 256, false>, k64, true);
  IK_CUDA_CHECK(cudaFree(d_x));
  IK_CUDA_CHECK(cudaFree(d_y));
  return 0;
}
