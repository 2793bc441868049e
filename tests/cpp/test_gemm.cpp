// C++ tests of the Ozaki-II CPU reference: exact results on integer inputs, the rounding error
// bound against a long-double reference, IEEE semantics for Inf/NaN, layouts, edge cases, errors.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "check.hpp"
#include "gemm/ozaki.hpp"
#include "ironkernels/ironkernels.hpp"

using namespace ironkernels;


struct Mat {
  std::int64_t rows, cols;
  std::vector<double> v;
  Mat(std::int64_t r, std::int64_t c, double fill = 0.0) : rows(r), cols(c), v(r * c, fill) {}
  double& operator()(std::int64_t i, std::int64_t j) { return v[i * cols + j]; }
  double operator()(std::int64_t i, std::int64_t j) const { return v[i * cols + j]; }
  ArrayView view() { return ArrayView::contiguous(v.data(), DType::float64, {rows, cols}); }
};

// (u - 0.5) · exp(phi · g): the standard test family.
Mat family(std::int64_t r, std::int64_t c, double phi, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> g;
  Mat m(r, c);
  for (auto& x : m.v) x = (u(rng) - 0.5) * std::exp(phi * g(rng));
  return m;
}

long double ref_entry(const Mat& a, const Mat& b, std::int64_t i, std::int64_t j) {
  long double s = 0;
  for (std::int64_t l = 0; l < a.cols; ++l) s += static_cast<long double>(a(i, l)) * b(l, j);
  return s;
}

// An independent rounding of a 192-bit integer times 2^-e to float64 (bit by bit, round half to
// even, gradual underflow), for limbs_to_double_scaled.
double reference_round(const std::uint64_t (&v)[3], int e) {
  auto bit = [&](int i) { return i >= 0 && i < 192 && ((v[i / 64] >> (i % 64)) & 1); };
  int len = 0;
  for (int i = 191; i >= 0; --i)
    if (bit(i)) {
      len = i + 1;
      break;
    }
  if (len == 0) return 0.0;
  // The result's last kept bit has weight 2^q: q = max(len - 53, -1074 + e) in units of the integer.
  const int q = std::max(len - 53, -1074 + e);
  if (q <= 0) {  // exact
    double x = 0;
    for (int i = len - 1; i >= 0; --i) x = x * 2 + (bit(i) ? 1 : 0);
    return std::ldexp(x, -e);
  }
  std::uint64_t mant = 0;
  for (int i = len - 1; i >= q; --i) mant = mant * 2 + (bit(i) ? 1 : 0);
  bool sticky = false;
  for (int i = q - 2; i >= 0; --i) sticky = sticky || bit(i);
  if (bit(q - 1) && (sticky || (mant & 1))) ++mant;
  return std::ldexp(static_cast<double>(mant), q - e);
}

// Clears every bit of the 192-bit v from bit `len` up.
void keep_low_bits(std::uint64_t (&v)[3], int len) {
  for (int l = 0; l < 3; ++l) {
    const int keep = std::clamp(len - 64 * l, 0, 64);
    v[l] = keep == 64 ? v[l] : keep == 0 ? 0 : v[l] & ((std::uint64_t(1) << keep) - 1);
  }
}

void test_limbs_to_double_rounds_once() {
  std::mt19937_64 rng(7);
  int checked = 0;
  for (int trial = 0; trial < 200000; ++trial) {
    std::uint64_t v[3] = {rng(), rng(), rng()};
    const int len = int(rng() % 193);
    keep_low_bits(v, len);
    if (trial % 7 == 0) v[0] |= 1, v[0] &= ~std::uint64_t(2);  // ties and near-ties
    // Scales across normal, subnormal, underflow and overflow results.
    const int e = int(rng() % 2400) - 1200 + len;
    std::uint32_t limbs[6];
    for (int l = 0; l < 6; ++l) limbs[l] = static_cast<std::uint32_t>(v[l / 2] >> (32 * (l % 2)));
    const double got = detail::ozaki::limbs_to_double_scaled<6>(limbs, e);
    const double want = reference_round(v, e);
    if (std::memcmp(&got, &want, sizeof got) != 0) {
      CHECK(false, "limbs_to_double_scaled: len %d e %d got %a want %a", len, e, got, want);
      return;
    }
    ++checked;
  }
  CHECK(checked == 200000, "checked %d", checked);
}

