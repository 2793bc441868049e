// Uses the installed library: transforms a few rows on the CPU and checks H·H = N·I.
#include <cmath>
#include <cstdio>
#include <vector>

#include <ironkernels/ironkernels.hpp>

int main() {
  const std::int64_t rows = 4, n = 1024;
  std::vector<double> x(rows * n), y;
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.1 * double(i));
  y = x;
  ironkernels::fwt_inplace(y.data(), rows, n);  // y = H x
  ironkernels::fwt_inplace(y.data(), rows, n);  // y = H H x = N x
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) worst = std::fmax(worst, std::fabs(y[i] / double(n) - x[i]));
  try {  // a bad call raises a precise error
    ironkernels::fwt_inplace(y.data(), 2, 3);
  } catch (const ironkernels::ValueError& e) {
    std::printf("expected error: %s\n", e.what());
  }
  const auto info = ironkernels::build_info();
  std::printf("ironkernels %s (CUDA %s), max |H·H·x/N - x| = %.3g\n", info.version.c_str(),
              info.cuda ? "on" : "off", worst);
  return worst < 1e-12 ? 0 : 1;
}
