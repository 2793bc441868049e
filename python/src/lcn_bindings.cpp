// lcn: exact evaluation of grid drawings. The Python package (ironkernels/lcn.py) parses and checks
// the contest JSON; this layer takes the (n, 2) positions and (m, 2) edge endpoints.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <vector>

#include "ironkernels/core/error.hpp"
#include "ironkernels/lcn.hpp"
#include "ironkernels/lcn_layout.hpp"
#include "ironkernels/lcn_planar.hpp"
#include "ndarray_view.hpp"
#include "numpy_out.hpp"

namespace nb = nanobind;
using namespace ironkernels;

using IndexPairs = nb::ndarray<const std::int64_t, nb::shape<-1, 2>, nb::c_contig, nb::device::cpu>;

// The library's view of an (n, 2) int64 host array.
ArrayView view_of(const IndexPairs& a) {
  return ArrayView::contiguous(const_cast<std::int64_t*>(a.data()), DType::int64, {std::int64_t(a.shape(0)), 2});
}

using python::to_numpy;

namespace {
// Thrown out of a poll that stashed a Python exception (the work stops and the workers are joined).
struct PythonRaised {};

// The lcn::Progress of a long call made with the GIL released: takes the GIL, runs the signal handlers
// (Ctrl-C raises KeyboardInterrupt there) and the optional Python progress(done, total). A Python
// exception from either is stashed and PythonRaised thrown; the binding, with the GIL back, calls
// reraise(), so the exception reaches the caller as raised.
class PythonPoll {
 public:
  explicit PythonPoll(nb::object callback) : callback_(std::move(callback)) {}
  PythonPoll(const PythonPoll&) = delete;
  PythonPoll& operator=(const PythonPoll&) = delete;
  ~PythonPoll() {  // the GIL is held here (bindings destroy it outside their gil_scoped_release)
    Py_XDECREF(type_);
    Py_XDECREF(value_);
    Py_XDECREF(trace_);
  }

  lcn::Progress progress() {
    return [this](std::int64_t done, std::int64_t total) { poll(done, total); };
  }

  // With the GIL held, after the call threw PythonRaised: the stashed exception, raised again.
  [[noreturn]] void reraise() {
    if (type_ == nullptr) raise<Error>("lcn: the work was stopped by a Python exception that was lost");
    PyErr_Restore(type_, value_, trace_);
    type_ = value_ = trace_ = nullptr;
    throw nb::python_error();
  }

 private:
  void poll(std::int64_t done, std::int64_t total) {
    nb::gil_scoped_acquire gil;
    if (type_ != nullptr) throw PythonRaised{};  // one stashed already
    if (PyErr_CheckSignals() != 0) stash();
    if (type_ == nullptr && callback_.is_valid() && !callback_.is_none()) {
      try {
        callback_(done, total);
      } catch (nb::python_error& e) {
        e.restore();
        stash();
      }
    }
    if (type_ != nullptr) throw PythonRaised{};
  }
  void stash() { PyErr_Fetch(&type_, &value_, &trace_); }

  nb::object callback_;
  PyObject* type_ = nullptr;
  PyObject* value_ = nullptr;
  PyObject* trace_ = nullptr;
};

nb::dict figures_dict(const std::vector<lcn::CandidateFigures>& out) {
  const std::size_t count = out.size();
  std::vector<std::int64_t> k(count), at_k(count), total(count);
  std::vector<std::uint8_t> legal(count);
  for (std::size_t i = 0; i < count; ++i) {
    k[i] = out[i].k;
    at_k[i] = out[i].edges_at_k;
    total[i] = out[i].total_crossings;
    legal[i] = out[i].legal;
  }
  nb::dict d;
  d["k"] = to_numpy(k);
  d["edges_at_k"] = to_numpy(at_k);
  d["total_crossings"] = to_numpy(total);
  d["legal"] = to_numpy(legal);
  return d;
}
}  // namespace

