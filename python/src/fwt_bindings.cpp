// fwt: the Python wrapper (ironkernels/fwt.py) resolves framework, output and stream; this layer
// only views the arrays, releases the GIL and calls the C++ API.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <optional>
#include <string>

#include "ironkernels/fwt.hpp"
#include "ndarray_view.hpp"

namespace nb = nanobind;
using namespace ironkernels;

void bind_fwt(nb::module_& m) {
  m.def("fwt", [](nb::ndarray<nb::ro> x, nb::ndarray<> out, int axis, std::optional<double> scale,
                  bool normalized, std::uintptr_t stream, bool as_bfloat16, const std::string& order) {
    const ArrayView xv = python::to_view(x, "fwt: x", as_bfloat16, python::kFwtDtypes);
    const ArrayView ov = python::to_view(out, "fwt: out", as_bfloat16, python::kFwtDtypes);
    FwtOptions opt;
    opt.axis = axis;
    opt.scale = scale;
    opt.normalized = normalized;
    if (order == "natural") opt.order = FwtOrder::natural;
    else if (order == "sequency") opt.order = FwtOrder::sequency;
    else if (order == "dyadic") opt.order = FwtOrder::dyadic;
    else raise<ValueError>("fwt: order='", order, "' is not an order; accepted: 'natural', 'sequency', 'dyadic'");
    nb::gil_scoped_release release;
    fwt(xv, ov, opt, python::to_stream(stream));
  }, nb::arg("x").noconvert(), nb::arg("out").noconvert(), nb::arg("axis") = -1,
     nb::arg("scale") = nb::none(), nb::arg("normalized") = false, nb::arg("stream") = 0,
     nb::arg("as_bfloat16") = false, nb::arg("order") = "natural",
     "y = scale * H_N x along `axis` into `out` (which may be x). See ironkernels.fwt.");
}
