// Build and device information, CPU thread count, CUDA events.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "ironkernels/core/runtime.hpp"
#include "ndarray_view.hpp"

namespace nb = nanobind;
using namespace ironkernels;

void bind_core(nb::module_& m) {
  m.attr("__version__") = build_info().version;
  m.def("build_info", [] {
    const BuildInfo b = build_info();
    nb::dict d;
    d["version"] = b.version;
    d["cuda"] = b.cuda;
    d["cuda_version"] = b.cuda_version;
    d["cuda_archs"] = b.cuda_archs;
    d["cublas"] = b.cublas;
    d["cpu_isas"] = b.cpu_isas;
    d["cpu_isa_active"] = b.cpu_isa_active;
    return d;
  }, "How this copy was built: version, CUDA, architectures, cuBLAS, CPU kernel variants.");
  m.def("cuda_devices", [] {
    nb::list out;
    for (const auto& g : cuda_devices()) {
      nb::dict d;
      d["id"] = g.id;
      d["name"] = g.name;
      d["compute_capability"] = nb::make_tuple(g.cc_major, g.cc_minor);
      d["sm_count"] = g.sm_count;
      d["total_memory"] = g.total_memory;
      d["l2_bytes"] = g.l2_bytes;
      d["driver_version"] = g.driver_version;
      d["runtime_version"] = g.runtime_version;
      out.append(d);
    }
    return out;
  }, "CUDA devices this process sees (an empty list without CUDA, driver or GPU).");
  m.def("cpu_threads", &cpu_threads, "Threads CPU kernels use across a batch.");
  m.def("set_cpu_threads", &set_cpu_threads, nb::arg("n"), "Set the CPU thread count (>= 1).");

  nb::class_<Event>(m, "Event", "A CUDA event, for timing work on a stream.")
      .def("__init__", [](Event* e, int device) { new (e) Event(Device{DeviceType::cuda, device}); },
           nb::arg("device") = 0)
      .def("record", [](Event& e, std::uintptr_t stream) { e.record(python::to_stream(stream)); },
           nb::arg("stream") = 0)
      .def("synchronize", &Event::synchronize, nb::call_guard<nb::gil_scoped_release>())
      .def("elapsed_ms_since", &Event::elapsed_ms_since, nb::arg("start"),
           "Milliseconds from `start` to this event.");
  m.def("synchronize", [](std::uintptr_t stream, int device) {
    nb::gil_scoped_release release;
    synchronize_stream(python::to_stream(stream), Device{DeviceType::cuda, device});
  }, nb::arg("stream") = 0, nb::arg("device") = 0, "Wait for all work on a CUDA stream.");
}
