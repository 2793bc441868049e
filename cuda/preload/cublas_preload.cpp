// libironkernels_cublas.so: cuBLAS's DGEMM, ZGEMM and SGEMM entry points for existing programs,
// loaded with LD_PRELOAD. A call it can serve runs on the handle's stream as ironkernels.gemm runs
// that dtype, through ironkernels::GemmPlan, so its bits are that call's:
//   float64     one product under Contract.native() (certified: every emulated element within
//               DGEMM's bound, the rest computed natively);
//   complex128  [Re | Im] as one real product over 2k and 2n columns under Contract.native() on
//               stacked copies of the operands (_gemm_complex.py; CUBLAS_OP_C negates the imaginary
//               parts there), then alpha·(Re + i·Im) + beta·C, each operation rounded on its own;
//   float32     the operands widened to float64, one product under Contract(rtol=√k·2⁻²⁴) with
//               alpha and beta, rounded once to float32 (_gemm_single.py).
// Every other call (reduced-precision float32 arithmetic included), and every call of the other
// entry points, goes to the real cuBLAS unchanged. docs/gemm.md ("cuBLAS drop-in") lists what is
// served. Environment, read once here:
//   IRONKERNELS_CUBLAS_MIN_DIM   serve calls with min(m, n, k) at least this (default 4096; smaller
//                                products are faster in cuBLAS)
//   IRONKERNELS_CUBLAS_REPORT=1  one line per call on stderr: the handle, the shape, and what ran
//                                (emulated with its moduli and native lines, or passed through: why)
//   IRONKERNELS_CUBLAS_ROUTE=0   pass every call through (the interposition alone)
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "core/aligned_offsets.hpp"
#include "ironkernels/core/error.hpp"
#include "ironkernels/gemm.hpp"
#include "preload_convert.hpp"

#define IK_PRELOAD_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using namespace ironkernels;

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

// What a call is served as: gemm's float64, complex128 or float32 path (float32_pedantic: a
// GemmEx compute type that overrides the handle's math mode).
enum class Kind { float64, complex128, float32, float32_pedantic };
template <class T>
constexpr Kind kind_of = std::is_same_v<T, float> ? Kind::float32
                         : std::is_same_v<T, double> ? Kind::float64 : Kind::complex128;

// Why a call is not served ("" where it is): cuBLAS's own argument errors, float32 under a math
// mode that lets cuBLAS round the operands (TF32 and the like), device-side scalars and small
// products stay with cuBLAS; so do complex products whose real ones (over 2k) exceed the maximum.
std::string refusal(cublasHandle_t handle, Kind kind, cublasOperation_t ta, cublasOperation_t tb, std::int64_t m,
                    std::int64_t n, std::int64_t k, std::int64_t lda, std::int64_t ldb, std::int64_t ldc) {
  if (!settings().route) return "IRONKERNELS_CUBLAS_ROUTE=0";
  const auto op_ok = [](cublasOperation_t op) { return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C; };
  if (!op_ok(ta) || !op_ok(tb) || m < 0 || n < 0 || k < 0 ||
      lda < std::max<std::int64_t>(1, ta == CUBLAS_OP_N ? m : k) ||
      ldb < std::max<std::int64_t>(1, tb == CUBLAS_OP_N ? k : n) || ldc < std::max<std::int64_t>(1, m))
    return "arguments cuBLAS checks";
  if (kind == Kind::float32) {
    cublasMath_t math = CUBLAS_DEFAULT_MATH;
    auto get_math = real<cublasStatus_t (*)(cublasHandle_t, cublasMath_t*)>("cublasGetMathMode");
    if (!get_math || get_math(handle, &math) != CUBLAS_STATUS_SUCCESS) return "math mode unknown";
    const int base = math & 0xf;
    if (base != CUBLAS_DEFAULT_MATH && base != CUBLAS_PEDANTIC_MATH)
      return "a reduced-precision compute type (the handle's math mode)";
  }
  if (std::min({m, n, k}) < settings().min_dim) return "below IRONKERNELS_CUBLAS_MIN_DIM";
  if (kind == Kind::complex128 && 2 * k > kGemmMaxK) return "2k above the emulation's maximum (complex products)";
  if (k > kGemmMaxK) return "k above the emulation's maximum";
  cublasPointerMode_t mode = CUBLAS_POINTER_MODE_HOST;
  auto get_mode = real<cublasStatus_t (*)(cublasHandle_t, cublasPointerMode_t*)>("cublasGetPointerMode_v2");
  if (!get_mode || get_mode(handle, &mode) != CUBLAS_STATUS_SUCCESS) return "pointer mode unknown";
  if (mode != CUBLAS_POINTER_MODE_HOST) return "alpha and beta in device memory";
  return "";
}