// residue() against the residue by integer division (__int128 reference) for every modulus, on
// random 62-bit integers of both signs, small ones, and values next to multiples of p (the
// quotient's rounding boundaries).
void test_residues_are_exact() {
  std::mt19937_64 rng(11);
  const auto& moduli = gemm_moduli();
  int wrong = 0;
  for (int t = 0; t < kGemmMaxModuli; ++t) {
    const int p = moduli[t], h = p / 2;
    const auto c = detail::ozaki::residue_constants(p);
    for (int trial = 0; trial < 20000; ++trial) {
      std::int64_t q = std::int64_t(rng() >> (2 + rng() % 62));
      if (trial % 3 == 0) q = q / p * p + std::int64_t(rng() % 3) - 1 + (trial % 2 ? h : 0);
      if (q > (std::int64_t(1) << 62)) q = (std::int64_t(1) << 62) - std::int64_t(rng() % 1000);
      if (trial == 0) q = std::int64_t(1) << 62;  // the largest a scaled element reaches
      if (rng() & 1) q = -q;
      const double d = static_cast<double>(q);  // the scaled elements are integer-valued doubles
      q = static_cast<std::int64_t>(d);
      const auto split = detail::ozaki::split_integer(d);
      std::int64_t want = q % p;  // into [-h, p-1-h]
      if (want < -h) want += p;
      if (want > p - 1 - h) want -= p;
      const int got = detail::ozaki::residue(split, c);
      if (got != want && wrong++ < 5) CHECK(false, "residue(%lld) mod %d: got %d want %lld", (long long)q, p, got, (long long)want);
    }
  }
  CHECK(wrong == 0, "%d wrong residues", wrong);
}

// product_residue() against % for every modulus, over the whole range of an INT32 product (|x| <=
// 2^30): the ends, zero, next to multiples of p, and random values.
void test_product_residues_are_exact() {
  std::mt19937_64 rng(12);
  const auto& moduli = gemm_moduli();
  constexpr std::int64_t kMax = detail::ozaki::kMaxProduct;
  int wrong = 0;
  for (int t = 0; t < kGemmMaxModuli; ++t) {
    const int p = moduli[t];
    const auto c = detail::ozaki::residue_constants(p);
    std::vector<std::int64_t> xs = {0, 1, -1, kMax, -kMax, kMax - 1, -kMax + 1, p, -p, p - 1, 1 - p};
    for (int trial = 0; trial < 20000; ++trial) {
      const std::int64_t x = std::int64_t(rng() % std::uint64_t(2 * kMax + 1)) - kMax;
      xs.push_back(x);
      const std::int64_t near = x / p * p + std::int64_t(rng() % 3) - 1;
      if (near >= -kMax && near <= kMax) xs.push_back(near);
    }
    for (const std::int64_t x : xs) {
      const std::int64_t want = ((x % p) + p) % p;
      const std::uint32_t got = detail::ozaki::product_residue(std::int32_t(x), c);
      if (got != std::uint32_t(want) && wrong++ < 5) CHECK(false, "product_residue(%lld) mod %d: got %u want %lld", (long long)x, p, got, (long long)want);
    }
  }
  CHECK(wrong == 0, "%d wrong product residues", wrong);
}

