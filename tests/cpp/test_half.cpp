// C++ tests of the CPU float16 / bfloat16 row conversions that the 16-bit FWT uses, for the ISA
// variant active_cpu_isa() picks (ctest runs every variant through IRONKERNELS_CPU_ISA): bit for
// bit against the scalar routines of core/half.hpp, NaN included (payload and sign):
//   widen: all 65 536 bit patterns of each format;
//   round: every exponent with the rounding bit position anywhere in the mantissa (halfway, just
//          below and above, even and odd), the float16 subnormal range and overflow threshold,
//          ±0, ±Inf, NaNs of many payloads, float32 subnormals, plus a sweep over all 2^32 bit
//          patterns with an odd stride;
// each set in several lengths and offsets so that vector bodies, masked and scalar tails all run.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "check.hpp"
#include "core/cpu_isa.hpp"
#include "core/half.hpp"
#include "fwt/fwt_cpu.hpp"
#include "ironkernels/ironkernels.hpp"

using namespace ironkernels;
using namespace ironkernels::detail;

namespace {

const char* format_name(Format16 f) { return f == Format16::float16 ? "float16" : "bfloat16"; }
float ref_widen(Format16 f, std::uint16_t h) { return f == Format16::float16 ? fp16_to_float(h) : bf16_to_float(h); }
std::uint16_t ref_round(Format16 f, float v) { return f == Format16::float16 ? float_to_fp16(v) : float_to_bf16(v); }

// Lengths and offsets for one pass over `total` values: whole vectors, every tail length, odd starts.
const std::int64_t kPieces[] = {1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 1000, 4096, 4099};

void test_widen_all_patterns(Format16 f) {
  std::vector<std::uint16_t> src(65536);
  for (std::uint32_t i = 0; i < 65536; ++i) src[i] = static_cast<std::uint16_t>(i);
  // Also in a shuffled order, so NaNs share vectors with ordinary values.
  std::vector<std::uint16_t> mixed = src;
  std::shuffle(mixed.begin(), mixed.end(), std::mt19937_64(3));
  int bad = 0;
  for (const auto* in : {&src, &mixed}) {
    std::vector<float> dst(in->size(), 0.0f);
    std::int64_t pos = 0, k = 0;
    while (pos < static_cast<std::int64_t>(in->size())) {
      const std::int64_t len = std::min<std::int64_t>(kPieces[k++ % std::size(kPieces)], in->size() - pos);
      widen_16bit_active(f, in->data() + pos, dst.data() + pos, len);
      pos += len;
    }
    for (std::size_t i = 0; i < in->size(); ++i) {
      const std::uint32_t got = float_to_bits(dst[i]), want = float_to_bits(ref_widen(f, (*in)[i]));
      if (got != want && bad++ < 10)
        CHECK(false, "%s widen 0x%04x: got 0x%08x, want 0x%08x", format_name(f), (*in)[i], got, want);
    }
  }
  CHECK(bad == 0, "%s widen: %d mismatches", format_name(f), bad);
}

void round_and_compare(Format16 f, const std::vector<std::uint32_t>& bits, const char* what) {
  std::vector<float> src(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) src[i] = bits_to_float(bits[i]);
  std::vector<std::uint16_t> dst(src.size(), 0x5555);
  std::int64_t pos = 0, k = 0;
  while (pos < static_cast<std::int64_t>(src.size())) {
    const std::int64_t len = std::min<std::int64_t>(kPieces[k++ % std::size(kPieces)], src.size() - pos);
    round_16bit_active(f, src.data() + pos, dst.data() + pos, len);
    pos += len;
  }
  int bad = 0;
  for (std::size_t i = 0; i < src.size(); ++i) {
    const std::uint16_t want = ref_round(f, src[i]);
    if (dst[i] != want && bad++ < 10)
      CHECK(false, "%s round (%s) 0x%08x: got 0x%04x, want 0x%04x", format_name(f), what, bits[i], dst[i], want);
  }
  CHECK(bad == 0, "%s round (%s): %d of %zu mismatch", format_name(f), what, bad, bits.size());
}

// Values whose low p mantissa bits sit at or next to a rounding boundary, for every exponent and
// sign and every p: the boundaries of both formats' normal grids (p = 13, 16) and of the float16
// subnormal grid (p = 14 … 23 for exponents below 2^-14) are among them.
std::vector<std::uint32_t> boundary_values() {
  std::mt19937_64 rng(11);
  std::vector<std::uint32_t> v;
  for (std::uint32_t sign : {0u, 0x80000000u})
    for (std::uint32_t e = 0; e < 256; ++e)
      for (int p = 1; p <= 23; ++p) {
        const std::uint32_t half = 1u << (p - 1), full = (1u << p) - 1;
        const std::uint32_t lows[] = {0, 1, half - 1, half, half + 1, full - 1, full};
        for (int h = 0; h < 10; ++h) {
          std::uint32_t high = h == 0 ? 0 : h == 1 ? 0x7fffffu : static_cast<std::uint32_t>(rng());
          high = (high & 0x7fffffu) & ~full;
          for (std::uint32_t lo : lows) v.push_back(sign | (e << 23) | high | lo);
          // The same with the kept bit flipped: ties must go to even from both sides.
          if (p < 23)
            for (std::uint32_t lo : lows) v.push_back(sign | (e << 23) | (high ^ (1u << p)) | lo);
        }
      }
  return v;
}

std::vector<std::uint32_t> special_values() {
  std::vector<std::uint32_t> v;
  for (std::uint32_t sign : {0u, 0x80000000u}) {
    auto add = [&](std::uint32_t a) { v.push_back(sign | a); };
    add(0);
    add(0x7f800000u);  // Inf
    for (std::uint32_t a = 0x7f800001u; a < 0x7f800400u; ++a) add(a);            // signalling NaNs
    for (std::uint32_t a = 0x7fc00000u; a < 0x7fc00400u; ++a) add(a);            // quiet NaNs
    for (std::uint32_t a : {0x7fbfffffu, 0x7fffffffu, 0x7fe00000u, 0x7f802000u, 0x7fc02000u, 0x7fffe000u}) add(a);
    for (std::uint32_t a = 1; a < 0x800u; ++a) add(a);                           // float32 subnormals
    for (std::uint32_t a = 0x007ff800u; a < 0x00800800u; ++a) add(a);            // around 2^-126
    // Every float from just below the float16 largest finite value (65504) to past 65536: the
    // overflow threshold 65520 rounds to Inf; same for bfloat16's largest finite value.
    for (std::uint32_t a = 0x477fd000u; a <= 0x47801000u; ++a) add(a);
    for (std::uint32_t a = 0x7f7f0000u; a <= 0x7f7fffffu; a += 1) add(a);
    // Every float in the float16 subnormal range and just above, with a stride of 31 (2^-25 … 2^-13).
    for (std::uint32_t a = 0x33000000u; a < 0x39000000u; a += 31) add(a);
  }
  return v;
}

std::vector<std::uint32_t> strided_sweep() {
  std::vector<std::uint32_t> v;
  v.reserve((1ull << 32) / 257 + 1);
  for (std::uint64_t u = 0; u < (1ull << 32); u += 257) v.push_back(static_cast<std::uint32_t>(u));
  return v;
}

// The FWT's own 16-bit path against the scalar conversions around the float32 kernel of the same ISA
// (a row of length 1 with scale 1 is widen + round alone: every bit pattern passes through).
void test_fwt_passthrough(Format16 f) {
  std::vector<std::uint16_t> x(65536), y(65536, 0x5555);
  for (std::uint32_t i = 0; i < 65536; ++i) x[i] = static_cast<std::uint16_t>(i);
  const DType dt = f == Format16::float16 ? DType::float16 : DType::bfloat16;
  fwt(ArrayView::contiguous(x.data(), dt, {65536, 1}), ArrayView::contiguous(y.data(), dt, {65536, 1}), FwtOptions{});
  int bad = 0;
  for (std::uint32_t i = 0; i < 65536; ++i) {
    const std::uint16_t want = ref_round(f, ref_widen(f, x[i]));
    if (y[i] != want && bad++ < 10) CHECK(false, "%s fwt N=1 0x%04x: got 0x%04x, want 0x%04x", format_name(f), x[i], y[i], want);
  }
  CHECK(bad == 0, "%s fwt N=1: %d mismatches", format_name(f), bad);
}

}  // namespace

int main() {
  std::printf("cpu isa: %s\n", cpu_isa_name(active_cpu_isa()));
  if (requested_isa_missing(cpu_isa_name(active_cpu_isa()))) return kSkipped;
  const auto boundary = boundary_values(), special = special_values(), sweep = strided_sweep();
  for (Format16 f : {Format16::float16, Format16::bfloat16}) {
    test_widen_all_patterns(f);
    round_and_compare(f, boundary, "rounding boundaries");
    round_and_compare(f, special, "special values");
    round_and_compare(f, sweep, "stride-257 sweep");
    // Shuffled, so that NaNs and Infs share vectors with ordinary values.
    std::vector<std::uint32_t> mixed = special;
    mixed.insert(mixed.end(), boundary.begin(), boundary.begin() + 200000);
    std::shuffle(mixed.begin(), mixed.end(), std::mt19937_64(5));
    round_and_compare(f, mixed, "mixed");
    test_fwt_passthrough(f);
  }
  std::printf("%zu boundary, %zu special, %zu sweep values\n", boundary.size(), special.size(), sweep.size());
  return report_and_exit_code();
}
