#pragma once
// The whole C++ API.
#include "ironkernels/core/array.hpp"
#include "ironkernels/core/error.hpp"
#include "ironkernels/core/runtime.hpp"
#include "ironkernels/core/version.hpp"
#include "ironkernels/fwt.hpp"
#include "ironkernels/fwt_quantize.hpp"
#include "ironkernels/gemm.hpp"
#include "ironkernels/lcn.hpp"
#include "ironkernels/lcn_solve.hpp"
#include "ironkernels/lcn_layout.hpp"
#include "ironkernels/lcn_planar.hpp"
