// The JAX door: XLA FFI handlers that ironkernels.jax registers with jax.ffi — fwt and gemm on the
// host and on CUDA (XLA's buffers, stream and scratch memory), and fwt_quantize — so the ops
// run inside jit-compiled programs. A module of its own (_jax_ffi), built where jaxlib's FFI headers
// are found at configure time.
#include <nanobind/nanobind.h>

#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ironkernels/core/error.hpp"
#include "ironkernels/fwt.hpp"
#include "ironkernels/fwt_quantize.hpp"
#include "ironkernels/gemm.hpp"
#include "xla/ffi/api/ffi.h"

#if IRONKERNELS_WITH_CUDA
#include <cuda_runtime_api.h>  // cudaStream_t, and gemm's workspace where XLA's scratch allocator has none
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
    case ffi::DataType::S8: return DType::int8;
    case ffi::DataType::U8: return DType::uint8;
    default: raise<TypeError>("ironkernels.jax: an XLA element type the library does not take");
  }
}

// XLA's buffers are dense and row-major.
ArrayView view_of(const ffi::AnyBuffer& b, Device device) {
  const auto dims = b.dimensions();
  return ArrayView::contiguous(b.untyped_data(), dtype_of(b.element_type()),
                               std::vector<std::int64_t>(dims.begin(), dims.end()), device);
}

// Errors of the library as XLA errors (the Python wrappers check the arguments before tracing; what
// only the data shows, such as an invalid length inside a call, arrives here).
template <class F>
ffi::Error guarded(F&& f) {
  try {
    f();
    return ffi::Error::Success();
  } catch (const std::exception& e) {
    return ffi::Error(ffi::ErrorCode::kInvalidArgument, e.what());
  }
}

// The rotation's signs and base matrix travel as attributes (constants of the program, unbatched
// under vmap; host memory, as the library takes them on either device); has_signs false and
// hadamard_order 0 for none (the attributes then hold a placeholder).
ArrayView host_int8(ffi::Span<const std::int8_t> values, std::vector<std::int64_t> shape) {
  return ArrayView::contiguous(const_cast<std::int8_t*>(values.begin()), DType::int8, std::move(shape));
}
ArrayView signs_view(bool has_signs, ffi::Span<const std::int8_t> signs) {
  return has_signs ? host_int8(signs, {static_cast<std::int64_t>(signs.size())}) : ArrayView{};
}
ArrayView hadamard_view(ffi::Span<const std::int8_t> hadamard, std::int64_t order) {
  return order > 0 ? host_int8(hadamard, {order, order}) : ArrayView{};
}

FwtOptions options_of(std::int64_t axis, double scale, bool has_scale, bool normalized, std::int64_t order,
                      std::int64_t block, bool has_signs, ffi::Span<const std::int8_t> signs, std::int64_t hadamard_order,
                      ffi::Span<const std::int8_t> hadamard, bool inverse) {
  FwtOptions o;
  o.axis = static_cast<int>(axis);
  if (has_scale) o.scale = scale;
  o.normalized = normalized;
  o.order = order == 1 ? FwtOrder::sequency : order == 2 ? FwtOrder::dyadic : FwtOrder::natural;
  o.block = block;
  o.signs = signs_view(has_signs, signs);
  o.hadamard = hadamard_view(hadamard, hadamard_order);
  o.inverse = inverse;
  return o;
}

ffi::Error fwt_host(ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y, std::int64_t axis, double scale, bool has_scale,
                    bool normalized, std::int64_t order, std::int64_t block, bool has_signs,
                    ffi::Span<const std::int8_t> signs, std::int64_t hadamard_order,
                    ffi::Span<const std::int8_t> hadamard, bool inverse) {
  return guarded([&] {
    fwt(view_of(x, Device{}), view_of(*y, Device{}),
        options_of(axis, scale, has_scale, normalized, order, block, has_signs, signs, hadamard_order, hadamard, inverse));
  });
}

