"""Plot and table of bench/results/gemm-<gpu>.json: DGEMM-equivalent TFLOP/s per shape (native, cuBLAS
emulation, ironkernels under Contract.native(), and for ironkernels and GEMMul8 the fastest configuration
whose error is no worse than native DGEMM's on the same inputs), and error against time at the largest
square shape, for one input family (the first in the file unless named) and the first round.

    python bench/plot_gemm.py bench/results/gemm-h200.json [FAMILY]
"""
from __future__ import annotations

import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


PEER_OF_NATIVE = "gemmul8 best ≤ native() err"  # ratio columns, not series of their own
EQUAL_MODULI = ("ironkernels a16", "gemmul8 a16")


def shape_of(r):
    return (r["m"], r["n"], r["k"])


def label(shape):
    m, n, k = shape
    return f"{m}³" if m == n == k else f"{m}×{n}×{k}"


def summary(doc):
    """Per shape: {series: row} for the series of the plot and the README table."""
    out = {}
    for shape in dict.fromkeys(shape_of(r) for r in doc["rows"]):
        rows = [r for r in doc["rows"] if shape_of(r) == shape]
        native = next(r for r in rows if r["impl"] == "cublas-dgemm")
        s = {"cublas-dgemm": native}
        for r in rows:
            if r["impl"].startswith("cublas-emu"):
                s[r["impl"]] = r
            if r["impl"] == "ironkernels-cuda" and r.get("contract") == "native":
                s["ironkernels native()"] = r
        for impl, name in (("ironkernels-cuda", "ironkernels best ≤ native err"), ("gemmul8", "gemmul8 best ≤ native err")):
            ok = [r for r in rows if r["impl"] == impl and r.get("contract") != "native"
                  and r["max_rel_err"] <= native["max_rel_err"]]
            if ok:
                s[name] = min(ok, key=lambda r: r["median_ms"])
        ours = s.get("ironkernels native()")
        if ours:  # GEMMul8's fastest configuration with an error no worse than ours
            ok = [r for r in rows if r["impl"] == "gemmul8" and r["max_rel_err"] <= ours["max_rel_err"]]
            if ok:
                s[PEER_OF_NATIVE] = min(ok, key=lambda r: r["median_ms"])
        for name, impl in zip(EQUAL_MODULI, ("ironkernels-cuda", "gemmul8")):  # 16 moduli, accurate, both
            same = [r for r in rows if r["impl"] == impl and r.get("contract") != "native" and r.get("moduli") == 16
                    and r.get("scaling") == "accurate"]
            if same:
                s[name] = same[0]
        out[shape] = s
    return out


def series_of(summ) -> list:
    """The implementations that appear in a summary as series, in order of first appearance."""
    return [k for k in dict.fromkeys(k for s in summ.values() for k in s) if k != PEER_OF_NATIVE and k not in EQUAL_MODULI]


def config_of(r) -> str:
    return f" ({r['scaling'][0]}{r['moduli']})" if r.get("moduli") else ""


def markdown_table(summ) -> str:
    """TFLOP/s and error per series, then native()'s speed-up over DGEMM, over cuBLAS's 55-bit emulation,
    over GEMMul8's fastest configuration with an error no worse than DGEMM's and than native()'s, and
    16 accurate moduli against GEMMul8's 16 accurate, all from the same run."""
    series = series_of(summ)
    native = "ironkernels native()"
    # (column, ours, peer, whether the peer's configuration is shown: it was chosen by its error)
    ratios = [("native() vs DGEMM", native, "cublas-dgemm", False),
              ("vs emu 55 bits", native, "cublas-emu-fixed55", False),
              ("vs GEMMul8 ≤ DGEMM err", native, "gemmul8 best ≤ native err", True),
              ("vs GEMMul8 ≤ its err", native, PEER_OF_NATIVE, True),
              ("a16 vs GEMMul8 a16", *EQUAL_MODULI, False)]
    titles = series + [title for title, *_ in ratios]
    lines = ["| shape | " + " | ".join(titles) + " |", "|---" * (len(titles) + 1) + "|"]
    for shape, s in summ.items():
        cells = []
        for name in series:
            r = s.get(name)
            if r is None:
                cells.append("—")
                continue
            cells.append(f"{r['tflops']:.1f}{config_of(r)}, {r['max_rel_err']:.1e}")
        for _, ours_name, peer, show_config in ratios:
            ours, r = s.get(ours_name), s.get(peer)
            if ours is None or r is None:
                cells.append("—")
                continue
            cells.append(f"{r['median_ms'] / ours['median_ms']:.2f}×{config_of(r) if show_config else ''}")
        lines.append(f"| {label(shape)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(path, family=None):
    doc = json.load(open(path))
    family = family or doc["rows"][0].get("family", "0.5")
    doc["rows"] = [r for r in doc["rows"] if r.get("family", "0.5") == family and r.get("round", 0) == 0]
    summ = summary(doc)
    shapes = list(summ)
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(14, 4.6))
    series = series_of(summ)
    width = 0.8 / len(series)
    for i, name in enumerate(series):
        ys = [summ[sh][name]["tflops"] if name in summ[sh] else 0 for sh in shapes]
        ax.bar([x + i * width for x in range(len(shapes))], ys, width, label=name)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(shapes))], [label(s) for s in shapes], rotation=20)
    ax.set_ylabel("DGEMM-equivalent TFLOP/s (2mnk / time)")
    ax.set_title(f"FP64 GEMM, φ = {doc['rows'][0]['phi']}, {doc['hardware']['gpu']}")
    ax.legend(fontsize=7)
    big = max((s for s in shapes if s[0] == s[1] == s[2]), key=lambda s: s[0])
    for impl, marker in (("ironkernels-cuda", "o"), ("gemmul8", "s"), ("cublas-dgemm", "*"), ("cublas-emu-fixed55", "^"),
                         ("cublas-emu-dynamic", "v")):
        pts = [(r["median_ms"], r["max_rel_err"]) for r in doc["rows"] if shape_of(r) == big and r["impl"] == impl]
        if pts:
            bx.scatter(*zip(*pts), marker=marker, label=impl)
    bx.set_xscale("log")
    bx.set_yscale("log")
    bx.set_xlabel("median ms (full call)")
    bx.set_ylabel("max relative error (sampled)")
    counts = sorted({r["moduli"] for r in doc["rows"] if shape_of(r) == big and r.get("moduli")})
    bx.set_title(f"error against time, {label(big)} ({counts[0]}–{counts[-1]} moduli, fast and accurate)")
    bx.legend(fontsize=7)
    fig.tight_layout()
    out = os.path.splitext(path)[0] + ".png"
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")
    print(markdown_table(summ))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "results", "gemm-h200.json"),
         sys.argv[2] if len(sys.argv) > 2 else None)
