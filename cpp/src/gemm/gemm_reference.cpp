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
#include "gemm/gemm_checks.hpp"
#include "gemm/gemm_native.hpp"
#include "gemm/ozaki.hpp"
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

GemmBits gemm_fast_bits(int moduli, std::int64_t k) {
  if (moduli < 2 || moduli > kGemmMaxModuli)
    raise<ValueError>("gemm: moduli = ", moduli, "; accepted: 2 … ", kGemmMaxModuli);
  const detail::ozaki::Budget b = detail::ozaki::budget(detail::ozaki::crt_constants(gemm_moduli().data(), moduli), k);
  return {b.bits_a, b.bits_b};
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
  if (v.device.type != DeviceType::cpu)
    raise<ValueError>("gemm: ", name, " is on ", device_name(v.device), "; gemm_reference runs on host arrays");
  check_float64_matrix(v, name);
}

// Per row of op(A) (or column of op(B)): the largest finite magnitude and its exponent bound, and
// whether a non-finite element is present (then the row takes the IEEE path).
struct LineScale {
  double largest = 0.0;
  int exponent = ozaki::kNoExponent;
  bool nonfinite = false;
};

// "accurate" scaling (ozaki::accurate_pair_budget, raised_line_bits): lines start from their fast
// bits (row_bits, col_bits) and are raised where the pair budgets G_ij allow. (The GPU computes C̄
// with one INT8 product over groups of positions and two minimum reductions.)
void accurate_bits(const Matrix& A, const Matrix& Bt, const std::vector<LineScale>& row,
                   const std::vector<LineScale>& col, const ozaki::Budget& budget, std::vector<int>& row_bits,
                   std::vector<int>& col_bits) {
  const std::int64_t m = A.rows, k = A.cols, n = Bt.rows;
  const std::int64_t groups = (k + ozaki::kBoundGroup - 1) / ozaki::kBoundGroup;
  // Â (max of each group's magnitude bounds) for op(A), B̂ (their mean, rounded up) for op(B).
  auto grouped = [&](const Matrix& X, const std::vector<LineScale>& lines, bool max) {
    std::vector<std::int32_t> out(static_cast<std::size_t>(X.rows * groups));
    for (std::int64_t i = 0; i < X.rows; ++i)
      for (std::int64_t gr = 0; gr < groups; ++gr) {
        std::uint32_t v[ozaki::kBoundGroup];
        for (int e = 0; e < ozaki::kBoundGroup; ++e) {
          const std::int64_t l = gr * ozaki::kBoundGroup + e;
          v[e] = l < k ? std::uint32_t(ozaki::magnitude_bound(X(i, l), lines[i].exponent)) : 0u;
        }
        out[i * groups + gr] = std::int32_t(max ? ozaki::bound_group_max(v) : ozaki::bound_group_mean(v));
      }
    return out;
  };
  const std::vector<std::int32_t> at = grouped(A, row, true), bt = grouped(Bt, col, false);
  std::vector<int> g(static_cast<std::size_t>(m * n));
  parallel_for(m, 1, [&](std::int64_t i0, std::int64_t i1) {
    for (std::int64_t i = i0; i < i1; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        std::int64_t bound = 0;
        for (std::int64_t gr = 0; gr < groups; ++gr) bound += std::int64_t(at[i * groups + gr]) * bt[j * groups + gr];
        g[i * n + j] = ozaki::accurate_pair_budget(budget, bound);
      }
  });
  for (std::int64_t j = 0; j < n; ++j) {
    int slack = std::numeric_limits<int>::max();
    for (std::int64_t i = 0; i < m; ++i) slack = std::min(slack, g[i * n + j] - row_bits[i] - col_bits[j]);
    col_bits[j] = ozaki::raised_line_bits(col_bits[j], col_bits[j] + slack / 2);
  }
  for (std::int64_t i = 0; i < m; ++i) {
    int allowed = std::numeric_limits<int>::max();
    for (std::int64_t j = 0; j < n; ++j) allowed = std::min(allowed, g[i * n + j] - col_bits[j]);
    row_bits[i] = ozaki::raised_line_bits(row_bits[i], allowed);
  }
}

