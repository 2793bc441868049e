#pragma once
// Host-side launch helpers shared by the CUDA kernels of every area.
#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <utility>

#include "core/cuda_check.hpp"

namespace ironkernels::detail {

// Raises a kernel's dynamic shared-memory limit above the 48 KB default, per (kernel, device),
// whenever a launch needs more than what was set before.
inline void allow_smem(const void* kernel, int bytes, int device) {
  if (bytes <= 48 * 1024) return;
  static std::mutex mutex;
  static std::map<std::pair<const void*, int>, int> limit;
  std::lock_guard<std::mutex> lock(mutex);
  int& current = limit[{kernel, device}];
  if (bytes <= current) return;
  IK_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  current = bytes;
}

}  // namespace ironkernels::detail
