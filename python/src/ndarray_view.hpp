#pragma once
// nanobind ndarray (any DLPack producer: NumPy, PyTorch, CuPy, JAX, ...) -> ironkernels::ArrayView,
// without copying. Shared by the per-area binding files.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <string>

#include "ironkernels/core/array.hpp"
#include "ironkernels/core/error.hpp"

namespace ironkernels::python {

namespace nb = nanobind;

/// The library's dtypes; `as_bfloat16` reinterprets a uint16 array (NumPy has no bfloat16). Each op
/// then checks which of them it accepts.
inline DType to_dtype(const nb::dlpack::dtype& dt, const char* arg, bool as_bfloat16 = false) {
  using code = nb::dlpack::dtype_code;
  if (dt.lanes == 1) {
    if (as_bfloat16 && dt.code == static_cast<std::uint8_t>(code::UInt) && dt.bits == 16) return DType::bfloat16;
    if (dt.code == static_cast<std::uint8_t>(code::Float)) {
      if (dt.bits == 16) return DType::float16;
      if (dt.bits == 32) return DType::float32;
      if (dt.bits == 64) return DType::float64;
    }
    if (dt.code == static_cast<std::uint8_t>(code::Bfloat) && dt.bits == 16) return DType::bfloat16;
    if (dt.code == static_cast<std::uint8_t>(code::Int) && dt.bits == 64) return DType::int64;
  }
  static const char* names[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool"};
  const std::string kind = dt.code < 7 ? names[dt.code] : "code" + std::to_string(dt.code);
  raise<TypeError>(arg, " has dtype ", kind, dt.bits, (dt.lanes > 1 ? " (vector lanes)" : ""),
                   "; accepted: float16, bfloat16, float32, float64 (int64 for lcn)");
}

inline Device to_device(int device_type, int device_id, const char* arg) {
  switch (device_type) {
    case nb::device::cpu::value:
    case nb::device::cuda_host::value: return {DeviceType::cpu, 0};
    case nb::device::cuda::value:
    case nb::device::cuda_managed::value: return {DeviceType::cuda, device_id};
    default:
      raise<TypeError>(arg, " lives on DLPack device type ", device_type,
                       "; accepted: host memory (CPU) or CUDA device memory");
  }
}

template <class... Ts>
ArrayView to_view(const nb::ndarray<Ts...>& a, const char* arg, bool as_bfloat16 = false) {
  ArrayView v;
  v.data = const_cast<void*>(static_cast<const void*>(a.data()));
  v.dtype = to_dtype(a.dtype(), arg, as_bfloat16);
  v.device = to_device(a.device_type(), a.device_id(), arg);
  v.shape.resize(a.ndim());
  v.strides.resize(a.ndim());
  for (std::size_t d = 0; d < a.ndim(); ++d) {
    v.shape[d] = static_cast<std::int64_t>(a.shape(d));
    v.strides[d] = static_cast<std::int64_t>(a.stride(d));
  }
  return v;
}

inline Stream to_stream(std::uintptr_t handle) { return reinterpret_cast<Stream>(handle); }

}  // namespace ironkernels::python