// crt_to_double against the integer it must reconstruct: a random X in (-P/2, P/2] (every bit
// length, and the edges 0, ±1, P/2, -(P/2 - 1) and next to them), its residues r_t = X mod p_t, and
// reference_round of |X|, for every moduli count, with the count at run time and at compile time.
void test_crt_reconstructs_exactly() {
  std::mt19937_64 rng(12);
  const auto& moduli = gemm_moduli();
  int wrong = 0, checked = 0;
  for (int count = 2; count <= kGemmMaxModuli; ++count) {
    const auto crt = detail::ozaki::crt_constants(moduli.data(), count);
    const auto table = detail::ozaki::crt_table<detail::ozaki::crt_limbs(kGemmMaxModuli)>(crt);
    const detail::WideUint half = crt.half_P;
    auto mod_small = [](const std::uint64_t (&v)[3], int p) {  // v mod p, v < 2^192
      unsigned __int128 r = 0;
      for (int l = 2; l >= 0; --l) r = ((r << 64) | v[l]) % unsigned(p);
      return int(r);
    };
    for (int trial = 0; trial < 4000; ++trial) {
      // |X| <= P/2: random bits below bit_length(P/2), then clamped into range; or an edge value.
      std::uint64_t mag[3] = {rng(), rng(), rng()};
      const int len = trial < 8 ? half.bit_length() : 1 + int(rng() % std::uint64_t(half.bit_length()));
      keep_low_bits(mag, len);
      auto above_half = [&] {
        for (int l = 2; l >= 0; --l)
          if (mag[l] != half.limb[l]) return mag[l] > half.limb[l];
        return false;
      };
      if (above_half() || trial % 50 == 0) std::copy(half.limb, half.limb + 3, mag);  // X = ±P/2 ...
      if (trial % 50 == 1) mag[0] = 0, mag[1] = 0, mag[2] = 0;                      // 0
      if (trial % 50 == 2) mag[0] = 1, mag[1] = 0, mag[2] = 0;                      // ±1
      if (trial % 50 == 3 && mag[0] > 0) mag[0] -= 1;                               // next to P/2
      bool negative = rng() & 1;
      if (std::equal(mag, mag + 3, half.limb)) negative = false;  // P/2 is in the range, -P/2 is not
      if (!(mag[0] | mag[1] | mag[2])) negative = false;           // X = 0 comes back as +0
      std::uint8_t r[kGemmMaxModuli];
      for (int t = 0; t < count; ++t) {
        const int p = moduli[t], m = mod_small(mag, p);
        r[t] = std::uint8_t(negative ? (p - m) % p : m);
      }
      const int e = int(rng() % 400) - 200;
      const double mag_want = reference_round(mag, e);
      const double want = negative ? -mag_want : mag_want;
      const double got = detail::ozaki::crt_to_double(table, r, 1, e);
      double got_fixed = 0, got_batched = 0;
      detail::ozaki::with_moduli_count(count, [&](auto c) {
        namespace oz = detail::ozaki;
        constexpr int kCount = decltype(c)::value, L = oz::crt_limbs(kCount);
        const oz::CrtTable<L> fixed_table = oz::crt_table<L>(crt);
        got_fixed = oz::crt_to_double<L, kCount>(fixed_table, r, 1, e);
        got_batched = got_fixed;
        if constexpr (kCount <= 16) {  // the GPU reconstruction's way: four elements' sums at once
          double H[4], B[4];
          std::uint64_t S_lo[4];
          auto residue = [&](int t) { return std::uint32_t(r[t]); };
          oz::crt_mixed_sums<kCount>(fixed_table.mixed, kCount, [&](int t, int n) { return n == 2 ? residue(t) : 0u; },
                                     H, B, S_lo);
          got_batched = oz::crt_mixed_finish(fixed_table.mixed, H[2], B[2], S_lo[2], e);
          if (got_batched != got_batched) got_batched = oz::crt_limbs_to_double<L, kCount>(fixed_table, residue, e);
        }
      });
      ++checked;
      const bool all_equal = std::memcmp(&got, &want, 8) == 0 && std::memcmp(&got_fixed, &want, 8) == 0 &&
                             std::memcmp(&got_batched, &want, 8) == 0;
      if (!all_equal && wrong++ < 5)
        CHECK(false, "crt_to_double, %d moduli, len %d: got %a / %a / %a, want %a", count, len, got, got_fixed,
              got_batched, want);
    }
  }
  CHECK(wrong == 0 && checked == 19 * 4000, "%d of %d wrong", wrong, checked);
}

// scale_by_pow2 (the scans' and residues' x·2^n) is ldexp bit for bit, subnormal results and overflow
// included.
void test_scale_by_pow2_is_ldexp() {
  std::mt19937_64 rng(13);
  std::uniform_int_distribution<int> n_dist(-1200, 1200), e_dist(-1074, 1023);
  int wrong = 0;
  for (int trial = 0; trial < 200000; ++trial) {
    const double x = std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng), e_dist(rng));
    const int n = n_dist(rng);
    const double got = detail::ozaki::scale_by_pow2(x, n), want = std::ldexp(x, n);
    if (std::memcmp(&got, &want, 8) != 0 && wrong++ < 5)
      CHECK(false, "scale_by_pow2(%a, %d) = %a, ldexp %a", x, n, got, want);
  }
  CHECK(wrong == 0, "%d of 200000 differ", wrong);
}

void test_moduli_are_pairwise_coprime() {
  const auto& m = gemm_moduli();
  CHECK(m[0] == 256 && m[1] == 255, "moduli start 256, 255");
  for (int i = 0; i < kGemmMaxModuli; ++i)
    for (int j = i + 1; j < kGemmMaxModuli; ++j) {
      int a = m[i], b = m[j];
      while (b) a %= b, std::swap(a, b);
      CHECK(a == 1, "moduli %d and %d share a factor", m[i], m[j]);
    }
}

