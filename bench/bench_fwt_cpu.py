"""FWT on the CPU, one core: ironkernels against FFHT (FALCONN-LIB/FFHT), ns per element.

For float32 and float64, N = 2^4 … 2^20, a batch of rows of `--mb` MB in total (default 64), in place,
median of `--reps` passes after a warm-up. Both run pinned to the same core. FFHT is loaded from the
shared library given in IRONKERNELS_PEER_FFHT (build it beside the project; nothing of it is in this
repository) through bench/ffht_driver.c, which calls it row by row as its API requires.

    IRONKERNELS_PEER_FFHT=/path/libffht.so python bench/bench_fwt_cpu.py
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import ironkernels  # noqa: E402
from _common import cpu_hardware, write_result  # noqa: E402


def build_driver(tmp: str) -> str:
    exe = os.path.join(tmp, "ffht_driver")
    subprocess.run(["cc", "-O2", "-std=c11", "-D_POSIX_C_SOURCE=200809L", os.path.join(os.path.dirname(__file__), "ffht_driver.c"),
                    "-o", exe, "-ldl"], check=True)
    return exe


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "fwt-cpu.json"))
    ap.add_argument("--mb", type=int, default=64)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--core", type=int, default=max(0, (os.cpu_count() or 1) - 1))
    ap.add_argument("--log2n", default="4-20")
    args = ap.parse_args()
    os.sched_setaffinity(0, {args.core})
    ironkernels._core.set_cpu_threads(1)
    lo, hi = (int(v) for v in args.log2n.split("-"))
    peer = os.environ.get("IRONKERNELS_PEER_FFHT")
    tmp = tempfile.mkdtemp()
    driver = build_driver(tmp) if peer else None
    if not peer:
        print("ffht: not available (set IRONKERNELS_PEER_FFHT=/path/to/libffht.so)")
    rows = []
    rng = np.random.default_rng(0)
    for dtype in ("float32", "float64"):
        es = np.dtype(dtype).itemsize
        for log_n in range(lo, hi + 1):
            n = 1 << log_n
            batch = max(1, (args.mb << 20) // (n * es))
            x = rng.standard_normal((batch, n)).astype(dtype)
            ironkernels.fwt(x, out=x, normalized=True)  # warm-up (normalized keeps magnitudes)
            times = []
            for _ in range(args.reps):
                t0 = time.perf_counter()
                ironkernels.fwt(x, out=x, normalized=True)
                times.append((time.perf_counter() - t0) * 1e9 / x.size)
            ours = statistics.median(times)
            row = {"impl": "ironkernels", "dtype": dtype, "log2n": log_n, "batch": batch, "ns_per_elem": ours,
                   "min_ns_per_elem": min(times), "threads": 1, "isa": ironkernels.build_info()["cpu_isa_active"],
                   "scope": "one in-place call over the batch, wall clock, pinned core"}
            rows.append(row)
            line = f"{dtype} 2^{log_n:<2d} ironkernels {ours:.3f} ns/elem"
            if driver:
                out = subprocess.run(["taskset", "-c", str(args.core), driver, peer, dtype, str(log_n), str(args.mb),
                                      str(args.reps)], capture_output=True, text=True, check=True)
                ffht = float(out.stdout.strip())
                rows.append({"impl": "ffht", "dtype": dtype, "log2n": log_n, "batch": batch, "ns_per_elem": ffht,
                             "threads": 1, "scope": "fht_* called once per row from C, wall clock, pinned core"})
                line += f"   ffht {ffht:.3f} ns/elem   ours/ffht time = {ours / ffht:.2f}"
            print(line, flush=True)
    write_result(args.out, cpu_hardware(), rows, {"peers": ["ffht"] if peer else []})


if __name__ == "__main__":
    main()