#if IRONKERNELS_WITH_CUDA
ffi::Error fwt_cuda(cudaStream_t stream, std::int32_t device, ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y,
                    std::int64_t axis, double scale, bool has_scale, bool normalized, std::int64_t order,
                    std::int64_t block, bool has_signs, ffi::Span<const std::int8_t> signs, std::int64_t hadamard_order,
                    ffi::Span<const std::int8_t> hadamard, bool inverse) {
  const Device dev{DeviceType::cuda, device};
  return guarded([&] {
    fwt(view_of(x, dev), view_of(*y, dev),
        options_of(axis, scale, has_scale, normalized, order, block, has_signs, signs, hadamard_order, hadamard, inverse),
        Stream(stream));
  });
}
#endif

GemmOptions gemm_options(bool trans_a, bool trans_b, std::int64_t moduli, std::int64_t scaling, bool native,
                         double rtol) {
  GemmOptions o;
  o.trans_a = trans_a, o.trans_b = trans_b;
  o.contract.moduli = static_cast<int>(moduli);
  o.contract.scaling = scaling == 1 ? GemmScaling::accurate : scaling == 2 ? GemmScaling::norm : GemmScaling::fast;
  o.contract.native = native, o.contract.rtol = rtol;
  return o;
}

ffi::Error gemm_host(ffi::AnyBuffer a, ffi::AnyBuffer b, ffi::Result<ffi::AnyBuffer> c, bool trans_a, bool trans_b,
                     std::int64_t moduli, std::int64_t scaling, bool native, double rtol) {
  return guarded([&] {
    gemm_reference(view_of(a, Device{}), view_of(b, Device{}), view_of(*c, Device{}),
                   gemm_options(trans_a, trans_b, moduli, scaling, native, rtol));
  });
}

#if IRONKERNELS_WITH_CUDA
ffi::Error gemm_cuda(cudaStream_t stream, std::int32_t device, ffi::ScratchAllocator scratch, ffi::AnyBuffer a,
                     ffi::AnyBuffer b, ffi::Result<ffi::AnyBuffer> c, bool trans_a, bool trans_b, std::int64_t moduli,
                     std::int64_t scaling, bool native, double rtol) {
  return guarded([&] {
    const Device dev{DeviceType::cuda, device};
    const ArrayView av = view_of(a, dev), bv = view_of(b, dev), cv = view_of(*c, dev);
    const GemmOptions o = gemm_options(trans_a, trans_b, moduli, scaling, native, rtol);
    const std::int64_t m = cv.shape[0], n = cv.shape[1], k = trans_a ? av.shape[0] : av.shape[1];
    const auto plan = gemm_plan(m, n, k, trans_a, trans_b, o.contract, dev);
    const std::size_t bytes = plan->workspace_bytes();
    std::optional<void*> workspace = scratch.Allocate(bytes ? bytes : 1, 256);
    // XLA's GPU runtime may hand out no scratch memory (seen with jaxlib 0.11): then stream-ordered
    // memory of the device's default pool, freed on the same stream after the call's work.
    struct StreamOrdered {
      void* p = nullptr;
      cudaStream_t s;
      ~StreamOrdered() { if (p) cudaFreeAsync(p, s); }
    } own{nullptr, stream};
    if (!workspace) {
      if (cudaMallocAsync(&own.p, bytes ? bytes : 1, stream) != cudaSuccess) {
        (void)cudaGetLastError();
        raise<ValueError>("gemm: neither XLA's scratch allocator nor the CUDA memory pool gave the plan's workspace of ",
                          bytes, " bytes");
      }
      workspace = own.p;
    }
    plan->tune_once(*workspace, bytes, Stream(stream));
    plan->run(av, bv, cv, 1.0, 0.0, *workspace, bytes, Stream(stream));
  });
}
#endif