// Fast scaling's caps: k·cap_a·cap_b < P/2 exactly, the largest μ (in steps of 2^-20) that fits, at
// least the whole powers of two; and each line's shift is the largest that keeps it under its cap.
void test_fast_caps_fit_and_are_largest() {
  using detail::WideUint;
  namespace oz = detail::ozaki;
  std::mt19937_64 rng(5);
  for (int c = 2; c <= kGemmMaxModuli; ++c)
    for (std::int64_t k : {1, 7, 300, 4096, 65537, 1 << 20}) {
      const oz::CrtConstants crt = oz::crt_constants(gemm_moduli().data(), c);
      const oz::Budget b = oz::budget(crt, k);
      if (b.bits_a == 0) continue;
      auto fits = [&](double ca, double cb) {
        return WideUint::from(std::uint64_t(ca)).times_small(std::uint64_t(cb)).times_small(2 * std::uint64_t(k)) < crt.P;
      };
      CHECK(fits(b.cap_a, b.cap_b), "c=%d k=%lld: the caps do not fit", c, (long long)k);
      CHECK(b.cap_a >= std::ldexp(1.0, b.bits_a) && b.cap_b >= std::ldexp(1.0, b.bits_b) &&
                b.cap_a <= 0x1p62 && b.cap_b <= 0x1p62, "c=%d k=%lld: caps out of range", c, (long long)k);
      const double mu = std::max(b.cap_a / std::ldexp(1.0, b.bits_a), b.cap_b / std::ldexp(1.0, b.bits_b));
      const double next = std::ceil(mu * 0x1p20) * 0x1p-20 + 0x1p-20;  // one step of μ further
      if (b.bits_a >= 20 && b.bits_b >= 20 && b.bits_a < 62 && b.bits_b < 62 && next < 2.0)
        CHECK(!fits(std::floor(std::ldexp(next, b.bits_a)), std::floor(std::ldexp(next, b.bits_b))),
              "c=%d k=%lld: a larger μ would fit", c, (long long)k);
      for (int trial = 0; trial < 200; ++trial) {
        const double largest = std::ldexp(1.0 + double(rng() >> 11) * 0x1p-53, int(rng() % 2000) - 1000);
        const int s = oz::fitted_shift(largest, b.cap_a);
        CHECK(std::ldexp(largest, s) <= b.cap_a && std::ldexp(largest, s + 1) > b.cap_a,
              "c=%d: fitted_shift(%a, %a) = %d", c, largest, b.cap_a, s);
        const int bits = oz::fitted_bits(largest, b.cap_a, b.bits_a);
        CHECK(bits == b.bits_a || bits == b.bits_a + 1, "c=%d: %d bits against %d", c, bits, b.bits_a);
      }
    }
}

void test_integer_inputs_are_exact() {
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<int> d(-1000, 1000);
  for (int nmod : {4, 8, 14, 20})
  for (GemmScaling scaling : {GemmScaling::fast, GemmScaling::accurate, GemmScaling::norm}) {
    Mat a(17, 64), b(64, 23), c(17, 23, -1.0);
    for (auto& x : a.v) x = d(rng);
    for (auto& x : b.v) x = d(rng);
    GemmOptions opt;
    opt.contract.moduli = nmod;
    opt.contract.scaling = scaling;
    gemm_reference(a.view(), b.view(), c.view(), opt);
    for (std::int64_t i = 0; i < 17; ++i)
      for (std::int64_t j = 0; j < 23; ++j) {
        std::int64_t exact = 0;
        for (std::int64_t l = 0; l < 64; ++l) exact += std::int64_t(a(i, l)) * std::int64_t(b(l, j));
        CHECK(c(i, j) == double(exact), "moduli=%d (%lld,%lld): %.17g != %lld", nmod, (long long)i, (long long)j, c(i, j), (long long)exact);
      }
  }
}

// The only error is the rounding of the scaled inputs to integers, half a unit each: per element of C
// at most k · 2^(e_i + f_j) · (ε_a + ε_b + ε_a·ε_b), ε = 2^-(bits+1), before the final rounding.
void test_error_bound_on_the_standard_family() {
  std::mt19937_64 rng(2);
  for (double phi : {0.5, 2.0, 4.0})
    for (int nmod : {8, 12, 14, 16, 20})
    for (GemmScaling scaling : {GemmScaling::fast, GemmScaling::accurate, GemmScaling::norm}) {
      const std::int64_t m = 13, k = 97, n = 11;
      Mat a = family(m, k, phi, rng), b = family(k, n, phi, rng), c(m, n);
      GemmOptions opt;
      opt.contract.moduli = nmod;
      opt.contract.scaling = scaling;
      const GemmReport rep = gemm_reference(a.view(), b.view(), c.view(), opt);
      double worst = 0;
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
          double amax = 0, bmax = 0;
          for (std::int64_t l = 0; l < k; ++l) amax = std::fmax(amax, std::fabs(a(i, l)));
          for (std::int64_t l = 0; l < k; ++l) bmax = std::fmax(bmax, std::fabs(b(l, j)));
          const double ea = std::ldexp(1.0, std::ilogb(amax) + 1), eb = std::ldexp(1.0, std::ilogb(bmax) + 1);
          const long double ref = ref_entry(a, b, i, j);
          const double eps_a = std::ldexp(1.0, -rep.bits_a - 1), eps_b = std::ldexp(1.0, -rep.bits_b - 1);
          const double bound =
              double(k) * ea * eb * (eps_a + eps_b + eps_a * eps_b) + std::ldexp(std::fabs(double(ref)), -52);
          worst = std::fmax(worst, double(std::fabs(c(i, j) - ref)) / bound);
        }
      CHECK(worst <= 1.0, "phi=%g moduli=%d: error %.3g x the rounding bound", phi, nmod, worst);
    }
}

