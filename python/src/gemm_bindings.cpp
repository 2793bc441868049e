// gemm: the Python wrapper (ironkernels/_gemm.py) resolves the contract, output and framework; this
// layer views the arrays, releases the GIL and calls the C++ API.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <string>

#include "ironkernels/gemm.hpp"
#include "ndarray_view.hpp"

namespace nb = nanobind;
using namespace ironkernels;

namespace {
GemmScaling parse_scaling(const std::string& scaling) {
  if (scaling == "fast") return GemmScaling::fast;
  if (scaling == "accurate") return GemmScaling::accurate;
  if (scaling == "norm") return GemmScaling::norm;
  raise<ValueError>("gemm: contract scaling '", scaling, "'; accepted: 'fast', 'accurate', 'norm'");
}

GemmBackend parse_products(const std::string& products) {
  if (products == "auto") return GemmBackend::automatic;
  if (products == "cublas") return GemmBackend::cublas;
  if (products == "mma") return GemmBackend::mma;
  if (products == "wgmma") return GemmBackend::wgmma;
  raise<ValueError>("gemm: INT8 product engine '", products, "'; accepted: 'auto', 'cublas', 'mma', 'wgmma'");
}

nb::dict report_dict(const GemmReport& rep) {
  nb::dict d;
  d["moduli"] = rep.moduli;
  d["bits_a"] = rep.bits_a;
  d["bits_b"] = rep.bits_b;
  d["certified"] = rep.certified;
  d["rtol"] = rep.rtol;
  d["bound"] = rep.bound;
  d["path"] = rep.whole_native ? "native" : rep.native_elements ? "mixed" : "emulated";
  d["native_rows"] = rep.native_rows;
  d["native_cols"] = rep.native_cols;
  d["native_elements"] = rep.native_elements;
  d["native_row_indices"] = rep.native_row_indices;
  d["native_col_indices"] = rep.native_col_indices;
  d["nonfinite_elements"] = rep.nonfinite_elements;
  return d;
}

GemmContract contract_of(int moduli, const std::string& scaling, bool native, double rtol) {
  GemmContract c;
  c.moduli = moduli, c.scaling = parse_scaling(scaling), c.native = native, c.rtol = rtol;
  return c;
}

}  // namespace

