// lcn: exact evaluation of grid drawings. The Python package (ironkernels/lcn.py) parses and checks
// the contest JSON; this layer takes the (n, 2) positions and (m, 2) edge endpoints.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstring>

#include "ironkernels/core/error.hpp"
#include "ironkernels/lcn.hpp"

namespace nb = nanobind;
using namespace ironkernels;

using IndexPairs = nb::ndarray<const std::int64_t, nb::shape<-1, 2>, nb::c_contig, nb::device::cpu>;

void bind_lcn(nb::module_& m) {
  m.def("lcn_evaluate", [](IndexPairs xy, IndexPairs edges, std::int64_t width, std::int64_t height) {
    lcn::Evaluation ev;
    {
      nb::gil_scoped_release release;
      ev = lcn::evaluate(xy.data(), static_cast<std::int64_t>(xy.shape(0)), edges.data(),
                         static_cast<std::int64_t>(edges.shape(0)), width, height);
    }
    const std::size_t me = ev.edge_crossings.size(), nv = ev.violations.size();
    auto* counts = new std::int64_t[me ? me : 1];
    if (me) std::memcpy(counts, ev.edge_crossings.data(), me * sizeof(std::int64_t));
    nb::capsule owner(counts, [](void* p) noexcept { delete[] static_cast<std::int64_t*>(p); });
    nb::list violations;
    static const char* kinds[] = {"same_point", "vertex_on_edge", "outside_grid"};
    for (std::size_t i = 0; i < nv; ++i)
      violations.append(nb::make_tuple(kinds[static_cast<int>(ev.violations[i].kind)], ev.violations[i].a, ev.violations[i].b));
    nb::dict d;
    d["edge_crossings"] = nb::ndarray<nb::numpy, std::int64_t, nb::ndim<1>>(counts, {me}, owner);
    d["k"] = ev.k;
    d["edges_at_k"] = ev.edges_at_k;
    d["total_crossings"] = ev.total_crossings;
    d["violations"] = violations;
    return d;
  }, nb::arg("xy").noconvert(), nb::arg("edges").noconvert(), nb::arg("width"), nb::arg("height"),
     "Exact crossing counts and validity of a grid drawing (see ironkernels.lcn.evaluate).");
}
