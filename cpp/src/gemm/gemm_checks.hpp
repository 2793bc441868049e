#pragma once
// Argument checks the CPU reference and the CUDA plan share, so both raise the same errors.
#include <cstdint>

#include "gemm/ozaki.hpp"
#include "ironkernels/core/array.hpp"
#include "ironkernels/core/error.hpp"
#include "ironkernels/gemm.hpp"

namespace ironkernels::detail {

/// A float64 matrix argument: dtype and rank (the device is each backend's own check).
inline void check_float64_matrix(const ArrayView& v, const char* name) {
  if (v.dtype != DType::float64)
    raise<TypeError>("gemm: ", name, " has dtype ", dtype_name(v.dtype), "; accepted: float64");
  if (v.ndim() != 2) raise<ValueError>("gemm: ", name, " must be two-dimensional, got ", v.ndim(), " dimensions");
}

/// The output c: no element repeated, no overlap with the inputs.
inline void check_output(const ArrayView& c, const ArrayView& a, const ArrayView& b) {
  if (!c.elements_distinct())
    raise<ValueError>("gemm: c repeats elements (strides ", strides_text(c), " for shape ", shape_text(c),
                      "); accepted: an output whose elements are all distinct");
  if (c.overlaps(a) || c.overlaps(b))
    raise<ValueError>("gemm: c overlaps ", c.overlaps(a) ? "a" : "b", "; accepted: a separate array for c");
}

/// A contract checked against k: its CRT constants and the bits it leaves each side.
struct CheckedContract {
  ozaki::CrtConstants crt;
  ozaki::Budget budget;
};
inline CheckedContract check_contract(const GemmContract& contract, std::int64_t k) {
  if (k > kGemmMaxK) raise<ValueError>("gemm: k = ", k, " is above the supported maximum ", kGemmMaxK);
  if (contract.scaling != GemmScaling::fast && contract.scaling != GemmScaling::accurate &&
      contract.scaling != GemmScaling::norm)
    raise<ValueError>("gemm: unknown contract scaling; accepted: fast, accurate, norm");
  if (contract.moduli < 2 || contract.moduli > kGemmMaxModuli)
    raise<ValueError>("gemm: contract.moduli = ", contract.moduli, "; accepted: 2 … ", kGemmMaxModuli);
  CheckedContract c;
  c.crt = ozaki::crt_constants(gemm_moduli().data(), contract.moduli);
  c.budget = ozaki::budget(c.crt, k);
  if (c.budget.bits_a == 0)
    raise<ValueError>("gemm: contract.moduli = ", contract.moduli, " leaves no bits for k = ", k, "; use more moduli");
  return c;
}

/// A certified contract checked against k: native(), or 0 < rtol < 1.
inline void check_certified_contract(const GemmContract& contract, std::int64_t k) {
  if (k > kGemmMaxK) raise<ValueError>("gemm: k = ", k, " is above the supported maximum ", kGemmMaxK);
  if (!contract.native && !(contract.rtol > 0.0 && contract.rtol < 1.0))
    raise<ValueError>("gemm: contract.rtol = ", contract.rtol, "; accepted: 0 < rtol < 1");
}

/// Native float64's componentwise bounds at inner dimension k (with u|P̂| beside, as the contract's):
/// a DGEMM's worst case γ_k = k·u / (1 - k·u), whatever its order of operations (the CUDA backend:
/// cuBLAS); the CPU's compensated dot product (Ogita, Rump and Oishi) γ_k² (+ u² for the difference
/// of u|P| and u|P̂|).
inline double dgemm_bound(std::int64_t k) {
  const double ku = double(k > 1 ? k : 1) * 0x1p-53;
  return ku / (1.0 - ku);
}
inline double compensated_dot_bound(std::int64_t k) {
  const double gamma = dgemm_bound(k);
  return gamma * gamma + 0x1p-106;
}

/// A report's verdict from its paths: a certified contract's elements meet rtol where emulated and
/// `native_bound` where computed natively (Inf/NaN aside), so the call meets rtol unless a finite
/// element went native and native_bound > rtol; then it meets native_bound.
inline void finish_report(GemmReport& r, double native_bound) {
  if (r.rtol == 0.0) {
    r.certified = false, r.bound = 0.0;
    return;
  }
  r.certified = r.native_elements == r.nonfinite_elements || native_bound <= r.rtol;
  r.bound = r.certified ? r.rtol : native_bound;
}

}  // namespace ironkernels::detail
