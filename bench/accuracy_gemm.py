"""Accuracy of the emulated DGEMM: contract × input family → errors on sampled entries of C, beside
native DGEMM on the same inputs (NumPy's BLAS on the CPU, cublasDgemm through torch.matmul on CUDA),
against a long-double (80-bit) reference. Per ../BENCHMARKS.md: every row names the reference and the
metric.

Inputs (bench/_gemm_families.py): (u - 0.5)·exp(φ·g) for any number φ (default 0.5, 1, 2, 4, 6, 8);
"rows" (rows of A, columns of B scaled by 2^e, e in [-60, 60]); "wide" (every element scaled by its own
2^e, e in [-100, 100]); "outliers" (one entry per row of A scaled by 2^60, B zero in the rows those
entries meet); "mixed10" / "mixed50" (φ = 0.5 with 10% / 50% of A's rows replaced by outlier rows).

Metrics over the sampled entries (--samples rows × columns of C): max |C - ref| / |ref| (entries with
ref = 0 skipped), max |C - ref|, RMS of C - ref, and max componentwise |C - ref| / (|A||B|)_ij, the
measure the certified contract bounds (|err| <= rtol·(|A||B|)_ij + u|C_ij|). |A||B| is computed on the
sampled rows and columns in float64: its own rounding (relative, at most about k·2^-53) is irrelevant
at the scale of the errors it divides. Each row of ours carries the same four for native DGEMM on the
same input (dgemm_*) and `no_worse_than_dgemm`: ours max relative error <= DGEMM's. Nothing else is
judged here. From the report each row also records path, moduli, certified, rtol, native_rows,
native_cols, native_elements, bits_a, bits_b, nonfinite_elements, scaling.

Contracts: Contract.native() always, plus those of --contracts, comma-separated: "native",
"rtol=1e-10", "bits=40", "moduli=15" (norm scaling) or "moduli=15:accurate" / ":fast" / ":norm".

    python bench/accuracy_gemm.py --n 256                     # host arrays: the CPU reference
    python bench/accuracy_gemm.py --n 1024,8192,16384 --device cuda --out bench/results/gemm-accuracy-h200.json
    python bench/accuracy_gemm.py --families 8,outliers,mixed10 --contracts native,rtol=1e-10,moduli=15:accurate

On CUDA the inputs are drawn on the GPU (torch), and only the sampled rows and columns come back for
the reference.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import ironkernels  # noqa: E402
from ironkernels import Contract  # noqa: E402
from _common import cpu_hardware, sampled_reference, write_result  # noqa: E402
from _gemm_families import (METRIC, NumpyDraw, TorchDraw, abs_product, describe, draw, errors,  # noqa: E402
                            family_phi, parse_families)

REPORT_KEYS = ("path", "moduli", "certified", "rtol", "native_rows", "native_cols", "native_elements", "bits_a",
               "bits_b", "nonfinite_elements", "scaling")
SCALINGS = ("fast", "accurate", "norm")


def parse_contract(spec: str) -> Contract:
    """"native" | "rtol=R" | "bits=B" | "moduli=N" (norm scaling) | "moduli=N:SCALING"."""
    if spec == "native":
        return Contract.native()
    key, _, value = spec.partition("=")
    if key == "rtol" and value:
        return Contract(rtol=float(value))
    if key == "bits" and value:
        return Contract(bits=int(value))
    if key == "moduli" and value:
        count, _, scaling = value.partition(":")
        scaling = scaling or "norm"
        if scaling not in SCALINGS:
            raise SystemExit(f"--contracts: scaling {scaling!r} in {spec!r}; accepted: {', '.join(SCALINGS)}")
        return Contract(moduli=int(count), scaling=scaling)
    raise SystemExit(f"--contracts: cannot read {spec!r}; accepted: native, rtol=R, bits=B, moduli=N[:scaling]")


def parse_contracts(text: str) -> list:
    """[(spec, Contract)], Contract.native() first whether named or not."""
    specs = [s.strip() for s in text.split(",") if s.strip()]
    specs = ["native"] + [s for s in specs if s != "native"]
    return [(s, parse_contract(s)) for s in specs]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", default="256", help="comma-separated square sizes")
    ap.add_argument("--samples", type=int, default=64, help="rows and columns of C checked")
    ap.add_argument("--families", default="0.5,1,2,4,6,8,rows,wide,outliers,mixed10,mixed50",
                    help="a number φ, rows, wide, outliers, mixed10, mixed50 (bench/_gemm_families.py)")
    ap.add_argument("--contracts", default="native,rtol=1e-13,moduli=14,moduli=16,moduli=16:accurate",
                    help="native (always measured), rtol=R, bits=B, moduli=N[:fast|accurate|norm] (default norm)")
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if np.finfo(np.longdouble).nmant < 63:
        sys.exit("long double is not 80-bit on this machine: the reference would not be more precise")
    families = parse_families(args.families)
    contracts = parse_contracts(args.contracts)
    cuda = args.device == "cuda"
    if cuda:
        import torch

        from _common import gpu_hardware

        torch.backends.cuda.matmul.allow_tf32 = False
        hardware, impl, dgemm_impl = gpu_hardware(torch), "ironkernels-cuda", "cublas-dgemm"
    else:
        hardware, impl, dgemm_impl = cpu_hardware(), "ironkernels-cpu-reference", "native-float64"
    out = args.out or os.path.join(os.path.dirname(__file__), "results",
                                   "gemm-accuracy-h200.json" if cuda else "gemm-accuracy-cpu.json")
    rng = np.random.default_rng(2026)
    rows_out = []
    for n in (int(x) for x in args.n.split(",")):
        for fi, family in enumerate(families):
            xp = TorchDraw(torch, seed=2026 + 100 * fi + n) if cuda else NumpyDraw(rng)
            a, b = draw(family, n, n, n, xp)
            ri = np.sort(rng.choice(n, size=min(args.samples, n), replace=False))
            ci = np.sort(rng.choice(n, size=min(args.samples, n), replace=False))
            if cuda:
                rt, ct = torch.as_tensor(ri, device="cuda"), torch.as_tensor(ci, device="cuda")
                a_s, b_s = a[rt].cpu().numpy(), b[:, ct].cpu().numpy()
                sample = lambda c: c[rt][:, ct].cpu().numpy()  # noqa: E731
                dgemm = torch.matmul(a, b)
            else:
                a_s, b_s = a[ri], b[:, ci]
                sample = lambda c: c[np.ix_(ri, ci)]  # noqa: E731
                dgemm = a @ b
            ref = sampled_reference(a_s, b_s, slice(None), slice(None))
            absprod = abs_product(a_s, b_s)
            native = errors(sample(dgemm), ref, absprod)
            del dgemm
            base = {"family": family, "phi": family_phi(family), "inputs": describe(family), "n": n, "m": n, "k": n,
                    "reference": "long double (80-bit) product of the sampled rows and columns", "metric": METRIC}
            rows_out.append(dict(base, impl=dgemm_impl, contract=None, **native))
            line = [f"n={n} {family:>8} dgemm {native['max_rel_err']:.1e}/{native['max_componentwise_err']:.1e}"]
            for spec, contract in contracts:
                c, rep = ironkernels.gemm(a, b, contract=contract, report=True)
                err = errors(sample(c), ref, absprod)
                del c
                rows_out.append(dict(base, impl=impl, contract=repr(contract), **{key: rep.get(key) for key in REPORT_KEYS},
                                     **err, **{"dgemm_" + key: v for key, v in native.items()},
                                     no_worse_than_dgemm=bool(err["max_rel_err"] <= native["max_rel_err"])))
                line.append(f"{spec}[{rep.get('path')} {rep.get('moduli')}] "
                            f"{err['max_rel_err']:.1e}/{err['max_componentwise_err']:.1e}")
            print("  ".join(line), flush=True)
            del a, b
    write_result(out, hardware, rows_out)


if __name__ == "__main__":
    main()