// One served call: the handle's stream and device, and one device allocation on that stream
// holding every buffer the call needs (reserve() them first), freed on the stream however the call ends.
class Call {
 public:
  cudaStream_t stream = nullptr;
  Device device{DeviceType::cuda, 0};

  Call() = default;
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;
  ~Call() {
    if (base_) cudaFreeAsync(base_, stream);
  }
  bool open(cublasHandle_t handle, std::string& why) {
    auto get_stream = real<cublasStatus_t (*)(cublasHandle_t, cudaStream_t*)>("cublasGetStream_v2");
    if (!get_stream || get_stream(handle, &stream) != CUBLAS_STATUS_SUCCESS) why = "the handle's stream unknown";
    else if (cudaGetDevice(&device.id) != cudaSuccess) why = "no current device";
    else return true;
    return false;
  }
  std::size_t reserve(std::size_t bytes) { return offsets_.take(bytes); }  // its offset in the allocation
  bool allocate(std::string& why) {
    if (cudaMallocAsync(&base_, std::max<std::size_t>(offsets_.total, 1), stream) == cudaSuccess) return true;
    base_ = nullptr;
    why = "no device memory for the workspace";
    return false;
  }
  template <class T = double>
  T* at(std::size_t offset) const {
    return reinterpret_cast<T*>(static_cast<char*>(base_) + offset);
  }
  // A float64 view of rows × cols elements at p with strides (rs, cs).
  ArrayView view(const double* p, std::int64_t rows, std::int64_t cols, std::int64_t rs, std::int64_t cs) const {
    ArrayView v;
    v.data = const_cast<double*>(p);
    v.dtype = DType::float64;
    v.device = device;
    v.shape = {rows, cols};
    v.strides = {rs, cs};
    return v;
  }
  ArrayView columns(const double* p, std::int64_t rows, std::int64_t cols, std::int64_t ld) const {
    return view(p, rows, cols, 1, ld);
  }
  ArrayView rows(const double* p, std::int64_t height, std::int64_t width) const {
    return view(p, height, width, width, 1);
  }

 private:
  void* base_ = nullptr;
  detail::AlignedOffsets offsets_;
};

void check(cudaError_t e) {
  if (e != cudaSuccess) throw std::runtime_error(cudaGetErrorString(e));
}

// The certified contract gemm's Python path passes to its real product (norm scaling): native
// (rtol = √k·2⁻⁵³ at the plan's k, Contract.native()) where rtol is 0, else this rtol.
GemmContract certified(double rtol) {
  GemmContract c;
  c.scaling = GemmScaling::norm;
  c.native = rtol == 0.0;
  c.rtol = rtol;
  return c;
}

// Runs the plan (tuned on its first run) with the workspace at `ws`: the report in words where
// IRONKERNELS_CUBLAS_REPORT is on, else "".
std::string run(GemmPlan& plan, const ArrayView& a, const ArrayView& b, const ArrayView& c, double alpha, double beta,
                const Call& call, std::size_t ws) {
  void* workspace = call.at<void>(ws);
  const std::size_t bytes = plan.workspace_bytes();
  plan.tune_once(workspace, bytes, Stream(call.stream));
  plan.run(a, b, c, alpha, beta, workspace, bytes, Stream(call.stream));
  if (!settings().report) return "";
  const GemmReport r = plan.report(workspace, Stream(call.stream));
  return r.whole_native ? "native float64 (the certificate's choice)"
                        : "emulated, " + std::to_string(r.moduli) + " moduli, certified, " +
                              std::to_string(r.native_rows) + " rows and " + std::to_string(r.native_cols) +
                              " columns native";
}

// `body` (true where it queued the call), its exceptions turned into the reason it passes through.
template <class Body>
bool guarded(std::string& why, Body&& body) {
  try {
    return body();
  } catch (const ValueError& e) {  // refused before C was written
    why = std::string("refused: ") + e.what();
  } catch (const std::exception& e) {
    why = std::string("failed: ") + e.what();
  }
  return false;
}

