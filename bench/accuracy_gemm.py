"""Accuracy of the emulated DGEMM: moduli count × scaling mode × input family → max relative error,
beside native float64 on the same inputs, against a long-double (or, where long double is float64,
an exact-integer-free double-double) reference. Per ../BENCHMARKS.md: every row names the reference
and the metric.

Inputs: (u - 0.5)·exp(φ·g), u uniform, g normal, φ ∈ {0.5, 1, 2, 4}, plus "rows" (each row of A and
column of B scaled by 2^e, e uniform in [-30, 30]: rows spanning wide exponent ranges).
Metric: max over sampled entries of |C - ref| / |ref| (entries with ref = 0 skipped).

    python bench/accuracy_gemm.py --n 256                     # host arrays: the CPU reference
    python bench/accuracy_gemm.py --n 8192 --device cuda      # once the CUDA backend lands
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import ironkernels  # noqa: E402
from ironkernels import Contract  # noqa: E402
from ironkernels.reference import gemm_family  # noqa: E402
from _common import cpu_hardware, write_result  # noqa: E402


def inputs(rng, n, family):
    if family == "rows":
        a = rng.standard_normal((n, n)) * np.exp2(rng.integers(-30, 31, size=(n, 1)))
        b = rng.standard_normal((n, n)) * np.exp2(rng.integers(-30, 31, size=(1, n)))
        return a, b
    return gemm_family(rng, (n, n), float(family)), gemm_family(rng, (n, n), float(family))


def sampled_reference(a, b, rows, cols):
    """Long-double products of the sampled rows and columns (exact enough: 64-bit significands)."""
    return np.matmul(a[rows].astype(np.longdouble), b[:, cols].astype(np.longdouble))


def max_rel(c, ref):
    ref = np.asarray(ref)
    mask = ref != 0
    return float(np.max(np.abs((c[mask] - ref[mask]) / ref[mask])))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--samples", type=int, default=64, help="rows and columns of C checked")
    ap.add_argument("--moduli", default="12,14,16,18,20")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "gemm-accuracy-cpu.json"))
    args = ap.parse_args()
    if np.finfo(np.longdouble).nmant < 63:
        sys.exit("long double is not 80-bit on this machine: the reference would not be more precise")
    rng = np.random.default_rng(2026)
    rows_out = []
    for family in ("0.5", "1", "2", "4", "rows"):
        a, b = inputs(rng, args.n, family)
        ri = np.sort(rng.choice(args.n, size=min(args.samples, args.n), replace=False))
        ci = np.sort(rng.choice(args.n, size=min(args.samples, args.n), replace=False))
        ref = sampled_reference(a, b, ri, ci)
        native = max_rel((a @ b)[np.ix_(ri, ci)], ref)
        rows_out.append({"impl": "native-float64", "family": family, "n": args.n, "moduli": None, "scaling": None,
                         "max_rel_err": native, "reference": "long double (80-bit)", "metric": "max |C-ref|/|ref| on sampled entries"})
        line = [f"{family:>5} native {native:.1e}"]
        for scaling in ("fast", "accurate"):
            for nm in (int(x) for x in args.moduli.split(",")):
                c = ironkernels.gemm(a, b, contract=Contract(nm, scaling))
                err = max_rel(c[np.ix_(ri, ci)], ref)
                rows_out.append({"impl": "ironkernels-cpu-reference", "family": family, "n": args.n, "moduli": nm,
                                 "scaling": scaling, "max_rel_err": err, "reference": "long double (80-bit)",
                                 "metric": "max |C-ref|/|ref| on sampled entries"})
                line.append(f"{scaling[0]}{nm} {err:.1e}")
        print("  ".join(line), flush=True)
    write_result(args.out, cpu_hardware(), rows_out)


if __name__ == "__main__":
    main()