void test_more_moduli_are_more_accurate() {
  std::mt19937_64 rng(3);
  const std::int64_t m = 20, k = 200, n = 20;
  Mat a = family(m, k, 0.5, rng), b = family(k, n, 0.5, rng);
  double prev = std::numeric_limits<double>::infinity();
  for (int nmod : {6, 10, 14, 18}) {
    Mat c(m, n);
    GemmOptions opt;
    opt.contract.moduli = nmod;
    gemm_reference(a.view(), b.view(), c.view(), opt);
    double err = 0;
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        const long double ref = ref_entry(a, b, i, j);
        err = std::fmax(err, double(std::fabs(c(i, j) - ref) / std::fabs(ref)));
      }
    CHECK(err < prev || err < 1e-15, "moduli=%d: max rel error %.3g not below %.3g", nmod, err, prev);
    prev = err;
  }
  CHECK(prev < 1e-13, "18 moduli: max rel error %.3g", prev);
}

void test_nonfinite_follow_ieee_and_beta_zero_ignores_c() {
  std::mt19937_64 rng(4);
  Mat a = family(5, 7, 0.5, rng), b = family(7, 6, 0.5, rng);
  a(1, 3) = std::numeric_limits<double>::infinity();
  b(2, 4) = std::numeric_limits<double>::quiet_NaN();
  Mat c(5, 6, std::numeric_limits<double>::quiet_NaN());  // beta = 0: C's NaN must not leak
  const GemmReport rep = gemm_reference(a.view(), b.view(), c.view());
  for (std::int64_t i = 0; i < 5; ++i)
    for (std::int64_t j = 0; j < 6; ++j) {
      double native = 0;
      for (std::int64_t l = 0; l < 7; ++l) native = std::fma(a(i, l), b(l, j), native);
      if (i == 1 || j == 4) {
        CHECK(std::isnan(c(i, j)) == std::isnan(native) && (std::isnan(native) || c(i, j) == native),
              "(%lld,%lld): %g, native %g", (long long)i, (long long)j, c(i, j), native);
      } else {
        CHECK(std::isfinite(c(i, j)) && std::fabs(c(i, j) - native) <= 1e-12 * (1 + std::fabs(native)),
              "(%lld,%lld) finite part: %g vs %g", (long long)i, (long long)j, c(i, j), native);
      }
    }
  CHECK(rep.nonfinite_elements == 5 + 6 - 1, "nonfinite elements %lld", (long long)rep.nonfinite_elements);
}

void test_transposes_strides_alpha_beta() {
  std::mt19937_64 rng(5);
  Mat at = family(9, 4, 1.0, rng), b = family(9, 6, 1.0, rng);  // op(A) = at^T: 4x9
  Mat c0 = family(4, 6, 1.0, rng);
  // C as a strided view: every other column of a 4x12 buffer.
  Mat buf(4, 12, 0.0);
  for (std::int64_t i = 0; i < 4; ++i)
    for (std::int64_t j = 0; j < 6; ++j) buf(i, 2 * j) = c0(i, j);
  ArrayView cv;
  cv.data = buf.v.data();
  cv.dtype = DType::float64;
  cv.shape = {4, 6};
  cv.strides = {12, 2};
  GemmOptions opt;
  opt.trans_a = true;
  opt.alpha = -1.5;
  opt.beta = 0.25;
  opt.contract.moduli = 18;
  gemm_reference(at.view(), b.view(), cv, opt);
  for (std::int64_t i = 0; i < 4; ++i)
    for (std::int64_t j = 0; j < 6; ++j) {
      long double s = 0;
      for (std::int64_t l = 0; l < 9; ++l) s += static_cast<long double>(at(l, i)) * b(l, j);
      const long double want = -1.5L * s + 0.25L * c0(i, j);
      CHECK(std::fabs(buf(i, 2 * j) - want) <= 1e-13 * (1 + std::fabs(double(want))), "(%lld,%lld)", (long long)i, (long long)j);
      CHECK(buf(i, 2 * j + 1) == 0.0, "gap column written");
    }
}

void test_edge_cases() {
  // k = 0: C = beta·C.
  Mat a(3, 0), b(0, 2), c(3, 2, 4.0);
  GemmOptions opt;
  opt.beta = 0.5;
  gemm_reference(a.view(), b.view(), c.view(), opt);
  for (double x : c.v) CHECK(x == 2.0, "k=0: %g", x);
  // Zero rows, subnormals, values near overflow.
  Mat x(3, 2), y(2, 2);
  x(0, 0) = x(0, 1) = 0.0;
  x(1, 0) = 3e-310, x(1, 1) = -1e-309;  // subnormal row
  x(2, 0) = 1e300, x(2, 1) = 1e300;
  y(0, 0) = 1e8, y(1, 0) = 2e8, y(0, 1) = 1.0, y(1, 1) = 1e7;
  Mat z(3, 2, -1.0);
  gemm_reference(x.view(), y.view(), z.view());
  CHECK(z(0, 0) == 0.0 && z(0, 1) == 0.0, "zero row");
  const double want10 = 3e-310 * 1e8 - 1e-309 * 2e8;
  CHECK(std::fabs(z(1, 0) - want10) <= 1e-15 * std::fabs(want10), "subnormal row: %.17g vs %.17g", z(1, 0), want10);
  CHECK(std::isinf(z(2, 0)) && z(2, 0) > 0, "overflow to +inf: %g", z(2, 0));
  CHECK(std::fabs(z(2, 1) - 1.0000001e307) <= 1e-15 * 1e307, "near overflow: %.17g", z(2, 1));
  // m, n, k = 1.
  Mat p(1, 1, 3.0), q(1, 1, -0.5), r(1, 1);
  gemm_reference(p.view(), q.view(), r.view());
  CHECK(r(0, 0) == -1.5, "1x1x1: %g", r(0, 0));
}

