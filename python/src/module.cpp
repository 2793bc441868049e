// The ironkernels._core extension: one binding file per area, C++ exceptions mapped to Python's.
#include <nanobind/nanobind.h>

#include "ironkernels/core/error.hpp"

namespace nb = nanobind;

void bind_array(nb::module_& m);
void bind_core(nb::module_& m);
void bind_fwt(nb::module_& m);
void bind_gemm(nb::module_& m);
void bind_lcn(nb::module_& m);
void bind_lcn_solve(nb::module_& m);

NB_MODULE(_core, m) {
  m.doc() = "ironkernels native core (use the `ironkernels` package, not this module directly)";
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const ironkernels::TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const ironkernels::ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const ironkernels::Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
  bind_core(m);
  bind_array(m);
  bind_fwt(m);
  bind_gemm(m);
  bind_lcn(m);
  bind_lcn_solve(m);
}
