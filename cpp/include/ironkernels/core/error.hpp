#pragma once
// Error model: every failure is an ironkernels::Error. The Python bindings map TypeError and
// ValueError to the Python exceptions of the same name and everything else to RuntimeError.
#include <cstdio>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "ironkernels/core/export.hpp"

namespace IRONKERNELS_EXPORT ironkernels {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
/// An argument of the wrong kind: dtype, device, framework.
class TypeError : public Error {
 public:
  using Error::Error;
};
/// An argument of the right kind with a bad value: shape, size, stride, range, aliasing.
class ValueError : public Error {
 public:
  using Error::Error;
};
/// A CUDA runtime or library call failed; the message names the call and the error.
class CudaError : public Error {
 public:
  using Error::Error;
};
/// The operation needs something this build or machine does not have (e.g. CUDA).
class UnsupportedError : public Error {
 public:
  using Error::Error;
};

namespace IRONKERNELS_HIDDEN detail {
// Message formatting without iostreams: the library may share a process with another copy of
// libstdc++ (PyTorch's, say) whose locale state iostreams would depend on.
inline void append(std::string& s, const std::string& v) { s += v; }
inline void append(std::string& s, const char* v) { s += v; }
inline void append(std::string& s, char v) { s += v; }
inline void append(std::string& s, bool v) { s += v ? "true" : "false"; }
template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
void append(std::string& s, T v) {
  if constexpr (std::is_floating_point_v<T>) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", static_cast<double>(v));
    s += buf;
  } else {
    s += std::to_string(v);
  }
}
template <class... Parts>
std::string concat(const Parts&... parts) {
  std::string s;
  (append(s, parts), ...);
  return s;
}
}  // namespace detail

/// Throws E with the parts of the message streamed together.
template <class E, class... Parts>
[[noreturn]] IRONKERNELS_HIDDEN void raise(Parts&&... parts) {
  throw E(detail::concat(parts...));
}

}  // namespace ironkernels
