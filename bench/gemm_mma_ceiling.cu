// The INT8 mma.sync rate the GEMM's mma engine is measured against: a register-only loop (every warp
// issuing independent m16n8k32 mma.sync on registers, no memory traffic; on constant operands and on
// pseudo-random ones, at 1, 2 and 4 blocks of 8 warps per SM, with the SM clock it ran at) and the
// engine's product kernel (cuda/gemm/gemm_int8_mma.cuh) in several tile shapes on n × n × k products
// of random residues, with cp.async and with TMA loads, alone and 15 in one launch as the pipeline
// runs them, and the wgmma engine (gemm_int8_wgmma.cuh), as TOPS (2mnk per product), median of 10
// launches after 3 warm-ups; each product is checked bit for bit against the engine's tile with
// cp.async loads. Arguments: the sizes n to run (default 4096 8192 16384); IK_BENCH_ONCE=1: one
// launch each (ncu); IK_BENCH_SUSTAIN_MS=t: each measured after t ms of back-to-back launches (at the
// clocks a long run settles to under the power cap).
//
// Build: cmake -B build -DIRONKERNELS_BUILD_BENCH=ON && cmake --build build --target gemm_mma_ceiling
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_timing.cuh"
#include "common/fill.cuh"
#include "common/ptx.cuh"
#include "core/cuda_check.hpp"
#include "gemm/gemm_int8_mma.cuh"
#include "gemm/gemm_int8_wgmma.cuh"

namespace ptx = ironkernels::detail::ptx;
namespace mma = ironkernels::detail::gemm_mma;

namespace {
constexpr int kChains = 8;  // independent accumulators per warp: enough to cover the mma latency

// Every warp's chains on the same operands (`operands` null: values from the thread index, the same
// every issue) or on kChains different pseudo-random operand sets (`operands`: 6 words per chain and
// thread), so that consecutive mma.sync see different data, as in a product. Thread 0 of block 0
// records the SM clock and the global timer around the loop (the clock rate it ran at).
__global__ void __launch_bounds__(256) register_mma_loop(int iterations, const std::uint32_t* operands,
                                                         std::int32_t* sink, long long* clocks) {
  std::uint32_t a[kChains][4], b[kChains][2];
#pragma unroll
  for (int c = 0; c < kChains; ++c) {
    const std::uint32_t* o = operands ? operands + (threadIdx.x + blockIdx.x * 256u) % 8192u * (6 * kChains) + 6 * c : nullptr;
    a[c][0] = o ? o[0] : threadIdx.x, a[c][1] = o ? o[1] : threadIdx.x * 3u, a[c][2] = o ? o[2] : threadIdx.x * 5u;
    a[c][3] = o ? o[3] : threadIdx.x * 7u, b[c][0] = o ? o[4] : blockIdx.x, b[c][1] = o ? o[5] : 11u;
  }
  std::int32_t acc[kChains][4] = {};
  long long t0 = 0, c0 = 0;
  if (threadIdx.x == 0) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    c0 = clock64();
  }
  for (int i = 0; i < iterations; ++i)
#pragma unroll
    for (int c = 0; c < kChains; ++c) ptx::mma_m16n8k32_s8(acc[c], a[c], b[c], acc[c]);
  std::int32_t s = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c) s += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
  if (s == 0x7fffffff) sink[0] = s;  // keeps the loop
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    long long t1 = 0;
    const long long c1 = clock64();
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    clocks[0] = c1 - c0, clocks[1] = t1 - t0;
  }
}

bool once = false;   // one launch per measurement (IK_BENCH_ONCE set: under a profiler)
double sustain = 0;  // IK_BENCH_SUSTAIN_MS: launches back to back this long before the timed ones
const auto bench_start = std::chrono::steady_clock::now();
double seconds() { return std::chrono::duration<double>(std::chrono::steady_clock::now() - bench_start).count(); }
template <class F>
double median_ms(F&& launch) {
  if (once) return median_launch_ms(launch, 0, 1);
  const double start = seconds();
  while ((seconds() - start) * 1e3 < sustain) {
    launch();
    IK_CUDA_CHECK(cudaDeviceSynchronize());
  }
  const double ms = median_launch_ms(launch, 3, 10);
  if (sustain > 0) std::printf("[%.2f-%.2f s] ", start, seconds());
  return ms;
}
}  // namespace

