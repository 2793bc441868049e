// C++ tests of the certificate's arithmetic (gemm/certificate.hpp), each function against its
// definition: exact scalings and roundings, the fewest bits by brute force, count tables by their
// definition, and the remedies' choice on histograms whose answer is known.
#include <cmath>
#include <cstdint>
#include <random>

#include <algorithm>
#include <utility>
#include <vector>

#include "check.hpp"
#include "gemm/certificate.hpp"
#include "gemm/ozaki_numbers.hpp"

using namespace ironkernels;
namespace certify = ironkernels::detail::certify;

void test_lowest_bit_exponent() {
  std::mt19937_64 rng(1);
  for (int t = 0; t < 20000; ++t) {
    const std::int64_t odd = std::int64_t(rng() >> 12) | 1;  // an odd integer below 2^52
    const int e = int(rng() % 2000) - 1000;
    const double x = std::ldexp(double(odd), e) * (t % 2 ? -1.0 : 1.0);
    if (!std::isfinite(x) || x == 0.0 || std::fabs(x) < 0x1p-1022) continue;
    CHECK(certify::lowest_bit_exponent(x) == e, "%a: %d, want %d", x, certify::lowest_bit_exponent(x), e);
  }
  CHECK(certify::lowest_bit_exponent(0x1p-1074) == -1074, "smallest subnormal");
  CHECK(certify::lowest_bit_exponent(3 * 0x1p-1074) == -1074, "3 * smallest subnormal");
  CHECK(certify::lowest_bit_exponent(0x1p-1073) == -1073, "2 * smallest subnormal");
  CHECK(certify::lowest_bit_exponent(0x1p-1030 + 0x1p-1060) == -1060, "a subnormal with two bits");
  CHECK(certify::lowest_bit_exponent(1.0) == 0 && certify::lowest_bit_exponent(0x1p1023) == 1023, "powers of two");
}

void test_magnitudes_bound_from_both_sides() {
  std::mt19937_64 rng(2);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int t = 0; t < 20000; ++t) {
    const int e = int(rng() % 600) - 300;
    const double x = std::ldexp(u(rng), e - int(rng() % 40));  // |x| < 2^e
    const int w = 1 + int(rng() % 7), s = int(rng() % 12);
    const long double scaled_units = std::ldexp((long double)std::fabs(x), certify::kUnitBits - e);
    const std::uint64_t units = certify::magnitude_units(x, e);
    CHECK(x == 0.0 ? units == 0 : (units >= scaled_units && units < scaled_units + 1 && units >= 1),
          "units of %a at 2^%d: %llu", x, e, (unsigned long long)units);
    const long double scaled = std::ldexp((long double)std::fabs(x), w + s - e);
    const std::int32_t lower = certify::lower_magnitude(x, e, s, w);
    const long double top = (1 << w) - 1;
    CHECK(lower <= scaled && lower <= top && (lower == top || lower > scaled - 1), "lower of %a (e %d, s %d, w %d): %d",
          x, e, s, w, lower);
  }
  CHECK(certify::magnitude_units(0x1p-1074, 1000) == 1, "a nonzero below the unit counts 1");
  CHECK(certify::magnitude_units(INFINITY, 0) == 0 && certify::lower_magnitude(NAN, 0, 0, 7) == 0, "Inf/NaN: 0");
}

void test_lower_bits_keep_lambda_in_int32() {
  for (std::int64_t k : {1LL, 2LL, 1000LL, 1LL << 16, (1LL << 17) - 1, 1LL << 17, 1LL << 18, 1LL << 19, 1LL << 20}) {
    const int w = certify::lower_bits(k);
    const std::int64_t top = (std::int64_t(1) << w) - 1, next = (std::int64_t(1) << (w + 1)) - 1;
    CHECK(top * top * k < (std::int64_t(1) << 31), "k %lld: w %d overflows", (long long)k, w);
    CHECK(w == 7 || next * next * k >= (std::int64_t(1) << 31), "k %lld: w %d is not the largest", (long long)k, w);
  }
}

