// The annealer's host side: rounds, schedule, restarts, budget, progress and the final exact check.
#include "lcn/anneal_driver.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "ironkernels/core/error.hpp"
#include "lcn/lcn_internal.hpp"

namespace ironkernels::lcn::anneal {

namespace {

// The mean energy rise of the uphill ones among a fixed sequence of first-phase proposals on the input
// drawing (the first 64 of 256), from which the schedule's temperatures are scaled.
double mean_uphill_rise(const Problem& p, std::uint64_t seed, Backend& backend) {
  constexpr int kProposals = 256, kUphill = 64;
  Rng rng{chain_seed(seed, -3)};
  Round round;
  round.width = p.width;
  round.height = p.height;
  round.radius = std::max(1, std::max(p.width, p.height) / 2);
  round.neighbour_radius = round.radius;
  round.global_threshold = 1u << 30;
  std::vector<Proposal> q(kProposals);
  for (Proposal& x : q) x = propose(rng, round, p.view(), p.xy.data(), nullptr, 0);
  const std::vector<std::int64_t> rises = backend.probe(q, kUphill);
  double sum = 0;
  int uphill = 0;
  for (std::size_t i = 0; i < rises.size() && uphill < kUphill; ++i)
    if (rises[i] != kIllegalMove && rises[i] > 0) sum += static_cast<double>(rises[i]), ++uphill;
  return uphill ? sum / uphill : 1.0;
}

// The schedule. The first phase lowers the total number of crossings, the second k (see
// anneal_common.hpp); both cool geometrically from a start temperature proportional to the mean
// uphill rise on the input drawing down to kEndTemperature (a rise of one accepted with p = e^-2.5).
constexpr double kFirstPhase = 0.3;  // share of the budget
constexpr double kEndTemperature = 0.4;
constexpr double kSecondPhaseStart = 1.0;  // times the first phase's start temperature
constexpr std::int64_t kPenalty = 8;
constexpr int kRestartRounds = 16;
constexpr std::int64_t kMinRounds = 64;  // of a move budget

std::uint32_t probability(double p) { return static_cast<std::uint32_t>(std::ldexp(p, 32) > 4294967295.0 ? 4294967295.0 : std::ldexp(p, 32)); }

Round schedule(const Problem& p, double t0, double frac) {
  Round r;
  r.width = p.width;
  r.height = p.height;
  const bool first = frac < kFirstPhase;
  const double start = first ? t0 : t0 * kSecondPhaseStart;
  const double s = first ? frac / kFirstPhase : (frac - kFirstPhase) / (1 - kFirstPhase);
  const double end = std::min(kEndTemperature, start);
  r.temperature = start * std::pow(end / start, std::min(1.0, std::max(0.0, s)));
  r.penalty = first ? 0 : kPenalty;
  const double span = std::max(p.width, p.height);
  const double heat = std::sqrt(r.temperature / start);  // 1 at the phase's start
  r.radius = static_cast<std::int32_t>(std::max(1.0, 0.5 * span * heat));
  const double spacing = span / std::sqrt(std::max<double>(p.n, 1));
  r.neighbour_radius = static_cast<std::int32_t>(std::max(1.0, std::min<double>(r.radius, 2 * spacing)));
  r.hot_threshold = probability(first ? 0.2 : 0.5);
  r.global_threshold = probability(0.03);
  r.neighbour_threshold = probability(0.4);
  return r;
}

bool better(const Figures& a, const Figures& b) { return anneal::better(a.k, a.at_k, a.total, b.k, b.at_k, b.total); }

}  // namespace

Problem make_problem(const std::int64_t* xy, std::int64_t n, const std::int64_t* edges, std::int64_t m,
                     std::int64_t width, std::int64_t height, const char* fn) {
  if (n >= (std::int64_t(1) << 31) || m >= (std::int64_t(1) << 30))
    raise<ValueError>(fn, ": at most 2^31 - 1 vertices and 2^30 - 1 edges, got n = ", n, ", m = ", m);
  const Evaluation ev = detail::evaluate_impl(xy, n, edges, m, width, height, true);  // validates the input too
  if (!ev.valid()) {
    const Violation& v = ev.violations.front();
    const char* what = v.kind == Violation::Kind::same_point       ? "two vertices at one point"
                       : v.kind == Violation::Kind::vertex_on_edge ? "a vertex on an edge"
                                                                   : "a vertex outside the grid";
    raise<ValueError>(fn, ": the start drawing must be valid; it has ", ev.violations.size(), " violation(s), the first: ",
                      what, " (vertex ", v.a, ")");
  }
  Problem p;
  p.n = static_cast<std::int32_t>(n);
  p.m = static_cast<std::int32_t>(m);
  p.width = static_cast<std::int32_t>(width);
  p.height = static_cast<std::int32_t>(height);
  p.xy.assign(xy, xy + 2 * n);
  p.ends.assign(edges, edges + 2 * m);
  p.first.assign(static_cast<std::size_t>(n) + 1, 0);
  for (std::int64_t e = 0; e < m; ++e) ++p.first[edges[2 * e] + 1], ++p.first[edges[2 * e + 1] + 1];
  for (std::int64_t v = 0; v < n; ++v) {
    p.max_degree = std::max(p.max_degree, p.first[v + 1]);
    p.first[v + 1] += p.first[v];
  }
  p.neighbour.resize(static_cast<std::size_t>(2 * m));
  p.edge.resize(static_cast<std::size_t>(2 * m));
  std::vector<std::int32_t> fill(p.first.begin(), p.first.end() - 1);
  for (std::int32_t e = 0; e < p.m; ++e) {
    const std::int32_t s = p.ends[2 * e], t = p.ends[2 * e + 1];
    p.neighbour[fill[s]] = t, p.edge[fill[s]++] = e;
    p.neighbour[fill[t]] = s, p.edge[fill[t]++] = e;
  }
  p.counts.assign(ev.edge_crossings.begin(), ev.edge_crossings.end());
  return p;
}

std::vector<double> log_table() {
  std::vector<double> t(kLogTable);
  for (int i = 0; i < kLogTable; ++i) t[i] = -std::log((i + 0.5) / kLogTable);
  return t;
}

std::int64_t round_moves(const Problem& p) {
  // One proposal costs about 2·degree crossing tests per edge plus degree on-segment tests per vertex.
  const double degree = p.n ? 2.0 * p.m / p.n : 0;
  const double cost = (2 * p.m + p.n) * std::max(1.0, degree) + 64;
  return std::max<std::int64_t>(16, std::min<std::int64_t>(1 << 16, static_cast<std::int64_t>(2e7 / cost)));
}

SolveResult run_search(const Problem& p, const SolveOptions& options, std::int64_t chains, Backend& backend,
                       const SolveCallback& callback) {
  using clock = std::chrono::steady_clock;
  const auto t_start = clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(clock::now() - t_start).count(); };

