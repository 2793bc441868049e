#pragma once
// What planning needs of the wgmma engine without its kernel: the tile of C a block computes (the
// engine is chosen where its tiles fill the GPU) and whether a device can run it.
#include <cuda_runtime.h>

#include "core/cuda_check.hpp"

namespace ironkernels::detail::gemm_wgmma {

constexpr int kTileM = 128, kTileN = 256;

/// Whether this build can run the wgmma engine on `device`: sm_90a code built in and compute
/// capability 9.0 (sm_90a code runs on 9.0 only).
inline bool available(int device) {
#ifdef IRONKERNELS_HAS_SM90A
  int major = 0, minor = 0;
  IK_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  IK_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return major == 9 && minor == 0;
#else
  (void)device;
  return false;
#endif
}

}  // namespace ironkernels::detail::gemm_wgmma
