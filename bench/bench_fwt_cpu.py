"""FWT on the CPU, one core: ironkernels against FFHT (FALCONN-LIB/FFHT), ns per element.

For float32 and float64 (`--dtypes` adds float16 and bfloat16, which FFHT lacks), N = 2^4 … 2^20, a
batch of rows of `--mb` MB in total (default 64), in place, median of `--reps` passes after a warm-up.
Both run pinned to the same core, their passes interleaved (ours then FFHT's, then the other way
round), so that both see the same state of a shared machine; the ratio reported is the median of
the per-pair ratios. `--also-isa baseline` times every case again in a child process
with IRONKERNELS_CPU_ISA=baseline (the portable kernels: scalar float16 conversions, no AVX), rows
`ironkernels-baseline`, so a variant's gain is measured in the same run. FFHT is loaded from the
shared library given in IRONKERNELS_PEER_FFHT (build it beside the project; nothing of it is in this
repository) through bench/ffht_driver.c, which calls it row by row as its API requires. Both
batches start `--offset` bytes past a 64-byte boundary (default 0: vector loads within cache lines).

    IRONKERNELS_PEER_FFHT=/path/libffht.so python bench/bench_fwt_cpu.py
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

try:
    import ml_dtypes  # bfloat16 NumPy arrays, for --dtypes bfloat16
except ImportError:
    ml_dtypes = None

sys.path.insert(0, os.path.dirname(__file__))
import ironkernels  # noqa: E402
from _common import cpu_hardware, write_result  # noqa: E402


def at_offset(a: np.ndarray, offset: int) -> np.ndarray:
    """A copy of `a` starting `offset` bytes past a 64-byte boundary, as FFHT's driver places its
    batch (NumPy's own large arrays start 16 bytes past one: vector loads straddle cache lines)."""
    raw = np.empty(a.nbytes + 64 + offset, np.uint8)
    start = (-raw.ctypes.data) % 64 + offset
    out = raw[start:start + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


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
    ap.add_argument("--dtypes", default="float32,float64", help="comma-separated: float32, float64, float16, bfloat16")
    ap.add_argument("--offset", type=int, default=0,
                    help="both batches start this many bytes past a 64-byte boundary (large NumPy arrays: 16)")
    ap.add_argument("--also-isa", default="", help="also time every case with this IRONKERNELS_CPU_ISA (child process)")
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
    for dtype in args.dtypes.split(","):
        np_dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
        es = np.dtype(np_dtype).itemsize
        for log_n in range(lo, hi + 1):
            n = 1 << log_n
            batch = max(1, (args.mb << 20) // (n * es))
            x = at_offset(rng.standard_normal((batch, n)).astype(np_dtype), args.offset)
            ironkernels.fwt(x, out=x, normalized=True)  # warm-up (normalized keeps magnitudes)

            def ours_pass():
                t0 = time.perf_counter()
                ironkernels.fwt(x, out=x, normalized=True)
                return (time.perf_counter() - t0) * 1e9 / x.size

            peer_pass = None
            if driver and dtype in ("float32", "float64"):
                proc = subprocess.Popen(["taskset", "-c", str(args.core), driver, peer, dtype, str(log_n), str(args.mb),
                                         str(args.offset)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                assert proc.stdout.readline().strip() == "ready"

                def peer_pass():
                    proc.stdin.write("t\n")
                    proc.stdin.flush()
                    return float(proc.stdout.readline())

            times, peer_times, pair_ratios = [], [], []
            for rep in range(args.reps):
                if peer_pass is None:
                    times.append(ours_pass())
                    continue
                if rep % 2 == 0:
                    t_ours = ours_pass()
                    t_peer = peer_pass()
                else:
                    t_peer = peer_pass()
                    t_ours = ours_pass()
                times.append(t_ours)
                peer_times.append(t_peer)
                pair_ratios.append(t_ours / t_peer)
            ours = statistics.median(times)
            row = {"impl": "ironkernels", "dtype": dtype, "log2n": log_n, "batch": batch, "ns_per_elem": ours,
                   "min_ns_per_elem": min(times), "threads": 1, "isa": ironkernels.build_info()["cpu_isa_active"],
                   "offset_bytes": args.offset, "scope": "one in-place call over the batch, wall clock, pinned core"}
            rows.append(row)
            line = f"{dtype} 2^{log_n:<2d} ironkernels {ours:.3f} ns/elem"
            if peer_pass is not None:
                proc.stdin.close()
                proc.wait()
                ffht = statistics.median(peer_times)
                ratio = statistics.median(pair_ratios)
                rows.append({"impl": "ffht", "dtype": dtype, "log2n": log_n, "batch": batch, "ns_per_elem": ffht,
                             "min_ns_per_elem": min(peer_times), "threads": 1, "ours_over_ffht": ratio,
                             "offset_bytes": args.offset,
                             "scope": "fht_* called once per row from C, wall clock, pinned core, passes interleaved with ours"})
                line += f"   ffht {ffht:.3f} ns/elem   ours/ffht time = {ratio:.2f} (pairs {min(pair_ratios):.2f}-{max(pair_ratios):.2f})"
            print(line, flush=True)
    if args.also_isa:
        child_out = os.path.join(tmp, "child.json")
        argv = [a for a in sys.argv[1:]]
        i = argv.index("--also-isa")
        del argv[i:i + 2]
        env = dict(os.environ, IRONKERNELS_CPU_ISA=args.also_isa)
        env.pop("IRONKERNELS_PEER_FFHT", None)
        subprocess.run([sys.executable, __file__, *argv, "--out", child_out], env=env, check=True)
        with open(child_out) as f:
            child = json.load(f)["rows"]
        for row in child:
            row["impl"] = f"ironkernels-{args.also_isa}"
        rows.extend(child)
    write_result(args.out, cpu_hardware(), rows, {"peers": ["ffht"] if peer else []})


if __name__ == "__main__":
    main()
