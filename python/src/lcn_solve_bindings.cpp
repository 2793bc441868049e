// lcn solver: the annealer on the CPU or a CUDA device. ironkernels/lcn.py picks the start drawing,
// checks the arguments and builds the Result; this layer runs the search with the GIL released and
// polls Python between rounds (Ctrl-C, the user's callback).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <string>
#include <vector>

#include "ironkernels/core/error.hpp"
#include "ironkernels/lcn_solve.hpp"
#include "numpy_out.hpp"

namespace nb = nanobind;
using namespace ironkernels;

namespace {
using IndexPairs = nb::ndarray<const std::int64_t, nb::shape<-1, 2>, nb::c_contig, nb::device::cpu>;

nb::dict snapshot_dict(const lcn::SolveSnapshot& s) {
  nb::dict d;
  d["seconds"] = s.seconds;
  d["k"] = s.k;
  d["edges_at_k"] = s.edges_at_k;
  d["total_crossings"] = s.total_crossings;
  d["moves"] = s.moves;
  return d;
}

// The SolveCallback of a search run with the GIL released: Ctrl-C stops it (the best drawing is still
// returned, marked interrupted); the user's callback(snapshot) returning False stops it; an exception
// from the callback is stashed, stops the search and is raised again once it has returned.
class SolvePoll {
 public:
  explicit SolvePoll(nb::object callback) : callback_(std::move(callback)) {}
  ~SolvePoll() {
    Py_XDECREF(type_);
    Py_XDECREF(value_);
    Py_XDECREF(trace_);
  }
  lcn::SolveCallback callback() {
    return [this](const lcn::SolveSnapshot& s) { return poll(s); };
  }
  bool interrupted() const { return interrupted_; }
  void reraise_if_any() {
    if (type_ == nullptr) return;
    PyErr_Restore(type_, value_, trace_);
    type_ = value_ = trace_ = nullptr;
    throw nb::python_error();
  }

 private:
  bool poll(const lcn::SolveSnapshot& s) {
    nb::gil_scoped_acquire gil;
    if (type_ != nullptr || interrupted_) return false;
    if (PyErr_CheckSignals() != 0) return stop();
    if (!callback_.is_valid() || callback_.is_none()) return true;
    try {
      nb::object r = callback_(snapshot_dict(s));
      return r.is_none() || nb::cast<bool>(r);
    } catch (nb::python_error& e) {
      e.restore();
      return stop();
    }
  }
  // With a Python error set: Ctrl-C marks the search interrupted (the best drawing is still returned),
  // anything else is kept to be raised again. Either way the search stops.
  bool stop() {
    if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) {
      PyErr_Clear();
      interrupted_ = true;
    } else {
      PyErr_Fetch(&type_, &value_, &trace_);
    }
    return false;
  }
  nb::object callback_;
  bool interrupted_ = false;
  PyObject* type_ = nullptr;
  PyObject* value_ = nullptr;
  PyObject* trace_ = nullptr;
};
}  // namespace

void bind_lcn_solve(nb::module_& m) {
  m.def("lcn_solve", [](IndexPairs xy, IndexPairs edges, std::int64_t width, std::int64_t height,
                        const std::string& device, int device_id, double time_limit, std::int64_t max_moves,
                        std::uint64_t seed, std::int64_t chains, nb::object callback) {
    lcn::SolveOptions options;
    options.time_limit = time_limit;
    options.max_moves = max_moves;
    options.seed = seed;
    options.chains = chains;
    SolvePoll poll(std::move(callback));
    lcn::SolveResult r;
    {
      nb::gil_scoped_release release;
      const ArrayView xv = ArrayView::contiguous(const_cast<std::int64_t*>(xy.data()), DType::int64,
                                                 {std::int64_t(xy.shape(0)), 2});
      const ArrayView ev = ArrayView::contiguous(const_cast<std::int64_t*>(edges.data()), DType::int64,
                                                 {std::int64_t(edges.shape(0)), 2});
      if (device == "cuda")
        r = lcn::solve_cuda(xv, ev, width, height, options, Device{DeviceType::cuda, device_id}, nullptr, poll.callback());
      else
        r = lcn::solve_cpu(xv, ev, width, height, options, poll.callback());
    }
    poll.reraise_if_any();
    nb::list history;
    for (const auto& s : r.history) history.append(snapshot_dict(s));
    nb::dict d;
    d["xy"] = python::to_numpy<std::int64_t, 2>(r.xy, 2);
    d["edge_crossings"] = python::to_numpy(r.evaluation.edge_crossings);
    d["k"] = r.evaluation.k;
    d["edges_at_k"] = r.evaluation.edges_at_k;
    d["total_crossings"] = r.evaluation.total_crossings;
    d["history"] = history;
    d["moves"] = r.moves;
    d["seconds"] = r.seconds;
    d["busy_fraction"] = r.busy_fraction;
    d["chains"] = r.chains;
    d["interrupted"] = poll.interrupted();
    d["stopped_by_callback"] = r.stopped_by_callback && !poll.interrupted();
    return d;
  }, nb::arg("xy").noconvert(), nb::arg("edges").noconvert(), nb::arg("width"), nb::arg("height"), nb::arg("device"),
     nb::arg("device_id"), nb::arg("time_limit"), nb::arg("max_moves"), nb::arg("seed"), nb::arg("chains"),
     nb::arg("callback") = nb::none(),
     "Simulated annealing of a valid grid drawing (see ironkernels.lcn.solve).");
}
