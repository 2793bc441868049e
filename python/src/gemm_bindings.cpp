// gemm: the Python wrapper (ironkernels/_gemm.py) resolves the contract, output and framework; this
// layer views the arrays, releases the GIL and calls the C++ API.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <string>

#include "ironkernels/gemm.hpp"
#include "ndarray_view.hpp"

namespace nb = nanobind;
using namespace ironkernels;

void bind_gemm(nb::module_& m) {
  nb::list moduli;
  for (int p : gemm_moduli()) moduli.append(p);
  m.attr("GEMM_MODULI") = nb::tuple(moduli);
  m.attr("GEMM_MAX_K") = kGemmMaxK;
  m.def("gemm_reference", [](nb::ndarray<nb::ro> a, nb::ndarray<nb::ro> b, nb::ndarray<> c, double alpha,
                             double beta, bool trans_a, bool trans_b, int moduli, const std::string& scaling) {
    if (scaling != "fast" && scaling != "accurate")
      raise<ValueError>("gemm: contract scaling '", scaling, "'; accepted: 'fast', 'accurate'");
    const ArrayView av = python::to_view(a, "a"), bv = python::to_view(b, "b"), cv = python::to_view(c, "c");
    GemmOptions opt;
    opt.alpha = alpha;
    opt.beta = beta;
    opt.trans_a = trans_a;
    opt.trans_b = trans_b;
    opt.contract.moduli = moduli;
    opt.contract.scaling = scaling == "fast" ? GemmScaling::fast : GemmScaling::accurate;
    GemmReport rep;
    {
      nb::gil_scoped_release release;
      rep = gemm_reference(av, bv, cv, opt);
    }
    nb::dict d;
    d["moduli"] = rep.moduli;
    d["bits_a"] = rep.bits_a;
    d["bits_b"] = rep.bits_b;
    d["nonfinite_elements"] = rep.nonfinite_elements;
    return d;
  }, nb::arg("a").noconvert(), nb::arg("b").noconvert(), nb::arg("c").noconvert(), nb::arg("alpha"),
     nb::arg("beta"), nb::arg("trans_a"), nb::arg("trans_b"), nb::arg("moduli"), nb::arg("scaling"),
     "C = alpha op(A) op(B) + beta C by the Ozaki scheme II on the CPU (see ironkernels.gemm).");
}
