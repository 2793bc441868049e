"""Plots of the FWT benchmark files: GB/s against log2 N per dtype (GPU), ns/element (CPU), and for a
batch sweep (`bench_fwt.py --batch-sweep`) our ratio to each implementation over the batches.

    python bench/plot_fwt.py bench/results/fwt-h200.json bench/results/fwt-cpu.json
    python bench/plot_fwt.py bench/results/fwt-h200-batches.json
"""
from __future__ import annotations

import json
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STYLE = {"ironkernels": ("tab:red", "o", "-"), "clone": ("black", "", "--"), "dao": ("tab:blue", "s", "-"),
         "hadacore": ("tab:green", "^", "-"), "ffht": ("tab:blue", "s", "-"), "torch": ("tab:gray", "x", "-")}


def plot_panels(doc, metric, ylabel, title, out, width, legend_at):
    """One panel per dtype: `metric` against log2 N for every implementation in the file."""
    dtypes = list(dict.fromkeys(r["dtype"] for r in doc["rows"]))
    fig, axes = plt.subplots(1, len(dtypes), figsize=(width * len(dtypes), 3.8), sharey=True)
    handles = {}
    for ax, dt in zip(axes, dtypes):
        for impl in dict.fromkeys(r["impl"] for r in doc["rows"]):
            pts = sorted((r["log2n"], r[metric]) for r in doc["rows"] if r["dtype"] == dt and r["impl"] == impl)
            if pts:
                c, m, ls = STYLE.get(impl, ("gray", ".", "-"))
                handles.setdefault(impl, ax.plot(*zip(*pts), color=c, marker=m, ls=ls, ms=4)[0])
        ax.set_title(dt)
        ax.set_xlabel("log2 N")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(ylabel)
    axes[0].legend(handles.values(), handles.keys(), fontsize=8, loc=legend_at)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def plot_gpu(doc, out):
    hw = doc["hardware"]
    plot_panels(doc, "gbps", "GB/s (one read + one write)",
                f"FWT, {hw['gpu']} ({hw['sm_count']} SMs), tensors >= 256 MB, median of 20 calls; "
                "torch.clone = copy ceiling", out, 4.2, "lower left")


def plot_cpu(doc, out):
    plot_panels(doc, "ns_per_elem", "ns per element (lower is better)",
                f"FWT on one core of {doc['hardware']['cpu']}", out, 4.5, "upper left")


