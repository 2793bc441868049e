// The INT8 mma.sync rate the GEMM's mma engine is measured against: a register-only loop (every warp
// issuing independent m16n8k32 mma.sync on registers, no memory traffic) and the engine's product
// kernel (cuda/gemm/gemm_int8_mma.cuh) in several tile shapes on n × n × k products of random
// residues, and the wgmma engine (gemm_int8_wgmma.cuh), as TOPS (2mnk per product), median of 10
// launches after 3 warm-ups; each product is checked against the engine's shape, bit for bit.
// Arguments: the sizes n to run (default 4096 8192 16384); IK_BENCH_ONCE=1: one launch each (ncu).
//
// Build: cmake -B build -DIRONKERNELS_BUILD_BENCH=ON && cmake --build build --target gemm_mma_ceiling
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_timing.cuh"
#include "common/ptx.cuh"
#include "core/cuda_check.hpp"
#include "gemm/gemm_int8_mma.cuh"
#include "gemm/gemm_int8_wgmma.cuh"

namespace ptx = ironkernels::detail::ptx;
namespace mma = ironkernels::detail::gemm_mma;

namespace {
constexpr int kChains = 8;  // independent accumulators per warp: enough to cover the mma latency

__global__ void __launch_bounds__(256) register_mma_loop(int iterations, std::int32_t* sink) {
  std::uint32_t a[4] = {threadIdx.x, threadIdx.x * 3u, threadIdx.x * 5u, threadIdx.x * 7u}, b[2] = {blockIdx.x, 11u};
  std::int32_t acc[kChains][4] = {};
  for (int i = 0; i < iterations; ++i)
#pragma unroll
    for (int c = 0; c < kChains; ++c) ptx::mma_m16n8k32_s8(acc[c], a, b, acc[c]);
  std::int32_t s = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c) s += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
  if (s == 0x7fffffff) sink[0] = s;  // keeps the loop
}

bool once = false;  // one launch per measurement (IK_BENCH_ONCE set: under a profiler)
template <class F>
double median_ms(F&& launch) { return once ? median_launch_ms(launch, 0, 1) : median_launch_ms(launch, 3, 10); }
}  // namespace

int main(int argc, char** argv) {
  std::vector<long> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atol(argv[i]));
  if (sizes.empty()) sizes = {4096L, 8192L, 16384L};
  once = std::getenv("IK_BENCH_ONCE") != nullptr;
  int sms = 0;
  IK_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::int32_t* sink = nullptr;
  IK_CUDA_CHECK(cudaMalloc(&sink, 4));
  constexpr int kIterations = 4096;
  for (int blocks_per_sm : {1, 2, 4}) {
    const int blocks = sms * blocks_per_sm;
    const double ms = median_ms([&] {
      register_mma_loop<<<blocks, 256>>>(kIterations, sink);
      IK_CUDA_CHECK(cudaGetLastError());
    });
    const double ops = 2.0 * 16 * 8 * 32 * double(kChains) * kIterations * (blocks * 8.0);
    std::printf("register-only mma.sync m16n8k32 s8, %d blocks of 8 warps per SM: %7.1f TOPS\n", blocks_per_sm,
                ops / ms / 1e9);
  }
  for (long n : sizes) {
    const long k = n <= 8192 ? n : 8192;
    std::int8_t *x = nullptr, *y = nullptr;
    std::int32_t* c = nullptr;
    IK_CUDA_CHECK(cudaMalloc(&x, std::size_t(n) * k));
    IK_CUDA_CHECK(cudaMalloc(&y, std::size_t(n) * k));
    IK_CUDA_CHECK(cudaMalloc(&c, std::size_t(n) * n * 4));
    mma::fill_pseudo_random_kernel<<<1024, 256>>>(x, n * k);
    mma::fill_pseudo_random_kernel<<<1024, 256>>>(y, n * k);
    IK_CUDA_CHECK(cudaGetLastError());
    std::int32_t* ref = nullptr;
    IK_CUDA_CHECK(cudaMalloc(&ref, std::size_t(n) * n * 4));
    mma::int8_products(x, y, ref, n, n, k, k, n, 0, nullptr);
    std::vector<std::int32_t> want(std::size_t(n) * n), got(std::size_t(n) * n);
    IK_CUDA_CHECK(cudaMemcpy(want.data(), ref, want.size() * 4, cudaMemcpyDeviceToHost));
    auto shape = [&](const char* name, auto tiles) {
      using Tiles = decltype(tiles);
      IK_CUDA_CHECK(cudaMemset(c, 0, std::size_t(n) * n * 4));
      const double ms = median_ms([&] { mma::int8_products<Tiles>(x, y, c, n, n, k, k, n, 0, nullptr); });
      IK_CUDA_CHECK(cudaMemcpy(got.data(), c, got.size() * 4, cudaMemcpyDeviceToHost));
      std::printf("int8_products_kernel %-26s %ld x %ld x %ld: %8.3f ms  %7.1f TOPS%s\n", name, n, n, k, ms,
                  2.0 * n * n * k / ms / 1e9, got == want ? "" : "  WRONG");
    };
    shape("128x256, 2x4 warps, 4 x 128 B", mma::MmaTiles<128, 256, 2, 4, 4, 128>{});
    shape("128x256, 2x4 warps, 3 x 128 B", mma::MmaTiles<128, 256, 2, 4, 3, 128>{});
    shape("128x256, 2x4 warps, 4 x 64 B", mma::MmaTiles<128, 256, 2, 4, 4, 64>{});
    shape("256x128, 4x2 warps, 4 x 128 B", mma::MmaTiles<256, 128, 4, 2, 4, 128>{});
    shape("128x128, 2x2 warps, 4 x 128 B", mma::MmaTiles<128, 128, 2, 2, 4, 128>{});
    shape("128x128, 2x4 warps, 4 x 128 B", mma::MmaTiles<128, 128, 2, 4, 4, 128>{});
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
  return 0;
}
