// lcn::count_crossings: per-edge crossing counts on the device of the arrays; the array checks the lcn
// entry points share.
#include <cstring>

#include "ironkernels/core/error.hpp"
#include "ironkernels/core/runtime.hpp"
#include "ironkernels/lcn.hpp"

#include "lcn/lcn_internal.hpp"

namespace ironkernels::lcn {

void count_crossings(const ArrayView& xy, const ArrayView& edges, const ArrayView& counts, Stream stream,
                     const Progress& progress) {
  detail::check_int64_array(xy, "xy", 2);
  detail::check_int64_array(edges, "edges", 2);
  detail::check_int64_array(counts, "counts", 1);
  const std::int64_t n = xy.shape[0], m = edges.shape[0];
  if (counts.shape[0] != m) raise<ValueError>("lcn: counts has ", counts.shape[0], " entries for ", m, " edges");
  if (xy.device != edges.device || xy.device != counts.device)
    raise<ValueError>("lcn: xy, edges and counts must be on one device (no implicit transfers)");
  if (xy.device.type == DeviceType::cpu) {
    const Evaluation ev = detail::evaluate_impl(static_cast<const std::int64_t*>(xy.data), n,
                                                static_cast<const std::int64_t*>(edges.data), m, kMaxCoordinate,
                                                kMaxCoordinate, /*with_validity=*/false, progress);
    if (m) std::memcpy(counts.data, ev.edge_crossings.data(), static_cast<std::size_t>(m) * sizeof(std::int64_t));
    return;
  }
#if IRONKERNELS_WITH_CUDA
  DeviceGuard guard(xy.device);
  detail::validate_cuda(static_cast<const std::int64_t*>(xy.data), n, static_cast<const std::int64_t*>(edges.data), m,
                        xy.device, static_cast<cudaStream_t>(stream));
  detail::count_crossings_cuda(static_cast<const std::int64_t*>(xy.data), static_cast<const std::int64_t*>(edges.data), m,
                               static_cast<std::int64_t*>(counts.data), xy.device, static_cast<cudaStream_t>(stream));
#else
  (void)stream;
  raise<UnsupportedError>("lcn: CUDA arrays given, but this copy of ironkernels was built without CUDA");
#endif
}

namespace detail {

void check_int64_array(const ArrayView& v, const char* name, int ndim) {
  if (v.dtype != DType::int64) raise<TypeError>("lcn: ", name, " has dtype ", dtype_name(v.dtype), "; accepted: int64");
  if (v.ndim() != ndim || (ndim == 2 && v.shape[1] != 2))
    raise<ValueError>("lcn: ", name, " has shape ", shape_text(v), "; accepted: ", ndim == 2 ? "(count, 2)" : "(m,)");
  if (!v.is_c_contiguous()) raise<ValueError>("lcn: ", name, " is not C-contiguous; accepted: C-contiguous arrays");
}

std::int64_t* host_pairs(const ArrayView& v, const char* name) {
  check_int64_array(v, name, 2);
  if (v.device.type != DeviceType::cpu)
    raise<ValueError>("lcn: ", name, " is on ", device_name(v.device), "; accepted: host memory");
  return static_cast<std::int64_t*>(v.data);
}

}  // namespace detail
}  // namespace ironkernels::lcn
