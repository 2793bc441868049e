// C++ tests of the FWT: against an explicit O(N^2) Hadamard product in long double, on the CPU
// (every ISA variant through IRONKERNELS_CPU_ISA) and, with --gpu, the CUDA path against the CPU.
// Exit 77 = skipped (no GPU).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include "check.hpp"
#include "ironkernels/ironkernels.hpp"

using namespace ironkernels;

// A stream is typed: a cudaStream_t or nullptr converts to it, a data or workspace pointer does not.
static_assert(std::is_convertible_v<CUstream_st*, Stream> && std::is_convertible_v<std::nullptr_t, Stream>);
static_assert(!std::is_convertible_v<void*, Stream> && !std::is_convertible_v<const float*, Stream>);


template <class T>
std::vector<long double> reference(const std::vector<T>& x, std::int64_t rows, std::int64_t n, long double scale) {
  std::vector<long double> y(rows * n, 0.0L);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t i = 0; i < n; ++i) {
      long double acc = 0;
      for (std::int64_t j = 0; j < n; ++j)
        acc += (__builtin_popcountll(i & j) & 1 ? -1.0L : 1.0L) * x[r * n + j];
      y[r * n + i] = acc * scale;
    }
  return y;
}

template <class T>
void test_cpu_against_reference(double tol) {
  std::mt19937_64 rng(42);
  std::normal_distribution<double> dist;
  for (int log_n = 0; log_n <= 11; ++log_n) {
    const std::int64_t n = std::int64_t(1) << log_n, rows = 3;
    std::vector<T> x(rows * n);
    for (auto& v : x) v = static_cast<T>(dist(rng));
    for (bool normalized : {false, true}) {
      std::vector<T> y(x.size(), T(-777));
      FwtOptions opt;
      opt.normalized = normalized;
      fwt(ArrayView::contiguous(x.data(), dtype_of<T>::value, {rows, n}),
          ArrayView::contiguous(y.data(), dtype_of<T>::value, {rows, n}), opt);
      const long double scale = normalized ? 1.0L / std::sqrt((long double)n) : 1.0L;
      auto ref = reference(x, rows, n, scale);
      long double num = 0, den = 0;
      for (std::size_t i = 0; i < y.size(); ++i) {
        num += (y[i] - ref[i]) * (y[i] - ref[i]);
        den += ref[i] * ref[i];
      }
      const double rel = std::sqrt((double)(num / den));
      CHECK(rel <= tol, "%s log_n=%d normalized=%d rel err %.3g > %.3g", dtype_name(dtype_of<T>::value), log_n,
            (int)normalized, rel, tol);
    }
  }
}

// Rows larger than the L1 block take the two-level path; check H·H = N·I there.
template <class T>
void test_cpu_large_involution() {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> dist(-1, 1);
  for (int log_n : {13, 16, 20}) {
    const std::int64_t n = std::int64_t(1) << log_n;
    std::vector<T> x(n), y(n);
    for (auto& v : x) v = static_cast<T>(dist(rng));
    y = x;
    FwtOptions opt;
    opt.normalized = true;
    fwt_inplace(y.data(), 1, n, opt);
    fwt_inplace(y.data(), 1, n, opt);
    double err = 0;
    for (std::int64_t i = 0; i < n; ++i) err = std::max(err, std::abs(double(y[i]) - double(x[i])));
    CHECK(err < (sizeof(T) == 4 ? 1e-5 : 1e-13), "involution log_n=%d err %.3g", log_n, err);
  }
}

void test_errors() {
  std::vector<float> x(12), y(12);
  bool threw = false;
  try {
    fwt(ArrayView::contiguous(x.data(), DType::float32, {2, 6}), ArrayView::contiguous(y.data(), DType::float32, {2, 6}));
  } catch (const ValueError& e) {
    threw = std::strstr(e.what(), "is not 2^k or m·2^k") != nullptr;
  }
  CHECK(threw, "N=6 must raise ValueError naming the accepted lengths");
  threw = false;
  try {
    fwt(ArrayView::contiguous(x.data(), DType::float32, {3, 4}), ArrayView::contiguous(y.data(), DType::float64, {3, 4}));
  } catch (const TypeError&) {
    threw = true;
  }
  CHECK(threw, "dtype mismatch must raise TypeError");
}

int test_gpu() {
  auto devices = cuda_devices();
  if (devices.empty()) {
    std::printf("no CUDA device: GPU test skipped\n");
    return 77;
  }
  Device dev{DeviceType::cuda, 0};
  std::mt19937_64 rng(3);
  std::normal_distribution<float> dist;
  for (int log_n = 0; log_n <= 20; ++log_n) {  // past 2^15: the passes of long rows
    const std::int64_t n = std::int64_t(1) << log_n, rows = log_n <= 15 ? 37 : 3;
    std::vector<float> x(rows * n), y_cpu(rows * n), y_gpu(rows * n);
    for (auto& v : x) v = dist(rng);
    fwt(ArrayView::contiguous(x.data(), DType::float32, {rows, n}), ArrayView::contiguous(y_cpu.data(), DType::float32, {rows, n}));
    Buffer dx(x.size() * 4, dev), dy(x.size() * 4, dev);
    copy_bytes(dx.data(), dev, x.data(), {}, x.size() * 4, nullptr);
    fill_bytes(dy.data(), dev, 0xff, x.size() * 4, nullptr);  // NaN poison
    fwt(ArrayView::contiguous(dx.data(), DType::float32, {rows, n}, dev), ArrayView::contiguous(dy.data(), DType::float32, {rows, n}, dev));
    copy_bytes(y_gpu.data(), {}, dy.data(), dev, x.size() * 4, nullptr);
    synchronize_stream(nullptr, dev);
    double worst = 0;
    for (std::size_t i = 0; i < x.size(); ++i)
      worst = std::max(worst, double(std::abs(y_gpu[i] - y_cpu[i])) / std::sqrt(double(n)));
    CHECK(worst < 1e-5, "gpu vs cpu log_n=%d worst scaled diff %.3g", log_n, worst);
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--gpu") == 0) {
    int rc = test_gpu();
    if (rc == 77) return rc;
  } else {
    std::printf("CPU ISA: %s\n", build_info().cpu_isa_active.c_str());
    if (requested_isa_missing(build_info().cpu_isa_active.c_str())) return kSkipped;
    test_cpu_against_reference<float>(2e-6);
    test_cpu_against_reference<double>(1e-14);
    test_cpu_large_involution<float>();
    test_cpu_large_involution<double>();
    test_errors();
  }
  return report_and_exit_code();
}
