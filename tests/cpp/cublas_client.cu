// A small cuBLAS client for the drop-in's test (tests/python/test_cublas_preload.py): DGEMM with
// op(A) = Aᵀ, beta and leading dimensions above the rows; the same with alpha and beta in device
// memory (which the drop-in passes to cuBLAS); a strided-batched DGEMM. Writes its inputs and
// results as raw float64 files <prefix>.a, .b, .c0, .c, .c_device_scalars, .a_batched, .b_batched,
// .c_batched (column-major, with the leading dimensions).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CHECK(call)                                                       \
  do {                                                                    \
    if ((call) != 0) {                                                    \
      std::fprintf(stderr, "%s failed at line %d\n", #call, __LINE__);    \
      return 1;                                                           \
    }                                                                     \
  } while (0)

static std::vector<double> random_values(std::size_t n, unsigned seed) {
  std::vector<double> v(n);
  unsigned long long s = seed;
  for (double& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = double(static_cast<long long>(s >> 11) - (1ll << 52)) / double(1ll << 52);
  }
  return v;
}

static bool write(const std::string& path, const std::vector<double>& v) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  const bool ok = std::fwrite(v.data(), sizeof(double), v.size(), f) == v.size();
  return std::fclose(f) == 0 && ok;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: cublas_client <output prefix>\n");
    return 2;
  }
  const std::string prefix = argv[1];
  const int m = 400, n = 350, k = 300, lda = 420, ldb = 310, ldc = 410, batch = 3;
  const std::vector<double> a = random_values(std::size_t(lda) * m, 1), b = random_values(std::size_t(ldb) * n, 2),
                            c0 = random_values(std::size_t(ldc) * n, 3);
  const std::vector<double> ab = random_values(std::size_t(lda) * m * batch, 4),
                            bb = random_values(std::size_t(ldb) * n * batch, 5);
  double *da, *db, *dc, *dc2, *dab, *dbb, *dcb, *dscalars;
  CHECK(cudaMalloc(&da, a.size() * 8));
  CHECK(cudaMalloc(&db, b.size() * 8));
  CHECK(cudaMalloc(&dc, c0.size() * 8));
  CHECK(cudaMalloc(&dc2, c0.size() * 8));
  CHECK(cudaMalloc(&dab, ab.size() * 8));
  CHECK(cudaMalloc(&dbb, bb.size() * 8));
  CHECK(cudaMalloc(&dcb, std::size_t(ldc) * n * batch * 8));
  CHECK(cudaMalloc(&dscalars, 2 * 8));
  CHECK(cudaMemcpy(da, a.data(), a.size() * 8, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, b.data(), b.size() * 8, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dc, c0.data(), c0.size() * 8, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dc2, c0.data(), c0.size() * 8, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dab, ab.data(), ab.size() * 8, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dbb, bb.data(), bb.size() * 8, cudaMemcpyHostToDevice));
  const double alpha = 1.5, beta = -0.5, scalars[2] = {alpha, beta}, one = 1.0, zero = 0.0;
  CHECK(cudaMemcpy(dscalars, scalars, sizeof scalars, cudaMemcpyHostToDevice));

  cublasHandle_t handle;
  CHECK(cublasCreate(&handle));
  CHECK(cublasDgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, da, lda, db, ldb, &beta, dc, ldc));
  CHECK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_DEVICE));
  CHECK(cublasDgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, dscalars, da, lda, db, ldb, dscalars + 1, dc2, ldc));
  CHECK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));
  CHECK(cublasDgemmStridedBatched(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, dab, lda, (long long)lda * m, dbb,
                                  ldb, (long long)ldb * n, &zero, dcb, ldc, (long long)ldc * n, batch));
  CHECK(cudaDeviceSynchronize());

  std::vector<double> c(c0.size()), c2(c0.size()), cb(std::size_t(ldc) * n * batch);
  CHECK(cudaMemcpy(c.data(), dc, c.size() * 8, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(c2.data(), dc2, c2.size() * 8, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(cb.data(), dcb, cb.size() * 8, cudaMemcpyDeviceToHost));
  CHECK(cublasDestroy(handle));
  const bool ok = write(prefix + ".a", a) && write(prefix + ".b", b) && write(prefix + ".c0", c0) &&
                  write(prefix + ".c", c) && write(prefix + ".c_device_scalars", c2) &&
                  write(prefix + ".a_batched", ab) && write(prefix + ".b_batched", bb) &&
                  write(prefix + ".c_batched", cb);
  return ok ? 0 : 1;
}