void test_errors() {
  Mat a(2, 3), b(4, 2), c(2, 2);
  bool threw = false;
  try {
    gemm_reference(a.view(), b.view(), c.view());
  } catch (const ValueError& e) {
    threw = std::strstr(e.what(), "inner dimensions") != nullptr;
  }
  CHECK(threw, "inner dimension mismatch");
  threw = false;
  Mat b2(3, 2);
  GemmOptions opt;
  opt.contract.moduli = 21;
  try {
    gemm_reference(a.view(), b2.view(), c.view(), opt);
  } catch (const ValueError& e) {
    threw = std::strstr(e.what(), "moduli") != nullptr;
  }
  CHECK(threw, "moduli out of range");
  threw = false;
  try {
    gemm_reference(a.view(), b2.view(), a.view());
  } catch (const ValueError&) {
    threw = true;
  }
  CHECK(threw, "c must not overlap a (and has the wrong shape)");
  std::vector<float> f(6);
  threw = false;
  try {
    gemm_reference(ArrayView::contiguous(f.data(), DType::float32, {2, 3}), b2.view(), c.view());
  } catch (const TypeError&) {
    threw = true;
  }
  CHECK(threw, "float32 input must raise TypeError");
}

// Certified contracts on the reference: benign inputs are emulated, bit for bit the fixed norm-scaled
// contract of the count reported; the 1 × 3 product whose small elements meet the other side's mass
// (0 on every fixed contract) comes out exact; a row whose elements span 2^40 meets rtol·(|A||B|)
// element by element against a long-double product, by more moduli or natively.
void test_certified_contract() {
  {
    Mat a(1, 3), b(3, 1), c(1, 1);
    a(0, 0) = 1e20, a(0, 1) = a(0, 2) = 1.0;
    b(0, 0) = 1e-20, b(1, 0) = b(2, 0) = 1.0;
    for (double rtol : {0.0, 1e-6, 1e-14}) {
      GemmOptions opt;
      opt.contract.native = rtol == 0.0, opt.contract.rtol = rtol;
      const GemmReport rep = gemm_reference(a.view(), b.view(), c.view(), opt);
      CHECK(c(0, 0) == 3.0 && rep.native_elements == 1, "rtol %g: %g, %lld native elements", rtol, c(0, 0),
            (long long)rep.native_elements);
    }
  }
  std::mt19937_64 rng(7);
  const std::int64_t m = 9, k = 1500, n = 8;
  Mat a = family(m, k, 0.5, rng), b = family(k, n, 0.5, rng);
  Mat c(m, n), c_fixed(m, n);
  GemmOptions opt;
  opt.contract.native = true;
  const GemmReport rep = gemm_reference(a.view(), b.view(), c.view(), opt);
  CHECK(rep.certified && rep.native_elements == 0 && rep.moduli >= 12 && rep.moduli <= 17,
        "phi 0.5: certified %d, %lld native, %d moduli", int(rep.certified), (long long)rep.native_elements, rep.moduli);
  opt.contract.native = false, opt.contract.moduli = rep.moduli, opt.contract.scaling = GemmScaling::norm;
  gemm_reference(a.view(), b.view(), c_fixed.view(), opt);
  CHECK(std::memcmp(c.v.data(), c_fixed.v.data(), c.v.size() * 8) == 0, "certified differs from its count's contract");

  for (std::int64_t l = 0; l < k; ++l) a(3, l) = std::ldexp(a(3, l), -40);
  a(3, 7) = 1.0;
  for (double rtol : {1e-6, 1e-10, 1e-14}) {
    GemmOptions certified;
    certified.contract.rtol = rtol;
    const GemmReport wide = gemm_reference(a.view(), b.view(), c.view(), certified);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        long double exact = 0, magnitude = 0;
        for (std::int64_t l = 0; l < k; ++l)
          exact += (long double)a(i, l) * b(l, j), magnitude += std::fabs((long double)a(i, l) * b(l, j));
        const long double err = std::fabs((long double)c(i, j) - exact);
        CHECK(err <= (long double)wide.bound * magnitude + 0x1p-52L * std::fabs(exact),
              "rtol %g (%lld, %lld): error %Lg, bound %Lg", rtol, (long long)i, (long long)j, err,
              (long double)wide.bound * magnitude);
      }
  }
}

