"""FWT on the GPU: ironkernels against torch.clone (the copy ceiling), Dao-AILab
fast-hadamard-transform and HadaCore, per ../BENCHMARKS protocol (see bench/README.md).

For each dtype and N = 2^1 … 2^15, a (batch, N) tensor of >= 256 MB (random normal), and for each
implementation the median of 20 timed calls (CUDA events around each call, calls queued back to
back, after at least 25 ms of warm-up calls). GB/s counts one read and one write of the tensor.
Peers are used when importable (build them beside the project; nothing of theirs is in this
repository), else marked not available.
Every implementation's output is checked on sampled rows against a float64 reference before timing.

    python bench/bench_fwt.py [--out bench/results/fwt-h200.json] [--mb 256] [--dtypes float32,...]
                              [--log2n 1-15] [--warmup-ms 25] [--batch-sweep K]
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(__file__))
import ironkernels  # noqa: E402
from ironkernels.reference import fwt_reference  # noqa: E402
from _common import gpu_hardware, time_cuda, write_result  # noqa: E402

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16, "float64": torch.float64}


def load_peers():
    peers = {}
    try:
        import fast_hadamard_transform_cuda as dao

        peers["dao"] = (lambda x, scale: dao.fast_hadamard_transform(x, scale), {"float32", "float16", "bfloat16"}, 1 << 15, False)
    except ImportError as e:
        print(f"dao: not available ({e})")
    try:
        import faster_hadamard_transform as hc

        # HadaCore always folds 1/sqrt(N) into its output.
        peers["hadacore"] = (lambda x, scale: hc.hadamard_transform(x, inplace=False), {"float16", "bfloat16"}, 1 << 15, True)
    except ImportError as e:
        print(f"hadacore: not available ({e})")
    return peers


def check(y, x, normalized_peer: bool, dtype: str) -> float:
    """Relative L2 error of sampled rows against float64 (peer outputs rescaled to H·x)."""
    rows = torch.from_numpy(np.linspace(0, x.shape[0] - 1, 8).astype(np.int64)).to(x.device)
    n = x.shape[-1]
    got = y[rows].double().cpu().numpy() * (math.sqrt(n) if normalized_peer else 1.0)
    ref = fwt_reference(x[rows].double().cpu().numpy())
    if not bool(torch.isfinite(y).all()):
        return float("inf")
    return float(np.linalg.norm(got - ref) / np.linalg.norm(ref))


TOL = {"float32": 1e-5, "float64": 1e-12, "float16": 3e-3, "bfloat16": 3e-2}


def measure_case(dname, log_n, batch, peers, args, rotate=0, check_outputs=True):
    """Rows of every implementation on one (dtype, N, batch). The implementations are timed in their
    listed order shifted by `rotate`, so that over a batch sweep each takes each place in the order."""
    n = 1 << log_n
    x = torch.randn(batch, n, device="cuda", dtype=torch.float32).to(DTYPES[dname])
    nbytes = x.numel() * x.element_size()
    out = torch.full_like(x, float("nan"))
    impls = {"ironkernels": (lambda: ironkernels.fwt(x, out=out), lambda: out, False),
             "clone": (lambda: x.clone(), None, None)}
    for name, (fn, dtypes, max_n, normalized) in peers.items():
        if dname in dtypes and n <= max_n:
            holder = {}
            impls[name] = ((lambda fn=fn, holder=holder: holder.__setitem__("y", fn(x, 1.0))),
                           (lambda holder=holder: holder["y"]), normalized)
    names = list(impls)
    names = names[rotate % len(names):] + names[:rotate % len(names)]
    rows = []
    for name in names:
        fn, result, normalized = impls[name]
        err = None
        if result is not None and check_outputs:
            fn()
            torch.cuda.synchronize()
            err = check(result(), x, normalized, dname)
            if not err <= TOL[dname]:
                print(f"WARNING {name} {dname} 2^{log_n}: rel err {err:.3g} above {TOL[dname]}")
        t = time_cuda(torch, fn, reps=args.reps, warmup_ms=args.warmup_ms)
        rows.append({"impl": name, "dtype": dname, "log2n": log_n, "batch": batch, "axis": -1,
                     "bytes": nbytes, **t, "gbps": 2 * nbytes / (t["median_ms"] * 1e6), "rel_err": err,
                     "scope": "one call from Python, CUDA events, calls queued back to back"})
    del x, out
    torch.cuda.empty_cache()
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None, help="default: results/fwt-h200.json (fwt-h200-batches.json "
                    "with --batch-sweep)")
    ap.add_argument("--mb", type=int, default=256)
    ap.add_argument("--dtypes", default="float32,float16,bfloat16,float64")
    ap.add_argument("--log2n", default="1-15")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup-ms", type=float, default=25.0,
                    help="GPU time of back-to-back warm-up calls per implementation and case (1000: the "
                         "sustained state, where a GPU at its power limit lowers its clocks)")
    ap.add_argument("--batch-sweep", type=int, default=0, metavar="K",
                    help="time each case at K batches from the --mb one up, in steps of 1/256 of it, "
                         "the implementations' order rotated from one batch to the next (does a ratio "
                         "hold across batches and over the minutes of a run?)")
    args = ap.parse_args()
    results = os.path.join(os.path.dirname(__file__), "results")
    out = args.out or os.path.join(results, "fwt-h200-batches.json" if args.batch_sweep else "fwt-h200.json")
    lo, hi = (int(v) for v in args.log2n.split("-"))
    peers = load_peers()
    hw = gpu_hardware(torch)
    rows = []
    torch.manual_seed(0)
    for dname in args.dtypes.split(","):
        itemsize = torch.tensor([], dtype=DTYPES[dname]).element_size()
        for log_n in range(lo, hi + 1):
            base = math.ceil((args.mb << 20) / ((1 << log_n) * itemsize))
            batches = [base + base * i // 256 for i in range(max(args.batch_sweep, 1))]
            case = []
            for i, batch in enumerate(batches):
                case += measure_case(dname, log_n, batch, peers, args, rotate=i, check_outputs=i == 0)
            rows += case
            print(summary_line(dname, log_n, case), flush=True)
    extra = {"peers": sorted(peers), "warmup_ms": args.warmup_ms}
    if args.batch_sweep:
        extra["batch_sweep"] = args.batch_sweep
    write_result(out, hw, rows, extra)


def summary_line(dname, log_n, case) -> str:
    """GB/s of each implementation and our ratio to clone; over a batch sweep, our ratio to each
    implementation at the first batch and its median, min and max over the batches."""
    batches = list(dict.fromkeys(r["batch"] for r in case))
    by = {(r["impl"], r["batch"]): r["gbps"] for r in case}
    impls = list(dict.fromkeys(r["impl"] for r in case))
    head = f"{dname:9s} 2^{log_n:<2d} batch={batches[0]:<9d}"
    if len(batches) == 1:
        line = "  ".join(f"{k}={by[(k, batches[0])]:.0f}" for k in impls)
        return f"{head} GB/s: {line}   ik/clone={by[('ironkernels', batches[0])] / by[('clone', batches[0])]:.3f}"
    parts = []
    for k in (k for k in impls if k != "ironkernels"):
        ratios = [by[("ironkernels", b)] / by[(k, b)] for b in batches]
        parts.append(f"ik/{k} {ratios[0]:.3f} (median {statistics.median(ratios):.3f}, "
                     f"{min(ratios):.3f}-{max(ratios):.3f})")
    return f"{head} {len(batches)} batches: " + "  ".join(parts)


if __name__ == "__main__":
    main()
