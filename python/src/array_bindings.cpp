// A minimal array allocator and copier, so that the package can hold device data (the demo,
// callers whose framework cannot allocate) without PyTorch or CuPy. The arrays export DLPack.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "ironkernels/core/runtime.hpp"
#include "ndarray_view.hpp"

namespace nb = nanobind;
using namespace ironkernels;

namespace {
constexpr const char* kAnyDtype = "float16, bfloat16, float32, float64, complex64, complex128, int32, int64";

nb::dlpack::dtype dlpack_dtype(const std::string& name) {
  using code = nb::dlpack::dtype_code;
  auto make = [](code c, int bits) {
    nb::dlpack::dtype d;
    d.code = static_cast<std::uint8_t>(c);
    d.bits = static_cast<std::uint8_t>(bits);
    d.lanes = 1;
    return d;
  };
  if (name == "float16") return make(code::Float, 16);
  if (name == "bfloat16") return make(code::Bfloat, 16);
  if (name == "float32") return make(code::Float, 32);
  if (name == "float64") return make(code::Float, 64);
  if (name == "complex64") return make(code::Complex, 64);
  if (name == "complex128") return make(code::Complex, 128);
  if (name == "int32") return make(code::Int, 32);
  if (name == "int64") return make(code::Int, 64);
  if (name == "int8") return make(code::Int, 8);
  if (name == "uint8") return make(code::UInt, 8);
  raise<TypeError>("empty: dtype '", name, "' is not accepted; accepted: ", kAnyDtype, ", int8, uint8");
}
}  // namespace

