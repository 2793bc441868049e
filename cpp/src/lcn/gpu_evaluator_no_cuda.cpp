// GpuEvaluator in a build without CUDA: constructing one says so (Evaluator runs on the CPU).
#include "ironkernels/core/error.hpp"
#include "ironkernels/lcn.hpp"

namespace ironkernels::lcn {

struct GpuEvaluator::Impl {};

GpuEvaluator::GpuEvaluator(const ArrayView&, const ArrayView&, std::int64_t, std::int64_t, Device, Stream) {
  raise<UnsupportedError>("lcn: this build of ironkernels has no CUDA backend; use the CPU Evaluator");
}
GpuEvaluator::~GpuEvaluator() = default;
GpuEvaluator::GpuEvaluator(GpuEvaluator&&) noexcept = default;
GpuEvaluator& GpuEvaluator::operator=(GpuEvaluator&&) noexcept = default;
std::vector<std::int64_t> GpuEvaluator::edge_crossings(Stream) const { return {}; }
void GpuEvaluator::move(std::int64_t, std::int64_t, std::int64_t, Stream) {}
std::vector<CandidateFigures> GpuEvaluator::candidates(std::int64_t, const ArrayView&, Stream) const { return {}; }

}  // namespace ironkernels::lcn
