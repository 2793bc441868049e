#pragma once
// The per-element steps of the Ozaki scheme II that the CPU reference and the CUDA kernels share,
// compiled for both, so the two backends agree bit for bit by construction: every step is exact
// (integer arithmetic, exact floating-point operations) except the one rounding of the result.
// No expression here may be contracted into an FMA differently on host and device: products that
// feed a sum are either exact or explicit fma() calls.
#include "gemm/ozaki_crt.hpp"
#include "gemm/ozaki_karatsuba.hpp"
#include "gemm/ozaki_numbers.hpp"
#include "gemm/ozaki_residues.hpp"
#include "gemm/ozaki_scaling.hpp"