void bind_gemm(nb::module_& m) {
  nb::list moduli;
  for (int p : gemm_moduli()) moduli.append(p);
  m.attr("GEMM_MODULI") = nb::tuple(moduli);
  m.attr("GEMM_MAX_K") = kGemmMaxK;
  m.def("gemm_fast_bits", [](int moduli, std::int64_t k) {
    const GemmBits b = gemm_fast_bits(moduli, k);
    return nb::make_tuple(b.a, b.b);
  }, nb::arg("moduli"), nb::arg("k"), "Bits kept at least per row of op(A) and column of op(B) under fast scaling.");
  m.def("gemm_reference", [](nb::ndarray<nb::ro> a, nb::ndarray<nb::ro> b, nb::ndarray<> c, double alpha,
                             double beta, bool trans_a, bool trans_b, int moduli, const std::string& scaling,
                             bool native, double rtol) {
    const ArrayView av = python::to_view(a, "gemm: a", false, "float64"), bv = python::to_view(b, "gemm: b", false, "float64"),
                    cv = python::to_view(c, "gemm: out", false, "float64");
    GemmOptions opt;
    opt.alpha = alpha;
    opt.beta = beta;
    opt.trans_a = trans_a;
    opt.trans_b = trans_b;
    opt.contract = contract_of(moduli, scaling, native, rtol);
    GemmReport rep;
    {
      nb::gil_scoped_release release;
      rep = gemm_reference(av, bv, cv, opt);
    }
    return report_dict(rep);
  }, nb::arg("a").noconvert(), nb::arg("b").noconvert(), nb::arg("c").noconvert(), nb::arg("alpha"),
     nb::arg("beta"), nb::arg("trans_a"), nb::arg("trans_b"), nb::arg("moduli"), nb::arg("scaling"),
     nb::arg("native") = false, nb::arg("rtol") = 0.0,
     "C = alpha op(A) op(B) + beta C by the Ozaki scheme II on the CPU (see ironkernels.gemm); native or\n"
     "rtol > 0: a certified contract (moduli and scaling ignored).");

  m.def("gemm_engine_available", [](const std::string& products, int device_id) {
    return gemm_backend_available(parse_products(products), Device{DeviceType::cuda, device_id});
  }, nb::arg("products"), nb::arg("device_id"), "Whether this INT8 product engine can run on the CUDA device.");

  nb::class_<GemmPrepared>(m, "GemmPrepared", "op(B)'s share of the CUDA backend's runs, kept for operand reuse.")
      .def("__init__", [](GemmPrepared* self, nb::ndarray<nb::ro> b, bool trans_b, int moduli, const std::string& scaling,
                          bool native, double rtol, std::uintptr_t stream) {
        const ArrayView bv = python::to_view(b, "gemm_prepare: b", false, "float64");
        const GemmContract contract = contract_of(moduli, scaling, native, rtol);
        nb::gil_scoped_release release;
        new (self) GemmPrepared(bv, trans_b, contract, python::to_stream(stream));
      }, nb::arg("b").noconvert(), nb::arg("trans_b"), nb::arg("moduli"), nb::arg("scaling"), nb::arg("native"),
         nb::arg("rtol"), nb::arg("stream"))
      .def_prop_ro("nbytes", &GemmPrepared::bytes)
      .def_prop_ro("residue_count", &GemmPrepared::residue_count);

  nb::class_<GemmPlan>(m, "GemmPlan", "The CUDA backend of gemm for one (m, n, k, ops, contract, device).")
      .def("__init__", [](GemmPlan* self, std::int64_t mm, std::int64_t n, std::int64_t k, bool trans_a, bool trans_b,
                          int moduli, const std::string& scaling, int device_id, const std::string& products,
                          bool native, double rtol) {
        new (self) GemmPlan(mm, n, k, trans_a, trans_b, contract_of(moduli, scaling, native, rtol),
                            Device{DeviceType::cuda, device_id}, parse_products(products));
      }, nb::arg("m"), nb::arg("n"), nb::arg("k"), nb::arg("trans_a"), nb::arg("trans_b"), nb::arg("moduli"),
         nb::arg("scaling"), nb::arg("device_id"), nb::arg("products") = "auto", nb::arg("native") = false,
         nb::arg("rtol") = 0.0, "native or rtol > 0: a certified contract (moduli and scaling ignored).")
      .def_prop_ro("workspace_bytes", &GemmPlan::workspace_bytes)
      .def("run", [](const GemmPlan& plan, nb::ndarray<nb::ro> a, nb::ndarray<nb::ro> b, nb::ndarray<> c, double alpha,
                     double beta, nb::ndarray<> workspace, std::uintptr_t stream, bool timed, GemmPrepared* prepared_b) {
        const ArrayView av = python::to_view(a, "gemm: a", false, "float64"), bv = python::to_view(b, "gemm: b", false, "float64"),
                    cv = python::to_view(c, "gemm: out", false, "float64");
        GemmTimings t;  // the workspace: any device array, its bytes used as scratch
        {
          nb::gil_scoped_release release;
          plan.run(av, bv, cv, alpha, beta, workspace.data(), workspace.nbytes(), python::to_stream(stream),
                   timed ? &t : nullptr, prepared_b);
        }
        nb::dict d;
        if (timed) {
          d["scale_ms"] = t.scale_ms;
          d["products_ms"] = t.products_ms;
          d["reconstruct_ms"] = t.reconstruct_ms;
        }
        return d;
      }, nb::arg("a").noconvert(), nb::arg("b").noconvert(), nb::arg("c").noconvert(), nb::arg("alpha"),
         nb::arg("beta"), nb::arg("workspace").noconvert(), nb::arg("stream"), nb::arg("timed") = false,
         nb::arg("prepared_b").none() = nb::none(),
         "Enqueue C = alpha op(A) op(B) + beta C on `stream` (no synchronisation unless timed: then the "
         "phase times in ms); op(B)'s share from prepared_b where given.")
      .def("report", [](const GemmPlan& plan, nb::ndarray<> workspace, std::uintptr_t stream) {
        GemmReport rep;
        {
          nb::gil_scoped_release release;
          rep = plan.report(workspace.data(), python::to_stream(stream));
        }
        nb::dict d = report_dict(rep);
        d["products"] = plan.products_backend();
        d["product_column_blocks"] = plan.products_column_blocks();
        return d;
      }, nb::arg("workspace").noconvert(), nb::arg("stream"), "The last run's report (waits for `stream`).")
      .def("tune", [](GemmPlan& plan, nb::ndarray<> workspace, std::uintptr_t stream, std::int64_t columns_per_call) {
        nb::gil_scoped_release release;
        plan.tune(workspace.data(), workspace.nbytes(), python::to_stream(stream), columns_per_call);
      }, nb::arg("workspace").noconvert(), nb::arg("stream"), nb::arg("columns_per_call") = 0,
         "Time cublasGemmEx against cuBLASLt's algorithms for the INT8 products (whole, and in column blocks)\n"
         "and keep the fastest (waits); columns_per_call > 0 times only blocks of that width.")
      .def("tune_once", [](GemmPlan& plan, nb::ndarray<> workspace, std::uintptr_t stream) {
        nb::gil_scoped_release release;
        plan.tune_once(workspace.data(), workspace.nbytes(), python::to_stream(stream));
      }, nb::arg("workspace").noconvert(), nb::arg("stream"),
         "tune() unless already tuned (one of several threads tunes, the others wait).")
      .def_prop_ro("tuned", &GemmPlan::tuned);
  m.def("gemm_plan", [](std::int64_t mm, std::int64_t n, std::int64_t k, bool trans_a, bool trans_b, int moduli,
                        const std::string& scaling, int device_id, const std::string& products, bool native,
                        double rtol, bool complex_pairs) {
    const GemmContract contract = contract_of(moduli, scaling, native, rtol);
    const GemmBackend backend = parse_products(products);
    nb::gil_scoped_release release;  // another thread may be planning under the cache's lock
    return gemm_plan(mm, n, k, trans_a, trans_b, contract, Device{DeviceType::cuda, device_id}, backend,
                     complex_pairs ? GemmColumns::complex_pairs : GemmColumns::real);
  }, nb::arg("m"), nb::arg("n"), nb::arg("k"), nb::arg("trans_a"), nb::arg("trans_b"), nb::arg("moduli"),
     nb::arg("scaling"), nb::arg("device_id"), nb::arg("products") = "auto", nb::arg("native") = false,
     nb::arg("rtol") = 0.0, nb::arg("complex_pairs") = false,
     "The shared GemmPlan for these arguments from the library's cache of the 8 most recently used\n"
     "(complex_pairs: op(B) is gemm's complex path's [Y_re | Y_im], GemmColumns::complex_pairs).");
  m.def("gemm_complex_columns", [](nb::ndarray<nb::ro> b, bool trans_b, nb::ndarray<> y, std::uintptr_t stream) {
    const ArrayView bv = python::to_view(b, "gemm: b", false, "complex128"),
                    yv = python::to_view(y, "gemm: y", false, "float64");
    nb::gil_scoped_release release;
    gemm_complex_columns(bv, trans_b, yv, python::to_stream(stream));
  }, nb::arg("b").noconvert(), nb::arg("trans_b"), nb::arg("y").noconvert(), nb::arg("stream"),
     "gemm's complex path's real op(y) = [Y_re | Y_im] from a complex128 CUDA b with contiguous rows, in one pass.");
  m.def("gemm_plan_cache_clear", [] {
    nb::gil_scoped_release release;
    gemm_plan_cache_clear();
  }, "Empty the plan cache (plans held elsewhere live on).");
}