void fwt_quantize_on(const Device& dev, ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> q,
                     ffi::Result<ffi::AnyBuffer> scales, ffi::Result<ffi::AnyBuffer> tensor_scale, std::int64_t to,
                     std::int64_t block, std::int64_t group, bool normalized, std::int64_t scale_layout,
                     bool has_signs, ffi::Span<const std::int8_t> signs, std::int64_t hadamard_order,
                     ffi::Span<const std::int8_t> hadamard, double global_amax, Stream stream) {
  FwtQuantizeOptions o;
  o.to = static_cast<QuantFormat>(to);
  o.block = block, o.group = group, o.normalized = normalized;
  o.scale_layout = scale_layout ? ScaleLayout::swizzled_128x4 : ScaleLayout::row_major;
  o.signs = signs_view(has_signs, signs);
  o.hadamard = hadamard_view(hadamard, hadamard_order);
  o.global_amax = global_amax;
  // The element types of q and the scales as the library names them (XLA: U8 / S8 / F32).
  fwt_quantize(view_of(x, dev), view_of(*q, dev), view_of(*scales, dev),
               o.to == QuantFormat::nvfp4 ? view_of(*tensor_scale, dev) : ArrayView{}, o, stream);
}

ffi::Error fwt_quantize_host(ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> q, ffi::Result<ffi::AnyBuffer> scales,
                             ffi::Result<ffi::AnyBuffer> tensor_scale, std::int64_t to, std::int64_t block,
                             std::int64_t group, bool normalized, std::int64_t scale_layout,
                             bool has_signs, ffi::Span<const std::int8_t> signs, std::int64_t hadamard_order,
                             ffi::Span<const std::int8_t> hadamard, double global_amax) {
  return guarded([&] {
    fwt_quantize_on(Device{}, x, q, scales, tensor_scale, to, block, group, normalized, scale_layout, has_signs,
                    signs, hadamard_order, hadamard, global_amax, nullptr);
  });
}

#if IRONKERNELS_WITH_CUDA
ffi::Error fwt_quantize_cuda(cudaStream_t stream, std::int32_t device, ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> q,
                             ffi::Result<ffi::AnyBuffer> scales, ffi::Result<ffi::AnyBuffer> tensor_scale,
                             std::int64_t to, std::int64_t block, std::int64_t group, bool normalized,
                             std::int64_t scale_layout, bool has_signs, ffi::Span<const std::int8_t> signs,
                             std::int64_t hadamard_order, ffi::Span<const std::int8_t> hadamard, double global_amax) {
  return guarded([&] {
    fwt_quantize_on(Device{DeviceType::cuda, device}, x, q, scales, tensor_scale, to, block, group, normalized,
                    scale_layout, has_signs, signs, hadamard_order, hadamard, global_amax, Stream(stream));
  });
}
#endif

}  // namespace

// Each op's buffers and attributes, appended to a binding: the host and CUDA handlers share them (the
// CUDA ones first take their stream, device and, for gemm, scratch memory).
template <class Binding>
auto gemm_signature(Binding b) {
  return std::move(b).template Arg<ffi::AnyBuffer>()
      .template Arg<ffi::AnyBuffer>()
      .template Ret<ffi::AnyBuffer>()
      .template Attr<bool>("trans_a")
      .template Attr<bool>("trans_b")
      .template Attr<std::int64_t>("moduli")
      .template Attr<std::int64_t>("scaling")
      .template Attr<bool>("native")
      .template Attr<double>("rtol");
}
template <class Binding>
auto fwt_signature(Binding b) {
  return std::move(b).template Arg<ffi::AnyBuffer>()
      .template Ret<ffi::AnyBuffer>()
      .template Attr<std::int64_t>("axis")
      .template Attr<double>("scale")
      .template Attr<bool>("has_scale")
      .template Attr<bool>("normalized")
      .template Attr<std::int64_t>("order")
      .template Attr<std::int64_t>("block")
      .template Attr<bool>("has_signs")
      .template Attr<ffi::Span<const std::int8_t>>("signs")
      .template Attr<std::int64_t>("hadamard_order")
      .template Attr<ffi::Span<const std::int8_t>>("hadamard")
      .template Attr<bool>("inverse");
}