int main(int argc, char** argv) {
  std::vector<long> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atol(argv[i]));
  if (sizes.empty()) sizes = {4096L, 8192L, 16384L};
  once = std::getenv("IK_BENCH_ONCE") != nullptr;
  if (const char* ms = std::getenv("IK_BENCH_SUSTAIN_MS")) sustain = std::atof(ms);
  int sms = 0;
  IK_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::int32_t* sink = nullptr;
  IK_CUDA_CHECK(cudaMalloc(&sink, 4));
  long long* clocks = nullptr;
  IK_CUDA_CHECK(cudaMallocManaged(&clocks, 2 * sizeof(long long)));
  std::uint32_t* operands = nullptr;
  IK_CUDA_CHECK(cudaMalloc(&operands, 8192 * 6 * kChains * 4));
  ironkernels::detail::fill_pseudo_random_kernel<<<1024, 256>>>(reinterpret_cast<std::int8_t*>(operands), 8192 * 6 * kChains * 4);
  constexpr int kIterations = 4096;
  for (bool random : {false, true})
    for (int blocks_per_sm : {1, 2, 4}) {
      const int blocks = sms * blocks_per_sm;
      const double ms = median_ms([&] {
        register_mma_loop<<<blocks, 256>>>(kIterations, random ? operands : nullptr, sink, clocks);
        IK_CUDA_CHECK(cudaGetLastError());
      });
      IK_CUDA_CHECK(cudaDeviceSynchronize());
      const double ops = 2.0 * 16 * 8 * 32 * double(kChains) * kIterations * (blocks * 8.0);
      std::printf("register-only mma.sync m16n8k32 s8, %s operands, %d blocks of 8 warps per SM: %7.1f TOPS at %4.0f MHz\n",
                  random ? "random  " : "constant", blocks_per_sm, ops / ms / 1e9, 1e3 * double(clocks[0]) / double(clocks[1]));
    }
  for (long n : sizes) {
    const long k = n <= 8192 ? n : 8192;
    std::int8_t *x = nullptr, *y = nullptr;
    std::int32_t* c = nullptr;
    IK_CUDA_CHECK(cudaMalloc(&x, std::size_t(n) * k));
    IK_CUDA_CHECK(cudaMalloc(&y, std::size_t(n) * k));
    IK_CUDA_CHECK(cudaMalloc(&c, std::size_t(n) * n * 4));
    ironkernels::detail::fill_pseudo_random_kernel<<<1024, 256>>>(x, n * k);
    ironkernels::detail::fill_pseudo_random_kernel<<<1024, 256>>>(y, n * k);
    IK_CUDA_CHECK(cudaGetLastError());
    std::int32_t* ref = nullptr;
    IK_CUDA_CHECK(cudaMalloc(&ref, std::size_t(n) * n * 4));
    mma::int8_products(x, y, ref, n, n, k, k, n, 0, nullptr, {}, false);  // the reference: cp.async loads
    std::vector<std::int32_t> want(std::size_t(n) * n), got(std::size_t(n) * n);
    IK_CUDA_CHECK(cudaMemcpy(want.data(), ref, want.size() * 4, cudaMemcpyDeviceToHost));
    auto shape = [&](const char* name, auto tiles, bool tma = false) {
      using Tiles = decltype(tiles);
      IK_CUDA_CHECK(cudaMemset(c, 0, std::size_t(n) * n * 4));
      const double ms = median_ms([&] { mma::int8_products<Tiles>(x, y, c, n, n, k, k, n, 0, nullptr, {}, tma); });
      IK_CUDA_CHECK(cudaMemcpy(got.data(), c, got.size() * 4, cudaMemcpyDeviceToHost));
      std::printf("int8_products_kernel %-26s %ld x %ld x %ld: %8.3f ms  %7.1f TOPS%s\n", name, n, n, k, ms,
                  2.0 * n * n * k / ms / 1e9, got == want ? "" : "  WRONG");
    };
    shape("128x256, 2x4 warps, 3 x 128 B", mma::MmaTiles<128, 256, 2, 4, 3, 128>{});
    shape("3 x 128 B, TMA", mma::MmaTiles<128, 256, 2, 4, 3, 128>{}, true);
    shape("4 x 128 B, TMA", mma::MmaTiles<128, 256, 2, 4, 4, 128>{}, true);
    shape("128x256, 2x4 warps, 4 x 128 B", mma::MmaTiles<128, 256, 2, 4, 4, 128>{});
    shape("128x256, 2x4 warps, 2 x 256 B", mma::MmaTiles<128, 256, 2, 4, 2, 256>{});
    shape("128x256, 2x4 warps, 4 x 64 B", mma::MmaTiles<128, 256, 2, 4, 4, 64>{});
    shape("256x128, 4x2 warps, 3 x 128 B", mma::MmaTiles<256, 128, 4, 2, 3, 128>{});
    if (n == 8192) {  // the pipeline's launch: one per group of moduli (15 copies of X and Y here)
      constexpr int kBatch = 15;
      std::int8_t *xs = nullptr, *ys = nullptr;
      std::int32_t* cs = nullptr;
      IK_CUDA_CHECK(cudaMalloc(&xs, std::size_t(n) * k * kBatch));
      IK_CUDA_CHECK(cudaMalloc(&ys, std::size_t(n) * k * kBatch));
      IK_CUDA_CHECK(cudaMalloc(&cs, std::size_t(n) * n * 4 * kBatch));
      for (int t = 0; t < kBatch; ++t) {
        IK_CUDA_CHECK(cudaMemcpy(xs + std::size_t(t) * n * k, x, std::size_t(n) * k, cudaMemcpyDeviceToDevice));
        IK_CUDA_CHECK(cudaMemcpy(ys + std::size_t(t) * n * k, y, std::size_t(n) * k, cudaMemcpyDeviceToDevice));
      }
      for (bool tma : {false, true}) {
        const double ms =
            median_ms([&] { mma::int8_products(xs, ys, cs, n, n, k, k, n, 0, nullptr, {kBatch, n * k, n * k, n * n}, tma); });
        IK_CUDA_CHECK(cudaMemcpy(got.data(), cs + std::size_t(kBatch - 1) * n * n, got.size() * 4, cudaMemcpyDeviceToHost));
        std::printf("int8_products_kernel %-26s %ld x %ld x %ld: %8.3f ms  %7.1f TOPS%s\n",
                    tma ? "15 in a launch, TMA" : "15 in a launch, cp.async", n, n, k, ms,
                    kBatch * 2.0 * n * n * k / ms / 1e9, got == want ? "" : "  WRONG");
      }
      IK_CUDA_CHECK(cudaFree(xs));
      IK_CUDA_CHECK(cudaFree(ys));
      IK_CUDA_CHECK(cudaFree(cs));
    }
    {
      IK_CUDA_CHECK(cudaMemset(c, 0, std::size_t(n) * n * 4));
      const double ms = median_ms([&] { ironkernels::detail::gemm_wgmma::int8_products(x, y, c, n, n, k, k, n, 0, nullptr); });
      IK_CUDA_CHECK(cudaMemcpy(got.data(), c, got.size() * 4, cudaMemcpyDeviceToHost));
      std::printf("int8_products_wgmma_kernel %-20s %ld x %ld x %ld: %8.3f ms  %7.1f TOPS%s\n", "128x256, TMA, 1+2 warpgroups", n, n,
                  k, ms, 2.0 * n * n * k / ms / 1e9, got == want ? "" : "  WRONG");
      // The fused epilogue: residues mod 251 (one byte per element) instead of INT32.
      const auto modulus = ironkernels::detail::ozaki::residue_constants(251);
      auto* plane = reinterpret_cast<std::uint8_t*>(c);
      const double ms_residues = median_ms([&] {
        ironkernels::detail::gemm_wgmma::int8_product_residues(x, n * k, y, n * k, plane, n * n, n, n, k, k, n, &modulus, 1,
                                                               nullptr, false, 0, nullptr);
      });
      std::vector<std::uint8_t> residues(std::size_t(n) * n);
      IK_CUDA_CHECK(cudaMemcpy(residues.data(), plane, residues.size(), cudaMemcpyDeviceToHost));
      bool same = true;
      for (std::size_t i = 0; i < residues.size() && same; i += 4099)
        same = residues[i] == ((want[i] % 251) + 251) % 251;
      std::printf("int8_products_wgmma_kernel %-20s %ld x %ld x %ld: %8.3f ms  %7.1f TOPS%s\n", "residues mod 251", n, n, k,
                  ms_residues, 2.0 * n * n * k / ms_residues / 1e9, same ? "" : "  WRONG");
    }
    IK_CUDA_CHECK(cudaFree(ref));
    IK_CUDA_CHECK(cudaFree(x));
    IK_CUDA_CHECK(cudaFree(y));
    IK_CUDA_CHECK(cudaFree(c));
  }
  IK_CUDA_CHECK(cudaFree(sink));
  IK_CUDA_CHECK(cudaFree(clocks));
  IK_CUDA_CHECK(cudaFree(operands));
  return 0;
}
