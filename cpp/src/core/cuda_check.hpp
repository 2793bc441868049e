#pragma once
// IK_CUDA_CHECK(call): throws CudaError naming the call, the error and file:line when it fails.
#include <cuda_runtime.h>

#include "ironkernels/core/error.hpp"

#define IK_STRINGIFY_(x) #x
#define IK_STRINGIFY(x) IK_STRINGIFY_(x)

#define IK_CUDA_CHECK(call)                                                                  \
  do {                                                                                        \
    cudaError_t ik_err_ = (call);                                                             \
    if (ik_err_ != cudaSuccess) {                                                             \
      cudaGetLastError(); /* clear it, or the next launch check would report it again */     \
      ::ironkernels::raise<::ironkernels::CudaError>(#call, " failed: ", cudaGetErrorName(ik_err_), \
                                                    " (", cudaGetErrorString(ik_err_), ") at ", \
                                                    __FILE__ ":" IK_STRINGIFY(__LINE__));    \
    }                                                                                         \
  } while (0)

/// After a kernel launch: launch-configuration errors surface here, not at the next call.
#define IK_CUDA_CHECK_LAUNCH(name) IK_CUDA_CHECK((static_cast<void>(name), cudaGetLastError()))
