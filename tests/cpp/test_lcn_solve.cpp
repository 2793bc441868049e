// C++ tests of the annealer: a valid result no worse than the start, reproducible move budgets, the
// callback's stop, refused inputs, and (with --gpu, on a device) the CUDA chains' path equal to the CPU's.
#include <cstring>
#include <string>
#include <vector>

#include "check.hpp"
#include "ironkernels/ironkernels.hpp"

using namespace ironkernels;

namespace {
// K_n with its vertices on a convex polygon of the grid [0, 40]² (valid: no three collinear on a circle-like
// integer polygon chosen by hand below for n <= 8).
struct Instance {
  std::vector<std::int64_t> xy, edges;
  std::int64_t n, m, side;
};
Instance complete(int n) {
  static const std::int64_t pts[][2] = {{20, 0}, {34, 6}, {40, 20}, {34, 34}, {20, 40}, {6, 34}, {0, 20}, {6, 6}};
  Instance g{{}, {}, n, 0, 40};
  for (int i = 0; i < n; ++i) g.xy.push_back(pts[i][0]), g.xy.push_back(pts[i][1]);
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) g.edges.push_back(i), g.edges.push_back(j), ++g.m;
  return g;
}
bool key_le(const lcn::Evaluation& a, const lcn::Evaluation& b) {
  if (a.k != b.k) return a.k < b.k;
  if (a.edges_at_k != b.edges_at_k) return a.edges_at_k < b.edges_at_k;
  return a.total_crossings <= b.total_crossings;
}
}  // namespace

int main(int argc, char** argv) {
  const bool gpu = argc > 1 && std::strcmp(argv[1], "--gpu") == 0;
  const Instance g = complete(8);
  const lcn::Evaluation start = lcn::evaluate(lcn_pairs(g.xy.data(), g.n), lcn_pairs(g.edges.data(), g.m), g.side, g.side);
  CHECK(start.valid() && start.k > 3, "start: valid=%d k=%lld", start.valid(), (long long)start.k);
  lcn::SolveOptions o;
  o.time_limit = 0;
  o.max_moves = 20000;
  o.seed = 3;
  o.chains = 3;
  if (gpu) {
    if (cuda_devices().empty()) return 77;
    const auto a = lcn::solve_cpu(lcn_pairs(g.xy.data(), g.n), lcn_pairs(g.edges.data(), g.m), g.side, g.side, o);
    const auto b = lcn::solve_cuda(lcn_pairs(g.xy.data(), g.n), lcn_pairs(g.edges.data(), g.m), g.side, g.side, o, Device{DeviceType::cuda, 0});
    CHECK(a.xy == b.xy && a.moves == b.moves, "CUDA chains differ from the CPU chains");
    CHECK(b.evaluation.valid(), "CUDA result invalid");
    return report_and_exit_code();
  }
  const auto a = lcn::solve_cpu(lcn_pairs(g.xy.data(), g.n), lcn_pairs(g.edges.data(), g.m), g.side, g.side, o);
  const auto b = lcn::solve_cpu(lcn_pairs(g.xy.data(), g.n), lcn_pairs(g.edges.data(), g.m), g.side, g.side, o);
  const lcn::Evaluation ev = lcn::evaluate(lcn_pairs(a.xy.data(), g.n), lcn_pairs(g.edges.data(), g.m), g.side, g.side);
  CHECK(ev.valid() && key_le(ev, start) && ev.k < start.k, "K8: valid=%d k=%lld (start %lld)", ev.valid(),
        (long long)ev.k, (long long)start.k);
  CHECK(ev.k == a.evaluation.k && ev.total_crossings == a.evaluation.total_crossings, "result's evaluation");
  CHECK(a.xy == b.xy && a.moves == b.moves && a.moves >= o.max_moves, "a move budget is reproducible");
  CHECK(a.history.front().k == start.k && a.history.back().k == ev.k, "history ends");

  int calls = 0;
  lcn::SolveOptions timed;
  timed.time_limit = 30;
  const auto c = lcn::solve_cpu(lcn_pairs(g.xy.data(), g.n), lcn_pairs(g.edges.data(), g.m), g.side, g.side, timed, [&](const lcn::SolveSnapshot&) { return ++calls < 2; });
  CHECK(c.stopped_by_callback && c.seconds < 5 && c.evaluation.valid(), "callback stop: %d %g", c.stopped_by_callback,
        c.seconds);

  std::vector<std::int64_t> bad = g.xy;
  bad[2] = bad[0], bad[3] = bad[1];  // two vertices on one point
  bool threw = false;
  try {
    lcn::solve_cpu(lcn_pairs(bad.data(), g.n), lcn_pairs(g.edges.data(), g.m), g.side, g.side, o);
  } catch (const ValueError& e) {
    threw = std::string(e.what()).find("must be valid") != std::string::npos;
  }
  CHECK(threw, "an invalid start drawing is refused");
  return report_and_exit_code();
}
