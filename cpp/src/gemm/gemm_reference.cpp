// Ozaki scheme II on the CPU: the reference the GPU backends reproduce bit for bit. Every step
// after the scaling is exact integer arithmetic, and the result is rounded to float64 once, so any
// implementation that computes the same shifts gets the same bits.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "core/threads.hpp"
#include "gemm/wide_uint.hpp"
#include "ironkernels/core/error.hpp"
#include "ironkernels/gemm.hpp"

namespace ironkernels {

const std::array<int, kGemmMaxModuli>& gemm_moduli() {
  static const std::array<int, kGemmMaxModuli> moduli = [] {
    std::array<int, kGemmMaxModuli> m{};
    int count = 0;
    for (int p = 256; count < kGemmMaxModuli; --p) {
      bool coprime = true;
      for (int i = 0; i < count; ++i) coprime = coprime && std::gcd(p, m[i]) == 1;
      if (coprime) m[count++] = p;
    }
    return m;
  }();
  return moduli;
}

namespace detail {
namespace {

struct Matrix {  // a strided float64 view, op() applied: element (r, c) = data[r*rs + c*cs]
  const double* data;
  std::int64_t rows, cols, rs, cs;
  double operator()(std::int64_t r, std::int64_t c) const { return data[r * rs + c * cs]; }
};

Matrix transposed(Matrix x) {
  std::swap(x.rows, x.cols);
  std::swap(x.rs, x.cs);
  return x;
}

Matrix op_view(const ArrayView& v, bool trans) {
  const Matrix m{static_cast<const double*>(v.data), v.shape[0], v.shape[1], v.strides[0], v.strides[1]};
  return trans ? transposed(m) : m;
}

void check_matrix(const ArrayView& v, const char* name) {
  if (v.dtype != DType::float64)
    raise<TypeError>("gemm: ", name, " has dtype ", dtype_name(v.dtype), "; accepted: float64");
  if (v.device.type != DeviceType::cpu)
    raise<ValueError>("gemm: ", name, " is on ", device_name(v.device), "; gemm_reference runs on host arrays");
  if (v.ndim() != 2) raise<ValueError>("gemm: ", name, " must be two-dimensional, got ", v.ndim(), " dimensions");
}

constexpr std::int64_t kChunkK = std::int64_t(1) << 16;

int ceil_log2(std::int64_t k) {
  int b = 0;
  while ((std::int64_t(1) << b) < k) ++b;
  return b;
}

// |x| < 2^exponent_bound(x) for finite nonzero x (ilogb works for subnormals too).
int exponent_bound(double x) { return std::ilogb(x) + 1; }

// Per row of op(A) (or column of op(B)): the largest exponent bound, and whether a non-finite
// element is present (then the row takes the IEEE path).
struct LineScale {
  int exponent = std::numeric_limits<int>::min();  // min(): all zeros
  bool nonfinite = false;
};

// Small-integer upper bounds of |x| relative to its line's exponent bound e: ceil(|x|·2^(6-e)) in
// [0, 64], at least 1 for any nonzero x (also where the scaled value underflows).
std::int32_t magnitude_bound(double x, int e) {
  if (x == 0.0 || !std::isfinite(x)) return 0;
  const double v = std::ceil(std::ldexp(std::fabs(x), 6 - e));
  return v < 1.0 ? 1 : static_cast<std::int32_t>(v);
}

// "accurate" scaling: with Ā = ceil(|A|·2^σ_i), B̄ = ceil(|B|·2^τ_j) (σ_i = 6 - e_i, τ_j = 6 - f_j)
// and C̄ = Ā·B̄ exact, Σ_l |a_il||b_lj| <= 2^(-σ_i-τ_j)·C̄_ij. Row i and column j may then keep
// α_i + β_j <= G_ij = top + 12 - ceil_log2(C̄_ij) bits: Σ|A'||B'| <= 2^top < P/2 (P is not a power of
// two). G_ij is at least the fast budget everywhere; each column takes half of its slack over the
// fast split, each row the rest, so neither side keeps fewer bits than "fast". (The GPU computes C̄
// with one extra INT8 product and the two minimum reductions.)
void accurate_bits(const Matrix& A, const Matrix& Bt, const std::vector<LineScale>& row,
                   const std::vector<LineScale>& col, int top, std::vector<int>& row_bits,
                   std::vector<int>& col_bits) {
  const std::int64_t m = A.rows, k = A.cols, n = Bt.rows;
  const int fast_a = row_bits.empty() ? 0 : row_bits[0], fast_b = col_bits.empty() ? 0 : col_bits[0];
  auto bounds = [&](const Matrix& X, const std::vector<LineScale>& lines) {
    std::vector<std::int32_t> out(static_cast<std::size_t>(X.rows * k));
    for (std::int64_t i = 0; i < X.rows; ++i)
      for (std::int64_t l = 0; l < k; ++l) out[i * k + l] = magnitude_bound(X(i, l), lines[i].exponent);
    return out;
  };
  const std::vector<std::int32_t> at = bounds(A, row), bt = bounds(Bt, col);
  std::vector<int> g(static_cast<std::size_t>(m * n));
  parallel_for(m, 1, [&](std::int64_t i0, std::int64_t i1) {
    for (std::int64_t i = i0; i < i1; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        std::int64_t bound = 0;
        for (std::int64_t l = 0; l < k; ++l) bound += std::int64_t(at[i * k + l]) * bt[j * k + l];
        g[i * n + j] = top + 12 - ceil_log2(bound);
      }
  });
  for (std::int64_t j = 0; j < n; ++j) {
    int slack = std::numeric_limits<int>::max();
    for (std::int64_t i = 0; i < m; ++i) slack = std::min(slack, g[i * n + j] - fast_a - fast_b);
    col_bits[j] = std::min(62, fast_b + slack / 2);
  }
  for (std::int64_t i = 0; i < m; ++i) {
    int bits = 62;
    for (std::int64_t j = 0; j < n; ++j) bits = std::min(bits, g[i * n + j] - col_bits[j]);
    row_bits[i] = bits;
  }
}

// The power of two a line is scaled by so that it keeps `bits` bits below its largest element.
int line_shift(const LineScale& s, int bits) {
  return s.exponent == std::numeric_limits<int>::min() ? 0 : bits - s.exponent;
}

// Residue of an integer-valued |v| < 2^62 modulo p in [-floor(p/2), ceil(p/2) - 1] (fits int8).
std::int8_t residue(std::int64_t v, int p) {
  std::int64_t r = v % p;
  if (r < -(p / 2)) r += p;
  if (r > (p + 1) / 2 - 1) r -= p;
  return static_cast<std::int8_t>(r);
}

// Largest exponent bound and non-finite flag of every row.
std::vector<LineScale> scan_rows(const Matrix& x) {
  std::vector<LineScale> lines(static_cast<std::size_t>(x.rows));
  for (std::int64_t i = 0; i < x.rows; ++i)
    for (std::int64_t l = 0; l < x.cols; ++l) {
      const double v = x(i, l);
      if (!std::isfinite(v)) lines[i].nonfinite = true;
      else if (v != 0.0) lines[i].exponent = std::max(lines[i].exponent, exponent_bound(v));
    }
  return lines;
}

// Row i scaled by 2^(bits[i] - exponent), truncated, reduced modulo each of the first nmod moduli:
// out[(t * rows + i) * cols + l] (the inner dimension contiguous for the products).
std::vector<std::int8_t> row_residues(const Matrix& x, const std::vector<LineScale>& lines, const std::vector<int>& bits,
                                      int nmod) {
  const auto& moduli = gemm_moduli();
  std::vector<std::int8_t> out(static_cast<std::size_t>(nmod * x.rows * x.cols));
  parallel_for(x.rows, 16, [&](std::int64_t i0, std::int64_t i1) {
    for (std::int64_t i = i0; i < i1; ++i) {
      const int s = line_shift(lines[i], bits[i]);
      for (std::int64_t l = 0; l < x.cols; ++l) {
        const double v = x(i, l);
        const auto q = std::isfinite(v) ? static_cast<std::int64_t>(std::trunc(std::ldexp(v, s))) : 0;
        for (int t = 0; t < nmod; ++t) out[(t * x.rows + i) * x.cols + l] = residue(q, moduli[t]);
      }
    }
  });
  return out;
}

}  // namespace
}  // namespace detail

GemmReport gemm_reference(const ArrayView& a_view, const ArrayView& b_view, const ArrayView& c_view,
                          const GemmOptions& opt) {
  using namespace detail;
  check_matrix(a_view, "a");
  check_matrix(b_view, "b");
  check_matrix(c_view, "c");
  const Matrix A = op_view(a_view, opt.trans_a), B = op_view(b_view, opt.trans_b);
  const std::int64_t m = A.rows, k = A.cols, n = B.cols;
  if (B.rows != k)
    raise<ValueError>("gemm: op(a) is ", m, "x", k, " but op(b) is ", B.rows, "x", n, "; inner dimensions must match");
  if (c_view.shape[0] != m || c_view.shape[1] != n)
    raise<ValueError>("gemm: c is ", c_view.shape[0], "x", c_view.shape[1], " but op(a)·op(b) is ", m, "x", n);
  if (k > kGemmMaxK) raise<ValueError>("gemm: k = ", k, " is above the supported maximum ", kGemmMaxK);
  const int nmod = opt.contract.moduli;
  if (opt.contract.scaling != GemmScaling::fast && opt.contract.scaling != GemmScaling::accurate)
    raise<ValueError>("gemm: unknown contract scaling; accepted: fast, accurate");
  if (nmod < 2 || nmod > kGemmMaxModuli)
    raise<ValueError>("gemm: contract.moduli = ", nmod, "; accepted: 2 … ", kGemmMaxModuli);
  for (int d = 0; d < 2; ++d)
    if (c_view.shape[d] > 1 && c_view.strides[d] == 0)
      raise<ValueError>("gemm: c has stride 0 in dimension ", d, "; the output must not repeat elements");
  if (c_view.overlaps(a_view) || c_view.overlaps(b_view))
    raise<ValueError>("gemm: c overlaps a or b; the output must be a separate array");

  const auto& moduli = gemm_moduli();
  WideUint P = WideUint::from(1);
  for (int l = 0; l < nmod; ++l) P.mul_add_small(static_cast<std::uint32_t>(moduli[l]), 0);
  // Bit budget: with |A'| < 2^ba and |B'| < 2^bb, Σ_l |A'||B'| < k·2^(ba+bb) <= 2^(bitlen(P)-2) <= P/2.
  const int budget = P.bit_length() - 2 - ceil_log2(std::max<std::int64_t>(k, 1));
  if (budget < 2)
    raise<ValueError>("gemm: contract.moduli = ", nmod, " leaves no bits for k = ", k, "; use more moduli");
  GemmReport report;
  report.moduli = nmod;
  report.bits_a = std::min(62, budget / 2);
  report.bits_b = std::min(62, budget - budget / 2);

  double* C = static_cast<double*>(c_view.data);
  auto c_at = [&](std::int64_t i, std::int64_t j) -> double& { return C[i * c_view.strides[0] + j * c_view.strides[1]]; };
  auto finish = [&](double product, std::int64_t i, std::int64_t j) {
    double& c = c_at(i, j);
    c = opt.beta == 0.0 ? opt.alpha * product : std::fma(opt.alpha, product, opt.beta * c);
  };
  if (m == 0 || n == 0) return report;

  // 1. Shifts: row exponents of op(A), column exponents of op(B) (the rows of op(B)ᵀ).
  const Matrix Bt = transposed(B);
  const std::vector<LineScale> row = scan_rows(A), col = scan_rows(Bt);
  // Bits kept per row of op(A): uniform for "fast"; for "accurate", as many as the per-element
  // bound from one extra small-integer product allows (never fewer than "fast").
  std::vector<int> row_bits(static_cast<std::size_t>(m), report.bits_a), col_bits(static_cast<std::size_t>(n), report.bits_b);
  if (opt.contract.scaling == GemmScaling::accurate) accurate_bits(A, Bt, row, col, P.bit_length() - 2, row_bits, col_bits);
  report.bits_a = *std::min_element(row_bits.begin(), row_bits.end());
  report.bits_b = *std::min_element(col_bits.begin(), col_bits.end());

  // 2. Residues: ra[mod][i][l], rb[mod][j][l] (k contiguous for the products).
  const std::vector<std::int8_t> ra = row_residues(A, row, row_bits, nmod), rb = row_residues(Bt, col, col_bits, nmod);

  // Garner's mixed-radix constants: inv[t][u] = p_u^{-1} mod p_t for u < t.
  std::vector<int> inv(static_cast<std::size_t>(nmod * nmod), 0);
  for (int t = 0; t < nmod; ++t)
    for (int u = 0; u < t; ++u)
      for (int x = 1; x < moduli[t]; ++x)
        if ((moduli[u] % moduli[t]) * x % moduli[t] == 1) inv[t * nmod + u] = x;
  const WideUint half_p = P.shifted_right(1);

  // 3–6. Products mod p, exact reconstruction, one rounding; IEEE path for non-finite lines.
  std::int64_t nonfinite = 0;
  std::vector<std::int64_t> nonfinite_rows(static_cast<std::size_t>(m), 0);
  parallel_for(m, 1, [&](std::int64_t i0, std::int64_t i1) {
    std::vector<int> r(static_cast<std::size_t>(nmod)), v(static_cast<std::size_t>(nmod));
    for (std::int64_t i = i0; i < i1; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        if (row[i].nonfinite || col[j].nonfinite) {  // native arithmetic: Inf/NaN as IEEE gives them
          double s = 0.0;
          for (std::int64_t l = 0; l < k; ++l) s = std::fma(A(i, l), B(l, j), s);
          finish(s, i, j);
          ++nonfinite_rows[i];
          continue;
        }
        for (int t = 0; t < nmod; ++t) {
          const std::int8_t* x = &ra[(t * m + i) * k];
          const std::int8_t* y = &rb[(t * n + j) * k];
          // Exact: INT32 partial sums over chunks of 2^16 (|x·y| <= 2^14), as the GPU splits k.
          std::int64_t dot = 0;
          for (std::int64_t l0 = 0; l0 < k; l0 += kChunkK) {
            const std::int64_t l1 = std::min(k, l0 + kChunkK);
            std::int32_t part = 0;
            for (std::int64_t l = l0; l < l1; ++l) part += std::int32_t(x[l]) * std::int32_t(y[l]);
            dot += part;
          }
          const int p = moduli[t];
          r[t] = static_cast<int>(((dot % p) + p) % p);
        }
        for (int t = 0; t < nmod; ++t) {  // mixed-radix digits
          int x = r[t];
          for (int u = 0; u < t; ++u) x = ((x - v[u]) % moduli[t] + moduli[t]) * inv[t * nmod + u] % moduli[t];
          v[t] = x;
        }
        WideUint X = WideUint::from(static_cast<std::uint64_t>(v[nmod - 1]));
        for (int t = nmod - 2; t >= 0; --t) X.mul_add_small(static_cast<std::uint32_t>(moduli[t]), static_cast<std::uint32_t>(v[t]));
        const bool negative = half_p < X;  // representative in (-P/2, P/2]
        const WideUint mag = negative ? P - X : X;
        const int e = line_shift(row[i], row_bits[i]) + line_shift(col[j], col_bits[j]);
        const double product = mag.to_double_scaled(e);
        finish(negative ? -product : product, i, j);
      }
  });
  for (auto c : nonfinite_rows) nonfinite += c;
  report.nonfinite_elements = nonfinite;
  return report;
}

}  // namespace ironkernels
