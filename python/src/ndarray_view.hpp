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

/// The dtype's NumPy-style name ("float32", "complex64", "bool", "int8"), for messages.
inline std::string dlpack_dtype_name(const nb::dlpack::dtype& dt) {
  using code = nb::dlpack::dtype_code;
  const std::string bits = std::to_string(dt.bits);
  std::string name;
  switch (static_cast<code>(dt.code)) {
    case code::Int: name = "int" + bits; break;
    case code::UInt: name = "uint" + bits; break;
    case code::Float: name = "float" + bits; break;
    case code::Bfloat: name = "bfloat" + bits; break;
    case code::Complex: name = "complex" + bits; break;
    case code::Bool: name = "bool"; break;
    default: name = "opaque " + bits + "-bit"; break;
  }
  return dt.lanes > 1 ? name + " x" + std::to_string(dt.lanes) + " (vector lanes)" : name;
}

/// The library's dtypes; `as_bfloat16` reinterprets a uint16 array (NumPy has no bfloat16). Each op
/// then checks which of them it accepts; `accepted` is what the message offers instead.
inline DType to_dtype(const nb::dlpack::dtype& dt, const char* arg, bool as_bfloat16, const char* accepted) {
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
    if (dt.code == static_cast<std::uint8_t>(code::Int) && dt.bits == 32) return DType::int32;
    if (dt.code == static_cast<std::uint8_t>(code::Int) && dt.bits == 8) return DType::int8;
    if (dt.code == static_cast<std::uint8_t>(code::UInt) && dt.bits == 8) return DType::uint8;
    if (dt.code == static_cast<std::uint8_t>(code::Complex) && dt.bits == 64) return DType::complex64;
    if (dt.code == static_cast<std::uint8_t>(code::Complex) && dt.bits == 128) return DType::complex128;
  }
  raise<TypeError>(arg, " has dtype ", dlpack_dtype_name(dt), "; accepted: ", accepted);
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

/// Every floating type (the default list of what an op accepts, for messages).
inline constexpr const char* kFloatDtypes = "float16, bfloat16, float32, float64";
/// The dtypes of the fwt.
inline constexpr const char* kFwtDtypes = "float16, bfloat16, float32, float64, complex64, complex128, int32, int64";

/// `arg` names the argument as the user passed it ("fwt: x"); `accepted` lists the dtypes the op takes.
template <class... Ts>
ArrayView to_view(const nb::ndarray<Ts...>& a, const char* arg, bool as_bfloat16 = false,
                  const char* accepted = kFloatDtypes) {
  ArrayView v;
  v.data = const_cast<void*>(static_cast<const void*>(a.data()));
  v.dtype = to_dtype(a.dtype(), arg, as_bfloat16, accepted);
  v.device = to_device(a.device_type(), a.device_id(), arg);
  v.shape.resize(a.ndim());
  v.strides.resize(a.ndim());
  // Strides are trusted only as far as they describe memory that can exist: a span past 2^62 bytes
  // is a wrong export (CuPy before the fix of cupy#10172 sends negative strides as huge positive ones),
  // and taken at its word it would send kernels far outside the array.
  unsigned __int128 span = 0;
  for (std::size_t d = 0; d < a.ndim(); ++d) {
    v.shape[d] = static_cast<std::int64_t>(a.shape(d));
    v.strides[d] = static_cast<std::int64_t>(a.stride(d));
    if (v.shape[d] > 1) {
      const std::uint64_t s = v.strides[d] < 0 ? 0 - static_cast<std::uint64_t>(v.strides[d]) : static_cast<std::uint64_t>(v.strides[d]);
      span += static_cast<unsigned __int128>(s) * static_cast<std::uint64_t>(v.shape[d] - 1) * dtype_size(v.dtype);
    }
  }
  if (span >> 62)
    raise<ValueError>(arg, " has strides ", strides_text(v), " for shape ", shape_text(v),
                      ", which span more than 2^62 bytes: its producer exported them wrongly (CuPy before the fix of "
                      "cupy#10172 exports negative strides so); accepted: strides of real memory, e.g. a contiguous copy");
  return v;
}

inline Stream to_stream(std::uintptr_t handle) { return Stream(reinterpret_cast<void*>(handle)); }

}  // namespace ironkernels::python
