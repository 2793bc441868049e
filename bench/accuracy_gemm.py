"""Accuracy of the emulated DGEMM: moduli count × scaling mode × input family → max relative error,
beside native float64 on the same inputs, against a long-double (or, where long double is float64,
an exact-integer-free double-double) reference. Per ../BENCHMARKS.md: every row names the reference
and the metric.

Inputs: (u - 0.5)·exp(φ·g), u uniform, g normal, φ ∈ {0.5, 1, 2, 4}, plus "rows" (each row of A and
column of B scaled by 2^e, e uniform in [-60, 60]: lines spanning wide exponent ranges).
Metrics over the sampled entries: max |C - ref| / |ref| (entries with ref = 0 skipped), max |C - ref|
and the RMS of C - ref. Every row of ours also names the moduli, the scaling, the bits kept per side
(the fewest over the lines), the elements that took the IEEE path, and for Contract.native() its
bound, its target and the spreads it was resolved from.

    python bench/accuracy_gemm.py --n 256                     # host arrays: the CPU reference
    python bench/accuracy_gemm.py --n 1024,8192,16384 --device cuda --out bench/results/gemm-accuracy-h200.json

On CUDA the inputs are drawn on the GPU (torch), native is cublasDgemm (torch.matmul) and only the
sampled rows and columns come back for the reference.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import ironkernels  # noqa: E402
from ironkernels import Contract  # noqa: E402
from _common import cpu_hardware, max_rel, sampled_reference, write_result  # noqa: E402


def errors(c, ref):
    d = (c - ref).astype(np.float64)
    return {"max_rel_err": max_rel(c, ref), "max_abs_err": float(np.max(np.abs(d))),
            "rms_err": float(np.sqrt(np.mean(d * d)))}


def inputs(n, family, xp):
    """(A, B) of one family; xp is numpy or a torch CUDA generator wrapper."""
    if family == "rows":
        a = xp.normal((n, n)) * xp.exp2_int((n, 1))
        b = xp.normal((n, n)) * xp.exp2_int((1, n))
        return a, b
    phi = float(family)
    return ((xp.uniform((n, n)) - 0.5) * xp.exp(phi * xp.normal((n, n))),
            (xp.uniform((n, n)) - 0.5) * xp.exp(phi * xp.normal((n, n))))


class NumpyDraw:
    def __init__(self, rng):
        self.rng = rng

    def normal(self, shape):
        return self.rng.standard_normal(shape)

    def uniform(self, shape):
        return self.rng.random(shape)

    def exp(self, x):
        return np.exp(x)

    def exp2_int(self, shape):
        return np.exp2(self.rng.integers(-60, 61, size=shape)).astype(np.float64)


class TorchDraw:
    def __init__(self, torch, seed):
        self.torch = torch
        self.gen = torch.Generator(device="cuda").manual_seed(seed)

    def normal(self, shape):
        return self.torch.randn(shape, generator=self.gen, device="cuda", dtype=self.torch.float64)

    def uniform(self, shape):
        return self.torch.rand(shape, generator=self.gen, device="cuda", dtype=self.torch.float64)

    def exp(self, x):
        return self.torch.exp(x)

    def exp2_int(self, shape):
        e = self.torch.randint(-60, 61, shape, generator=self.gen, device="cuda")
        return self.torch.exp2(e.to(self.torch.float64))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", default="256", help="comma-separated square sizes")
    ap.add_argument("--samples", type=int, default=64, help="rows and columns of C checked")
    ap.add_argument("--moduli", default="12,14,16,18,20")
    ap.add_argument("--families", default="0.5,1,2,4,rows")
    ap.add_argument("--scalings", default="fast,accurate,norm", help="scalings of the fixed-count rows")
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if np.finfo(np.longdouble).nmant < 63:
        sys.exit("long double is not 80-bit on this machine: the reference would not be more precise")
    cuda = args.device == "cuda"
    if cuda:
        import torch

        from _common import gpu_hardware

        hardware, impl = gpu_hardware(torch), "ironkernels-cuda"
    else:
        hardware, impl = cpu_hardware(), "ironkernels-cpu-reference"
    out = args.out or os.path.join(os.path.dirname(__file__), "results",
                                   "gemm-accuracy-h200.json" if cuda else "gemm-accuracy-cpu.json")
    rng = np.random.default_rng(2026)
    rows_out = []
    for n in (int(x) for x in args.n.split(",")):
        for fi, family in enumerate(args.families.split(",")):
            draw = TorchDraw(torch, 2026 + 100 * fi + n) if cuda else NumpyDraw(rng)
            a, b = inputs(n, family, draw)
            ri = np.sort(rng.choice(n, size=min(args.samples, n), replace=False))
            ci = np.sort(rng.choice(n, size=min(args.samples, n), replace=False))
            if cuda:
                rt, ct = torch.as_tensor(ri, device="cuda"), torch.as_tensor(ci, device="cuda")
                ref = sampled_reference(a[rt].cpu().numpy(), b[:, ct].cpu().numpy(), slice(None), slice(None))
                sample = lambda c: c[rt][:, ct].cpu().numpy()  # noqa: E731
            else:
                ref = sampled_reference(a, b, ri, ci)
                sample = lambda c: c[np.ix_(ri, ci)]  # noqa: E731
            native = errors(sample(a @ b), ref)
            base = {"family": family, "n": n, "m": n, "k": n, "reference": "long double (80-bit)",
                    "metric": "max |C-ref|/|ref|, max |C-ref|, RMS(C-ref) on sampled entries"}
            rows_out.append(dict(base, impl="cublas-dgemm" if cuda else "native-float64", moduli=None, scaling=None,
                                 **native))
            line = [f"n={n} {family:>5} native {native['max_rel_err']:.1e}"]
            keep = ("moduli", "scaling", "bits_a", "bits_b", "nonfinite_elements", "native_bound", "native_target",
                    "spread_a", "spread_b")
            contracts = [Contract.native()] + [Contract(nm, scaling) for scaling in args.scalings.split(",") if scaling
                                               for nm in (int(x) for x in args.moduli.split(","))]
            for contract in contracts:
                c, rep = ironkernels.gemm(a, b, contract=contract, report=True)
                err = errors(sample(c), ref)
                rows_out.append(dict(base, impl=impl, contract=repr(contract), **{key: rep[key] for key in keep if key in rep},
                                     **err, no_worse_than_native=err["max_rel_err"] <= native["max_rel_err"]))
                tag = f"native({rep['moduli']})" if contract.is_native else f"{contract.scaling[0]}{contract.moduli}"
                line.append(f"{tag} {err['max_rel_err']:.1e}")
            print("  ".join(line), flush=True)
            del a, b
    write_result(out, hardware, rows_out)


if __name__ == "__main__":
    main()
