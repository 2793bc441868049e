#pragma once
// Karatsuba on the residues (GemmColumns::complex_pairs, docs/gemm.md): the three residue sets of
// each operand and the three products the wgmma engine forms from them, in one place for the residue
// kernel, the product kernel and the C++ test that checks the pairing against the stacked products.
//
// op(A)'s pairs (e, o) = (Re A, Im A) give the sets X_0 = e, X_1 = o, X_2 = e + o; Y_re's pairs
// (e, o) = (Re B, −Im B) give Y_0 = e, Y_1 = e − o, Y_2 = −e − o (Re B, Re B + Im B, Im B − Re B),
// each mod p. The phases are K3 = X_1·Y_1, K1 = X_2·Y_0, K2 = X_0·Y_2; then Re = K1 − K3 and
// Im = K1 + K2 are, mod p, the stacked products (Re A, Im A)·(Re B, −Im B) and (Re A, Im A)·(Im B, Re B).
#include <cstdint>

#include "core/host_device.hpp"
#include "gemm/ozaki_numbers.hpp"

namespace ironkernels::detail::ozaki {

constexpr int kKaratsubaSets = 3;  // also the products per modulus
/// K1 + K2 is one INT32 accumulator: two products of this many positions stay within kMaxProduct.
constexpr std::int64_t kKaratsubaChunkK = kChunkK / 2;
/// The residue sets are made for at most this many moduli at a time (the workspace holds one group's
/// 3·count planes per operand): one group up to the count a native contract takes at n = 16384.
constexpr int kKaratsubaGroup = 14;

/// v, one step outside the residue range [top − p + 1, top] (top = p − 1 − floor(p/2)), brought into it.
IRONKERNELS_HD int karatsuba_reduced(int v, int p) {
  const int top = p - 1 - p / 2;
  return v > top ? v - p : v < top - p + 1 ? v + p : v;
}
/// Set `set` of op(A)'s pair of residues (e, o) = (Re, Im): e, o, e + o.
IRONKERNELS_HD int karatsuba_a_set(int set, int e, int o, int p) {
  return set == 0 ? e : set == 1 ? o : karatsuba_reduced(e + o, p);
}
/// Set `set` of Y_re's pair of residues (e, o) = (Re B, −Im B): e, e − o, −e − o (each one step from
/// the range at most: −e − o is in [−2·top, −2·(top − p + 1)], and top − p + 1 >= −top − 1).
IRONKERNELS_HD int karatsuba_b_set(int set, int e, int o, int p) {
  return set == 0 ? e : karatsuba_reduced(set == 1 ? e - o : -e - o, p);
}
/// The sets phase 0, 1, 2 multiplies: (X_1, Y_1) = K3, (X_2, Y_0) = K1, (X_0, Y_2) = K2.
IRONKERNELS_HD int karatsuba_a_of(int phase) { return (phase + 1) % 3; }
IRONKERNELS_HD int karatsuba_b_of(int phase) { return phase == 2 ? 2 : 1 - phase; }

/// The moduli [first, first + count) of group g: a count's moduli in karatsuba_groups(count) groups of
/// near-equal size, none larger than kKaratsubaGroup (and, for count >= 2, none below 2, the smallest
/// count the kernels are compiled for).
struct ModuliGroup {
  int first, count;
};
constexpr int karatsuba_groups(int count) { return (count + kKaratsubaGroup - 1) / kKaratsubaGroup; }
constexpr ModuliGroup karatsuba_group(int count, int g) {
  const int groups = karatsuba_groups(count), first = g * count / groups;
  return {first, (g + 1) * count / groups - first};
}

}  // namespace ironkernels::detail::ozaki
