#pragma once
// cuBLAS, opened at first use (dlopen) rather than linked: the library and its Python module load on
// machines without cuBLAS, and only a CUDA gemm there raises, naming what is missing.
#include <cublas_v2.h>

#include "core/cuda_check.hpp"  // IK_STRINGIFY
#include "ironkernels/core/error.hpp"

namespace ironkernels::detail {

struct CublasApi {
  cublasStatus_t (*create)(cublasHandle_t*);
  cublasStatus_t (*destroy)(cublasHandle_t);
  cublasStatus_t (*set_stream)(cublasHandle_t, cudaStream_t);
  cublasStatus_t (*set_workspace)(cublasHandle_t, void*, size_t);
  cublasStatus_t (*gemm_strided_batched_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                            const void*, const void*, cudaDataType, int, long long, const void*,
                                            cudaDataType, int, long long, const void*, void*, cudaDataType, int,
                                            long long, int, cublasComputeType_t, cublasGemmAlgo_t);
};

/// The loaded API (raises UnsupportedError when no libcublas can be opened).
const CublasApi& cublas_api();

const char* cublas_status_name(cublasStatus_t s);

}  // namespace ironkernels::detail

/// IK_CUBLAS_CHECK(call): throws CudaError naming the call, the cuBLAS status and file:line.
#define IK_CUBLAS_CHECK(call)                                                                            \
  do {                                                                                                    \
    const cublasStatus_t ik_status_ = (call);                                                             \
    if (ik_status_ != CUBLAS_STATUS_SUCCESS)                                                              \
      ::ironkernels::raise<::ironkernels::CudaError>(#call, " failed: ",                                  \
                                                    ::ironkernels::detail::cublas_status_name(ik_status_), \
                                                    " at ", __FILE__ ":" IK_STRINGIFY(__LINE__));         \
  } while (0)