void test_lower_offset_sits_one_bit_above_the_rms() {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  for (int t = 0; t < 5000; ++t) {
    const std::int64_t nonzeros = 1 + std::int64_t(rng() % 100000);
    const double sum = std::max(0.25, u(rng) * double(nonzeros));  // Σ (x·2^-E)²: the largest term is >= 1/4
    const int s = certify::lower_offset(sum, nonzeros);
    const double rms = std::sqrt(sum / double(nonzeros));  // in units of 2^E
    CHECK(s >= 0 && (s == 0 || 2 * rms < std::ldexp(1.0, -s)) && 2 * rms >= std::ldexp(1.0, -s - 1),
          "sum %g over %lld: offset %d", sum, (long long)nonzeros, s);
  }
  CHECK(certify::lower_offset(0.0, 0) == 0, "an all-zero line");
}

// The fewest α with 2^(-α-31)·T <= ρ, by trying every α (ldexp is exact here).
int brute_needed_bits(double units, double rho) {
  for (int a = -2000; a < 2000; ++a)
    if (std::ldexp(units, -a - 31) <= rho) return a;
  return certify::kNeverBits;
}

void test_needed_bits_is_the_fewest() {
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> u(1, 2);
  for (int t = 0; t < 20000; ++t) {
    double units = std::ldexp(std::floor(std::ldexp(u(rng), 40)), int(rng() % 10) - 1);  // integers 2^29 … 2^50
    double rho = std::ldexp(u(rng), int(rng() % 400) - 300);
    if (t % 5 == 0) rho = std::ldexp(units, -int(rng() % 200));  // exact powers of two apart: the tie
    CHECK(certify::needed_bits(units, rho) == brute_needed_bits(units, rho), "T %a, rho %a: %d, want %d", units, rho,
          certify::needed_bits(units, rho), brute_needed_bits(units, rho));
  }
  CHECK(certify::needed_bits(1e10, 0.0) == certify::kNeverBits, "rho 0: never");
}

void test_count_table_by_its_definition() {
  std::mt19937_64 rng(5);
  for (int t = 0; t < 2000; ++t) {
    const int lo = 2 + int(rng() % 10);
    int bits[kGemmMaxModuli + 1] = {};
    for (int c = lo; c <= kGemmMaxModuli; ++c) bits[c] = int(rng() % 70);  // not monotone: the definition's suffix
    std::uint8_t table[certify::kNeedTable];
    certify::count_table(lo, [&](int c) { return bits[c]; }, table);
    for (int x = 0; x < certify::kNeedTable; ++x) {
      int want = certify::kNoCount;
      for (int c = kGemmMaxModuli; c >= lo; --c) {
        bool all = true;
        for (int d = c; d <= kGemmMaxModuli; ++d) all = all && bits[d] >= x;
        if (all) want = c;
      }
      CHECK(table[x] == want, "need %d: %d, want %d", x, table[x], want);
    }
  }
}

void test_decide_on_known_histograms() {
  const std::int64_t m = 1000, n = 800;
  auto histogram = [](std::initializer_list<std::pair<int, std::int64_t>> at, std::int64_t nonfinite = 0) {
    certify::CountHistogram h;
    for (auto [c, lines] : at) h.lines[c] = lines;
    h.nonfinite = nonfinite;
    return h;
  };
  // (Histograms of one call agree on the largest count: an element's count is both its row's and its
  // column's.) Every line certified at 15 at most: 15 moduli, nothing native.
  certify::Decision d = certify::decide(histogram({{15, m / 2}, {14, m / 2}}), histogram({{15, n}}), m, n, 4);
  CHECK(d.moduli == 15 && !d.whole_native && d.native_rows == 0 && d.native_cols == 0, "benign: %d", d.moduli);
  // Two rows no count certifies: 15 moduli and those rows natively.
  d = certify::decide(histogram({{15, m - 2}, {certify::kNoCount, 2}}), histogram({{15, n - 1}, {certify::kNoCount, 1}}),
                      m, n, 4);
  CHECK(d.moduli == 15 && d.cover_rows == false && d.native_cols == 1, "one column is cheaper than two rows");
  d = certify::decide(histogram({{15, m - 2}, {certify::kNoCount, 2}}), histogram({{15, n - 100}, {certify::kNoCount, 100}}),
                      m, n, 4);
  CHECK(d.moduli == 15 && d.cover_rows && d.native_rows == 2 && d.native_cols == 0, "two rows are cheaper");
  // One row needs 16: 16 moduli for all costs 0.04, the row natively 0.001: the row.
  d = certify::decide(histogram({{15, m - 1}, {16, 1}}), histogram({{15, n - 5}, {16, 5}}), m, n, 4);
  CHECK(d.moduli == 15 && d.cover_rows && d.native_rows == 1, "one row at 16: %d moduli, %lld rows", d.moduli,
        (long long)d.native_rows);
  // Half of the rows uncertifiable: 0.62 + 0.5 > 1, the whole call natively.
  d = certify::decide(histogram({{15, m / 2}, {certify::kNoCount, m / 2}}), histogram({{certify::kNoCount, n}}), m, n, 4);
  CHECK(d.whole_native && d.native_rows == m, "half the rows: whole call");
  // Lines holding Inf/NaN are native on every path and count in the cost.
  d = certify::decide(histogram({{15, m - 3}}, 3), histogram({{15, n - 2}}, 2), m, n, 4);
  CHECK(d.moduli == 15 && d.native_rows == 3 && d.native_cols == 2, "Inf/NaN lines: %lld rows, %lld cols",
        (long long)d.native_rows, (long long)d.native_cols);
}