// C = alpha·op(A)·op(B) + beta·C in column-major storage, each matrix a view with strides (1, ld),
// as gemm's float64 path: one plan run straight into C. False (C untouched) where it is not served.
bool serve(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, std::int64_t m, std::int64_t n,
           std::int64_t k, double alpha, const double* a, std::int64_t lda, const double* b, std::int64_t ldb,
           double beta, double* c, std::int64_t ldc, std::string& why) {
  Call call;
  return call.open(handle, why) && guarded(why, [&] {
    const bool trans_a = ta != CUBLAS_OP_N, trans_b = tb != CUBLAS_OP_N;  // (C and T alike for real values)
    const std::shared_ptr<GemmPlan> plan = gemm_plan(m, n, k, trans_a, trans_b, certified(0.0), call.device);
    const std::size_t ws = call.reserve(plan->workspace_bytes());
    if (!call.allocate(why)) return false;
    why = run(*plan, call.columns(a, trans_a ? k : m, trans_a ? m : k, lda),
              call.columns(b, trans_b ? n : k, trans_b ? k : n, ldb), call.columns(c, m, n, ldc), alpha, beta, call,
              ws);
    return true;
  });
}

// The same in complex128, as gemm's complex path (_gemm_complex.py): op(x) = (Re op(A), Im op(A))
// (m × 2k), the parts interleaved along k, in A's own orientation (the transpose stays a flag) in a
// row-major copy; op(y) = [Y_re | Y_im] (2k × 2n), Y_re = (Re op(B), −Im op(B)) and Y_im = (Im op(B),
// Re op(B)), by gemm_complex_columns from B's columns (rows of the row-major view B is): B of
// CUBLAS_OP_N is op(B)ᵀ there, so the plan's op(y) is transposed where cuBLAS's op(B) is not
// (CUBLAS_OP_C conjugates its operand: its Im negated). [Re | Im] = op(x)·op(y) by one plan
// (GemmColumns::complex_pairs) into a row-major temporary, then C = alpha·(Re + i·Im) + beta·C
// element by element.
bool serve(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, std::int64_t m, std::int64_t n,
           std::int64_t k, cuDoubleComplex alpha, const cuDoubleComplex* a, std::int64_t lda, const cuDoubleComplex* b,
           std::int64_t ldb, cuDoubleComplex beta, cuDoubleComplex* c, std::int64_t ldc, std::string& why) {
  const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % sizeof(cuDoubleComplex) == 0; };
  if (!aligned(a) || !aligned(b) || !aligned(c)) {
    why = "complex operands not 16-byte aligned";
    return false;
  }
  Call call;
  return call.open(handle, why) && guarded(why, [&] {
    using preload::Half;
    const bool trans_a = ta != CUBLAS_OP_N, y_transposed = tb == CUBLAS_OP_N;
    const bool conj_a = ta == CUBLAS_OP_C, conj_b = tb == CUBLAS_OP_C;
    const std::int64_t k2 = 2 * k;
    const std::shared_ptr<GemmPlan> plan = gemm_plan(m, 2 * n, k2, trans_a, y_transposed, certified(0.0), call.device,
                                                     GemmBackend::automatic, GemmColumns::complex_pairs);
    const std::size_t x = call.reserve(sizeof(double) * m * k2), y = call.reserve(sizeof(double) * k2 * 2 * n),
                      parts = call.reserve(sizeof(double) * m * 2 * n), ws = call.reserve(plan->workspace_bytes());
    if (!call.allocate(why)) return false;
    const Half real{false, false};
    check(preload::stack_complex(a, trans_a ? k : m, trans_a ? m : k, lda, trans_a,
                                 {call.at(x), real, Half{true, conj_a}}, call.stream));
    ArrayView b_rows;  // B (column-major, ldb) as the row-major matrix of its columns
    b_rows.data = const_cast<cuDoubleComplex*>(b), b_rows.dtype = DType::complex128, b_rows.device = call.device;
    b_rows.shape = {y_transposed ? n : k, y_transposed ? k : n}, b_rows.strides = {ldb, 1};
    const std::int64_t y_rows = y_transposed ? 2 * n : k2, y_cols = y_transposed ? k2 : 2 * n;
    gemm_complex_columns(b_rows, y_transposed, call.rows(call.at(y), y_rows, y_cols), Stream(call.stream), conj_b);
    why = run(*plan, call.rows(call.at(x), trans_a ? k2 : m, trans_a ? m : k2), call.rows(call.at(y), y_rows, y_cols),
              call.rows(call.at(parts), m, 2 * n), 1.0, 0.0, call, ws);
    check(preload::combine_complex(call.at(parts), call.at(parts) + n, m, n, 2 * n, alpha, beta, c, ldc, call.stream));
    if (settings().report) why = "[Re | Im] " + why;
    return true;
  });
}