// Largest magnitude, its exponent bound and the non-finite flag of every row; with `stats`, in the
// same pass each row's LineStats, which hold the first two as well.
std::vector<LineScale> scan_rows(const Matrix& x, std::vector<LineStats>* stats = nullptr) {
  std::vector<LineScale> lines(static_cast<std::size_t>(x.rows));
  if (stats) {
    stats->resize(static_cast<std::size_t>(x.rows));
    parallel_for(x.rows, 16, [&](std::int64_t i0, std::int64_t i1) {
      for (std::int64_t i = i0; i < i1; ++i) {
        (*stats)[i] = line_stats_cpu(x.data + i * x.rs, x.cols, x.cs);
        lines[i].largest = (*stats)[i].largest, lines[i].nonfinite = (*stats)[i].nonfinite;
      }
    });
  } else {
    for (std::int64_t i = 0; i < x.rows; ++i)
      for (std::int64_t l = 0; l < x.cols; ++l) {
        const double v = x(i, l);
        if (!std::isfinite(v)) lines[i].nonfinite = true;
        else lines[i].largest = std::max(lines[i].largest, std::fabs(v));
      }
  }
  for (auto& line : lines)
    if (line.largest != 0.0) line.exponent = ozaki::exponent_bound(line.largest);
  return lines;
}

