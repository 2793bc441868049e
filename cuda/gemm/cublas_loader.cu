// cuBLAS and cuBLASLt opened at first use (dlopen), so that the library and its Python module load
// on machines without them (cublas_loader.hpp).
#include <dlfcn.h>

#include <initializer_list>
#include <mutex>

#include "gemm/cublas_loader.hpp"

namespace ironkernels::detail {

const char* cublas_status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "unknown cuBLAS status";
}

namespace {
// The first of `names` that dlopen finds (nullptr if none).
void* open_library(std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return lib;
  return nullptr;
}

// fn = the symbol `name` of `lib`; the first missing name is kept in `missing`.
template <class Fn>
void bind(void* lib, Fn& fn, const char* name, const char*& missing) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  if (!fn && !missing) missing = name;
}
}  // namespace

const CublasApi& cublas_api() {
  static std::once_flag once;
  static CublasApi api{};
  static const char* failure = nullptr;
  std::call_once(once, [] {
    void* lib = open_library({"libcublas.so.13", "libcublas.so.12", "libcublas.so"});
    if (!lib) {
      failure = "libcublas.so (13 or 12) not found on the library path";
      return;
    }
    bind(lib, api.create, "cublasCreate_v2", failure);
    bind(lib, api.destroy, "cublasDestroy_v2", failure);
    bind(lib, api.set_stream, "cublasSetStream_v2", failure);
    bind(lib, api.set_workspace, "cublasSetWorkspace_v2", failure);
    bind(lib, api.gemm_strided_batched_ex, "cublasGemmStridedBatchedEx", failure);
    bind(lib, api.dgemm, "cublasDgemm_v2", failure);
  });
  if (failure) raise<UnsupportedError>("gemm: the CUDA backend needs cuBLAS: ", failure);
  return api;
}

const CublasLtApi* cublas_lt_api() {
  static std::once_flag once;
  static CublasLtApi api{};
  static bool loaded = false;
  std::call_once(once, [] {
    void* lib = open_library({"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"});
    if (!lib) return;
    const char* missing = nullptr;
    bind(lib, api.create, "cublasLtCreate", missing);
    bind(lib, api.destroy, "cublasLtDestroy", missing);
    bind(lib, api.desc_create, "cublasLtMatmulDescCreate", missing);
    bind(lib, api.desc_destroy, "cublasLtMatmulDescDestroy", missing);
    bind(lib, api.desc_set, "cublasLtMatmulDescSetAttribute", missing);
    bind(lib, api.layout_create, "cublasLtMatrixLayoutCreate", missing);
    bind(lib, api.layout_destroy, "cublasLtMatrixLayoutDestroy", missing);
    bind(lib, api.pref_create, "cublasLtMatmulPreferenceCreate", missing);
    bind(lib, api.pref_destroy, "cublasLtMatmulPreferenceDestroy", missing);
    bind(lib, api.pref_set, "cublasLtMatmulPreferenceSetAttribute", missing);
    bind(lib, api.heuristic, "cublasLtMatmulAlgoGetHeuristic", missing);
    bind(lib, api.matmul, "cublasLtMatmul", missing);
    loaded = !missing;
  });
  return loaded ? &api : nullptr;
}

}  // namespace ironkernels::detail