void bind_array(nb::module_& m) {
  // What the Python layer needs of an array that has no .shape/.dtype of its own (any DLPack producer).
  m.def("describe", [](nb::handle obj) -> nb::object {
    nb::ndarray<nb::ro> a;
    if (!nb::try_cast(obj, a, false)) return nb::none();
    nb::ndarray<> writable_view;
    const bool writable = nb::try_cast(obj, writable_view, false);
    nb::list shape, strides;
    for (std::size_t d = 0; d < a.ndim(); ++d) {
      shape.append(static_cast<std::int64_t>(a.shape(d)));
      strides.append(static_cast<std::int64_t>(a.stride(d)));
    }
    nb::dict info;
    info["shape"] = nb::tuple(shape);
    info["strides"] = nb::tuple(strides);
    info["dtype"] = python::dlpack_dtype_name(a.dtype());
    info["device_type"] = a.device_type();
    info["device_id"] = a.device_id();
    info["writable"] = writable;
    return std::move(info);
  }, nb::arg("obj"), "shape, strides (elements), dtype name, DLPack device and writability; None if not an array.");

  // Refuses an output whose elements repeat, or that overlaps an input other than the one it may be
  // (an in-place operand given as `same_as`, which must then match it element for element).
  m.def("check_output", [](const std::string& op, const std::string& name, nb::ndarray<> out,
                           const std::vector<std::pair<std::string, nb::ndarray<nb::ro>>>& inputs,
                           const std::string& same_as) {
    const std::string arg = op + ": " + name;
    const ArrayView o = python::to_view(out, arg.c_str(), true, kAnyDtype);
    if (!o.elements_distinct())
      raise<ValueError>(arg, " repeats elements (strides ", strides_text(o), " for shape ", shape_text(o),
                        "); accepted: an output whose elements are all distinct");
    for (const auto& [in_name, in] : inputs) {
      const ArrayView v = python::to_view(in, (op + ": " + in_name).c_str(), true, kAnyDtype);
      if (!o.overlaps(v)) continue;
      if (in_name == same_as && o.same_layout(v)) continue;
      if (in_name == same_as)
        raise<ValueError>(arg, " overlaps ", in_name, " without being the same array; accepted: ", name, " is ", in_name,
                          " (the same elements) or a separate array");
      raise<ValueError>(arg, " overlaps ", in_name, "; accepted: a separate array for ", name);
    }
  }, nb::arg("op"), nb::arg("name"), nb::arg("out").noconvert(), nb::arg("inputs"), nb::arg("same_as") = "",
     "ValueError unless `out` has distinct elements and overlaps no input (but `same_as`, exactly).");

  m.def("empty", [](const std::vector<std::int64_t>& shape, const std::string& dtype, const std::string& device, int device_id,
                    const std::string& order) {
    const nb::dlpack::dtype dt = dlpack_dtype(dtype);
    std::int64_t count = 1;
    for (auto s : shape) {
      if (s < 0) raise<ValueError>("empty: shape has a negative extent ", s);
      count *= s;
    }
    Device dev;
    int dl_device;
    if (device == "cpu") {
      dev = {DeviceType::cpu, 0};
      dl_device = nb::device::cpu::value;
    } else if (device == "cuda") {
      dev = {DeviceType::cuda, device_id};
      dl_device = nb::device::cuda::value;
    } else {
      raise<ValueError>("empty: device must be 'cpu' or 'cuda', got '", device, "'");
    }
    if (order != "C" && order != "F") raise<ValueError>("empty: order must be 'C' or 'F', got '", order, "'");
    std::vector<std::int64_t> strides(shape.size());
    std::int64_t step = 1;
    for (std::size_t i = 0; i < shape.size(); ++i) {
      const std::size_t d = order == "C" ? shape.size() - 1 - i : i;
      strides[d] = step;
      step *= std::max<std::int64_t>(shape[d], 1);
    }
    auto* buf = new Buffer(static_cast<std::size_t>(count) * (dt.bits / 8), dev);
    nb::capsule owner(buf, [](void* p) noexcept { delete static_cast<Buffer*>(p); });
    std::vector<std::size_t> ushape(shape.begin(), shape.end());
    return nb::ndarray<nb::array_api>(buf->data(), ushape.size(), ushape.data(), owner, strides.data(), dt, dl_device,
                                      device_id);
  }, nb::arg("shape"), nb::arg("dtype"), nb::arg("device") = "cpu", nb::arg("device_id") = 0, nb::arg("order") = "C",
     "Uninitialised array in C or Fortran order on the host or a CUDA device (exports DLPack).");

  // Arrays of one shape, dtype and strides whose elements fill one span (C or Fortran order, or any
  // other dense permutation) are copied as that span's bytes.
  m.def("copy_", [](nb::ndarray<> dst, nb::ndarray<nb::ro> src, std::uintptr_t stream) {
    const ArrayView d = python::to_view(dst, "dst", true), s = python::to_view(src, "src", true);
    if (d.shape != s.shape || d.dtype != s.dtype) raise<ValueError>("copy_: dst and src must have the same shape and dtype");
    std::int64_t span = 1;
    bool dense = d.strides == s.strides;
    for (std::size_t i = 0; i < d.shape.size() && dense; ++i) {
      dense = d.strides[i] >= 0;
      if (d.shape[i] > 1) span += (d.shape[i] - 1) * d.strides[i];
    }
    if (!dense || (d.size() > 0 && span != d.size()))
      raise<ValueError>("copy_: dst has strides ", strides_text(d), " and src ", strides_text(s),
                        "; accepted: one dense layout for both");
    nb::gil_scoped_release release;
    copy_bytes(d.data, d.device, s.data, s.device, static_cast<std::size_t>(d.size()) * dtype_size(d.dtype),
               python::to_stream(stream));
  }, nb::arg("dst").noconvert(), nb::arg("src").noconvert(), nb::arg("stream") = 0,
     "Copy src into dst (host or device, ordered on `stream`): one shape, dtype and dense layout.");

  m.def("fill_bytes_", [](nb::ndarray<> dst, int value, std::uintptr_t stream) {
    const ArrayView d = python::to_view(dst, "dst", true);
    if (!d.is_c_contiguous()) raise<ValueError>("fill_bytes_: dst must be C-contiguous");
    nb::gil_scoped_release release;
    fill_bytes(d.data, d.device, value, static_cast<std::size_t>(d.size()) * dtype_size(d.dtype), python::to_stream(stream));
  }, nb::arg("dst").noconvert(), nb::arg("value"), nb::arg("stream") = 0,
     "Set every byte of dst to `value` (poisoning outputs in tests and benchmarks).");
}
