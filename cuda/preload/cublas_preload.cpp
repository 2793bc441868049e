// libironkernels_cublas.so: cuBLAS's DGEMM entry points for existing programs, loaded with
// LD_PRELOAD. A call it can serve runs as ironkernels::GemmPlan under Contract.native() (certified:
// every emulated element within DGEMM's bound, the rest computed natively) on the handle's stream;
// every other call, and every call of the other entry points, goes to the real cuBLAS unchanged.
// docs/gemm.md ("cuBLAS drop-in") lists what is served. Environment, read once here:
//   IRONKERNELS_CUBLAS_MIN_DIM   serve calls with min(m, n, k) at least this (default 4096; smaller
//                                products are faster in cuBLAS)
//   IRONKERNELS_CUBLAS_REPORT=1  one line per call on stderr: the handle, the shape, and what ran
//                                (emulated with its moduli and native lines, or passed through: why)
//   IRONKERNELS_CUBLAS_ROUTE=0   pass every call through (the interposition alone)
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "ironkernels/core/error.hpp"
#include "ironkernels/gemm.hpp"

#define IK_PRELOAD_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

struct Settings {
  std::int64_t min_dim = 4096;
  bool report = false, route = true;
};

const Settings& settings() {
  static const Settings s = [] {
    Settings v;
    if (const char* e = std::getenv("IRONKERNELS_CUBLAS_MIN_DIM")) v.min_dim = std::max<long long>(1, std::atoll(e));
    if (const char* e = std::getenv("IRONKERNELS_CUBLAS_REPORT")) v.report = std::string(e) == "1";
    if (const char* e = std::getenv("IRONKERNELS_CUBLAS_ROUTE")) v.route = std::string(e) != "0";
    return v;
  }();
  return s;
}

// The real cuBLAS's `name`: the next definition after this library's, else libcublas opened here
// (a program that loaded cuBLAS privately).
void* real_symbol(const char* name) {
  if (void* f = dlsym(RTLD_NEXT, name)) return f;
  static void* lib = [] {
    for (const char* so : {"libcublas.so.13", "libcublas.so.12", "libcublas.so"})
      if (void* l = dlopen(so, RTLD_NOW | RTLD_LOCAL)) return l;
    return static_cast<void*>(nullptr);
  }();
  return lib ? dlsym(lib, name) : nullptr;
}

template <class Fn>
Fn real(const char* name) {
  return reinterpret_cast<Fn>(real_symbol(name));
}

void report(cublasHandle_t handle, const char* routine, std::int64_t m, std::int64_t n, std::int64_t k,
            const std::string& what) {
  if (settings().report)
    std::fprintf(stderr, "ironkernels-cublas: handle %p %s m=%lld n=%lld k=%lld: %s\n", static_cast<void*>(handle),
                 routine, static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k), what.c_str());
}

// Why a DGEMM is not served ("" where it is): cuBLAS's own argument errors, device-side scalars and
// small products stay with cuBLAS.
std::string refusal(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, std::int64_t m, std::int64_t n,
                    std::int64_t k, std::int64_t lda, std::int64_t ldb, std::int64_t ldc) {
  if (!settings().route) return "IRONKERNELS_CUBLAS_ROUTE=0";
  if (m < 0 || n < 0 || k < 0 || lda < std::max<std::int64_t>(1, ta == CUBLAS_OP_N ? m : k) ||
      ldb < std::max<std::int64_t>(1, tb == CUBLAS_OP_N ? k : n) || ldc < std::max<std::int64_t>(1, m))
    return "arguments cuBLAS checks";
  if (std::min({m, n, k}) < settings().min_dim) return "below IRONKERNELS_CUBLAS_MIN_DIM";
  if (k > ironkernels::kGemmMaxK) return "k above the emulation's maximum";
  cublasPointerMode_t mode = CUBLAS_POINTER_MODE_HOST;
  auto get_mode = real<cublasStatus_t (*)(cublasHandle_t, cublasPointerMode_t*)>("cublasGetPointerMode_v2");
  if (!get_mode || get_mode(handle, &mode) != CUBLAS_STATUS_SUCCESS) return "pointer mode unknown";
  if (mode != CUBLAS_POINTER_MODE_HOST) return "alpha and beta in device memory";
  return "";
}

