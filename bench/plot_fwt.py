"""Plots of the FWT benchmark files: GB/s against log2 N per dtype (GPU), ns/element (CPU).

    python bench/plot_fwt.py bench/results/fwt-h200.json bench/results/fwt-cpu.json
"""
from __future__ import annotations

import json
import os
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


def main(paths):
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        out = os.path.splitext(path)[0] + ".png"
        (plot_cpu if "cpu" in doc["hardware"] else plot_gpu)(doc, out)
        print("wrote", out)
        if "cpu" not in doc["hardware"]:
            print(markdown_table(doc))  # the README's table


if __name__ == "__main__":
    main(sys.argv[1:] or ["bench/results/fwt-h200.json", "bench/results/fwt-cpu.json"])
