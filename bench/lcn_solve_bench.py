"""The solver's benchmark (bench_lcn.py --solve SECTION,...): lcn.solve on the corpus against the reference k.

Sections (each adds its rows to the result file, replacing earlier rows of the same section):
- corpus: every graph of lcn-corpus/index.json, `--seconds` (4) per graph, on the GPU if present;
  rows carry the reference k (one contest team's CPU solver, 20-800 s per graph) and a lower bound.
- examples: the official GD 2025 examples, 10 s each, against their sample solutions' k.
- versus: the ten largest corpus graphs, GPU for 3 s against the CPU solver (all cores) for 30 s.
- scale: grid_graph/100_100_true_true (10 000 vertices, 20 000 edges) with its vertices scattered at
  random first (init="keep"), 60 s, with the history of k.
Timing scope: the whole lcn.solve call (start layout, search, final exact check), wall clock. Every
output is checked with lcn.evaluate; `valid` is that check. Seed 0 throughout.
"""
from __future__ import annotations

import json
import os
import time

import numpy as np

from ironkernels import lcn

EXAMPLE_SAMPLES = {"15-nodes": 5, "70-nodes": 16, "100-nodes": 10, "150-nodes": 50, "225-nodes": 16, "625-nodes": 2}
EXAMPLE_TARGETS = {"15-nodes": 4, "70-nodes": 10, "100-nodes": 7, "150-nodes": 38, "225-nodes": 11}


def _row(impl, graph, d, r, **extra):
    ev = lcn.evaluate(r.drawing)
    row = {"impl": impl, "graph": graph, "nodes": d.n, "edges": d.m, "seconds": round(r.seconds, 3), "k": ev.k,
           "edges_at_k": ev.edges_at_k, "total": ev.total_crossings, "valid": ev.valid, "lower_bound": r.lower_bound,
           "lower_bound_reason": r.lower_bound_reason, "init": r.init, "start_k": r.start_evaluation.k,
           "device": r.device, "chains": r.chains, "moves": r.moves, "moves_per_s": round(r.moves_per_second),
           "busy_fraction": round(r.busy_fraction, 3), "seed": 0, "stopped": r.stopped}
    row.update(extra)
    return row


def _k_changes(history):
    """The history thinned for the result file: the start, each point where k fell 3% or more below the
    last point kept, and the end (every improvement would be thousands of rows)."""
    out = [list(history[0])]
    for h in history[1:]:
        if h[1] < 0.97 * out[-1][1] or (h[1] < out[-1][1] and h[1] < 30):
            out.append(list(h))
    if list(history[-1]) != out[-1]:
        out.append(list(history[-1]))
    return out


def _replace(rows, row):
    """Adds row, dropping an earlier row of the same section, implementation and graph."""
    same = (row["section"], row["impl"], row["graph"])
    rows[:] = [r for r in rows if (r.get("section"), r.get("impl"), r.get("graph")) != same] + [row]


def _print(row):
    ref = row.get("reference")
    mark = "" if ref is None else ("<" if row["k"] < ref else "=" if row["k"] == ref else ">")
    print(f"{row['impl']:16s} {row['graph'][:52]:52s} n={row['nodes']:6d} m={row['edges']:6d} k={row['k']:5d} "
          f"{mark}{'' if ref is None else ref:<5} lb={row['lower_bound']:<5} at={row['edges_at_k']:<5} "
          f"tot={row['total']:<8} {row['seconds']:6.1f}s {row['init']:12s} {row['moves_per_s']:.3g}/s "
          f"busy={row['busy_fraction']:.2f} valid={row['valid']}", flush=True)