// C = alpha·op(A)·op(B) + beta·C in column-major storage, as ironkernels::GemmPlan: each matrix a
// view with strides (1, ld). Returns false (nothing queued) where the plan refuses the arguments.
bool serve(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, std::int64_t m,
           std::int64_t n, std::int64_t k, double alpha, const double* a, std::int64_t lda, const double* b,
           std::int64_t ldb, double beta, double* c, std::int64_t ldc, std::string& why) {
  using namespace ironkernels;
  cudaStream_t stream = nullptr;
  auto get_stream = real<cublasStatus_t (*)(cublasHandle_t, cudaStream_t*)>("cublasGetStream_v2");
  if (!get_stream || get_stream(handle, &stream) != CUBLAS_STATUS_SUCCESS) {
    why = "the handle's stream unknown";
    return false;
  }
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    why = "no current device";
    return false;
  }
  const Device dev{DeviceType::cuda, device};
  const bool trans_a = ta != CUBLAS_OP_N, trans_b = tb != CUBLAS_OP_N;  // (C and T alike for real values)
  auto view = [&](const double* p, std::int64_t rows, std::int64_t cols, std::int64_t ld) {
    ArrayView v;
    v.data = const_cast<double*>(p);
    v.dtype = DType::float64;
    v.device = dev;
    v.shape = {rows, cols};
    v.strides = {1, ld};
    return v;
  };
  const ArrayView av = trans_a ? view(a, k, m, lda) : view(a, m, k, lda);
  const ArrayView bv = trans_b ? view(b, n, k, ldb) : view(b, k, n, ldb);
  const ArrayView cv = view(c, m, n, ldc);
  GemmContract contract;
  contract.native = true;
  contract.scaling = GemmScaling::norm;
  void* workspace = nullptr;
  try {
    const std::shared_ptr<GemmPlan> plan = gemm_plan(m, n, k, trans_a, trans_b, contract, dev);
    const std::size_t bytes = plan->workspace_bytes();
    if (cudaMallocAsync(&workspace, bytes ? bytes : 1, stream) != cudaSuccess) {
      why = "no device memory for the workspace";
      return false;
    }
    plan->tune_once(workspace, bytes, Stream(stream));
    plan->run(av, bv, cv, alpha, beta, workspace, bytes, Stream(stream));
    if (settings().report) {
      const GemmReport r = plan->report(workspace, Stream(stream));
      why = r.whole_native ? "native float64 (the certificate's choice)"
                           : "emulated, " + std::to_string(r.moduli) + " moduli, certified, " +
                                 std::to_string(r.native_rows) + " rows and " + std::to_string(r.native_cols) +
                                 " columns native";
    }
    cudaFreeAsync(workspace, stream);
    return true;
  } catch (const ValueError& e) {  // refused before anything was queued
    why = std::string("refused: ") + e.what();
  } catch (const std::exception& e) {
    why = std::string("failed: ") + e.what();
  }
  if (workspace) cudaFreeAsync(workspace, stream);
  return false;
}

using DgemmFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const double*,
                                   const double*, int, const double*, int, const double*, double*, int);
using Dgemm64Fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, std::int64_t,
                                     std::int64_t, std::int64_t, const double*, const double*, std::int64_t,
                                     const double*, std::int64_t, const double*, double*, std::int64_t);

// The served path of every DGEMM-shaped entry point: true when it ran here.
bool try_serve(cublasHandle_t handle, const char* routine, cublasOperation_t ta, cublasOperation_t tb, std::int64_t m,
               std::int64_t n, std::int64_t k, const double* alpha, const double* a, std::int64_t lda, const double* b,
               std::int64_t ldb, const double* beta, double* c, std::int64_t ldc) {
  std::string why = refusal(handle, ta, tb, m, n, k, lda, ldb, ldc);
  const bool served = why.empty() && serve(handle, ta, tb, m, n, k, *alpha, a, lda, b, ldb, *beta, c, ldc, why);
  report(handle, routine, m, n, k, served ? why.empty() ? std::string("emulated") : why : "passed through: " + why);
  return served;
}

}  // namespace