template <class Binding>
auto fwt_quantize_signature(Binding b) {
  return std::move(b).template Arg<ffi::AnyBuffer>()
      .template Ret<ffi::AnyBuffer>()
      .template Ret<ffi::AnyBuffer>()
      .template Ret<ffi::AnyBuffer>()
      .template Attr<std::int64_t>("to")
      .template Attr<std::int64_t>("block")
      .template Attr<std::int64_t>("group")
      .template Attr<bool>("normalized")
      .template Attr<std::int64_t>("scale_layout")
      .template Attr<bool>("has_signs")
      .template Attr<ffi::Span<const std::int8_t>>("signs")
      .template Attr<std::int64_t>("hadamard_order")
      .template Attr<ffi::Span<const std::int8_t>>("hadamard")
      .template Attr<double>("global_amax");
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(ironkernels_gemm_host, gemm_host, gemm_signature(ffi::Ffi::Bind()));
XLA_FFI_DEFINE_HANDLER_SYMBOL(ironkernels_fwt_host, fwt_host, fwt_signature(ffi::Ffi::Bind()));
#if IRONKERNELS_WITH_CUDA
XLA_FFI_DEFINE_HANDLER_SYMBOL(ironkernels_gemm_cuda, gemm_cuda,
                              gemm_signature(ffi::Ffi::Bind()
                                                 .Ctx<ffi::PlatformStream<cudaStream_t>>()
                                                 .Ctx<ffi::DeviceOrdinal>()
                                                 .Ctx<ffi::ScratchAllocator>()));
XLA_FFI_DEFINE_HANDLER_SYMBOL(ironkernels_fwt_cuda, fwt_cuda,
                              fwt_signature(ffi::Ffi::Bind()
                                                .Ctx<ffi::PlatformStream<cudaStream_t>>()
                                                .Ctx<ffi::DeviceOrdinal>()));
#endif
XLA_FFI_DEFINE_HANDLER_SYMBOL(ironkernels_fwt_quantize_host, fwt_quantize_host,
                              fwt_quantize_signature(ffi::Ffi::Bind()));
#if IRONKERNELS_WITH_CUDA
XLA_FFI_DEFINE_HANDLER_SYMBOL(ironkernels_fwt_quantize_cuda, fwt_quantize_cuda,
                              fwt_quantize_signature(ffi::Ffi::Bind()
                                                         .Ctx<ffi::PlatformStream<cudaStream_t>>()
                                                         .Ctx<ffi::DeviceOrdinal>()));
#endif

NB_MODULE(_jax_ffi, m) {
  m.doc() = "XLA FFI handlers of ironkernels' ops (registered by ironkernels.jax).";
  m.def("handlers", [] {
    nb::dict out;
    out["fwt_cpu"] = nb::capsule(reinterpret_cast<void*>(ironkernels_fwt_host));
#if IRONKERNELS_WITH_CUDA
    out["fwt_cuda"] = nb::capsule(reinterpret_cast<void*>(ironkernels_fwt_cuda));
    out["gemm_cuda"] = nb::capsule(reinterpret_cast<void*>(ironkernels_gemm_cuda));
    out["fwt_quantize_cuda"] = nb::capsule(reinterpret_cast<void*>(ironkernels_fwt_quantize_cuda));
#endif
    out["gemm_cpu"] = nb::capsule(reinterpret_cast<void*>(ironkernels_gemm_host));
    out["fwt_quantize_cpu"] = nb::capsule(reinterpret_cast<void*>(ironkernels_fwt_quantize_host));
    return out;
  }, "{target: PyCapsule of its XLA FFI handler}: fwt_cpu, gemm_cpu, fwt_quantize_cpu; fwt_cuda, gemm_cuda, fwt_quantize_cuda in CUDA builds.");
}
