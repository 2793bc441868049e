#pragma once
// Error model: every failure is an ironkernels::Error. The Python bindings map TypeError and
// ValueError to the Python exceptions of the same name and everything else to RuntimeError.
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace ironkernels {

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

namespace detail {
template <class... Parts>
std::string concat(Parts&&... parts) {
  std::ostringstream os;
  (os << ... << std::forward<Parts>(parts));
  return os.str();
}
}  // namespace detail

/// Throws E with the parts of the message streamed together.
template <class E, class... Parts>
[[noreturn]] void raise(Parts&&... parts) {
  throw E(detail::concat(std::forward<Parts>(parts)...));
}

}  // namespace ironkernels
