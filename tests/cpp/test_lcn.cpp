// C++ tests of the grid-drawing evaluator: crossings, shared endpoints, degenerate configurations,
// violations, and the input checks.
#include <cstring>
#include <utility>
#include <vector>

#include "check.hpp"
#include "ironkernels/ironkernels.hpp"

using namespace ironkernels;

int main() {
  {  // K4 drawn with its two diagonals crossing: one crossing pair, k = 1 on the diagonals.
    std::vector<std::int64_t> xy = {0, 0, 10, 0, 10, 10, 0, 10};
    std::vector<std::int64_t> e = {0, 1, 1, 2, 2, 3, 3, 0, 0, 2, 1, 3};
    const auto ev = lcn::evaluate(lcn_pairs(xy.data(), 4), lcn_pairs(e.data(), 6), 10, 10);
    CHECK(ev.valid() && ev.k == 1 && ev.edges_at_k == 2 && ev.total_crossings == 1, "K4: k=%lld at_k=%lld total=%lld",
          (long long)ev.k, (long long)ev.edges_at_k, (long long)ev.total_crossings);
  }
  {  // Near the coordinate limit: exact predicates (an X spanning the whole 2^30 grid).
    const std::int64_t L = lcn::kMaxCoordinate;
    std::vector<std::int64_t> xy = {0, 0, L, L, 0, L, L, 0, L / 2, L / 2 + 1};
    std::vector<std::int64_t> e = {0, 1, 2, 3};
    const auto ev = lcn::evaluate(lcn_pairs(xy.data(), 5), lcn_pairs(e.data(), 2), L, L);
    CHECK(ev.total_crossings == 1 && ev.valid(), "large X: total=%lld valid=%d", (long long)ev.total_crossings, ev.valid());
    xy[9] = L / 2;  // vertex 4 now on both diagonals
    const auto ev2 = lcn::evaluate(lcn_pairs(xy.data(), 5), lcn_pairs(e.data(), 2), L, L);
    CHECK(ev2.violations.size() == 2 && ev2.violations[0].kind == lcn::Violation::Kind::vertex_on_edge, "vertex on edges: %zu",
          ev2.violations.size());
  }
  {  // Input checks: coordinate beyond 2^30, unknown vertex, self-loop.
    std::vector<std::int64_t> xy = {0, 0, (std::int64_t(1) << 30) + 1, 0};
    std::vector<std::int64_t> e = {0, 1};
    bool threw = false;
    try {
      lcn::evaluate(lcn_pairs(xy.data(), 2), lcn_pairs(e.data(), 1), 10, 10);
    } catch (const ValueError& err) {
      threw = std::strstr(err.what(), "2^30") != nullptr;
    }
    CHECK(threw, "coordinate above 2^30");
    xy[2] = 5;
    e = {0, 2};
    threw = false;
    try {
      lcn::evaluate(lcn_pairs(xy.data(), 2), lcn_pairs(e.data(), 1), 10, 10);
    } catch (const ValueError&) {
      threw = true;
    }
    CHECK(threw, "edge to an unknown vertex");
  }
  {  // Progress: 0 first, total last, non-decreasing; a throwing callback stops the work and propagates.
    const std::int64_t n = 3000, m = 9000;
    std::vector<std::int64_t> xy(2 * n), e(2 * m);
    std::uint64_t r = 12345;
    auto next = [&r](std::int64_t mod) {
      r = r * 6364136223846793005ull + 1442695040888963407ull;
      return static_cast<std::int64_t>((r >> 33) % static_cast<std::uint64_t>(mod));
    };
    for (auto& c : xy) c = next(1 << 20);
    for (std::int64_t i = 0; i < m; ++i) {
      e[2 * i] = next(n);
      do e[2 * i + 1] = next(n); while (e[2 * i + 1] == e[2 * i]);
    }
    std::vector<std::pair<std::int64_t, std::int64_t>> calls;
    const auto with = lcn::evaluate(lcn_pairs(xy.data(), n), lcn_pairs(e.data(), m), 1 << 20, 1 << 20,
                                    [&](std::int64_t done, std::int64_t total) { calls.emplace_back(done, total); });
    const auto without = lcn::evaluate(lcn_pairs(xy.data(), n), lcn_pairs(e.data(), m), 1 << 20, 1 << 20);
    bool monotone = !calls.empty() && calls.front().first == 0 && calls.back().first == calls.back().second;
    for (std::size_t i = 1; i < calls.size(); ++i) monotone = monotone && calls[i - 1].first <= calls[i].first;
    CHECK(monotone, "progress: %zu calls, not 0 ... total in order", calls.size());
    CHECK(with.edge_crossings == without.edge_crossings && with.k == without.k, "progress changed the counts");
    struct Stop {};
    int seen = 0;
    bool stopped = false;
    try {
      lcn::evaluate(lcn_pairs(xy.data(), n), lcn_pairs(e.data(), m), 1 << 20, 1 << 20, [&](std::int64_t, std::int64_t) {
        if (++seen == 1) throw Stop{};
      });
    } catch (const Stop&) {
      stopped = true;
    }
    CHECK(stopped && seen == 1, "a throwing progress callback did not stop evaluate");
  }
  return report_and_exit_code();
}
