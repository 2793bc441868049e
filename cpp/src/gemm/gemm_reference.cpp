// Ozaki scheme II on the CPU: the reference the GPU backends reproduce bit for bit. Every step
// after the scaling is exact integer arithmetic, and the result is rounded to float64 once, so any
// implementation that computes the same shifts gets the same bits.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <mutex>
#include <numeric>
#include <string>
#include <vector>

#include "core/threads.hpp"
#include "gemm/certificate.hpp"
#include "gemm/gemm_checks.hpp"
#include "gemm/gemm_lines.hpp"
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

double GemmContract::rtol_at(std::int64_t k) const {
  return native ? std::sqrt(double(std::max<std::int64_t>(k, 1))) * 0x1p-53 : rtol;
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

// Σ_l a_l·b_l as if in twice the working precision, then rounded (Ogita, Rump and Oishi's Dot2: every
// product split exactly by an fma, every sum by TwoSum, the errors summed apart): the CPU's native
// float64 for the lines a certified call sends there, far inside DGEMM's γ_k bound. Where the plain
// sum overflows, the plain sum (IEEE's Inf/NaN, as a DGEMM gives them).
template <class At, class Bt>
double compensated_dot(std::int64_t k, const At& a, const Bt& b) {
  double sum = 0.0, error = 0.0, plain = 0.0;
  for (std::int64_t l = 0; l < k; ++l) {
    const double x = a(l), y = b(l), p = x * y, p_error = std::fma(x, y, -p);
    const double t = sum + p, z = t - sum, s_error = (sum - (t - z)) + (p - z);
    sum = t, error += p_error + s_error;
    plain = std::fma(x, y, plain);
  }
  return std::isfinite(sum) && std::isfinite(error) ? sum + error : plain;
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

// A certified contract's certificate (certificate.hpp) on the CPU: the lines' units, tables and
// lower-bound magnitudes, the count every element needs, and the decision; `row_native` and
// `col_native` get the lines computed natively.
certify::Decision certify_cpu(const Matrix& A, const Matrix& Bt, const std::vector<LineStats>& row_stats,
                              const std::vector<LineStats>& col_stats, const std::vector<LineScale>& row,
                              const std::vector<LineScale>& col, double rtol, const ozaki::Budget* budgets, int lo,
                              std::vector<std::uint8_t>& row_native, std::vector<std::uint8_t>& col_native) {
  const std::int64_t m = A.rows, k = A.cols, n = Bt.rows, k1 = std::max<std::int64_t>(k, 1);
  const int w = certify::lower_bits(k1);
  struct Side {
    std::vector<std::int32_t> lower;  // lines × k lower-bound magnitudes
    std::vector<certify::LineFacts> facts;
    std::vector<int> offset;
    std::vector<std::array<std::uint8_t, certify::kNeedTable>> table;
    std::vector<int> most;  // the largest count any element of the line needs
  };
  auto side_of = [&](const Matrix& X, const std::vector<LineStats>& stats, const std::vector<LineScale>& lines,
                     int which) {
    Side s;
    s.lower.assign(static_cast<std::size_t>(X.rows * k), 0);
    s.facts.resize(static_cast<std::size_t>(X.rows));
    s.offset.assign(static_cast<std::size_t>(X.rows), 0);
    s.table.resize(static_cast<std::size_t>(X.rows));
    s.most.assign(static_cast<std::size_t>(X.rows), 0);
    parallel_for(X.rows, 16, [&](std::int64_t i0, std::int64_t i1) {
      for (std::int64_t i = i0; i < i1; ++i) {
        const LineStats& st = stats[i];
        if (st.nonfinite || st.nonzeros == 0) continue;
        std::uint64_t units = 0;
        s.offset[i] = certify::lower_offset(st.sum.sum, st.nonzeros);
        for (std::int64_t l = 0; l < k; ++l) {
          s.lower[i * k + l] = certify::lower_magnitude(X(i, l), lines[i].exponent, s.offset[i], w);
          units += certify::magnitude_units(X(i, l), lines[i].exponent);
        }
        s.facts[i] = certify::line_facts(units, lines[i].exponent, st.lowest_bit, st.nonzeros);
        std::uint8_t table[certify::kNeedTable];
        certify::count_table(lo, [&](int c) {
          return certify::norm_bits(budgets[c], which, st.largest, st.sum.sum, st.nonzeros, k1);
        }, table);
        std::copy(table, table + certify::kNeedTable, s.table[i].begin());
      }
    });
    return s;
  };
  Side ra = side_of(A, row_stats, row, 0), rb = side_of(Bt, col_stats, col, 1);
  const double rho_factor = certify::rho_factor(rtol, w);
  auto emulated = [](const LineStats& st) { return !st.nonfinite && st.nonzeros > 0; };
  std::mutex merge;
  parallel_for(m, 1, [&](std::int64_t i0, std::int64_t i1) {
    std::vector<int> col_most(static_cast<std::size_t>(n), 0);
    for (std::int64_t i = i0; i < i1; ++i) {
      if (!emulated(row_stats[i])) continue;
      for (std::int64_t j = 0; j < n; ++j) {
        if (!emulated(col_stats[j])) continue;
        std::int64_t lambda = 0;  // Λ_ij: exact (at most 2^31 - 1 by lower_bits)
        for (std::int64_t l = 0; l < k; ++l) lambda += std::int64_t(ra.lower[i * k + l]) * rb.lower[j * k + l];
        const double rho = certify::rho(rho_factor, lambda, ra.offset[i], rb.offset[j]);
        const int need = std::max(certify::line_count(ra.table[i].data(), ra.facts[i], rb.facts[j].units, rho),
                                  certify::line_count(rb.table[j].data(), rb.facts[j], ra.facts[i].units, rho));
        ra.most[i] = std::max(ra.most[i], need);
        col_most[j] = std::max(col_most[j], need);
      }
    }
    std::lock_guard<std::mutex> lock(merge);
    for (std::int64_t j = 0; j < n; ++j) rb.most[j] = std::max(rb.most[j], col_most[j]);
  });
  certify::CountHistogram hist_rows, hist_cols;
  for (std::int64_t i = 0; i < m; ++i)
    row_stats[i].nonfinite ? ++hist_rows.nonfinite : ++hist_rows.lines[ra.most[i]];
  for (std::int64_t j = 0; j < n; ++j)
    col_stats[j].nonfinite ? ++hist_cols.nonfinite : ++hist_cols.lines[rb.most[j]];
  const certify::Decision d = certify::decide(hist_rows, hist_cols, m, n, lo);
  for (std::int64_t i = 0; i < m; ++i)
    row_native[i] = row_stats[i].nonfinite || d.whole_native || (d.cover_rows && ra.most[i] > d.moduli);
  for (std::int64_t j = 0; j < n; ++j)
    col_native[j] = col_stats[j].nonfinite || (!d.whole_native && !d.cover_rows && rb.most[j] > d.moduli);
  return d;
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
  const bool certified = contract.certified();
  GemmReport report;
  if (certified) {
    check_certified_contract(contract, k);
    contract.scaling = GemmScaling::norm;
  } else {
    const ozaki::Budget budget = check_contract(contract, k).budget;
    report.moduli = contract.moduli, report.bits_a = budget.bits_a, report.bits_b = budget.bits_b;
  }
  check_output(c_view, a_view, b_view);
  if (m == 0 || n == 0) {
    report.rtol = contract.rtol_at(k);
    finish_report(report, compensated_dot_bound(k));
    return report;
  }
  // Row exponents of op(A), column exponents of op(B) (the rows of op(B)ᵀ); for certified contracts
  // and norm scaling, in the same pass each line's LineStats (its 2-norm, nonzeros, lowest bit).
  const Matrix Bt = transposed(B);
  const bool stats = certified || contract.scaling == GemmScaling::norm;
  std::vector<LineStats> row_stats, col_stats;
  const std::vector<LineScale> row = scan_rows(A, stats ? &row_stats : nullptr),
                               col = scan_rows(Bt, stats ? &col_stats : nullptr);
  // The lines computed natively: those holding Inf/NaN, and those the certificate sends there.
  std::vector<std::uint8_t> row_native(static_cast<std::size_t>(m)), col_native(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < m; ++i) row_native[i] = row[i].nonfinite;
  for (std::int64_t j = 0; j < n; ++j) col_native[j] = col[j].nonfinite;
  certify::Decision decision;
  if (certified) {
    ozaki::Budget budgets[kGemmMaxModuli + 1];
    const int lo = certify::certified_counts(k, budgets);
    decision = certify_cpu(A, Bt, row_stats, col_stats, row, col, contract.rtol_at(k), budgets, lo, row_native,
                           col_native);
    contract.moduli = decision.moduli;
  }
  report.certified = certified, report.rtol = contract.rtol_at(k), report.bound = report.rtol;
  report.whole_native = decision.whole_native;
  const bool emulate = !decision.whole_native;
  const int nmod = emulate ? contract.moduli : 0;
  report.moduli = nmod;

  // 1. Shifts, from the scan above. Bits kept per row of op(A): for "fast", as many as fit under the
  // side's cap; for "accurate", as many as the per-element bound from one extra small-integer product
  // allows, for "norm" as many as the line's 2-norm allows (never fewer).
  std::vector<int> row_bits(static_cast<std::size_t>(m)), col_bits(static_cast<std::size_t>(n));
  std::vector<std::int8_t> ra, rb;
  constexpr int kLimbs = ozaki::crt_limbs(kGemmMaxModuli);  // enough for every count
  ozaki::CrtTable<kLimbs> crt_table;
  if (emulate) {
    const auto [crt, budget] = check_contract(contract, k);
    crt_table = ozaki::crt_table<kLimbs>(crt);
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
    ra = row_residues(A, row, row_bits, nmod), rb = row_residues(Bt, col, col_bits, nmod);
  }

  double* C = static_cast<double*>(c_view.data);
  auto c_at = [&](std::int64_t i, std::int64_t j) -> double& { return C[i * c_view.strides[0] + j * c_view.strides[1]]; };
  auto finish = [&](double product, std::int64_t i, std::int64_t j) {
    double& c = c_at(i, j);
    c = ozaki::finish(opt.alpha, product, opt.beta, c);
  };

  // 3–6. Products mod p, exact reconstruction, one rounding; native lines in float64 (Inf/NaN as
  // IEEE gives them).
  const auto& moduli = gemm_moduli();
  std::vector<std::int64_t> native_in_row(static_cast<std::size_t>(m), 0), nonfinite_in_row(static_cast<std::size_t>(m), 0);
  parallel_for(m, 1, [&](std::int64_t i0, std::int64_t i1) {
    std::vector<std::uint8_t> r(static_cast<std::size_t>(nmod));
    for (std::int64_t i = i0; i < i1; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        if (row_native[i] || col_native[j]) {
          ++native_in_row[i];
          if (row[i].nonfinite || col[j].nonfinite) {  // IEEE's Inf/NaN: one fma per position in order, as the GPU
            double s = 0.0;
            for (std::int64_t l = 0; l < k; ++l) s = std::fma(A(i, l), B(l, j), s);
            finish(s, i, j);
            ++nonfinite_in_row[i];
          } else {
            finish(compensated_dot(k, [&](std::int64_t l) { return A(i, l); }, [&](std::int64_t l) { return B(l, j); }),
                   i, j);
          }
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
  for (std::int64_t i = 0; i < m; ++i) {
    report.native_elements += native_in_row[i], report.nonfinite_elements += nonfinite_in_row[i];
    if (row_native[i]) report.native_row_indices.push_back(i);
  }
  for (std::int64_t j = 0; j < n; ++j)
    if (col_native[j]) report.native_col_indices.push_back(j);
  report.native_rows = std::int64_t(report.native_row_indices.size());
  report.native_cols = std::int64_t(report.native_col_indices.size());
  finish_report(report, compensated_dot_bound(k));
  return report;
}

}  // namespace ironkernels
