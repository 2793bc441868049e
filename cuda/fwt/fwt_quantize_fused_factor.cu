// The single-pass fwt_quantize kernels of m·2^k rotations (fwt_quantize_fused.cuh), built apart
// from the power-of-two ones.
#include <cstdint>

#include "fwt/fwt_quantize_fused.cuh"

namespace ironkernels::detail::quantize_fused {

template <class In>
void launch_factor(const FusedArgs& a, std::int64_t span, cudaStream_t stream) {
  switch (a.factor) {
    case 12: return launch_by_format<In, 32, 12>(a, span, stream);
    case 20: return launch_by_format<In, 32, 20>(a, span, stream);
    default: return launch_by_format<In, 32, 28>(a, span, stream);
  }
}
template void launch_factor<float>(const FusedArgs&, std::int64_t, cudaStream_t);
template void launch_factor<std::uint16_t>(const FusedArgs&, std::int64_t, cudaStream_t);

}  // namespace ironkernels::detail::quantize_fused
