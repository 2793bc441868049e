#pragma once
// A non-owning, strided view of an n-dimensional array on the host or a CUDA device: what the
// C++ API takes, and what the Python bindings build from any DLPack array without copying.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ironkernels/core/export.hpp"

struct CUstream_st;  // cudaStream_t is CUstream_st*: named here so that the CUDA headers are not needed

namespace IRONKERNELS_EXPORT ironkernels {

/// int8 and uint8: quantised values and packed 4-bit pairs (fwt_quantize); no transform takes them.
enum class DType : std::uint8_t { float16, bfloat16, float32, float64, int64, int32, complex64, complex128, int8, uint8 };

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

/// A CUDA stream, typed so that it cannot be taken for a data or workspace pointer (as RMM's
/// cuda_stream_view): from a cudaStream_t implicitly, from a void* only explicitly, the default
/// stream when default-constructed or from nullptr; it converts back to a cudaStream_t.
class Stream {
 public:
  constexpr Stream() noexcept = default;
  constexpr Stream(std::nullptr_t) noexcept {}
  constexpr Stream(CUstream_st* handle) noexcept : handle_(handle) {}
  explicit Stream(void* handle) noexcept : handle_(static_cast<CUstream_st*>(handle)) {}
  constexpr CUstream_st* value() const noexcept { return handle_; }
  constexpr operator CUstream_st*() const noexcept { return handle_; }

 private:
  CUstream_st* handle_ = nullptr;
};

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
