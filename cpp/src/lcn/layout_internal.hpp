#pragma once
// Internal entry points of the start layouts (cpp/src/lcn/layout.cpp, stress.cpp).
#include <cstdint>
#include <vector>

#include "lcn/layout_graph.hpp"

namespace ironkernels::lcn::detail {
/// A stress layout of a connected graph: n (x, y) pairs, about one unit per edge. Deterministic for
/// a seed.
std::vector<double> stress_layout(const Csr& g, std::uint64_t seed);
/// The stress layout's start alone: pivot MDS on the hop distances of 50 pivots chosen far apart.
std::vector<double> pivot_mds_layout(const Csr& g, std::uint64_t seed);
}  // namespace ironkernels::lcn::detail
