"""CPU crossing count on one core against OGDF's `count_crossings`, in the same process.

Drawings: the corpus graph grid_graph/100_100_true_true (m = 20 000) with its vertices at distinct
uniformly random points of a 10000 × 10000 grid, the same without the edges that have a vertex on
them (general position: both sides count the same thing), the first 15 000 of its edges in that
layout, the same graph and 100_100_false_false laid out as their grids (100 units apart: short
edges), small corpus graphs in a random layout, and the random layout on the full 2^30 grid
(coordinates beyond 2^26: the double arithmetic is a filter there, int64 decides the unsure cases).

Timing: one call, median of `--reps` (`--ogdf-reps` for OGDF from 5000 edges) after one warm-up
call, wall clock and process CPU time (on a shared machine the CPU time is the steadier one), both
sides with one thread (IRONKERNELS_NUM_THREADS=1 through set_cpu_threads(1); OGDF's count is
single-threaded).
Ours: `lcn.count_crossings(xy, edges)` on NumPy arrays (crossings only) and `lcn.evaluate` (crossings
and validity). OGDF: `ogdf.count_crossings(ga)` on a GraphAttributes holding the same coordinates
(built once, outside the timing). Small graphs are timed over a loop of calls (at least ~50 ms).

OGDF counts an endpoint touching another edge's interior as a crossing, the contest (and we) do not,
so the totals are compared only where the drawing has no vertex on a non-incident edge.

    python bench/bench_lcn_cpu.py --corpus ../shared/lcn-corpus --out bench/results/lcn-cpu-vs-ogdf.json
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import ironkernels  # noqa: E402
from ironkernels import lcn  # noqa: E402
from _common import cpu_hardware, write_result  # noqa: E402


def random_points(n, side, rng):
    flat = rng.choice(side * side, size=n, replace=False)  # distinct points of a side × side grid
    return np.stack([flat % side, flat // side], axis=1).astype(np.int64)


def random_points_wide(n, side, rng):
    while True:  # distinct points of a huge grid: draw, drop repeats (practically none)
        xy = rng.integers(0, side, (n, 2), dtype=np.int64)
        if len(np.unique(xy, axis=0)) == n:
            return xy


def grid_points(d, cols, step):
    # grid_graph numbers vertex (r, c) as r * cols + c in the corpus files.
    v = np.arange(d.n)
    return np.stack([(v % cols) * step, (v // cols) * step], axis=1).astype(np.int64)


def timed(fn, reps, min_ms=50.0):
    """Median wall-clock and process CPU ms of one call: a warm-up call first, then `reps` timings,
    each over enough calls to last about min_ms (CPU time: the machine may be shared)."""
    t0 = time.perf_counter()
    fn()  # warm-up
    once = time.perf_counter() - t0
    inner = max(1, int(min_ms / 1e3 / max(once, 1e-9)))
    wall, cpu = [], []
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(inner):
            fn()
        wall.append((time.perf_counter() - t0) / inner * 1e3)
        cpu.append((time.process_time() - c0) / inner * 1e3)
    return statistics.median(wall), statistics.median(cpu)


def ogdf_attributes(ogdf, xy, edges):
    g = ogdf.Graph()
    nodes = [g.new_node() for _ in range(len(xy))]
    for s, t in edges:
        g.new_edge(nodes[s], nodes[t])
    ga = ogdf.GraphAttributes(g)
    for v, (x, y) in zip(nodes, xy):
        ga.set_x(v, float(x))
        ga.set_y(v, float(y))
    return g, ga


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "lcn-corpus"))
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "lcn-cpu-vs-ogdf.json"))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--ogdf-reps", type=int, default=3, help="repetitions of OGDF's count from 5000 edges (seconds each)")
    ap.add_argument("--no-ogdf", action="store_true", help="time ours only")
    args = ap.parse_args()
    ogdf = None
    if not args.no_ogdf:
        import ogdf  # GPL, never a dependency: installed beside the project for this comparison only
    rng = np.random.default_rng(2025)
    gdir = os.path.join(args.corpus, "gda", "grid_graph")
    torus = lcn.load(os.path.join(gdir, "100_100_true_true.json"), self_loops="drop")
    plain = lcn.load(os.path.join(gdir, "100_100_false_false.json"), self_loops="drop")
    scattered = random_points(torus.n, 10000, rng)
    cases = [
        ("grid 100x100 torus, random on 10000^2", scattered, torus.edges),
        ("grid 100x100 torus, first 15000 edges, random on 10000^2", scattered, torus.edges[:15000]),
        ("grid 100x100 torus, as its grid (step 100)", grid_points(torus, 100, 100), torus.edges),
        ("grid 100x100, as its grid (step 100)", grid_points(plain, 100, 100), plain.edges),
        ("grid 100x100 torus, random on 2^30 (beyond 2^26: double filter, int64 where unsure)",
         random_points_wide(torus.n, 2**30, rng), torus.edges),
    ]
    # The random layout without the edges that have a vertex on them: no endpoint touches another
    # edge, so OGDF's total and ours count the same thing.
    d0 = lcn.Drawing(ids=list(range(torus.n)), xy=scattered, edges=torus.edges, width=9999, height=9999)
    touched = {tuple(v[2]) for v in lcn.evaluate(d0).violations if v[0] == "vertex_on_edge"}  # (source, target)
    keep = np.array([e for e, (s, t) in enumerate(torus.edges.tolist()) if (s, t) not in touched], dtype=np.int64)
    cases.insert(1, (f"grid 100x100 torus, random on 10000^2, the {len(touched)} edges with a vertex on them dropped",
                     scattered, torus.edges[keep]))
    for name in ("circulant_graph/100_[1,2,3].json", "grid_graph/10_10_true_true.json", "grid_graph/100_10_false_false.json"):
        d = lcn.load(os.path.join(args.corpus, "gda", name), self_loops="drop")
        side = max(16, int(4 * np.sqrt(d.n)))
        cases.append((f"{name.rsplit('.', 1)[0]}, random on {side}^2", random_points(d.n, side, rng), d.edges))
    ironkernels._core.set_cpu_threads(1)
    rows = []
    for name, xy, edges in cases:
        xy, edges = np.ascontiguousarray(xy), np.ascontiguousarray(edges)
        w, h = int(xy[:, 0].max()), int(xy[:, 1].max())
        drawing = lcn.Drawing(ids=list(range(len(xy))), xy=xy, edges=edges, width=w, height=h)
        ev = lcn.evaluate(drawing)
        counts = lcn.count_crossings(xy, edges)
        assert (counts == ev.edge_crossings).all()
        ours, ours_cpu = timed(lambda: lcn.count_crossings(xy, edges), args.reps)
        ours_eval, ours_eval_cpu = timed(lambda: lcn.evaluate(drawing), args.reps)
        row = {"impl": "ironkernels-cpu vs ogdf", "threads": 1, "drawing": name, "nodes": len(xy), "edges": len(edges),
               "total_crossings": int(ev.total_crossings),
               "vertex_on_edge": sum(v[0] == "vertex_on_edge" for v in ev.violations),
               "count_crossings_ms": ours, "count_crossings_cpu_ms": ours_cpu,
               "evaluate_ms": ours_eval, "evaluate_cpu_ms": ours_eval_cpu,
               "scope": "one call, median of reps after a warm-up (wall clock, and process CPU time); ours "
                        "lcn.count_crossings on NumPy arrays (and lcn.evaluate: crossings and validity), OGDF "
                        "ogdf.count_crossings(GraphAttributes) built outside the timing"}
        line = f"{name:58s} m={len(edges):6d} ours {ours:9.3f} ms (cpu {ours_cpu:9.3f}, evaluate {ours_eval:9.3f})"
        if ogdf is not None:
            g, ga = ogdf_attributes(ogdf, xy, edges)
            theirs_total = int(ogdf.count_crossings(ga))
            reps = args.reps if len(edges) < 5000 else args.ogdf_reps
            row["ogdf_ms"], row["ogdf_cpu_ms"] = timed(lambda: ogdf.count_crossings(ga), reps)
            row["ogdf_total_crossings"] = theirs_total
            row["ratio_ours_over_ogdf"] = ours / row["ogdf_ms"]
            row["ratio_ours_over_ogdf_cpu"] = ours_cpu / row["ogdf_cpu_ms"]
            row["totals_comparable"] = row["vertex_on_edge"] == 0 and ev.valid
            row["totals_equal"] = theirs_total == int(ev.total_crossings)
            line += (f"  OGDF {row['ogdf_ms']:9.1f} ms (cpu {row['ogdf_cpu_ms']:9.1f})  ratio "
                     f"{row['ratio_ours_over_ogdf']:.4f}  totals {int(ev.total_crossings)} / {theirs_total}")
        rows.append(row)
        print(line, flush=True)
    hw = cpu_hardware()
    hw["cpu_isa_active"] = ironkernels._core.build_info()["cpu_isa_active"]
    write_result(args.out, hw, rows)


if __name__ == "__main__":
    main()
