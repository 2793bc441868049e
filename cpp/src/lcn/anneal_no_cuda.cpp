// solve_cuda in a build without CUDA: says so (solve_cpu runs the same search on the CPU).
#include "ironkernels/core/error.hpp"
#include "ironkernels/lcn_solve.hpp"

namespace ironkernels::lcn {

SolveResult solve_cuda(const ArrayView&, const ArrayView&, std::int64_t, std::int64_t, const SolveOptions&, Device,
                       Stream, const SolveCallback&) {
  raise<UnsupportedError>("lcn.solve: this build of ironkernels has no CUDA backend; use device='cpu'");
}

}  // namespace ironkernels::lcn
