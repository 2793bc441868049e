"""Grid-drawing evaluator: agreement with a brute force on the whole corpus, full recount time by
graph size, and candidate positions per second.

Agreement: every graph of the corpus (index.json, gd2025-examples, tum2024; self-loops, which a few
benchmark graphs have, left out), as given and in a seeded random layout, per-edge counts of lcn.evaluate (CPU) and of the GPU kernels against an independent
NumPy brute force (all pairs, strict orientation tests), in worker processes.

Graphs: the GD 2025 examples and sample solutions as given; the largest graphs of the public benchmark
in lcn-corpus/gda (which start with every vertex at one point) in a seeded random layout on a
sqrt(n)-scaled grid; and a generated ~200 000-edge drawing (a jittered triangulated lattice plus random
local chords, so edges are short and cross a little). Timing: wall clock of one `lcn.evaluate` call
(median of repeats), CPU with all cores (and with one on the largest corpus graph); GPU
`lcn.count_crossings` on device arrays (CUDA events). Candidates: `Evaluator.candidates` for random
positions of the highest-degree vertex of the largest corpus graph, CPU (4096 positions, one thread
and all) and GPU (`Evaluator(device="cuda")`, 65536 positions; wall clock of the synchronous call).

    python bench/bench_lcn.py --corpus ../shared/lcn-corpus --out bench/results/lcn-eval-h200.json

The solver: ``--solve corpus,examples,versus,scale`` (see lcn_solve_bench.py), for example
    python bench/bench_lcn.py --solve corpus --corpus ../shared/lcn-corpus --out bench/results/lcn-h200.json
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import ironkernels  # noqa: E402
from ironkernels import lcn  # noqa: E402
from ironkernels.reference import lcn_crossing_counts  # noqa: E402
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


def agreement_job(args):
    corpus, file, seed = args
    d = lcn.load(os.path.join(corpus, file), self_loops="drop")
    out = []
    for layout, dd in (("as given", d), ("random layout", random_layout(d, np.random.default_rng(seed)))):
        ref = lcn_crossing_counts(dd.xy, dd.edges)
        out.append({"graph": file, "layout": layout, "nodes": dd.n, "edges": dd.m, "xy": dd.xy, "edge_list": dd.edges,
                    "reference": ref, "cpu_equal": bool((lcn.evaluate(dd).edge_crossings == ref).all())})
    return out


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
    ap.add_argument("--solve", help="the solver's benchmark instead: sections corpus, examples, versus, scale "
                    "(comma separated; see lcn_solve_bench.py), merged into --out")
    ap.add_argument("--device", default="auto", help="--solve: auto, cpu or cuda")
    ap.add_argument("--seconds", type=float, default=4.0, help="--solve corpus: seconds per graph")
    ap.add_argument("--part", help="--solve corpus: 'i/N', the i-th of N slices of the corpus (merged into --out)")
    args = ap.parse_args()
    if args.solve:
        import lcn_solve_bench

        hw = cpu_hardware()
        gpus = ironkernels.cuda_devices()
        if gpus:
            hw.update({"gpu": gpus[0]["name"], "sm_count": gpus[0]["sm_count"], "driver": gpus[0]["driver_version"]})
        return lcn_solve_bench.run(args, hw, write_result)
    rng = np.random.default_rng(7)
    graphs = []
    for name in sorted(os.listdir(os.path.join(args.corpus, "gd2025-examples"))):
        graphs.append((f"gd2025-examples/{name}", lcn.load(os.path.join(args.corpus, "gd2025-examples", name))))
    with open(os.path.join(args.corpus, "index.json")) as f:
        index = json.load(f)
    for r in sorted(index, key=lambda r: -r["edges"])[: args.largest]:
        graphs.append((r["file"] + " (random layout)",
                       random_layout(lcn.load(os.path.join(args.corpus, r["file"]), self_loops="drop"), rng)))
    graphs.append(("generated lattice + chords", lattice(260, 260, rng, 2000)))
    rows, threads = [], ironkernels._core.cpu_threads()
    try:
        import cupy as cp

        gpu = ironkernels.cuda_devices()
    except ImportError:
        cp, gpu = None, []
    # Agreement with the brute force on the whole corpus (worker processes; the GPU checks here).
    files = [r["file"] for r in index]
    for sub in ("gd2025-examples", "tum2024"):
        if os.path.isdir(os.path.join(args.corpus, sub)):
            files += [f"{sub}/{f}" for f in sorted(os.listdir(os.path.join(args.corpus, sub)))]
    t0 = time.perf_counter()
    with concurrent.futures.ProcessPoolExecutor() as pool:
        results = [r for job in pool.map(agreement_job, [(args.corpus, f, i) for i, f in enumerate(files)]) for r in job]
    cpu_ok = sum(r["cpu_equal"] for r in results)
    gpu_ok = 0
    for r in results if gpu else []:
        got = cp.asnumpy(lcn.count_crossings(cp.asarray(r["xy"]), cp.asarray(r["edge_list"])))
        r["gpu_equal"] = bool((got == r["reference"]).all())
        gpu_ok += r["gpu_equal"]
    for r in results:
        rows.append({"impl": "agreement", "graph": r["graph"], "layout": r["layout"], "nodes": r["nodes"],
                     "edges": r["edges"], "cpu_equal": r["cpu_equal"], "gpu_equal": r.get("gpu_equal"),
                     "reference": "NumPy brute force, all pairs, per-edge counts"})
    print(f"agreement with the brute force: CPU {cpu_ok}/{len(results)}, GPU {gpu_ok if gpu else 'n/a'}/{len(results)} "
          f"({len(files)} graphs, as given and random layout; {time.perf_counter() - t0:.0f} s)", flush=True)
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
              + "  ".join(f"{r['threads']}t {r['recount_ms']:.1f} ms" for r in rows if r["graph"] == name and "recount_ms" in r), flush=True)
    for name, d in graphs if gpu else []:  # GPU: lcn.count_crossings on device copies (CuPy), CUDA events
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
                     "scope": "lcn.count_crossings on device arrays (crossings only; all pairs below 32768 edges, "
                     "a uniform grid above), CUDA events, median of 5"})
        print(f"{name:60s} GPU {rows[-1]['recount_ms']:.2f} ms", flush=True)
    big_name, big = max(graphs[:-1], key=lambda g: g[1].m)
    evaluator = lcn.Evaluator(big)
    on_gpu = lcn.Evaluator(big, device="cuda") if gpu else None
    degrees = np.bincount(big.edges.ravel(), minlength=big.n)
    pts = np.stack([rng.integers(0, big.width + 1, 65536), rng.integers(0, big.height + 1, 65536)], 1)
    # The highest-degree vertex (the costliest: every candidate tests each of its edges against all
    # edges) and one of median degree.
    for which, v in (("highest degree", int(degrees.argmax())), ("median degree", int(np.argsort(degrees)[big.n // 2]))):
        base = {"graph": big_name, "nodes": big.n, "edges": big.m, "vertex": which, "vertex_degree": int(degrees[v])}
        for t in sorted({threads, 1}):
            ironkernels._core.set_cpu_threads(t)
            ms = timed(lambda: evaluator.candidates(v, pts[:4096]), 3)
            rows.append(dict(base, impl="ironkernels-cpu", threads=t, candidates_per_s=4096 / (ms / 1e3),
                             scope="Evaluator.candidates, 4096 random positions, wall clock"))
            print(f"candidates on {big_name}, {which} ({degrees[v]}): CPU {t} thread(s): "
                  f"{rows[-1]['candidates_per_s']:.0f} per second", flush=True)
        ironkernels._core.set_cpu_threads(threads)
        if on_gpu is not None:
            want, got = evaluator.candidates(v, pts[:4096]), on_gpu.candidates(v, pts[:4096])
            assert all((got[key] == want[key]).all() for key in want), "GPU candidates differ from the CPU"
            ms = timed(lambda: on_gpu.candidates(v, pts), 3)
            rows.append(dict(base, impl="ironkernels-gpu", candidates_per_s=len(pts) / (ms / 1e3),
                             scope="Evaluator(device='cuda').candidates, 65536 random positions, wall clock of the "
                                   "synchronous call (host arrays in and out)"))
            print(f"candidates on {big_name}, {which}: GPU {rows[-1]['candidates_per_s']:.0f} per second", flush=True)
    hw = cpu_hardware()
    if gpu:
        hw.update(gpu=gpu[0]["name"], sm_count=gpu[0]["sm_count"])
    write_result(args.out, hw, rows)


if __name__ == "__main__":
    main()