def corpus(corpus_dir, device, seconds, rows, part=None, save=None):
    with open(os.path.join(corpus_dir, "index.json")) as f:
        index = json.load(f)
    if part:  # "i/N": the i-th of N consecutive slices of the index (a run split over several calls)
        i, count = map(int, part.split("/"))
        index = index[len(index) * (i - 1) // count: len(index) * i // count]
    impl = "ironkernels-gpu" if device != "cpu" else "ironkernels-cpu"
    for e in index:
        d = lcn.load(os.path.join(corpus_dir, e["file"]), self_loops="drop")
        r = lcn.solve(d, time_limit=seconds, seed=0, device=device)
        row = _row(impl, e["file"], d, r, section="corpus", time_limit=seconds, reference=e["reference_k"],
                   reference_seconds=e["reference_seconds"])
        _replace(rows, row)
        _print(row)
        if save:
            save(rows)
    mine = [r for r in rows if r.get("section") == "corpus"]
    le = sum(r["k"] <= r["reference"] for r in mine)
    lt = sum(r["k"] < r["reference"] for r in mine)
    print(f"corpus: k <= reference on {le}/{len(mine)} ({100 * le / len(mine):.0f}%), k < reference on {lt}/{len(mine)} "
          f"({100 * lt / len(mine):.0f}%), invalid outputs: {sum(not r['valid'] for r in mine)}", flush=True)


def examples(corpus_dir, device, seconds, rows):
    folder = os.path.join(corpus_dir, "gd2025-examples")
    impl = "ironkernels-gpu" if device != "cpu" else "ironkernels-cpu"
    for name in sorted(EXAMPLE_SAMPLES, key=lambda s: int(s.split("-")[0])):
        d = lcn.load(os.path.join(folder, name + ".json"))
        r = lcn.solve(d, time_limit=seconds, seed=0, device=device)
        sample = [f for f in os.listdir(folder) if f.startswith(f"sol-{name}")]
        sample_k = lcn.evaluate(lcn.load(os.path.join(folder, sample[0]))).k if sample else EXAMPLE_SAMPLES[name]
        row = _row(impl, f"gd2025-examples/{name}.json", d, r, section="examples", time_limit=seconds,
                   reference=sample_k, reference_kind="sample solution", target=EXAMPLE_TARGETS.get(name))
        _replace(rows, row)
        _print(row)


def versus(corpus_dir, device, rows, gpu_seconds=3.0, cpu_seconds=30.0, count=10):
    with open(os.path.join(corpus_dir, "index.json")) as f:
        index = sorted(json.load(f), key=lambda e: (-e["edges"], e["file"]))[:count]
    for e in index:
        d = lcn.load(os.path.join(corpus_dir, e["file"]), self_loops="drop")
        for impl, dev, s in (("ironkernels-gpu", device, gpu_seconds), ("ironkernels-cpu", "cpu", cpu_seconds)):
            if dev == "cpu" and impl == "ironkernels-gpu":
                continue
            r = lcn.solve(d, time_limit=s, seed=0, device=dev)
            row = _row(impl, e["file"], d, r, section="versus", time_limit=s, reference=e["reference_k"])
            _replace(rows, row)
            _print(row)


def scale(corpus_dir, device, rows, seconds=60.0):
    file = "gda/grid_graph/100_100_true_true.json"
    d = lcn.load(os.path.join(corpus_dir, file))
    rng = np.random.default_rng(0)
    flat = rng.choice((d.width + 1) * (d.height + 1), size=d.n, replace=False)
    d.xy = np.stack([flat % (d.width + 1), flat // (d.width + 1)], axis=1).astype(np.int64)
    impl = "ironkernels-gpu" if device != "cpu" else "ironkernels-cpu"
    r = lcn.solve(d, time_limit=seconds, seed=0, device=device, init="keep")
    row = _row(impl, file + " (scattered at random)", d, r, section="scale", time_limit=seconds,
               history=_k_changes(r.history))
    _replace(rows, row)
    _print(row)
    print("  history (s, k):", [(round(h[0], 1), h[1]) for h in r.history][:40], flush=True)


def plot(rows, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not available: no plot")
        return
    mine = [r for r in rows if r.get("section") in ("corpus", "examples") and r.get("reference") is not None]
    if not mine:
        return
    fig, ax = plt.subplots(figsize=(6.4, 6.0))
    ref = np.array([max(r["reference"], 0) for r in mine]) + 1
    got = np.array([r["k"] for r in mine]) + 1
    colors = ["#1a9641" if g < f else "#4575b4" if g == f else "#d7191c" for g, f in zip(got, ref)]
    ax.scatter(ref, got, c=colors, s=18)
    hi = max(ref.max(), got.max()) * 1.3
    ax.plot([1, hi], [1, hi], color="#888888", lw=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("reference k + 1 (index.json; sample solutions for the examples)")
    ax.set_ylabel("k + 1 found by lcn.solve")
    le = sum(g <= f for g, f in zip(got, ref))
    lt = sum(g < f for g, f in zip(got, ref))
    secs = sorted({r["time_limit"] for r in mine})
    ax.set_title(f"lcn.solve, {', '.join(f'{s:g}' for s in secs)} s per graph: k <= reference on {le}/{len(mine)}, "
                 f"k < reference on {lt}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"wrote {path}")


def run(args, hardware, write_result):
    """bench_lcn.py --solve: the sections asked for, merged into args.out (a row replaces the earlier row of
    its section, implementation and graph; the file is rewritten after every corpus graph)."""
    sections = args.solve.split(",")
    device = args.device
    rows = []
    if os.path.exists(args.out):
        with open(args.out) as f:
            rows = json.load(f).get("rows", [])
    t0 = time.perf_counter()
    for s in sections:
        if s == "corpus":
            corpus(args.corpus, device, args.seconds, rows, args.part, lambda rows: write_result(args.out, hardware, rows))
        elif s == "examples":
            examples(args.corpus, device, 10.0, rows)
        elif s == "versus":
            versus(args.corpus, device, rows)
        elif s == "scale":
            scale(args.corpus, device, rows)
        else:
            raise SystemExit(f"bench_lcn.py: --solve {s!r}; accepted: corpus, examples, versus, scale")
    print(f"solve sections {sections}: {time.perf_counter() - t0:.0f} s")
    write_result(args.out, hardware, rows)
    plot(rows, os.path.splitext(args.out)[0] + ".png")