void bind_lcn(nb::module_& m) {
  m.def("lcn_count_crossings", [](nb::ndarray<nb::ro> xy, nb::ndarray<nb::ro> edges, nb::ndarray<> counts, std::uintptr_t stream,
                                  nb::object progress) {
    const ArrayView x = python::to_view(xy, "count_crossings: xy", false, "int64"),
                    e = python::to_view(edges, "count_crossings: edges", false, "int64"),
                    c = python::to_view(counts, "count_crossings: out", false, "int64");
    PythonPoll poll(std::move(progress));
    try {
      nb::gil_scoped_release release;
      lcn::count_crossings(x, e, c, python::to_stream(stream), poll.progress());
    } catch (const PythonRaised&) {
      poll.reraise();
    }
  }, nb::arg("xy").noconvert(), nb::arg("edges").noconvert(), nb::arg("counts").noconvert(), nb::arg("stream") = 0,
     nb::arg("progress") = nb::none(),
     "Per-edge crossing counts into `counts`, on the device of the arrays (see ironkernels.lcn.count_crossings).");
  nb::class_<lcn::Evaluator>(m, "LcnEvaluator", "Per-edge crossing counts kept exact under vertex moves.")
      .def("__init__", [](lcn::Evaluator* self, IndexPairs xy, IndexPairs edges, std::int64_t width, std::int64_t height,
                          nb::object progress) {
        PythonPoll poll(std::move(progress));
        try {
          nb::gil_scoped_release release;
          new (self) lcn::Evaluator(view_of(xy), view_of(edges), width, height, poll.progress());
        } catch (const PythonRaised&) {
          poll.reraise();
        }
      }, nb::arg("xy").noconvert(), nb::arg("edges").noconvert(), nb::arg("width"), nb::arg("height"),
         nb::arg("progress") = nb::none())
      .def("edge_crossings", [](const lcn::Evaluator& e) { return to_numpy(e.edge_crossings()); })
      .def("move", &lcn::Evaluator::move, nb::arg("v"), nb::arg("x"), nb::arg("y"), nb::call_guard<nb::gil_scoped_release>())
      .def("candidates", [](const lcn::Evaluator& e, std::int64_t v, IndexPairs xy) {
        std::vector<lcn::CandidateFigures> out;
        {
          nb::gil_scoped_release release;
          out = e.candidates(v, view_of(xy));
        }
        return figures_dict(out);
      }, nb::arg("v"), nb::arg("xy").noconvert());
  nb::class_<lcn::GpuEvaluator>(m, "LcnGpuEvaluator", "The Evaluator with the drawing in CUDA device memory.")
      .def("__init__", [](lcn::GpuEvaluator* self, IndexPairs xy, IndexPairs edges, std::int64_t width,
                          std::int64_t height, int device_id, std::uintptr_t stream) {
        nb::gil_scoped_release release;
        new (self) lcn::GpuEvaluator(view_of(xy), view_of(edges), width, height, Device{DeviceType::cuda, device_id},
                                     python::to_stream(stream));
      }, nb::arg("xy").noconvert(), nb::arg("edges").noconvert(), nb::arg("width"), nb::arg("height"),
         nb::arg("device_id"), nb::arg("stream") = 0)
      .def("edge_crossings", [](const lcn::GpuEvaluator& e, std::uintptr_t stream) {
        std::vector<std::int64_t> c;
        {
          nb::gil_scoped_release release;
          c = e.edge_crossings(python::to_stream(stream));
        }
        return to_numpy(c);
      }, nb::arg("stream") = 0)
      .def("move", [](lcn::GpuEvaluator& e, std::int64_t v, std::int64_t x, std::int64_t y, std::uintptr_t stream) {
        nb::gil_scoped_release release;
        e.move(v, x, y, python::to_stream(stream));
      }, nb::arg("v"), nb::arg("x"), nb::arg("y"), nb::arg("stream") = 0)
      .def("candidates", [](const lcn::GpuEvaluator& e, std::int64_t v, IndexPairs xy, std::uintptr_t stream) {
        std::vector<lcn::CandidateFigures> out;
        {
          nb::gil_scoped_release release;
          out = e.candidates(v, view_of(xy), python::to_stream(stream));
        }
        return figures_dict(out);
      }, nb::arg("v"), nb::arg("xy").noconvert(), nb::arg("stream") = 0);

  m.def("lcn_evaluate", [](IndexPairs xy, IndexPairs edges, std::int64_t width, std::int64_t height, nb::object progress) {
    lcn::Evaluation ev;
    PythonPoll poll(std::move(progress));
    try {
      nb::gil_scoped_release release;
      ev = lcn::evaluate(view_of(xy), view_of(edges), width, height, poll.progress());
    } catch (const PythonRaised&) {
      poll.reraise();
    }
    const std::size_t nv = ev.violations.size();
    nb::list violations;
    static const char* kinds[] = {"same_point", "vertex_on_edge", "outside_grid"};
    for (std::size_t i = 0; i < nv; ++i)
      violations.append(nb::make_tuple(kinds[static_cast<int>(ev.violations[i].kind)], ev.violations[i].a, ev.violations[i].b));
    nb::dict d;
    d["edge_crossings"] = to_numpy(ev.edge_crossings);
    d["k"] = ev.k;
    d["edges_at_k"] = ev.edges_at_k;
    d["total_crossings"] = ev.total_crossings;
    d["violations"] = violations;
    return d;
  }, nb::arg("xy").noconvert(), nb::arg("edges").noconvert(), nb::arg("width"), nb::arg("height"),
     nb::arg("progress") = nb::none(),
     "Exact crossing counts and validity of a grid drawing (see ironkernels.lcn.evaluate).");

  // ---- start layouts, legalisation, lower bounds on k (ironkernels/_lcn_start.py, _lcn_bounds.py)
  m.def("lcn_legalise", [](IndexPairs xy, IndexPairs edges, std::int64_t width, std::int64_t height, std::uint64_t seed) {
    std::vector<std::int64_t> out(xy.data(), xy.data() + 2 * xy.shape(0));
    {
      nb::gil_scoped_release release;
      lcn::legalise(ArrayView::contiguous(out.data(), DType::int64, {std::int64_t(xy.shape(0)), 2}), view_of(edges),
                    width, height, seed);
    }
    return to_numpy(out);
  }, nb::arg("xy").noconvert(), nb::arg("edges").noconvert(), nb::arg("width"), nb::arg("height"), nb::arg("seed") = 0,
     "A valid drawing near xy (2n coordinates, flat int64): see ironkernels._lcn_start.legalise.");
  m.def("lcn_start_layout", [](const std::string& method, std::int64_t n, IndexPairs edges, std::int64_t width,
                               std::int64_t height, std::uint64_t seed) {
    std::vector<std::int64_t> out;
    {
      nb::gil_scoped_release release;
      out = lcn::start_layout(method, n, view_of(edges), width, height, seed);
    }
    return to_numpy(out);
  }, nb::arg("method"), nb::arg("n"), nb::arg("edges").noconvert(), nb::arg("width"), nb::arg("height"),
     nb::arg("seed") = 0, "A valid start drawing (2n coordinates, flat int64) by 'circle', 'stress' or 'random'.");
  m.def("lcn_start_layout_methods", &lcn::start_layout_methods, "The methods lcn_start_layout accepts.");
  auto planarity = [](nb::object planar) {
    if (planar.is_none()) return lcn::Planarity::unknown;
    return nb::cast<bool>(planar) ? lcn::Planarity::yes : lcn::Planarity::no;
  };
  m.def("lcn_lower_bound", [planarity](std::int64_t n, std::int64_t m, nb::object planar) {
    const lcn::KLowerBound b = lcn::k_lower_bound(n, m, planarity(planar));
    return nb::make_tuple(b.k, b.reason);
  }, nb::arg("n"), nb::arg("m"), nb::arg("planar") = nb::none(),
     "(k, reason): a lower bound on k for a simple graph of n non-isolated vertices and m edges.");
  m.def("lcn_lower_bound", [planarity](std::int64_t n, IndexPairs edges, nb::object planar) {
    const lcn::Planarity known = planarity(planar);
    lcn::KLowerBound b;
    {
      nb::gil_scoped_release release;
      b = lcn::k_lower_bound(n, view_of(edges), known);
    }
    return nb::make_tuple(b.k, b.reason);
  }, nb::arg("n"), nb::arg("edges").noconvert(), nb::arg("planar") = nb::none(),
     "(k, reason): a lower bound on k for the graph of an edge list (duplicates and isolated vertices left out).");

  // Planarity and planar straight-line grid drawings (ironkernels/lcn_planar.hpp).
  m.def("lcn_is_planar", [](IndexPairs edges, std::int64_t n) {
    nb::gil_scoped_release release;
    return lcn::is_planar(n, view_of(edges));
  }, nb::arg("edges").noconvert(), nb::arg("n"),
     "Whether the graph on n vertices with (m, 2) int64 `edges` is planar (duplicates allowed, no self-loops).");
  m.def("lcn_planar_drawing", [](IndexPairs edges, std::int64_t n) -> nb::object {
    if (n < 0) raise<ValueError>("lcn_planar_drawing: n = ", n, " is negative");
    auto* xy = new std::int64_t[n > 0 ? 2 * static_cast<std::size_t>(n) : 1];
    nb::capsule owner(xy, [](void* p) noexcept { delete[] static_cast<std::int64_t*>(p); });
    bool planar;
    {
      nb::gil_scoped_release release;
      planar = lcn::planar_grid_drawing(n, view_of(edges), ArrayView::contiguous(xy, DType::int64, {n, 2}));
    }
    if (!planar) return nb::none();
    return nb::cast(nb::ndarray<nb::numpy, std::int64_t, nb::shape<-1, 2>>(xy, {static_cast<std::size_t>(n), 2}, owner));
  }, nb::arg("edges").noconvert(), nb::arg("n"),
     "A planar straight-line drawing in [0, max(n-2, 1)]^2 as an (n, 2) int64 array, or None when the graph is "
     "not planar.");
}
