#pragma once
// Sign changes by the sign bit, as the frameworks' negation makes them (the compiler's −x may give a
// NaN a sign of its own), so stacked operands hold the bits PyTorch's and NumPy's copies hold.

namespace ironkernels::detail {

__device__ __forceinline__ double negated(double v) { return __longlong_as_double(__double_as_longlong(v) ^ (1ll << 63)); }

}  // namespace ironkernels::detail
