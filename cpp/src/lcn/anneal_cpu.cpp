// The annealer's chains on the CPU: one chain at a time per thread, each proposal scored exactly by
// sweeping the edges once (O(degree · m)) and the vertices once for legality (O(degree · n)).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/threads.hpp"
#include "ironkernels/core/error.hpp"
#include "ironkernels/core/runtime.hpp"
#include "ironkernels/lcn_solve.hpp"
#include "lcn/anneal_driver.hpp"
#include "lcn/lcn_internal.hpp"

namespace ironkernels::lcn {
namespace anneal {
namespace {

using detail::Box;
using detail::box_of;
using detail::boxes_meet;
using detail::cross_properly;
using detail::on_segment;
using Pt = detail::Point;

class Chain {
 public:
  void start(const Problem& p, std::uint64_t seed) {
    p_ = &p;
    g_ = p.view();
    rng_ = Rng{seed};
    pos_ = p.xy;
    counts_ = p.counts;
    best_pos_ = pos_;
    best_counts_ = counts_;
    delta_.assign(p.m, 0);
    touched_.clear();
    refresh();
    best_ = cur_;
    target_ = best_.k - 1;
    penalty_ = 0;
  }

  /// Scores moving v to (x, y): false if illegal, else the energy rise in `rise`; the new counts of v's
  /// edges in new_inc_, the changes of the others in delta_ at touched_.
  bool score(const Proposal& q, std::int64_t& rise) {
    const Problem& p = *p_;
    const std::int32_t v = q.v, b = g_.first[v], deg = g_.first[v + 1] - b;
    const Pt old_v{pos_[2 * v], pos_[2 * v + 1]}, new_v{q.x, q.y};
    touched_.clear();
    if (old_v.x == new_v.x && old_v.y == new_v.y) return rise = 0, true;
    nbr_.resize(deg);
    for (std::int32_t j = 0; j < deg; ++j) {
      const std::int32_t w = g_.neighbour[b + j];
      const Pt pw{pos_[2 * w], pos_[2 * w + 1]};
      nbr_[j] = {w, pw, box_of(old_v, pw), box_of(new_v, pw)};
    }
    // Legality against the vertices: none at the new point, none on v's new edges.
    for (std::int32_t u = 0; u < p.n; ++u) {
      if (u == v) continue;
      const Pt pu{pos_[2 * u], pos_[2 * u + 1]};
      if (pu.x == new_v.x && pu.y == new_v.y) return false;
      for (const Nbr& nb : nbr_)
        if (u != nb.w && on_segment(pu, new_v, nb.p)) return false;
    }
    new_inc_.assign(deg, 0);
    rise = 0;
    for (std::int32_t f = 0; f < p.m; ++f) {
      const std::int32_t s = g_.ends[2 * f], t = g_.ends[2 * f + 1];
      if (s == v || t == v) continue;
      const Pt c{pos_[2 * s], pos_[2 * s + 1]}, d{pos_[2 * t], pos_[2 * t + 1]};
      const Box box = box_of(c, d);
      if (on_segment(new_v, c, d)) return false;
      std::int32_t change = 0;
      for (std::int32_t j = 0; j < deg; ++j) {
        const Nbr& nb = nbr_[j];
        if (s == nb.w || t == nb.w) continue;  // shares an endpoint: never crosses
        const bool was = boxes_meet(nb.old_box, box) && cross_properly(old_v, nb.p, c, d);
        const bool now = boxes_meet(nb.new_box, box) && cross_properly(new_v, nb.p, c, d);
        change += static_cast<std::int32_t>(now) - static_cast<std::int32_t>(was);
        new_inc_[j] += now;
      }
      if (change != 0) {
        delta_[f] = change;
        touched_.push_back(f);
        rise += edge_energy(counts_[f] + change, target_, penalty_) - edge_energy(counts_[f], target_, penalty_);
      }
    }
    for (std::int32_t j = 0; j < deg; ++j) {
      const std::int32_t e = g_.edge[b + j];
      rise += edge_energy(new_inc_[j], target_, penalty_) - edge_energy(counts_[e], target_, penalty_);
    }
    return true;
  }

  void apply(const Proposal& q) {
    const std::int32_t b = g_.first[q.v], deg = g_.first[q.v + 1] - b;
    if (pos_[2 * q.v] == q.x && pos_[2 * q.v + 1] == q.y) return;
    for (std::int32_t f : touched_) counts_[f] += delta_[f];
    for (std::int32_t j = 0; j < deg; ++j) counts_[g_.edge[b + j]] = new_inc_[j];
    pos_[2 * q.v] = q.x;
    pos_[2 * q.v + 1] = q.y;
    refresh();
    if (better(cur_.k, cur_.at_k, cur_.total, best_.k, best_.at_k, best_.total)) {
      best_ = cur_;
      best_pos_ = pos_;
      best_counts_ = counts_;
      target_ = std::min(target_, best_.k - 1);
    }
  }

  void run(const Round& round, std::int64_t moves, const double* log_table) {
    penalty_ = round.penalty;
    for (std::int64_t i = 0; i < moves; ++i) {
      const Proposal q = propose(rng_, round, g_, pos_.data(), hot_.data(), static_cast<std::int32_t>(hot_.size()));
      std::int64_t rise = 0;
      if (score(q, rise) && accept(rng_, rise, round.temperature, log_table)) apply(q);
    }
  }