  const Figures initial = [&] {
    Figures f;
    for (std::int32_t c : p.counts) {
      if (c > f.k) f.k = c, f.at_k = 0;
      if (c == f.k) ++f.at_k;
      f.total += c;
    }
    f.total /= 2;
    if (p.m == 0) f.at_k = 0;
    return f;
  }();
  SolveResult result;
  result.chains = chains;
  Figures best = initial;
  std::int64_t best_chain = -1;  // -1: the input drawing
  auto snapshot = [&](double t, std::int64_t moves) {
    return SolveSnapshot{t, best.k, best.at_k, best.total, moves};
  };
  result.history.push_back(snapshot(0, 0));

  const bool searchable = p.m > 0 && initial.k > 0 && (options.max_moves > 0 || options.time_limit > 0);
  std::int64_t moves = 0;
  if (searchable) {
    backend.start(chains, options.seed);
    const double t0 = std::max(1.0, mean_uphill_rise(p, options.seed, backend));
    const std::int64_t per_round = round_moves(p);
    double last_callback = -1;
    for (std::int64_t round_index = 0;; ++round_index) {
      double frac = 0;
      if (options.max_moves > 0) frac = static_cast<double>(moves) / options.max_moves;
      if (options.time_limit > 0) frac = std::max(frac, elapsed() / options.time_limit);
      if (frac >= 1) break;
      std::int64_t this_round = per_round;
      if (options.max_moves > 0)  // at least kMinRounds rounds, so that a small budget still cools down
        this_round = std::min({this_round, std::max<std::int64_t>(1, options.max_moves / (chains * kMinRounds)),
                               (options.max_moves - moves + chains - 1) / chains});
      backend.run_round(schedule(p, t0, frac), this_round);
      moves += this_round * chains;

      const std::vector<Figures> b = backend.bests();
      std::vector<std::int32_t> order(b.size());
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](std::int32_t x, std::int32_t y) { return better(b[x], b[y]); });
      if (better(b[order[0]], best)) {
        best = b[order[0]];
        best_chain = order[0];
        result.history.push_back(snapshot(elapsed(), moves));
        if (best.k == 0) break;
      }
      if (frac >= kFirstPhase && round_index % kRestartRounds == kRestartRounds - 1 && chains > 1) {
        // The worse half continues from the best quarter, spread over it.
        std::vector<std::int32_t> from(b.size(), -1);
        const std::int64_t top = std::max<std::int64_t>(1, chains / 4);
        for (std::int64_t r = chains / 2; r < chains; ++r)
          if (better(b[order[0]], b[order[r]])) from[order[r]] = order[r % top];
        backend.restart(from);
      }
      const double now = elapsed();
      if (callback && now - last_callback >= 0.2) {
        last_callback = now;
        if (!callback(snapshot(now, moves))) {
          result.stopped_by_callback = true;
          break;
        }
      }
    }
  }
  result.moves = moves;
  if (best_chain >= 0) {
    const std::vector<std::int32_t> d = backend.best_drawing(best_chain);
    result.xy.assign(d.begin(), d.end());
  } else {
    result.xy.assign(p.xy.begin(), p.xy.end());
  }
  const std::vector<std::int64_t> ends(p.ends.begin(), p.ends.end());
  result.evaluation = detail::evaluate_impl(result.xy.data(), p.n, ends.data(), p.m, p.width, p.height, true);
  const Evaluation& ev = result.evaluation;
  if (!ev.valid() || ev.k != best.k || ev.edges_at_k != best.at_k || ev.total_crossings != best.total)
    raise<Error>("lcn.solve: internal error: the best drawing's exact evaluation (k = ", ev.k, ", valid = ", ev.valid(),
                 ") differs from the search's figures (k = ", best.k, ")");
  result.seconds = elapsed();
  result.busy_fraction = result.seconds > 0 ? std::min(1.0, backend.busy_seconds() / result.seconds) : 0;
  result.history.push_back(snapshot(result.seconds, moves));
  if (callback) callback(result.history.back());
  return result;
}

}  // namespace ironkernels::lcn::anneal
