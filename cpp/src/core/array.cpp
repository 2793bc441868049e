// ArrayView and DType: element sizes and names, contiguity, overlap and distinct-element checks, and
// the shape and stride texts messages print.
#include "ironkernels/core/array.hpp"

#include <algorithm>
#include <utility>

#include "ironkernels/core/error.hpp"

namespace ironkernels {

std::size_t dtype_size(DType dt) {
  switch (dt) {
    case DType::int8:
    case DType::uint8: return 1;
    case DType::float16:
    case DType::bfloat16: return 2;
    case DType::float32:
    case DType::int32: return 4;
    case DType::float64:
    case DType::int64:
    case DType::complex64: return 8;
    case DType::complex128: return 16;
  }
  raise<TypeError>("unknown dtype");
}

const char* dtype_name(DType dt) {
  switch (dt) {
    case DType::float16: return "float16";
    case DType::bfloat16: return "bfloat16";
    case DType::float32: return "float32";
    case DType::float64: return "float64";
    case DType::int64: return "int64";
    case DType::int32: return "int32";
    case DType::complex64: return "complex64";
    case DType::complex128: return "complex128";
    case DType::int8: return "int8";
    case DType::uint8: return "uint8";
  }
  return "unknown";
}

std::string device_name(const Device& d) {
  return d.type == DeviceType::cpu ? std::string("cpu") : "cuda:" + std::to_string(d.id);
}

namespace {
std::string tuple_text(const std::vector<std::int64_t>& v) {
  std::string s = "(";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}
}  // namespace

std::string shape_text(const ArrayView& v) { return tuple_text(v.shape); }
std::string strides_text(const ArrayView& v) { return tuple_text(v.strides); }

std::int64_t ArrayView::size() const {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  return n;
}

bool ArrayView::is_c_contiguous() const {
  std::int64_t expected = 1;
  for (int d = ndim() - 1; d >= 0; --d) {
    if (shape[d] != 1 && strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

namespace {
void byte_range(const ArrayView& v, std::uintptr_t& lo, std::uintptr_t& hi) {
  std::int64_t min_off = 0, max_off = 0;
  for (int d = 0; d < v.ndim(); ++d) {
    const std::int64_t span = (v.shape[d] - 1) * v.strides[d];
    (span < 0 ? min_off : max_off) += span;
  }
  const auto es = static_cast<std::int64_t>(dtype_size(v.dtype));
  lo = reinterpret_cast<std::uintptr_t>(v.data) + min_off * es;
  hi = reinterpret_cast<std::uintptr_t>(v.data) + (max_off + 1) * es;
}
}  // namespace

bool ArrayView::overlaps(const ArrayView& other) const {
  if (size() == 0 || other.size() == 0) return false;
  std::uintptr_t lo, hi, olo, ohi;
  byte_range(*this, lo, hi);
  byte_range(other, olo, ohi);
  return lo < ohi && olo < hi;
}

bool ArrayView::elements_distinct() const {
  if (size() <= 1) return true;
  std::vector<std::pair<std::int64_t, std::int64_t>> dims;  // (|stride|, extent) of dims longer than 1
  for (int d = 0; d < ndim(); ++d)
    if (shape[d] > 1) dims.emplace_back(strides[d] < 0 ? -strides[d] : strides[d], shape[d]);
  std::sort(dims.begin(), dims.end());
  std::int64_t span = 0;  // largest offset the dims so far reach (in elements)
  for (const auto& [stride, extent] : dims) {
    if (stride <= span) return false;
    span += stride * (extent - 1);
  }
  return true;
}

bool ArrayView::same_layout(const ArrayView& other) const {
  if (data != other.data || shape != other.shape || dtype != other.dtype) return false;
  for (int d = 0; d < ndim(); ++d)
    if (shape[d] > 1 && strides[d] != other.strides[d]) return false;
  return true;
}

ArrayView ArrayView::contiguous(void* data, DType dtype, std::vector<std::int64_t> shape,
                                Device device) {
  ArrayView v;
  v.data = data;
  v.dtype = dtype;
  v.device = device;
  v.strides.assign(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) v.strides[d] = v.strides[d + 1] * shape[d + 1];
  v.shape = std::move(shape);
  return v;
}

}  // namespace ironkernels