IK_PRELOAD_EXPORT cublasStatus_t cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb,
                                                int m, int n, int k, const double* alpha, const double* a, int lda,
                                                const double* b, int ldb, const double* beta, double* c, int ldc) {
  if (try_serve(handle, "cublasDgemm_v2", ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc))
    return CUBLAS_STATUS_SUCCESS;
  static const DgemmFn next = real<DgemmFn>("cublasDgemm_v2");
  return next ? next(handle, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) : CUBLAS_STATUS_NOT_INITIALIZED;
}

IK_PRELOAD_EXPORT cublasStatus_t cublasDgemm_v2_64(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb,
                                                   std::int64_t m, std::int64_t n, std::int64_t k, const double* alpha,
                                                   const double* a, std::int64_t lda, const double* b, std::int64_t ldb,
                                                   const double* beta, double* c, std::int64_t ldc) {
  if (try_serve(handle, "cublasDgemm_v2_64", ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc))
    return CUBLAS_STATUS_SUCCESS;
  static const Dgemm64Fn next = real<Dgemm64Fn>("cublasDgemm_v2_64");
  return next ? next(handle, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) : CUBLAS_STATUS_NOT_INITIALIZED;
}

// cublasGemmEx: served where every type is float64 with 64-bit compute; all else passes through.
IK_PRELOAD_EXPORT cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, int m,
                                              int n, int k, const void* alpha, const void* a, cudaDataType a_type,
                                              int lda, const void* b, cudaDataType b_type, int ldb, const void* beta,
                                              void* c, cudaDataType c_type, int ldc, cublasComputeType_t compute,
                                              cublasGemmAlgo_t algo) {
  const bool float64 = a_type == CUDA_R_64F && b_type == CUDA_R_64F && c_type == CUDA_R_64F &&
                       (compute == CUBLAS_COMPUTE_64F || compute == CUBLAS_COMPUTE_64F_PEDANTIC);
  if (float64 && try_serve(handle, "cublasGemmEx", ta, tb, m, n, k, static_cast<const double*>(alpha),
                           static_cast<const double*>(a), lda, static_cast<const double*>(b), ldb,
                           static_cast<const double*>(beta), static_cast<double*>(c), ldc))
    return CUBLAS_STATUS_SUCCESS;
  if (!float64) report(handle, "cublasGemmEx", m, n, k, "passed through: not float64");
  using Fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                                cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
  static const Fn next = real<Fn>("cublasGemmEx");
  return next ? next(handle, ta, tb, m, n, k, alpha, a, a_type, lda, b, b_type, ldb, beta, c, c_type, ldc, compute, algo)
              : CUBLAS_STATUS_NOT_INITIALIZED;
}

// The strided-batched DGEMM: each product served as above (one plan, run per product), else the
// whole call passes through.
IK_PRELOAD_EXPORT cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t handle, cublasOperation_t ta,
                                                           cublasOperation_t tb, int m, int n, int k,
                                                           const double* alpha, const double* a, int lda,
                                                           long long stride_a, const double* b, int ldb,
                                                           long long stride_b, const double* beta, double* c, int ldc,
                                                           long long stride_c, int batch) {
  std::string why = refusal(handle, ta, tb, m, n, k, lda, ldb, ldc);
  if (why.empty() && batch < 1) why = "an empty batch";
  if (why.empty()) {
    int done = 0;
    for (; done < batch; ++done)
      if (!serve(handle, ta, tb, m, n, k, *alpha, a + done * stride_a, lda,
                 b + done * stride_b, ldb, *beta, c + done * stride_c, ldc, why))
        break;
    if (done == batch) {
      report(handle, "cublasDgemmStridedBatched", m, n, k, "emulated, " + std::to_string(batch) + " products");
      return CUBLAS_STATUS_SUCCESS;
    }
    if (done > 0) {  // the rest in cuBLAS (products are independent)
      a += done * stride_a, b += done * stride_b, c += done * stride_c, batch -= done;
      why = std::to_string(done) + " emulated, the rest passed through: " + why;
    }
  }
  report(handle, "cublasDgemmStridedBatched", m, n, k, "passed through: " + why);
  using Fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const double*,
                                const double*, int, long long, const double*, int, long long, const double*, double*,
                                int, long long, int);
  static const Fn next = real<Fn>("cublasDgemmStridedBatched");
  return next ? next(handle, ta, tb, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c, ldc, stride_c, batch)
              : CUBLAS_STATUS_NOT_INITIALIZED;
}
