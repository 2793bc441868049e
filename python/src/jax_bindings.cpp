// The JAX door: XLA FFI handlers for fwt (host and CUDA) that ironkernels.jax registers with
// jax.ffi, so the transform runs inside jit-compiled programs on XLA's own buffers and stream. A
// module of its own (_jax_ffi), built where jaxlib's FFI headers are found at configure time.
#include <nanobind/nanobind.h>

#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "ironkernels/core/error.hpp"
#include "ironkernels/fwt.hpp"
#include "xla/ffi/api/ffi.h"

#if IRONKERNELS_WITH_CUDA
#include <cuda_runtime_api.h>  // cudaStream_t only: the library does every CUDA call
#endif

namespace nb = nanobind;
namespace ffi = xla::ffi;
using namespace ironkernels;

namespace {

DType dtype_of(ffi::DataType t) {
  switch (t) {
    case ffi::DataType::F16: return DType::float16;
    case ffi::DataType::BF16: return DType::bfloat16;
    case ffi::DataType::F32: return DType::float32;
    case ffi::DataType::F64: return DType::float64;
    case ffi::DataType::C64: return DType::complex64;
    case ffi::DataType::C128: return DType::complex128;
    case ffi::DataType::S32: return DType::int32;
    case ffi::DataType::S64: return DType::int64;
    default: raise<TypeError>("fwt: x has an XLA element type fwt does not take");
  }
}

// XLA's buffers are dense and row-major.
ArrayView view_of(const ffi::AnyBuffer& b, Device device) {
  const auto dims = b.dimensions();
  return ArrayView::contiguous(b.untyped_data(), dtype_of(b.element_type()),
                               std::vector<std::int64_t>(dims.begin(), dims.end()), device);
}

FwtOptions options_of(std::int64_t axis, double scale, bool has_scale, bool normalized, std::int64_t order,
                      std::int64_t block) {
  FwtOptions o;
  o.axis = static_cast<int>(axis);
  if (has_scale) o.scale = scale;
  o.normalized = normalized;
  o.order = order == 1 ? FwtOrder::sequency : order == 2 ? FwtOrder::dyadic : FwtOrder::natural;
  o.block = block;
  return o;
}

ffi::Error run_fwt(const ffi::AnyBuffer& x, ffi::Result<ffi::AnyBuffer>& y, const FwtOptions& o, Device device,
                   Stream stream) {
  try {
    fwt(view_of(x, device), view_of(*y, device), o, stream);
    return ffi::Error::Success();
  } catch (const std::exception& e) {
    return ffi::Error(ffi::ErrorCode::kInvalidArgument, e.what());
  }
}

ffi::Error fwt_host(ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y, std::int64_t axis, double scale, bool has_scale,
                    bool normalized, std::int64_t order, std::int64_t block) {
  return run_fwt(x, y, options_of(axis, scale, has_scale, normalized, order, block), Device{}, Stream());
}

#if IRONKERNELS_WITH_CUDA
ffi::Error fwt_cuda(cudaStream_t stream, std::int32_t device, ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y,
                    std::int64_t axis, double scale, bool has_scale, bool normalized, std::int64_t order,
                    std::int64_t block) {
  return run_fwt(x, y, options_of(axis, scale, has_scale, normalized, order, block), Device{DeviceType::cuda, device},
                 Stream(stream));
}
#endif

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(ironkernels_fwt_host, fwt_host,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<std::int64_t>("axis")
                                  .Attr<double>("scale")
                                  .Attr<bool>("has_scale")
                                  .Attr<bool>("normalized")
                                  .Attr<std::int64_t>("order")
                                  .Attr<std::int64_t>("block"));
#if IRONKERNELS_WITH_CUDA
XLA_FFI_DEFINE_HANDLER_SYMBOL(ironkernels_fwt_cuda, fwt_cuda,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<cudaStream_t>>()
                                  .Ctx<ffi::DeviceOrdinal>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<std::int64_t>("axis")
                                  .Attr<double>("scale")
                                  .Attr<bool>("has_scale")
                                  .Attr<bool>("normalized")
                                  .Attr<std::int64_t>("order")
                                  .Attr<std::int64_t>("block"));
#endif

NB_MODULE(_jax_ffi, m) {
  m.doc() = "XLA FFI handlers of ironkernels' ops (registered by ironkernels.jax).";
  m.def("handlers", [] {
    nb::dict out;
    out["fwt_cpu"] = nb::capsule(reinterpret_cast<void*>(ironkernels_fwt_host));
#if IRONKERNELS_WITH_CUDA
    out["fwt_cuda"] = nb::capsule(reinterpret_cast<void*>(ironkernels_fwt_cuda));
#endif
    return out;
  }, "{target: PyCapsule of its XLA FFI handler}: fwt_cpu, and fwt_cuda in CUDA builds.");
}