// Norm scaling keeps at least fast's bits (the report's fewest), more on heavy-tailed lines, and stays
// exact where Cauchy–Schwarz is tight: column i of op(B) is row i of op(A), so C'_ii = ‖A'_i‖₂‖B'_i‖₂
// comes as close to P/2 as the bits allow, and a wrap-around there would be off by ~P/2 times the
// shifts, far above the rounding bound checked here. k spans two full canonical chunks and a partial
// one; a column-major copy of A (another order of reads) gives the same bits.
void test_norm_scaling() {
  std::mt19937_64 rng(8);
  const std::int64_t m = 6, k = 2500, n = 6;
  for (double phi : {0.5, 2.0})
    for (int nmod : {6, 10, 15, 20}) {
      Mat a = family(m, k, phi, rng), b(k, n), at(k, m);
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t l = 0; l < k; ++l) b(l, i) = at(l, i) = a(i, l);
      GemmOptions opt;
      opt.contract.moduli = nmod;
      Mat c_fast(m, n), c(m, n), c_transposed(m, n);
      const GemmReport fast = gemm_reference(a.view(), b.view(), c_fast.view(), opt);
      opt.contract.scaling = GemmScaling::norm;
      const GemmReport norm = gemm_reference(a.view(), b.view(), c.view(), opt);
      CHECK(norm.bits_a >= fast.bits_a && norm.bits_b >= fast.bits_b, "phi %g, %d moduli: norm keeps %d/%d, fast %d/%d",
            phi, nmod, norm.bits_a, norm.bits_b, fast.bits_a, fast.bits_b);
      if (phi == 2.0 && (nmod == 10 || nmod == 15))
        CHECK(norm.bits_a > fast.bits_a && norm.bits_b > fast.bits_b, "phi 2, %d moduli: norm keeps %d/%d, fast %d/%d",
              nmod, norm.bits_a, norm.bits_b, fast.bits_a, fast.bits_b);
      opt.trans_a = true;
      gemm_reference(at.view(), b.view(), c_transposed.view(), opt);
      CHECK(std::memcmp(c.v.data(), c_transposed.v.data(), c.v.size() * 8) == 0, "norm scaling: layouts differ");
      const double eps_a = std::ldexp(1.0, -norm.bits_a - 1), eps_b = std::ldexp(1.0, -norm.bits_b - 1);
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
          double amax = 0, bmax = 0;
          for (std::int64_t l = 0; l < k; ++l)
            amax = std::fmax(amax, std::fabs(a(i, l))), bmax = std::fmax(bmax, std::fabs(b(l, j)));
          const double ea = std::ldexp(1.0, std::ilogb(amax) + 1), eb = std::ldexp(1.0, std::ilogb(bmax) + 1);
          const long double ref = ref_entry(a, b, i, j);
          const double bound =
              double(k) * ea * eb * (eps_a + eps_b + eps_a * eps_b) + std::ldexp(std::fabs(double(ref)), -52);
          CHECK(std::fabs(c(i, j) - ref) <= bound, "phi %g, %d moduli, (%lld, %lld): error %g above %g", phi, nmod,
                (long long)i, (long long)j, double(std::fabs(c(i, j) - ref)), bound);
        }
    }
}

void test_threads_do_not_change_bits() {
  std::mt19937_64 rng(6);
  Mat a = family(33, 40, 2.0, rng), b = family(40, 29, 2.0, rng), c1(33, 29), c4(33, 29);
  const int saved = cpu_threads();
  set_cpu_threads(1);
  gemm_reference(a.view(), b.view(), c1.view());
  set_cpu_threads(4);
  gemm_reference(a.view(), b.view(), c4.view());
  set_cpu_threads(saved);
  CHECK(std::memcmp(c1.v.data(), c4.v.data(), c1.v.size() * 8) == 0, "results differ with thread count");
}

