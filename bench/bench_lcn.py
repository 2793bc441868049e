"""Grid-drawing evaluator: full recount time by graph size and candidate positions per second.

Graphs: the GD 2025 examples and sample solutions as given; the largest graphs of the public benchmark
in lcn-corpus/gda (which start with every vertex at one point) in a seeded random layout on a
sqrt(n)-scaled grid; and a generated ~200 000-edge drawing (a jittered triangulated lattice plus random
local chords, so edges are short and cross a little). Timing: wall clock of one `lcn.evaluate` call
(median of repeats), CPU with all cores (and with one on the largest corpus graph); candidates: `Evaluator.candidates` for 4096
random positions of one vertex of the largest corpus graph.

    python bench/bench_lcn.py --corpus ../shared/lcn-corpus     # -> results/lcn-eval-cpu.json
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import ironkernels  # noqa: E402
from ironkernels import lcn  # noqa: E402
from _common import cpu_hardware, write_result  # noqa: E402


def random_layout(d, rng):
    side = max(16, int(4 * np.sqrt(d.n)))
    flat = rng.choice(side * side, size=d.n, replace=False)
    return lcn.Drawing(ids=d.ids, xy=np.stack([flat % side, flat // side], axis=1).astype(np.int64), edges=d.edges,
                       width=side - 1, height=side - 1)


def lattice(rows, cols, rng, chords):
    step = 64
    yy, xx = np.mgrid[0:rows, 0:cols]
    xy = np.stack([xx.ravel() * step, yy.ravel() * step], axis=1) + rng.integers(0, step // 2, (rows * cols, 2))
    idx = np.arange(rows * cols).reshape(rows, cols)
    edges = [np.stack([idx[:, :-1].ravel(), idx[:, 1:].ravel()], 1), np.stack([idx[:-1].ravel(), idx[1:].ravel()], 1),
             np.stack([idx[:-1, :-1].ravel(), idx[1:, 1:].ravel()], 1)]
    a = rng.integers(0, rows - 2, chords) * cols + rng.integers(0, cols - 2, chords)
    edges.append(np.stack([a, a + 2 * cols + 1], 1))  # short chords over two rows: a few crossings
    e = np.unique(np.sort(np.concatenate(edges), axis=1), axis=0)
    return lcn.Drawing(ids=list(range(rows * cols)), xy=xy.astype(np.int64), edges=e.astype(np.int64),
                       width=int(xy[:, 0].max()), height=int(xy[:, 1].max()))


def timed(fn, reps):
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "lcn-corpus"))
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "lcn-eval-cpu.json"))
    ap.add_argument("--largest", type=int, default=4, help="how many of the largest gda graphs")
    args = ap.parse_args()
    rng = np.random.default_rng(7)
    graphs = []
    for name in sorted(os.listdir(os.path.join(args.corpus, "gd2025-examples"))):
        graphs.append((f"gd2025-examples/{name}", lcn.load(os.path.join(args.corpus, "gd2025-examples", name))))
    with open(os.path.join(args.corpus, "index.json")) as f:
        index = sorted(json.load(f), key=lambda r: -r["edges"])[: args.largest]
    for r in index:
        graphs.append((r["file"] + " (random layout)", random_layout(lcn.load(os.path.join(args.corpus, r["file"])), rng)))
    graphs.append(("generated lattice + chords", lattice(260, 260, rng, 2000)))
    rows, threads = [], ironkernels._core.cpu_threads()
    largest_corpus = max(graphs[:-1], key=lambda g: g[1].m)[0]
    for name, d in graphs:
        reps = 5 if d.m < 5000 else 2
        for t in sorted({threads, 1} if name == largest_corpus else {threads}):
            ironkernels._core.set_cpu_threads(t)
            ms = timed(lambda: lcn.evaluate(d), reps)
            rows.append({"impl": "ironkernels-cpu", "threads": t, "graph": name, "nodes": d.n, "edges": d.m,
                         "recount_ms": ms, "scope": "one lcn.evaluate call (crossings and validity), wall clock, median"})
        ironkernels._core.set_cpu_threads(threads)
        ev = lcn.evaluate(d)
        print(f"{name:60s} n={d.n:6d} m={d.m:6d} k={ev.k:6d} valid={ev.valid!s:5} "
              + "  ".join(f"{r['threads']}t {r['recount_ms']:.1f} ms" for r in rows if r["graph"] == name), flush=True)
    try:  # GPU: the all-pairs kernel on device copies (CuPy), CUDA events around each call
        import cupy as cp

        gpu = ironkernels.cuda_devices()
    except ImportError:
        cp, gpu = None, []
    for name, d in graphs if gpu else []:
        xy, e = cp.asarray(d.xy), cp.asarray(d.edges)
        out = cp.empty(d.m, dtype=cp.int64)
        lcn.count_crossings(xy, e, out=out)
        cp.cuda.runtime.deviceSynchronize()
        assert (cp.asnumpy(out) == lcn.evaluate(d).edge_crossings).all(), name
        times = []
        for _ in range(5):
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            lcn.count_crossings(xy, e, out=out)
            stop.record()
            stop.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, stop))
        rows.append({"impl": "ironkernels-gpu", "graph": name, "nodes": d.n, "edges": d.m, "recount_ms": statistics.median(times),
                     "scope": "lcn.count_crossings on device arrays (crossings only), CUDA events, median of 5"})
        print(f"{name:60s} GPU {rows[-1]['recount_ms']:.2f} ms", flush=True)
    big_name, big = max(graphs[:-1], key=lambda g: g[1].m)
    evaluator = lcn.Evaluator(big)
    v = int(rng.integers(big.n))
    pts = np.stack([rng.integers(0, big.width + 1, 4096), rng.integers(0, big.height + 1, 4096)], 1)
    for t in sorted({threads, 1}):
        ironkernels._core.set_cpu_threads(t)
        ms = timed(lambda: evaluator.candidates(v, pts), 3)
        rows.append({"impl": "ironkernels-cpu", "threads": t, "graph": big_name, "nodes": big.n, "edges": big.m,
                     "candidates_per_s": 4096 / (ms / 1e3), "scope": "Evaluator.candidates, 4096 positions of one vertex"})
        print(f"candidates on {big_name}: {t} thread(s): {4096 / (ms / 1e3):.0f} per second")
    ironkernels._core.set_cpu_threads(threads)
    hw = cpu_hardware()
    if gpu:
        hw.update(gpu=gpu[0]["name"], sm_count=gpu[0]["sm_count"])
    write_result(args.out, hw, rows)


if __name__ == "__main__":
    main()