def markdown_table(doc) -> str:
    """GB/s of ironkernels per (dtype, log2 N), with its ratio to clone and to the best peer."""
    by = {(r["dtype"], r["log2n"], r["impl"]): r["gbps"] for r in doc["rows"]}
    dtypes = list(dict.fromkeys(r["dtype"] for r in doc["rows"]))
    ns = sorted({r["log2n"] for r in doc["rows"]})
    lines = ["| dtype | " + " | ".join(f"2^{n}" for n in ns) + " |", "|---|" + "---|" * len(ns)]
    for dt in dtypes:
        lines.append(f"| {dt} GB/s | " + " | ".join(f"{by[(dt, n, 'ironkernels')]:.0f}" for n in ns) + " |")
        lines.append(f"| {dt} / clone | " + " | ".join(f"{by[(dt, n, 'ironkernels')] / by[(dt, n, 'clone')]:.2f}" for n in ns) + " |")
        peers = [p for p in ("dao", "hadacore") if (dt, ns[0], p) in by]
        if peers:
            cells = []
            for n in ns:
                best = max(peers, key=lambda p: by[(dt, n, p)])
                cells.append(f"{by[(dt, n, 'ironkernels')] / by[(dt, n, best)]:.2f} ({best[0]})")
            lines.append(f"| {dt} / best peer | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def sweep_ratios(doc):
    """{(dtype, log2n, impl): [ironkernels time / impl time at each batch]}, first batch first."""
    t = {(r["dtype"], r["log2n"], r["batch"], r["impl"]): r["median_ms"] for r in doc["rows"]}
    out = {}
    for (dt, n, b, impl), ms in t.items():
        if impl != "ironkernels":
            out.setdefault((dt, n, impl), []).append(ms / t[(dt, n, b, "ironkernels")])
    return out


SWEEP_YMAX = 1.12


def plot_sweep(doc, out):
    """Per dtype: our speed over each implementation's against log2 N, the median over the batches
    (marker), their range (bar) and the first batch (the plain bench's, x); medians above the scale
    as open triangles at its top (the numbers are in sweep_table)."""
    ratios = sweep_ratios(doc)
    dtypes = list(dict.fromkeys(k[0] for k in ratios))
    fig, axes = plt.subplots(1, len(dtypes), figsize=(4.2 * len(dtypes), 3.8), sharey=True, squeeze=False)
    handles = {}
    for ax, dt in zip(axes[0], dtypes):
        impls = list(dict.fromkeys(k[2] for k in ratios if k[0] == dt))
        for j, impl in enumerate(impls):
            keys = sorted(k for k in ratios if k[0] == dt and k[2] == impl)
            xs = [k[1] + 0.12 * (j - (len(impls) - 1) / 2) for k in keys]
            med = [statistics.median(ratios[k]) for k in keys]
            lo = [md - min(ratios[k]) for md, k in zip(med, keys)]
            hi = [max(ratios[k]) - md for md, k in zip(med, keys)]
            c, m, _ = STYLE.get(impl, ("gray", ".", "-"))
            handles.setdefault(f"ours / {impl}", ax.errorbar(xs, med, yerr=[lo, hi], color=c, marker=m or "o",
                                                            ls="none", ms=4, capsize=2))
            ax.plot(xs, [ratios[k][0] for k in keys], color=c, marker="x", ls="none", ms=5)
            above = [x for x, v in zip(xs, med) if v > SWEEP_YMAX]  # the scale is kept for the close calls
            ax.plot(above, [SWEEP_YMAX - 0.005] * len(above), color=c, marker="^", ls="none", ms=6, mfc="none")
        ax.set_ylim(0.88, SWEEP_YMAX)
        ax.axhline(1.0, color="gray", lw=0.8)
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.set_title(dt)
        ax.set_xlabel("log2 N")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("our speed / theirs (> 1: ours faster)")
    axes[0][0].legend(handles.values(), handles.keys(), fontsize=8, loc="lower left")
    hw = doc["hardware"]
    mb = [r["bytes"] / 2**20 for r in doc["rows"]]
    fig.suptitle(f"FWT at {doc['batch_sweep']} batches of {min(mb):.0f}-{max(mb):.0f} MB per case, {hw['gpu']}: "
                 "median (marker), range (bar), first batch (x); open triangle: above the scale", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def sweep_table(doc) -> str:
    """Our speed over each implementation's per (dtype, log2 N): at the first batch (the plain bench's),
    and the median, min and max over all."""
    ratios = sweep_ratios(doc)
    lines = ["| dtype, over | log2 N | first batch | median | min | max |", "|---|---|---|---|---|---|"]
    for (dt, n, impl), r in sorted(ratios.items()):
        lines.append(f"| {dt}, {impl} | {n} | {r[0]:.3f} | {statistics.median(r):.3f} | {min(r):.3f} | {max(r):.3f} |")
    return "\n".join(lines)


def main(paths):
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        out = os.path.splitext(path)[0] + ".png"
        if doc.get("batch_sweep"):
            plot_sweep(doc, out)
            print("wrote", out)
            print(sweep_table(doc))
            continue
        (plot_cpu if "cpu" in doc["hardware"] else plot_gpu)(doc, out)
        print("wrote", out)
        if "cpu" not in doc["hardware"]:
            print(markdown_table(doc))  # the README's table


if __name__ == "__main__":
    main(sys.argv[1:] or ["bench/results/fwt-h200.json", "bench/results/fwt-cpu.json"])
