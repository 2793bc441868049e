#pragma once
// A non-owning, strided view of an n-dimensional array on the host or a CUDA device: what the
// C++ API takes, and what the Python bindings build from any DLPack array without copying.
#include <cstdint>
#include <string>
#include <vector>
#include "ironkernels/core/export.hpp"

namespace IRONKERNELS_EXPORT ironkernels {

enum class DType : std::uint8_t { float16, bfloat16, float32, float64, int64, int32, complex64, complex128 };

/// Size of one element in bytes.
std::size_t dtype_size(DType dt);
/// The NumPy-style name ("float32", "bfloat16", ...).
const char* dtype_name(DType dt);

enum class DeviceType : std::uint8_t { cpu, cuda };

struct Device {
  DeviceType type = DeviceType::cpu;
  int id = 0;
  bool operator==(const Device& o) const { return type == o.type && id == o.id; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};
std::string device_name(const Device& d);

/// A CUDA stream handle (cudaStream_t) carried without the CUDA headers; nullptr is the default stream.
using Stream = void*;

struct ArrayView {
  void* data = nullptr;
  DType dtype = DType::float32;
  Device device{};
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;  ///< in elements, not bytes

  int ndim() const { return static_cast<int>(shape.size()); }
  std::int64_t size() const;
  bool is_c_contiguous() const;

  /// Whether the bytes this view spans (from its lowest to its highest element) intersect another's.
  bool overlaps(const ArrayView& other) const;
  /// Whether every index addresses its own element (no zero stride, no rows folded onto each other):
  /// true when, with the dimensions ordered by |stride|, each stride exceeds the span of the ones
  /// below it. Conservative: a few interleaved layouts with distinct elements also answer false.
  bool elements_distinct() const;
  /// Whether this view addresses the same elements in the same order as `other` (same data pointer,
  /// equal strides wherever the extent exceeds 1): the one overlap an in-place operation allows.
  bool same_layout(const ArrayView& other) const;

  /// A C-contiguous view of host or device memory.
  static ArrayView contiguous(void* data, DType dtype, std::vector<std::int64_t> shape,
                              Device device = {});
};

/// "(4, 8)" and "(8, 1)": a view's shape and strides (in elements) as messages print them.
std::string shape_text(const ArrayView& v);
std::string strides_text(const ArrayView& v);

template <class T>
struct dtype_of;
template <>
struct dtype_of<float> {
  static constexpr DType value = DType::float32;
};
template <>
struct dtype_of<double> {
  static constexpr DType value = DType::float64;
};
template <>
struct dtype_of<std::int64_t> {
  static constexpr DType value = DType::int64;
};
template <>
struct dtype_of<std::int32_t> {
  static constexpr DType value = DType::int32;
};

}  // namespace ironkernels