// The same in float32, as gemm's float32 path (_gemm_single.py): A and B widened to float64
// (column-major, their layout), Contract.native() read as rtol = √k·2⁻²⁴, alpha·P + beta·C formed by
// the plan in float64 into a row-major temporary (C widened into it where beta != 0), then rounded
// once to float32 into C.
bool serve(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, std::int64_t m, std::int64_t n,
           std::int64_t k, float alpha, const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta,
           float* c, std::int64_t ldc, std::string& why) {
  Call call;
  return call.open(handle, why) && guarded(why, [&] {
    const bool trans_a = ta != CUBLAS_OP_N, trans_b = tb != CUBLAS_OP_N;
    const GemmContract single = certified(std::sqrt(double(std::max<std::int64_t>(k, 1))) * 0x1p-24);
    const std::shared_ptr<GemmPlan> plan = gemm_plan(m, n, k, trans_a, trans_b, single, call.device);
    const std::int64_t a_rows = trans_a ? k : m, a_cols = trans_a ? m : k, b_rows = trans_b ? n : k,
                       b_cols = trans_b ? k : n;
    const std::size_t wide_a = call.reserve(sizeof(double) * a_rows * a_cols),
                      wide_b = call.reserve(sizeof(double) * b_rows * b_cols),
                      p = call.reserve(sizeof(double) * m * n), ws = call.reserve(plan->workspace_bytes());
    if (!call.allocate(why)) return false;
    const bool use_c = beta != 0.0f;
    check(preload::widen(a, a_rows, a_cols, lda, call.at(wide_a), call.stream));
    check(preload::widen(b, b_rows, b_cols, ldb, call.at(wide_b), call.stream));
    if (use_c) check(preload::widen_to_rows(c, m, n, ldc, call.at(p), call.stream));
    why = run(*plan, call.columns(call.at(wide_a), a_rows, a_cols, a_rows),
              call.columns(call.at(wide_b), b_rows, b_cols, b_rows), call.rows(call.at(p), m, n), alpha,
              use_c ? beta : 0.0, call, ws);
    check(preload::narrow_from_rows(call.at(p), m, n, c, ldc, call.stream));
    return true;
  });
}

// The served path of every GEMM-shaped entry point: true when it ran here.
template <class T>
bool try_serve(cublasHandle_t handle, const char* routine, cublasOperation_t ta, cublasOperation_t tb, std::int64_t m,
               std::int64_t n, std::int64_t k, const T* alpha, const T* a, std::int64_t lda, const T* b,
               std::int64_t ldb, const T* beta, T* c, std::int64_t ldc, Kind kind = kind_of<T>) {
  std::string why = refusal(handle, kind, ta, tb, m, n, k, lda, ldb, ldc);
  const bool served = why.empty() && serve(handle, ta, tb, m, n, k, *alpha, a, lda, b, ldb, *beta, c, ldc, why);
  report(handle, routine, m, n, k, served ? why.empty() ? std::string("emulated") : why : "passed through: " + why);
  return served;
}

// The strided-batched GEMMs: each product served as above (one plan, run per product). True where
// all were; else a, b, c and batch are left at the products cuBLAS is to compute (all of them, or
// where serving stopped: products are independent).
template <class T>
bool try_serve_batched(cublasHandle_t handle, const char* routine, cublasOperation_t ta, cublasOperation_t tb, int m,
                       int n, int k, const T* alpha, const T*& a, int lda, long long stride_a, const T*& b, int ldb,
                       long long stride_b, const T* beta, T*& c, int ldc, long long stride_c, int& batch) {
  std::string why = refusal(handle, kind_of<T>, ta, tb, m, n, k, lda, ldb, ldc);
  if (why.empty() && batch < 1) why = "an empty batch";
  if (why.empty()) {
    int done = 0;
    for (; done < batch; ++done)
      if (!serve(handle, ta, tb, m, n, k, *alpha, a + done * stride_a, lda, b + done * stride_b, ldb, *beta,
                 c + done * stride_c, ldc, why))
        break;
    if (done == batch) {
      report(handle, routine, m, n, k, "emulated, " + std::to_string(batch) + " products");
      return true;
    }
    if (done > 0) {
      a += done * stride_a, b += done * stride_b, c += done * stride_c, batch -= done;
      why = std::to_string(done) + " emulated, the rest passed through: " + why;
    }
  }
  report(handle, routine, m, n, k, "passed through: " + why);
  return false;
}

template <class Fn, class... Args>
cublasStatus_t pass(Fn next, Args... args) {
  return next ? next(args...) : CUBLAS_STATUS_NOT_INITIALIZED;
}

}  // namespace

// The real cuBLAS's entry point `name`, a Fn (looked up once).
#define IK_NEXT(Fn, name) ([] { static const Fn next = real<Fn>(#name); return next; }())

