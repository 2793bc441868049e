"""FWT on the GPU: ironkernels against torch.clone (the copy ceiling), Dao-AILab
fast-hadamard-transform and HadaCore, per ../BENCHMARKS protocol (see bench/README.md).

For each dtype and N = 2^1 … 2^15, a (batch, N) tensor of >= 256 MB (random normal), and for each
implementation the median of 20 timed calls (CUDA events around each call, calls queued back to
back, after at least 25 ms of warm-up calls). GB/s counts one read and one write of the tensor.
Peers are used when importable (build them beside the project; nothing of theirs is in this
repository), else marked not available.
Every implementation's output is checked on sampled rows against a float64 reference before timing.

    python bench/bench_fwt.py [--out bench/results/fwt-h200.json] [--mb 256] [--dtypes float32,...]
                              [--log2n 1-15] [--warmup-ms 25]
"""
from __future__ import annotations

import argparse
import math
import os
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "fwt-h200.json"))
    ap.add_argument("--mb", type=int, default=256)
    ap.add_argument("--dtypes", default="float32,float16,bfloat16,float64")
    ap.add_argument("--log2n", default="1-15")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup-ms", type=float, default=25.0,
                    help="GPU time of back-to-back warm-up calls per implementation and case (1000: the "
                         "sustained state, where a GPU at its power limit lowers its clocks)")
    args = ap.parse_args()
    lo, hi = (int(v) for v in args.log2n.split("-"))
    peers = load_peers()
    hw = gpu_hardware(torch)
    rows = []
    torch.manual_seed(0)
    for dname in args.dtypes.split(","):
        dt = DTYPES[dname]
        itemsize = torch.tensor([], dtype=dt).element_size()
        for log_n in range(lo, hi + 1):
            n = 1 << log_n
            batch = math.ceil((args.mb << 20) / (n * itemsize))
            x = torch.randn(batch, n, device="cuda", dtype=torch.float32).to(dt)
            nbytes = x.numel() * itemsize
            out = torch.full_like(x, float("nan"))
            impls = {"ironkernels": (lambda: ironkernels.fwt(x, out=out), lambda: out, False),
                     "clone": (lambda: x.clone(), None, None)}
            for name, (fn, dtypes, max_n, normalized) in peers.items():
                if dname in dtypes and n <= max_n:
                    holder = {}
                    impls[name] = ((lambda fn=fn, holder=holder: holder.__setitem__("y", fn(x, 1.0))),
                                   (lambda holder=holder: holder["y"]), normalized)
            for name, (fn, result, normalized) in impls.items():
                err = None
                if result is not None:
                    fn()
                    torch.cuda.synchronize()
                    err = check(result(), x, normalized, dname)
                    if not err <= TOL[dname]:
                        print(f"WARNING {name} {dname} 2^{log_n}: rel err {err:.3g} above {TOL[dname]}")
                t = time_cuda(torch, fn, reps=args.reps, warmup_ms=args.warmup_ms)
                row = {"impl": name, "dtype": dname, "log2n": log_n, "batch": batch, "axis": -1,
                       "bytes": nbytes, **t, "gbps": 2 * nbytes / (t["median_ms"] * 1e6), "rel_err": err,
                       "scope": "one call from Python, CUDA events, calls queued back to back"}
                rows.append(row)
            by = {r["impl"]: r for r in rows if r["dtype"] == dname and r["log2n"] == log_n}
            clone = by["clone"]["gbps"]
            line = "  ".join(f"{k}={v['gbps']:.0f}" for k, v in by.items())
            print(f"{dname:9s} 2^{log_n:<2d} batch={batch:<9d} GB/s: {line}   ik/clone={by['ironkernels']['gbps'] / clone:.3f}", flush=True)
            del x, out
            torch.cuda.empty_cache()
    write_result(args.out, hw, rows, {"peers": sorted(peers), "warmup_ms": args.warmup_ms})


if __name__ == "__main__":
    main()
