"""The routines HPC codes call, emulated on the GPU against cuBLAS, per ../BENCHMARKS protocol: ZGEMM,
strided-batched DGEMM, SGEMM (and TF32), and the cuBLAS drop-in. One run, rotated rounds, medians of
--reps calls (CUDA events, >= 25 ms warm-up), ratios against the baseline timed in the same round.

  zgemm    n³ complex128 ((u − ½)·exp(φ·g) parts): ironkernels.gemm (Contract.native()) against
           torch.matmul (cublasZgemm); errors on sampled entries against a long-double product (max
           relative of |Re|+|Im| and componentwise on |Re|+|Im| magnitudes), ours and cuBLAS's.
  batched  batch × n³ float64: ironkernels.gemm on (batch, n, n) against torch.bmm
           (cublasDgemmStridedBatched): the ratio per point, the path gemm took (native below
           n = 4096), the emulation product by product too where the batch is at most 64, and the
           crossover where the ratio passes 1.
  grouped  256 float64 products of sizes 64 … 1024 as one grouped call against PyTorch's matmul on each.
  sgemm    n³ float32: ironkernels.gemm (SGEMM's accuracy) against torch.matmul with TF32 off (SGEMM)
           and on (TF32), errors against the long-double product.
  prepared (m × n)·(n × n) float64, m = 64, 1024, n: gemm(a, gemm_prepare(b)) against the plain
           gemm(a, b) (the later calls of an iterative method; bits equal, checked), and the preparation's
           own time.
  dropin   n³ float64, complex128 and float32 torch.matmul in a subprocess, with and without LD_PRELOAD=ironkernels.cublas_preload()
           (IRONKERNELS_CUBLAS_MIN_DIM=1024): the program's own time per product, unchanged code.

    python bench/bench_gemm_routines.py [--only zgemm,batched,grouped,sgemm,prepared,dropin] [--n 8192,16384] [--rounds 2]
                                        [--out bench/results/gemm-routines-h200.json]
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import subprocess
import sys

import numpy as np

# 16384³ ZGEMM holds operands, results and a 33 GiB workspace at once: PyTorch's cache must not keep
# the freed blocks of earlier calls in pieces too small for the workspace.
os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
import ironkernels  # noqa: E402
from _common import gpu_hardware, time_cuda, write_result  # noqa: E402

SAMPLES = 32


def family(shape, phi, dtype, gen):
    """(u − ½)·exp(φ·g) on the GPU (bench/_gemm_families.py's default family)."""
    u = torch.rand(shape, device="cuda", dtype=torch.float64, generator=gen)
    g = torch.randn(shape, device="cuda", dtype=torch.float64, generator=gen)
    return ((u - 0.5) * torch.exp(phi * g)).to(dtype)


def rotated_best(impls: dict, rounds: int, reps: int) -> dict:
    """The fastest median per implementation over `rounds` rounds, the order rotated each round."""
    best, order = {}, list(impls)
    for r in range(rounds):
        for name in order[r % len(order):] + order[:r % len(order)]:
            t = time_cuda(torch, impls[name], reps=reps)
            if name not in best or t["median_ms"] < best[name]["median_ms"]:
                best[name] = t
    return {k: v["median_ms"] for k, v in best.items()}


def sampled_errors(c, a, b, rows, cols):
    """Max relative and max componentwise error of c's sampled entries against a long-double product
    (complex: on |Re|+|Im| magnitudes)."""
    a_s, b_s = a[rows].cpu().numpy(), b[:, cols].cpu().numpy()
    got = c[rows][:, cols].cpu().numpy()
    if np.iscomplexobj(a_s):
        ar, ai, br, bi = (v.astype(np.longdouble) for v in (a_s.real, a_s.imag, b_s.real, b_s.imag))
        ref_re, ref_im = ar @ br - ai @ bi, ar @ bi + ai @ br
        err = np.abs(got.real - ref_re) + np.abs(got.imag - ref_im)
        size = np.abs(ref_re) + np.abs(ref_im)
        mag = (np.abs(ar) + np.abs(ai)) @ (np.abs(br) + np.abs(bi))
    else:
        ref = a_s.astype(np.longdouble) @ b_s.astype(np.longdouble)
        err, size = np.abs(got - ref), np.abs(ref)
        mag = np.abs(a_s.astype(np.longdouble)) @ np.abs(b_s.astype(np.longdouble))
    mask = size != 0
    return {"max_rel": float(np.max(err[mask] / size[mask])), "max_componentwise": float(np.max(err / np.where(mag > 0, mag, 1)))}


class ZGemmul8:
    """GEMMul8's ZGEMM (Karatsuba on the residues) through a library built beside the project
    (IRONKERNELS_PEER_GEMMUL8, bench/README.md): size_t gemmul8_zworkspace_bytes(int m, int n, int k,
    int moduli) and int gemmul8_zgemm(void* cublas_handle, int m, int n, int k, const double2* alpha,
    const double2* A, int lda, const double2* B, int ldb, const double2* beta, double2* C, int ldc,
    int moduli, int fastmode, void* workspace) (column-major, 0 on success)."""

    class Double2(ctypes.Structure):
        _fields_ = [("x", ctypes.c_double), ("y", ctypes.c_double)]

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.gemmul8_zworkspace_bytes.restype = ctypes.c_size_t
        self.lib.gemmul8_zworkspace_bytes.argtypes = [ctypes.c_int] * 4
        self.lib.gemmul8_zgemm.restype = ctypes.c_int
        p, i = ctypes.c_void_p, ctypes.c_int
        self.lib.gemmul8_zgemm.argtypes = [p, i, i, i, p, p, i, p, i, p, p, i, i, i, p]
        self.cublas = ctypes.CDLL("libcublas.so.13")
        self.handle = ctypes.c_void_p()
        if self.cublas.cublasCreate_v2(ctypes.byref(self.handle)) != 0:
            raise RuntimeError("cublasCreate failed")
        self.one, self.zero = self.Double2(1.0, 0.0), self.Double2(0.0, 0.0)

    def __call__(self, a, b, c, moduli, fast, workspace):
        self.cublas.cublasSetStream_v2(self.handle, ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
        m, k = a.shape
        n = b.shape[1]  # row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ
        rc = self.lib.gemmul8_zgemm(self.handle, n, m, k, ctypes.byref(self.one), b.data_ptr(), n, a.data_ptr(), k,
                                    ctypes.byref(self.zero), c.data_ptr(), n, moduli, int(fast), workspace.data_ptr())
        if rc != 0:
            raise RuntimeError(f"gemmul8_zgemm returned {rc}")
        return c

    def workspace(self, m, n, k, moduli):
        return torch.empty(self.lib.gemmul8_zworkspace_bytes(n, m, k, moduli), dtype=torch.uint8, device="cuda")


def bench_zgemm(n: int, args) -> list:
    gen = torch.Generator(device="cuda").manual_seed(n)
    a = torch.complex(family((n, n), 0.5, torch.float64, gen), family((n, n), 0.5, torch.float64, gen))
    b = torch.complex(family((n, n), 0.5, torch.float64, gen), family((n, n), 0.5, torch.float64, gen))
    rows, cols = torch.randperm(n, generator=torch.Generator().manual_seed(1))[:SAMPLES], torch.arange(SAMPLES)
    results = {"ironkernels": ironkernels.gemm(a, b), "cublasZgemm": a @ b}
    impls = {"ironkernels": lambda: ironkernels.gemm(a, b), "cublasZgemm": lambda: a @ b}
    peer = os.environ.get("IRONKERNELS_PEER_GEMMUL8")
    if peer:  # GEMMul8 at the moduli counts and modes that reach FP64-level accuracy
        z = ZGemmul8(peer)
        for moduli in args.gemmul8_moduli:
            ws, c = z.workspace(n, n, n, moduli), torch.empty_like(a)
            for fast in [mode == "fast" for mode in args.gemmul8_modes]:
                name = f"gemmul8_{moduli}_{'fast' if fast else 'accurate'}"
                impls[name] = (lambda ws=ws, c=c, moduli=moduli, fast=fast: z(a, b, c, moduli, fast, ws))
                results[name] = impls[name]().clone()
    times = rotated_best(impls, args.rounds, args.reps)
    errors = {k: sampled_errors(v, a, b, rows, cols) for k, v in results.items()}
    rep = ironkernels.gemm(a, b, report=True)[1]  # where our time goes (one more call, not timed)
    phases = {k: rep[k] for k in ("moduli", "products", "scale_ms", "products_ms", "reconstruct_ms")}
    row = {"routine": "zgemm", "n": n, **{f"{k}_ms": v for k, v in times.items()}, "ours_phases": phases,
           "speedup_vs_cublas": times["cublasZgemm"] / times["ironkernels"],
           "ours": errors["ironkernels"], "cublas": errors["cublasZgemm"],
           "gemmul8": {k: errors[k] for k in errors if k.startswith("gemmul8")}}
    # GEMMul8's fastest setting at equal or better error (max componentwise, sampled) than ours.
    peers = [k for k in row["gemmul8"] if errors[k]["max_componentwise"] <= errors["ironkernels"]["max_componentwise"]]
    if peers:
        best = min(peers, key=lambda k: times[k])
        row.update(gemmul8_at_our_error=best, speedup_vs_gemmul8=times[best] / times["ironkernels"])
    return [row]


def bench_batched(args) -> list:
    out = []
    for batch, n in ((4096, 64), (1024, 256), (64, 1024), (16, 2048), (4, 4096)):
        gen = torch.Generator(device="cuda").manual_seed(batch * n)
        a, b = family((batch, n, n), 0.5, torch.float64, gen), family((batch, n, n), 0.5, torch.float64, gen)
        impls = {"ironkernels": lambda: ironkernels.gemm(a, b), "cublas_strided_batched": lambda: torch.bmm(a, b)}
        if batch <= 64:  # the emulation product by product (an engine named), where it takes under a second
            impls["ironkernels_emulated"] = lambda: ironkernels.gemm(a, b, engine="cublas")
        path = ironkernels.gemm(a, b, report=True)[1]["path"]
        times = rotated_best(impls, args.rounds, max(3, args.reps // 2))
        out.append({"routine": "batched", "batch": batch, "n": n, "path": path, **{f"{k}_ms": v for k, v in times.items()},
                    "speedup_vs_cublas": times["cublas_strided_batched"] / times["ironkernels"]})
        print(out[-1], flush=True)
    crossing = [r["n"] for r in out if r["speedup_vs_cublas"] >= 1.0]
    for r in out:
        r["crossover_n"] = min(crossing) if crossing else None
    return out


def bench_grouped(args) -> list:
    """256 float64 products of sizes drawn from 64 … 1024 (seeded), as one grouped call against
    PyTorch's matmul product by product (cuBLAS DGEMM each)."""
    rng = np.random.default_rng(7)
    dims = rng.integers(64, 1025, size=(256, 3))
    gen = torch.Generator(device="cuda").manual_seed(7)
    a = [family((int(m), int(k)), 0.5, torch.float64, gen) for m, k, _ in dims]
    b = [family((int(k), int(n)), 0.5, torch.float64, gen) for _, k, n in dims]
    times = rotated_best({"ironkernels": lambda: ironkernels.gemm(a, b),
                          "cublas_loop": lambda: [x @ y for x, y in zip(a, b)]}, args.rounds, max(3, args.reps // 2))
    return [{"routine": "grouped", "products": len(dims), "sizes": "64-1024", **{f"{k}_ms": v for k, v in times.items()},
             "speedup_vs_cublas": times["cublas_loop"] / times["ironkernels"],
             "path": ironkernels.gemm(a, b, report=True)[1]["path"]}]


def bench_sgemm(n: int, args) -> list:
    gen = torch.Generator(device="cuda").manual_seed(n + 1)
    a, b = family((n, n), 0.5, torch.float32, gen), family((n, n), 0.5, torch.float32, gen)
    rows, cols = torch.randperm(n, generator=torch.Generator().manual_seed(2))[:SAMPLES], torch.arange(SAMPLES)

    def matmul(tf32: bool):
        def call():
            torch.backends.cuda.matmul.allow_tf32 = tf32
            return a @ b
        return call

    results = {"ironkernels": ironkernels.gemm(a, b), "sgemm": matmul(False)(), "tf32": matmul(True)()}
    times = rotated_best({"ironkernels": lambda: ironkernels.gemm(a, b), "sgemm": matmul(False), "tf32": matmul(True)},
                         args.rounds, args.reps)
    torch.backends.cuda.matmul.allow_tf32 = False
    return [{"routine": "sgemm", "n": n, **{f"{k}_ms": v for k, v in times.items()},
             "speedup_vs_sgemm": times["sgemm"] / times["ironkernels"], "speedup_vs_tf32": times["tf32"] / times["ironkernels"],
             **{f"{k}_errors": sampled_errors(v, a, b, rows, cols) for k, v in results.items()}}]


DROPIN_CLIENT = """
import json, sys, torch
sys.path.insert(0, {bench!r})
from _common import time_cuda
n, dtype = int(sys.argv[1]), getattr(torch, sys.argv[2])
torch.backends.cuda.matmul.allow_tf32 = False  # float32 as SGEMM (cuBLAS's own default)
g = torch.Generator(device="cuda").manual_seed(5)
a = torch.randn(n, n, dtype=dtype, device="cuda", generator=g)
b = torch.randn(n, n, dtype=dtype, device="cuda", generator=g)
print(json.dumps(time_cuda(torch, lambda: a @ b, reps={reps})))
"""


def bench_prepared(n: int, args) -> list:
    torch.cuda.empty_cache()  # the prepared operand's memory is the library's own, not PyTorch's pool
    gen = torch.Generator(device="cuda").manual_seed(n + 1)
    b = family((n, n), 0.5, torch.float64, gen)
    prepare_ms = time_cuda(torch, lambda: ironkernels.gemm_prepare(b), reps=args.reps)["median_ms"]
    prepared = ironkernels.gemm_prepare(b)
    out = []
    for m in (64, 1024, n):
        a = family((m, n), 0.5, torch.float64, gen)
        if not torch.equal(ironkernels.gemm(a, prepared).view(torch.int64), ironkernels.gemm(a, b).view(torch.int64)):
            raise RuntimeError(f"prepared and plain calls differ at m = {m}, n = {n}")
        t = rotated_best({"plain": lambda: ironkernels.gemm(a, b), "prepared": lambda: ironkernels.gemm(a, prepared)},
                         args.rounds, args.reps)
        out.append({"routine": "prepared", "m": m, "n": n, "k": n, "plain_ms": t["plain"], "prepared_ms": t["prepared"],
                    "speedup": t["plain"] / t["prepared"], "prepare_ms": prepare_ms,
                    "prepared_nbytes": prepared.nbytes})
        print(out[-1], flush=True)
    return out


def bench_dropin(n: int, args) -> list:
    path = ironkernels.cublas_preload()
    if path is None:
        return [{"routine": "dropin", "n": n, "available": False}]
    script = DROPIN_CLIENT.format(bench=os.path.dirname(os.path.abspath(__file__)), reps=args.reps)
    rows = []
    for dtype in ("float64", "complex128", "float32"):  # cublasDgemm_v2, cublasZgemm_v2, cublasSgemm_v2
        best = {}
        for r in range(args.rounds):
            for name in (("plain", "preloaded") if r % 2 == 0 else ("preloaded", "plain")):
                preload = {"LD_PRELOAD": path, "IRONKERNELS_CUBLAS_MIN_DIM": "1024"} if name == "preloaded" else {}
                done = subprocess.run([sys.executable, "-c", script, str(n), dtype], env=dict(os.environ, **preload),
                                      capture_output=True, text=True, timeout=600)
                if done.returncode != 0:
                    raise RuntimeError(done.stderr[-2000:])
                t = json.loads(done.stdout.strip().splitlines()[-1])["median_ms"]
                best[name] = min(best.get(name, t), t)
        rows.append({"routine": "dropin", "n": n, "dtype": dtype, "plain_ms": best["plain"],
                     "preloaded_ms": best["preloaded"], "speedup": best["plain"] / best["preloaded"]})
        print(rows[-1], flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "gemm-routines-h200.json"))
    ap.add_argument("--only", default="zgemm,batched,grouped,sgemm,prepared,dropin")
    ap.add_argument("--n", default="8192,16384", help="sizes of the zgemm, sgemm and dropin points")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--gemmul8-moduli", default="14,15,16", help="GEMMul8 ZGEMM's moduli counts (each its own workspace)")
    ap.add_argument("--gemmul8-modes", default="fast,accurate", help="'fast' or 'fast,accurate'")
    args = ap.parse_args()
    args.gemmul8_moduli = [int(v) for v in args.gemmul8_moduli.split(",") if v]
    args.gemmul8_modes = args.gemmul8_modes.split(",")
    only = set(args.only.split(","))
    sizes = [int(v) for v in args.n.split(",") if v]
    rows = []
    if "batched" in only:
        rows += bench_batched(args)
    if "grouped" in only:
        rows += bench_grouped(args)
        print(rows[-1], flush=True)
    for n in sizes:
        for name, fn in (("zgemm", bench_zgemm), ("sgemm", bench_sgemm), ("prepared", bench_prepared),
                         ("dropin", bench_dropin)):
            if name in only:
                rows += fn(n, args)
                if name not in ("prepared", "dropin"):  # (which print each of their rows)
                    print(rows[-1], flush=True)
        torch.cuda.empty_cache()
    write_result(args.out, gpu_hardware(torch), rows)


if __name__ == "__main__":
    main()