// Karatsuba's three products (ozaki_karatsuba.hpp), formed as the wgmma engine forms them (K3 reduced
// and kept, K1 + K2 in one INT32 accumulator), against the stacked products (Re A, Im A)·(Re B, −Im B)
// and (Re A, Im A)·(Im B, Re B) mod p, for every modulus: random residues, and one chunk of
// kKaratsubaChunkK pairs at the residues' extremes (the largest accumulator the engine meets).
void test_karatsuba_phases_give_the_stacked_products() {
  namespace oz = detail::ozaki;
  std::mt19937_64 rng(17);
  const auto& moduli = gemm_moduli();
  int wrong = 0;
  for (int t = 0; t < kGemmMaxModuli; ++t) {
    const int p = moduli[t], top = p - 1 - p / 2, bottom = top - p + 1;
    const auto c = oz::residue_constants(p);
    for (int trial = 0; trial < 40; ++trial) {
      const bool extreme = trial < 2;
      const std::int64_t pairs = extreme ? oz::kKaratsubaChunkK : 1 + std::int64_t(rng() % 200);
      auto residue = [&] { return extreme ? (trial ? top : bottom) : bottom + int(rng() % std::uint64_t(p)); };
      std::int64_t k[oz::kKaratsubaSets] = {}, re = 0, im = 0;  // k[phase], then the stacked products
      for (std::int64_t l = 0; l < pairs; ++l) {
        const int ae = residue(), ao = residue(), be = residue(), bo = extreme ? (trial ? bottom : top) : residue();
        for (int phase = 0; phase < oz::kKaratsubaSets; ++phase)
          k[phase] += std::int64_t(oz::karatsuba_a_set(oz::karatsuba_a_of(phase), ae, ao, p)) *
                      oz::karatsuba_b_set(oz::karatsuba_b_of(phase), be, bo, p);
        re += std::int64_t(ae) * be + std::int64_t(ao) * bo;  // (e, o)·(Re B, −Im B)
        im += -std::int64_t(ae) * bo + std::int64_t(ao) * be;  // (e, o)·(Im B, Re B)
      }
      const std::int64_t k1_plus_k2 = k[1] + k[2];
      if (std::abs(k[0]) > oz::kMaxProduct || std::abs(k1_plus_k2) > oz::kMaxProduct) {
        CHECK(false, "Karatsuba accumulator past kMaxProduct: %lld, %lld", (long long)k[0], (long long)k1_plus_k2);
        return;
      }
      const std::uint32_t k3 = oz::product_residue(std::int32_t(k[0]), c),
                          k1 = oz::product_residue(std::int32_t(k[1]), c);
      const std::int64_t got_re = (std::int64_t(k1) - k3 + p) % p,
                         got_im = oz::product_residue(std::int32_t(k1_plus_k2), c);
      if ((got_re != ((re % p) + p) % p || got_im != ((im % p) + p) % p) && wrong++ < 5)
        CHECK(false, "Karatsuba mod %d, %lld pairs: Re %lld want %lld, Im %lld want %lld", p, (long long)pairs,
              (long long)got_re, (long long)(((re % p) + p) % p), (long long)got_im, (long long)(((im % p) + p) % p));
    }
  }
  CHECK(wrong == 0, "%d wrong Karatsuba residues", wrong);
  // Every pair of residues: each set in the residue range (its byte is then the one residue there) and
  // congruent to its definition.
  int outside = 0;
  for (int t = 0; t < kGemmMaxModuli; ++t) {
    const int p = moduli[t], top = p - 1 - p / 2, bottom = top - p + 1;
    for (int e = bottom; e <= top; ++e)
      for (int o = bottom; o <= top; ++o)
        for (int set = 0; set < oz::kKaratsubaSets; ++set) {
          const int a = oz::karatsuba_a_set(set, e, o, p), b = oz::karatsuba_b_set(set, e, o, p);
          const int want_a = set == 0 ? e : set == 1 ? o : e + o, want_b = set == 0 ? e : set == 1 ? e - o : -e - o;
          if (a < bottom || a > top || b < bottom || b > top || (a - want_a) % p || (b - want_b) % p) ++outside;
        }
  }
  CHECK(outside == 0, "%d Karatsuba sets outside the residue range or not congruent", outside);
  // Groups: consecutive, none above kKaratsubaGroup, none below 2, covering every count.
  for (int count = 2; count <= kGemmMaxModuli; ++count) {
    int next = 0;
    for (int g = 0; g < oz::karatsuba_groups(count); ++g) {
      const oz::ModuliGroup group = oz::karatsuba_group(count, g);
      CHECK(group.first == next && group.count >= 2 && group.count <= oz::kKaratsubaGroup,
            "count %d: group %d is [%d, +%d)", count, g, group.first, group.count);
      next = group.first + group.count;
    }
    CHECK(next == count, "count %d: groups cover %d moduli", count, next);
  }
}

int main() {
  test_limbs_to_double_rounds_once();
  test_residues_are_exact();
  test_product_residues_are_exact();
  test_karatsuba_phases_give_the_stacked_products();
  test_crt_reconstructs_exactly();
  test_scale_by_pow2_is_ldexp();
  test_moduli_are_pairwise_coprime();
  test_fast_caps_fit_and_are_largest();
  test_integer_inputs_are_exact();
  test_error_bound_on_the_standard_family();
  test_more_moduli_are_more_accurate();
  test_nonfinite_follow_ieee_and_beta_zero_ignores_c();
  test_transposes_strides_alpha_beta();
  test_edge_cases();
  test_errors();
  test_certified_contract();
  test_threads_do_not_change_bits();
  test_norm_scaling();
  return report_and_exit_code();
}
