// GemmPlan in a build without CUDA: constructing one says so (the CPU reference still works).
#include "ironkernels/core/error.hpp"
#include "ironkernels/gemm.hpp"

namespace ironkernels {

struct GemmPlan::Impl {};
struct GemmPrepared::Impl {};

bool gemm_backend_available(GemmBackend, Device) { return false; }

GemmPlan::GemmPlan(std::int64_t, std::int64_t, std::int64_t, bool, bool, GemmContract, Device, GemmBackend,
                   GemmColumns) {
  raise<UnsupportedError>("gemm: this build of ironkernels has no CUDA backend; use backend='cpu' (gemm_reference)");
}
GemmPlan::~GemmPlan() = default;
GemmPlan::GemmPlan(GemmPlan&&) noexcept = default;
GemmPlan& GemmPlan::operator=(GemmPlan&&) noexcept = default;
std::size_t GemmPlan::workspace_bytes() const { return 0; }
void GemmPlan::run(const ArrayView&, const ArrayView&, const ArrayView&, double, double, void*, std::size_t, Stream,
                   GemmTimings*, GemmPrepared*) const {}
GemmReport GemmPlan::report(const void*, Stream) const { return {}; }
void GemmPlan::tune(void*, std::size_t, Stream, std::int64_t) {}
void GemmPlan::tune_once(void*, std::size_t, Stream) {}
bool GemmPlan::tuned() const { return false; }
const char* GemmPlan::products_backend() const { return ""; }
int GemmPlan::products_column_blocks() const { return 0; }

GemmPrepared::GemmPrepared(const ArrayView&, bool, GemmContract, Stream) {
  raise<UnsupportedError>("gemm_prepare: this build of ironkernels has no CUDA backend");
}
GemmPrepared::~GemmPrepared() = default;
GemmPrepared::GemmPrepared(GemmPrepared&&) noexcept = default;
GemmPrepared& GemmPrepared::operator=(GemmPrepared&&) noexcept = default;
std::size_t GemmPrepared::bytes() const { return 0; }
int GemmPrepared::residue_count() const { return 0; }

void gemm_complex_columns(const ArrayView&, bool, const ArrayView&, Stream, bool) {
  raise<UnsupportedError>("gemm_complex_columns: this build of ironkernels has no CUDA backend");
}

}  // namespace ironkernels