// A line's ScaledSum in the canonical order (ozaki::kLineSumChunk: chunks in order, lane v adding
// positions v, v + 32, …, lanes combined from the highest bit), as every backend sums it.
std::pair<double, int> canonical_sum(const std::vector<double>& line) {
  using namespace ironkernels::detail::ozaki;
  ScaledSum total;
  for (std::size_t c0 = 0; c0 < line.size(); c0 += kLineSumChunk) {
    ScaledSum lanes[kLineSumLanes];
    for (std::size_t l = c0; l < std::min(line.size(), c0 + kLineSumChunk); ++l)
      if (line[l] != 0.0) lanes[(l - c0) % kLineSumLanes].add_value(line[l]);
    for (int o = kLineSumLanes / 2; o > 0; o >>= 1)
      for (int v = 0; v < o; ++v) lanes[v].add(lanes[v + o]);
    total.add(lanes[0]);
  }
  return {total.sum, total.exponent};
}

// The complex path's columns (Re op(B), −Im op(B)) and (Im op(B), Re op(B)) interleaved along k sum
// to the same bits in the canonical order (their lanes differ in the lowest lane bit only, combined
// last and commutatively), so both parts get the same norm scaling; stacked one half after the other
// they need not.
void test_interleaved_complex_columns_sum_alike() {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  int stacked_differ = 0;
  for (int t = 0; t < 400; ++t) {
    const std::size_t k = 1 + rng() % 3000;
    std::vector<double> re(k), im(k);
    for (std::size_t l = 0; l < k; ++l) {
      re[l] = rng() % 17 == 0 ? 0.0 : std::ldexp(u(rng), int(rng() % 80) - 40);
      im[l] = rng() % 13 == 0 ? 0.0 : std::ldexp(u(rng), int(rng() % 80) - 40);
    }
    std::vector<double> y_re(2 * k), y_im(2 * k), s_re, s_im;
    for (std::size_t l = 0; l < k; ++l) y_re[2 * l] = re[l], y_re[2 * l + 1] = -im[l], y_im[2 * l] = im[l], y_im[2 * l + 1] = re[l];
    CHECK(canonical_sum(y_re) == canonical_sum(y_im), "k = %zu: interleaved columns sum differently", k);
    s_re = re, s_im = im;
    for (std::size_t l = 0; l < k; ++l) s_re.push_back(-im[l]), s_im.push_back(re[l]);
    stacked_differ += canonical_sum(s_re) != canonical_sum(s_im);
  }
  CHECK(stacked_differ > 0, "stacked halves never summed differently: the test does not tell the layouts apart");
}

int main() {
  test_interleaved_complex_columns_sum_alike();
  test_lowest_bit_exponent();
  test_magnitudes_bound_from_both_sides();
  test_lower_bits_keep_lambda_in_int32();
  test_lower_offset_sits_one_bit_above_the_rms();
  test_needed_bits_is_the_fewest();
  test_count_table_by_its_definition();
  test_decide_on_known_histograms();
  return report_and_exit_code();
}