  /// A chain's best drawing, its counts and figures: what another chain restarts from.
  struct Best {
    std::vector<std::int32_t> pos, counts;
    Figures figures;
  };
  Best best_state() const { return {best_pos_, best_counts_, best_}; }

  void restart_from(const Best& b) {
    pos_ = best_pos_ = b.pos;
    counts_ = best_counts_ = b.counts;
    best_ = b.figures;
    target_ = best_.k - 1;
    refresh();
  }

  Figures best() const { return best_; }
  const std::vector<std::int32_t>& best_drawing() const { return best_pos_; }

 private:
  struct Nbr {
    std::int32_t w;
    Pt p;
    Box old_box, new_box;
  };

  // The current figures and the edges at the current k, in edge order.
  void refresh() {
    Figures f;
    for (std::int32_t c : counts_) {
      if (c > f.k) f.k = c;
      f.total += c;
    }
    f.total /= 2;
    hot_.clear();
    for (std::int32_t e = 0; e < g_.m; ++e)
      if (counts_[e] == f.k) hot_.push_back(e);
    f.at_k = static_cast<std::int64_t>(hot_.size());
    cur_ = f;
  }

  const Problem* p_ = nullptr;
  GraphView g_;
  Rng rng_{0};
  std::vector<std::int32_t> pos_, counts_, best_pos_, best_counts_, delta_, touched_, new_inc_, hot_;
  std::vector<Nbr> nbr_;
  Figures cur_, best_;
  std::int64_t target_ = 0, penalty_ = 0;
};

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(const Problem& p) : p_(p), log_table_(log_table()) {}
  void start(std::int64_t chains, std::uint64_t seed) override {
    chains_.assign(static_cast<std::size_t>(chains), Chain{});
    for (std::int64_t c = 0; c < chains; ++c) chains_[c].start(p_, chain_seed(seed, c));
  }
  void run_round(const Round& round, std::int64_t moves) override {
    ironkernels::detail::parallel_for(static_cast<std::int64_t>(chains_.size()), 1, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t c = b; c < e; ++c) chains_[c].run(round, moves, log_table_.data());
    });
  }
  std::vector<std::int64_t> probe(const std::vector<Proposal>& q, int uphill) override {
    // In batches of one proposal per thread, until enough are uphill.
    const std::size_t batch = static_cast<std::size_t>(std::max(1, cpu_threads()));
    std::vector<std::int64_t> rises;
    int found = 0;
    for (std::size_t b0 = 0; b0 < q.size() && found < uphill; b0 += batch) {
      const std::size_t b1 = std::min(q.size(), b0 + batch);
      rises.resize(b1);
      ironkernels::detail::parallel_for(static_cast<std::int64_t>(b1 - b0), 1, [&](std::int64_t b, std::int64_t e) {
        Chain chain;
        chain.start(p_, 0);
        for (std::size_t i = b0 + b; i < b0 + e; ++i) {
          std::int64_t rise = 0;
          rises[i] = chain.score(q[i], rise) ? rise : kIllegalMove;
        }
      });
      for (std::size_t i = b0; i < b1; ++i) found += rises[i] != kIllegalMove && rises[i] > 0;
    }
    return rises;
  }
  std::vector<Figures> bests() override {
    std::vector<Figures> b;
    for (const Chain& c : chains_) b.push_back(c.best());
    return b;
  }
  void restart(const std::vector<std::int32_t>& from) override {
    // Sources' bests first copied, so a chain that is both a source and restarted gives its old best.
    std::vector<Chain::Best> sources;
    std::vector<std::int32_t> index(chains_.size(), -1);
    for (std::size_t c = 0; c < from.size(); ++c)
      if (from[c] >= 0 && index[from[c]] < 0)
        index[from[c]] = static_cast<std::int32_t>(sources.size()), sources.push_back(chains_[from[c]].best_state());
    for (std::size_t c = 0; c < from.size(); ++c)
      if (from[c] >= 0) chains_[c].restart_from(sources[index[from[c]]]);
  }
  std::vector<std::int32_t> best_drawing(std::int64_t c) override { return chains_[c].best_drawing(); }

 private:
  const Problem& p_;
  std::vector<double> log_table_;
  std::vector<Chain> chains_;
};

}  // namespace

}  // namespace anneal

SolveResult solve_cpu(const ArrayView& xy_view, const ArrayView& edge_view, std::int64_t width, std::int64_t height,
                      const SolveOptions& options, const SolveCallback& callback) {
  const std::int64_t* xy = detail::host_pairs(xy_view, "xy");
  const std::int64_t* edges = detail::host_pairs(edge_view, "edges");
  const std::int64_t n = xy_view.shape[0], m = edge_view.shape[0];
  if (options.chains < 0) raise<ValueError>("lcn.solve: chains must be >= 0, got ", options.chains);
  if (options.max_moves < 0) raise<ValueError>("lcn.solve: max_moves must be >= 0, got ", options.max_moves);
  const anneal::Problem p = anneal::make_problem(xy, n, edges, m, width, height, "lcn.solve");
  const std::int64_t chains = options.chains > 0 ? options.chains : cpu_threads();
  anneal::CpuBackend backend(p);
  return anneal::run_search(p, options, chains, backend, callback);
}

}  // namespace ironkernels::lcn