// Row i scaled by 2^(bits[i] - exponent), rounded to an integer, reduced modulo each of the first nmod moduli:
// out[(t * rows + i) * cols + l] (the inner dimension contiguous for the products).
std::vector<std::int8_t> row_residues(const Matrix& x, const std::vector<LineScale>& lines, const std::vector<int>& bits,
                                      int nmod) {
  const auto& moduli = gemm_moduli();
  std::vector<ozaki::ResidueConstants> consts;
  for (int t = 0; t < nmod; ++t) consts.push_back(ozaki::residue_constants(moduli[t]));
  std::vector<std::int8_t> out(static_cast<std::size_t>(nmod * x.rows * x.cols));
  parallel_for(x.rows, 16, [&](std::int64_t i0, std::int64_t i1) {
    for (std::int64_t i = i0; i < i1; ++i) {
      const int s = ozaki::line_shift(lines[i].exponent, bits[i]);
      for (std::int64_t l = 0; l < x.cols; ++l) {
        const ozaki::SplitInteger q = ozaki::split_integer(ozaki::scaled_integer(x(i, l), s));
        for (int t = 0; t < nmod; ++t)
          out[(t * x.rows + i) * x.cols + l] = static_cast<std::int8_t>(ozaki::residue(q, consts[t]));
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
  GemmContract contract = opt.contract;
  // Row exponents of op(A), column exponents of op(B) (the rows of op(B)ᵀ); for native() and norm
  // scaling, in the same pass each line's LineStats (its 2-norm).
  const Matrix Bt = transposed(B);
  const bool stats = contract.native || contract.scaling == GemmScaling::norm;
  std::vector<LineStats> row_stats, col_stats;
  const std::vector<LineScale> row = scan_rows(A, stats ? &row_stats : nullptr),
                               col = scan_rows(Bt, stats ? &col_stats : nullptr);
  GemmNativeChoice native{};
  if (contract.native) {  // the count from the lines' spreads (as gemm_native_contract), then checked as fixed
    const NativeBits bits = native_bits(k);
    NativeSpreads spreads;
    init_native_spreads(spreads);
    for (const LineStats& line : row_stats) add_line_spread(line, bits, 0, spreads);
    for (const LineStats& line : col_stats) add_line_spread(line, bits, 1, spreads);
    native = native_choice(spreads, k, bits);
    contract.moduli = native.moduli;
  }
  const auto [crt, budget] = check_contract(contract, k);
  check_output(c_view, a_view, b_view);
  const int nmod = contract.moduli;
  const auto& moduli = gemm_moduli();
  constexpr int kLimbs = ozaki::crt_limbs(kGemmMaxModuli);  // enough for every count
  const ozaki::CrtTable<kLimbs> crt_table = ozaki::crt_table<kLimbs>(crt);
  GemmReport report;
  report.moduli = nmod;
  report.native = native;
  report.bits_a = budget.bits_a;
  report.bits_b = budget.bits_b;

  double* C = static_cast<double*>(c_view.data);
  auto c_at = [&](std::int64_t i, std::int64_t j) -> double& { return C[i * c_view.strides[0] + j * c_view.strides[1]]; };
  auto finish = [&](double product, std::int64_t i, std::int64_t j) {
    double& c = c_at(i, j);
    c = ozaki::finish(opt.alpha, product, opt.beta, c);
  };
  if (m == 0 || n == 0) return report;

  // 1. Shifts, from the scan above. Bits kept per row of op(A): for "fast", as many as fit under the
  // side's cap; for "accurate", as many as the per-element bound from one extra small-integer product
  // allows, for "norm" as many as the line's 2-norm allows (never fewer).
  std::vector<int> row_bits(static_cast<std::size_t>(m)), col_bits(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < m; ++i) row_bits[i] = ozaki::fitted_bits(row[i].largest, budget.cap_a, budget.bits_a);
  for (std::int64_t j = 0; j < n; ++j) col_bits[j] = ozaki::fitted_bits(col[j].largest, budget.cap_b, budget.bits_b);
  if (contract.scaling == GemmScaling::accurate) accurate_bits(A, Bt, row, col, budget, row_bits, col_bits);
  if (contract.scaling == GemmScaling::norm) {
    const std::int64_t k1 = std::max<std::int64_t>(k, 1);
    for (std::int64_t i = 0; i < m; ++i)
      row_bits[i] = ozaki::norm_line_bits(row_stats[i].sum.sum, row_stats[i].nonzeros, budget.cap_a, k1, row_bits[i]);
    for (std::int64_t j = 0; j < n; ++j)
      col_bits[j] = ozaki::norm_line_bits(col_stats[j].sum.sum, col_stats[j].nonzeros, budget.cap_b, k1, col_bits[j]);
  }
  report.bits_a = *std::min_element(row_bits.begin(), row_bits.end());
  report.bits_b = *std::min_element(col_bits.begin(), col_bits.end());

  // 2. Residues: ra[mod][i][l], rb[mod][j][l] (k contiguous for the products).
  const std::vector<std::int8_t> ra = row_residues(A, row, row_bits, nmod), rb = row_residues(Bt, col, col_bits, nmod);

  // 3–6. Products mod p, exact reconstruction, one rounding; IEEE path for non-finite lines.
  std::int64_t nonfinite = 0;
  std::vector<std::int64_t> nonfinite_rows(static_cast<std::size_t>(m), 0);
  parallel_for(m, 1, [&](std::int64_t i0, std::int64_t i1) {
    std::vector<std::uint8_t> r(static_cast<std::size_t>(nmod));
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
          for (std::int64_t l0 = 0; l0 < k; l0 += ozaki::kChunkK) {
            const std::int64_t l1 = std::min(k, l0 + ozaki::kChunkK);
            std::int32_t part = 0;
            for (std::int64_t l = l0; l < l1; ++l) part += std::int32_t(x[l]) * std::int32_t(y[l]);
            dot += part;
          }
          const int p = moduli[t];
          r[t] = static_cast<std::uint8_t>(((dot % p) + p) % p);
        }
        const int e = ozaki::line_shift(row[i].exponent, row_bits[i]) + ozaki::line_shift(col[j].exponent, col_bits[j]);
        finish(ozaki::crt_to_double(crt_table, r.data(), 1, e), i, j);
      }
  });
  for (auto c : nonfinite_rows) nonfinite += c;
  report.nonfinite_elements = nonfinite;
  return report;
}

}  // namespace ironkernels
