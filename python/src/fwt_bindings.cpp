// fwt: the Python wrapper (ironkernels/fwt.py) resolves framework, output and stream; this layer
// only views the arrays, releases the GIL and calls the C++ API.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <optional>
#include <string>

#include "ironkernels/fwt.hpp"
#include "ironkernels/fwt_quantize.hpp"
#include "ndarray_view.hpp"

namespace nb = nanobind;
using namespace ironkernels;

void bind_fwt(nb::module_& m) {
  m.def("fwt", [](nb::ndarray<nb::ro> x, nb::ndarray<> out, int axis, std::optional<double> scale,
                  bool normalized, std::uintptr_t stream, bool as_bfloat16, const std::string& order,
                  std::int64_t block, std::optional<nb::ndarray<nb::ro>> signs,
                  std::optional<nb::ndarray<nb::ro>> hadamard, bool inverse) {
    const ArrayView xv = python::to_view(x, "fwt: x", as_bfloat16, python::kFwtDtypes);
    const ArrayView ov = python::to_view(out, "fwt: out", as_bfloat16, python::kFwtDtypes);
    FwtOptions opt;
    opt.axis = axis;
    opt.scale = scale;
    opt.normalized = normalized;
    opt.block = block;
    opt.inverse = inverse;
    if (signs) opt.signs = python::to_view(*signs, "fwt: signs", false, "int8");
    if (hadamard) opt.hadamard = python::to_view(*hadamard, "fwt: hadamard", false, "int8");
    if (order == "natural") opt.order = FwtOrder::natural;
    else if (order == "sequency") opt.order = FwtOrder::sequency;
    else if (order == "dyadic") opt.order = FwtOrder::dyadic;
    else raise<ValueError>("fwt: order='", order, "' is not an order; accepted: 'natural', 'sequency', 'dyadic'");
    nb::gil_scoped_release release;
    fwt(xv, ov, opt, python::to_stream(stream));
  }, nb::arg("x").noconvert(), nb::arg("out").noconvert(), nb::arg("axis") = -1,
     nb::arg("scale") = nb::none(), nb::arg("normalized") = false, nb::arg("stream") = 0,
     nb::arg("as_bfloat16") = false, nb::arg("order") = "natural", nb::arg("block") = 0,
     nb::arg("signs").noconvert() = nb::none(), nb::arg("hadamard").noconvert() = nb::none(), nb::arg("inverse") = false,
     "y = scale * H_N D x along `axis` into `out` (which may be x). See ironkernels.fwt.");

  m.def("fwt_quantize", [](nb::ndarray<nb::ro> x, nb::ndarray<> q, nb::ndarray<> scales, std::optional<nb::ndarray<>> tensor_scale,
                           const std::string& to, std::int64_t block, std::int64_t group, bool normalized,
                           std::optional<nb::ndarray<nb::ro>> signs, std::optional<nb::ndarray<nb::ro>> hadamard,
                           double global_amax, bool as_bfloat16, const std::string& scale_layout,
                           std::uintptr_t stream) {
    FwtQuantizeOptions opt;
    if (to == "float8_e4m3fn") opt.to = QuantFormat::float8_e4m3fn;
    else if (to == "float8_e5m2") opt.to = QuantFormat::float8_e5m2;
    else if (to == "int8") opt.to = QuantFormat::int8;
    else if (to == "int4") opt.to = QuantFormat::int4;
    else if (to == "mxfp4") opt.to = QuantFormat::mxfp4;
    else if (to == "nvfp4") opt.to = QuantFormat::nvfp4;
    else raise<ValueError>("fwt_quantize: to='", to, "'; accepted: 'float8_e4m3fn', 'float8_e5m2', 'int8', 'int4', 'mxfp4', 'nvfp4'");
    opt.block = block, opt.group = group, opt.normalized = normalized, opt.global_amax = global_amax;
    if (scale_layout == "row-major") opt.scale_layout = ScaleLayout::row_major;
    else if (scale_layout == "swizzled-128x4") opt.scale_layout = ScaleLayout::swizzled_128x4;
    else raise<ValueError>("fwt_quantize: scale_layout='", scale_layout, "'; accepted: 'row-major', 'swizzled-128x4'");
    constexpr const char* kQuantDtypes = "int8, uint8, float32";
    if (signs) opt.signs = python::to_view(*signs, "fwt_quantize: signs", false, "int8");
    if (hadamard) opt.hadamard = python::to_view(*hadamard, "fwt_quantize: hadamard", false, "int8");
    const ArrayView xv = python::to_view(x, "fwt_quantize: x", as_bfloat16, python::kFloatDtypes);
    const ArrayView qv = python::to_view(q, "fwt_quantize: q", false, kQuantDtypes);
    const ArrayView sv = python::to_view(scales, "fwt_quantize: scales", false, kQuantDtypes);
    const ArrayView tv = tensor_scale ? python::to_view(*tensor_scale, "fwt_quantize: tensor_scale", false, "float32") : ArrayView{};
    nb::gil_scoped_release release;
    fwt_quantize(xv, qv, sv, tv, opt, python::to_stream(stream));
  }, nb::arg("x").noconvert(), nb::arg("q").noconvert(), nb::arg("scales").noconvert(),
     nb::arg("tensor_scale").noconvert() = nb::none(), nb::arg("to"), nb::arg("block") = 0, nb::arg("group") = 0,
     nb::arg("normalized") = true, nb::arg("signs").noconvert() = nb::none(),
     nb::arg("hadamard").noconvert() = nb::none(), nb::arg("global_amax") = 0.0, nb::arg("as_bfloat16") = false,
     nb::arg("scale_layout") = "row-major", nb::arg("stream") = 0,
     "Rotate and quantise x into q and scales (and nvfp4's tensor_scale). See ironkernels.fwt_quantize.");
}
