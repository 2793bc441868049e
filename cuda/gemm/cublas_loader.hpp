#pragma once
// cuBLAS, opened at first use (dlopen) rather than linked: the library and its Python module load on
// machines without cuBLAS, and only a CUDA gemm there raises, naming what is missing.
#include <cublasLt.h>
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
  cublasStatus_t (*dgemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const double*,
                          const double*, int, const double*, int, const double*, double*, int);
};

/// The loaded API (raises UnsupportedError when no libcublas can be opened).
const CublasApi& cublas_api();

/// cuBLASLt, for the algorithm choice of GemmPlan::tune (the products run through cublasGemmEx
/// without it).
struct CublasLtApi {
  cublasStatus_t (*create)(cublasLtHandle_t*);
  cublasStatus_t (*destroy)(cublasLtHandle_t);
  cublasStatus_t (*desc_create)(cublasLtMatmulDesc_t*, cublasComputeType_t, cudaDataType_t);
  cublasStatus_t (*desc_destroy)(cublasLtMatmulDesc_t);
  cublasStatus_t (*desc_set)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, const void*, size_t);
  cublasStatus_t (*layout_create)(cublasLtMatrixLayout_t*, cudaDataType, uint64_t, uint64_t, int64_t);
  cublasStatus_t (*layout_destroy)(cublasLtMatrixLayout_t);
  cublasStatus_t (*pref_create)(cublasLtMatmulPreference_t*);
  cublasStatus_t (*pref_destroy)(cublasLtMatmulPreference_t);
  cublasStatus_t (*pref_set)(cublasLtMatmulPreference_t, cublasLtMatmulPreferenceAttributes_t, const void*, size_t);
  cublasStatus_t (*heuristic)(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                              cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatmulPreference_t, int,
                              cublasLtMatmulHeuristicResult_t*, int*);
  cublasStatus_t (*matmul)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void*, const void*, cublasLtMatrixLayout_t,
                           const void*, cublasLtMatrixLayout_t, const void*, const void*, cublasLtMatrixLayout_t,
                           void*, cublasLtMatrixLayout_t, const cublasLtMatmulAlgo_t*, void*, size_t, cudaStream_t);
};

/// The loaded cuBLASLt API, or nullptr when no libcublasLt can be opened.
const CublasLtApi* cublas_lt_api();

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