// GEMM (D, Z and S; 32- and 64-bit integers): served as above, else passed through.
#define IK_GEMM(name, T, I)                                                                                          \
  IK_PRELOAD_EXPORT cublasStatus_t name(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, I m, I n, \
                                        I k, const T* alpha, const T* a, I lda, const T* b, I ldb, const T* beta,   \
                                        T* c, I ldc) {                                                               \
    if (try_serve(handle, #name, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)) return CUBLAS_STATUS_SUCCESS; \
    return pass(IK_NEXT(decltype(&name), name), handle, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);      \
  }
IK_GEMM(cublasDgemm_v2, double, int)
IK_GEMM(cublasDgemm_v2_64, double, std::int64_t)
IK_GEMM(cublasZgemm_v2, cuDoubleComplex, int)
IK_GEMM(cublasZgemm_v2_64, cuDoubleComplex, std::int64_t)
IK_GEMM(cublasSgemm_v2, float, int)
IK_GEMM(cublasSgemm_v2_64, float, std::int64_t)

// The strided-batched GEMMs: each product served as above, else (from the first one not served)
// passed through.
#define IK_GEMM_STRIDED_BATCHED(name, T)                                                                              \
  IK_PRELOAD_EXPORT cublasStatus_t name(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, int m,     \
                                        int n, int k, const T* alpha, const T* a, int lda, long long stride_a,        \
                                        const T* b, int ldb, long long stride_b, const T* beta, T* c, int ldc,        \
                                        long long stride_c, int batch) {                                              \
    if (try_serve_batched(handle, #name, ta, tb, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c, ldc,    \
                          stride_c, batch))                                                                           \
      return CUBLAS_STATUS_SUCCESS;                                                                                   \
    return pass(IK_NEXT(decltype(&name), name), handle, ta, tb, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b,  \
                beta, c, ldc, stride_c, batch);                                                                       \
  }
IK_GEMM_STRIDED_BATCHED(cublasDgemmStridedBatched, double)
IK_GEMM_STRIDED_BATCHED(cublasZgemmStridedBatched, cuDoubleComplex)
IK_GEMM_STRIDED_BATCHED(cublasSgemmStridedBatched, float)

// cublasGemmEx: served where all three types are float64 or complex128 with 64-bit compute, or
// float32 with 32-bit compute (not the TF32 / half / bfloat16 ones); all else passes through.
IK_PRELOAD_EXPORT cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, int m,
                                              int n, int k, const void* alpha, const void* a, cudaDataType a_type,
                                              int lda, const void* b, cudaDataType b_type, int ldb, const void* beta,
                                              void* c, cudaDataType c_type, int ldc, cublasComputeType_t compute,
                                              cublasGemmAlgo_t algo) {
  const auto all = [&](cudaDataType t) { return a_type == t && b_type == t && c_type == t; };
  const bool compute64 = compute == CUBLAS_COMPUTE_64F || compute == CUBLAS_COMPUTE_64F_PEDANTIC;
  const auto serve_as = [&](auto* type, Kind kind) {
    using T = std::remove_pointer_t<decltype(type)>;
    return try_serve(handle, "cublasGemmEx", ta, tb, m, n, k, static_cast<const T*>(alpha), static_cast<const T*>(a),
                     lda, static_cast<const T*>(b), ldb, static_cast<const T*>(beta), static_cast<T*>(c), ldc, kind);
  };
  bool served = false;
  if (all(CUDA_R_64F) && compute64)
    served = serve_as(static_cast<double*>(nullptr), Kind::float64);
  else if (all(CUDA_C_64F) && compute64)
    served = serve_as(static_cast<cuDoubleComplex*>(nullptr), Kind::complex128);
  else if (all(CUDA_R_32F) && (compute == CUBLAS_COMPUTE_32F || compute == CUBLAS_COMPUTE_32F_PEDANTIC))
    served = serve_as(static_cast<float*>(nullptr),
                      compute == CUBLAS_COMPUTE_32F ? Kind::float32 : Kind::float32_pedantic);
  else if (all(CUDA_R_32F) && (compute == CUBLAS_COMPUTE_32F_FAST_16F || compute == CUBLAS_COMPUTE_32F_FAST_16BF ||
                               compute == CUBLAS_COMPUTE_32F_FAST_TF32))
    report(handle, "cublasGemmEx", m, n, k, "passed through: a reduced-precision compute type");
  else
    report(handle, "cublasGemmEx", m, n, k, "passed through: types or compute type not served");
  if (served) return CUBLAS_STATUS_SUCCESS;
  using Fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                                cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
  return pass(IK_NEXT(Fn, cublasGemmEx), handle, ta, tb, m, n, k, alpha, a, a_type, lda, b, b_type, ldb, beta, c,
              c_type, ldc, compute, algo);
}
