#pragma once
// Results handed to Python as NumPy arrays that own a copy of a C++ vector. Shared by the binding files.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <algorithm>
#include <vector>

namespace ironkernels::python {

namespace nb = nanobind;

/// A NumPy copy of v: shape (v.size(),), or (v.size() / cols, cols) with Ndim = 2.
template <class T, std::size_t Ndim = 1>
nb::ndarray<nb::numpy, T, nb::ndim<Ndim>> to_numpy(const std::vector<T>& v, std::size_t cols = 1) {
  static_assert(Ndim == 1 || Ndim == 2);
  auto* data = new T[v.empty() ? 1 : v.size()];
  std::copy(v.begin(), v.end(), data);
  nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<T*>(p); });
  if constexpr (Ndim == 1) {
    return nb::ndarray<nb::numpy, T, nb::ndim<1>>(data, {v.size()}, owner);
  } else {
    return nb::ndarray<nb::numpy, T, nb::ndim<2>>(data, {v.size() / cols, cols}, owner);
  }
}

}  // namespace ironkernels::python
