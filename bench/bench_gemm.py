"""Emulated DGEMM on the GPU: ironkernels (Ozaki II, INT8 products through cuBLAS, with --engines mma
also through its own mma.sync kernel: impl "ironkernels-mma") against native cublasDgemm, cuBLAS FP64
emulation and GEMMul8, per ../BENCHMARKS protocol (see bench/README.md).

For each shape, A and B drawn on the GPU from (u - 0.5)·exp(φ·g) (φ = 0.5 by default), fresh per
shape; each implementation's output poisoned (NaN) before its first call and checked to be fully
written; max relative error on 48 × 48 sampled entries against a long-double product of the sampled
rows and columns; median of --reps timed calls (CUDA events around each full Python call, queued back
to back, 2 warm-ups). DGEMM-equivalent TFLOP/s = 2·m·n·k / time.

Peers: cuBLAS FP64 emulation (when this cuBLAS supports it on the device), and GEMMul8 when
IRONKERNELS_PEER_GEMMUL8 names a shared library built beside the project (bench/README.md lists the
C entry points it must export); otherwise they are marked not available.

    python bench/bench_gemm.py [--out bench/results/gemm-h200.json] [--shapes 1024,...,16384x16384x1024]
                               [--engines cuda,mma]
"""
from __future__ import annotations

import argparse
import ctypes
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(__file__))
import ironkernels  # noqa: E402
from ironkernels import Contract  # noqa: E402
from _common import gpu_hardware, max_rel, sampled_reference, time_cuda, write_result  # noqa: E402

try:
    from _cublas_emulation import CublasEmulation  # noqa: E402
except ImportError:  # pragma: no cover
    CublasEmulation = None

DEFAULT_SHAPES = "1024,2048,4096,8192,16384,16384x16384x1024,1024x1024x65536"


def parse_shapes(text):
    out = []
    for s in text.split(","):
        dims = [int(x) for x in s.split("x")]
        out.append(tuple(dims) if len(dims) == 3 else (dims[0],) * 3)
    return out


class Gemmul8:
    """GEMMul8 through the two C entry points of a library built beside the project:
    size_t gemmul8_workspace_bytes(int m, int n, int k, int moduli) and
    int gemmul8_dgemm(void* cublas_handle, int m, int n, int k, double alpha, const double* A, int lda,
                      const double* B, int ldb, double beta, double* C, int ldc, int moduli, int fastmode,
                      void* workspace)   (column-major, no transposes, 0 on success).
    GEMMul8 synchronises its stream between phases, so its calls do not overlap."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.gemmul8_workspace_bytes.restype = ctypes.c_size_t
        self.lib.gemmul8_workspace_bytes.argtypes = [ctypes.c_int] * 4
        self.lib.gemmul8_dgemm.restype = ctypes.c_int
        self.lib.gemmul8_dgemm.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_double,
                                           ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
                                           ctypes.c_double, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                           ctypes.c_void_p]
        # A handle of its own: GEMMul8 points the handle's workspace into the workspace it is given.
        self.cublas = ctypes.CDLL("libcublas.so.13")
        self.handle = ctypes.c_void_p()
        if self.cublas.cublasCreate_v2(ctypes.byref(self.handle)) != 0:
            raise RuntimeError("cublasCreate failed")

    def __call__(self, a, b, c, moduli, fast, workspace):
        stream = torch.cuda.current_stream().cuda_stream
        self.cublas.cublasSetStream_v2(self.handle, ctypes.c_void_p(stream))
        # Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ.
        m, k = a.shape
        n = b.shape[1]
        rc = self.lib.gemmul8_dgemm(self.handle, n, m, k, 1.0, b.data_ptr(), n, a.data_ptr(), k, 0.0, c.data_ptr(), n,
                                    moduli, int(fast), workspace.data_ptr())
        if rc != 0:
            raise RuntimeError(f"gemmul8_dgemm returned {rc}")
        return c

    def workspace(self, m, n, k, moduli):
        return torch.empty(self.lib.gemmul8_workspace_bytes(n, m, k, moduli), dtype=torch.uint8, device="cuda")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "gemm-h200.json"))
    ap.add_argument("--shapes", default=DEFAULT_SHAPES)
    ap.add_argument("--phi", type=float, default=0.5)
    ap.add_argument("--moduli", default="12,13,14,15,16,17,18", help="ironkernels and GEMMul8 sweeps")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--samples", type=int, default=48)
    ap.add_argument("--scalings", default="fast,accurate,norm", help="ironkernels scalings of the moduli sweep")
    ap.add_argument("--engines", default="cuda", help="ironkernels backends to time: cuda (the default engine: wgmma where it runs), wgmma, cublas, mma")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    gen = torch.Generator(device="cuda").manual_seed(2026)
    rng = np.random.default_rng(2026)
    peer_path = os.environ.get("IRONKERNELS_PEER_GEMMUL8")
    gemmul8 = Gemmul8(peer_path) if peer_path else None
    if gemmul8 is None:
        print("gemmul8: not available (set IRONKERNELS_PEER_GEMMUL8)")
    emulations = {}
    if CublasEmulation is not None:
        for mode in ("fixed55", "dynamic"):
            try:
                emulations[mode] = CublasEmulation(mode)
            except (OSError, RuntimeError) as e:
                print(f"cublas-emu-{mode}: not available ({e})")
    rows = []
    moduli_sweep = [int(x) for x in args.moduli.split(",")]
    for m, n, k in parse_shapes(args.shapes):
        draw = lambda shape: (torch.rand(shape, generator=gen, device="cuda", dtype=torch.float64) - 0.5) * torch.exp(  # noqa: E731
            args.phi * torch.randn(shape, generator=gen, device="cuda", dtype=torch.float64))
        a, b = draw((m, k)), draw((k, n))
        ri = np.sort(rng.choice(m, size=min(args.samples, m), replace=False))
        ci = np.sort(rng.choice(n, size=min(args.samples, n), replace=False))
        rt, ct = torch.as_tensor(ri, device="cuda"), torch.as_tensor(ci, device="cuda")
        ref = sampled_reference(a[rt].cpu().numpy(), b[:, ct].cpu().numpy(), slice(None), slice(None))
        out = torch.empty((m, n), dtype=torch.float64, device="cuda")
        flop = 2.0 * m * n * k
        base = {"m": m, "n": n, "k": k, "phi": args.phi, "timing_scope": "full Python call (CUDA events)",
                "reference": "long double (80-bit) on sampled entries", "metric": "max |C-ref|/|ref|"}

        def measure(impl, fn, **extra):
            out.fill_(float("nan"))
            fn()
            torch.cuda.synchronize()
            if bool(torch.isnan(out).any()):
                err = abs_err = rms_err = float("nan")  # not fully written (or NaN): reported, never hidden
            else:
                sampled = out[rt][:, ct].cpu().numpy()
                err = max_rel(sampled, ref)
                diff = (sampled - ref).astype(np.float64)
                abs_err, rms_err = float(np.max(np.abs(diff))), float(np.sqrt(np.mean(diff**2)))
            t = time_cuda(torch, fn, reps=args.reps, warmup=2)
            row = dict(base, impl=impl, **extra, **t, tflops=flop / (t["median_ms"] * 1e-3) / 1e12, max_rel_err=err,
                       max_abs_err=abs_err, rms_err=rms_err)
            rows.append(row)
            print(f"{m}x{n}x{k} {impl:<22} {str(extra.get('moduli', extra.get('contract', ''))):>3} "
                  f"{extra.get('scaling', '') or '':<8} "
                  f"{t['median_ms']:9.3f} ms {row['tflops']:7.2f} TFLOP/s  err {err:.2e}", flush=True)
            return row

        native = measure("cublas-dgemm", lambda: torch.matmul(a, b, out=out), moduli=None, scaling=None)
        for mode, emu in emulations.items():
            try:
                measure(f"cublas-emu-{mode}", lambda: emu.gemm(a, b, out), moduli=None, scaling=None)
            except RuntimeError as e:
                print(f"cublas-emu-{mode}: not available on this device ({e})")

        def measure_ours(engine, plan_contract, **extra):
            run = lambda: ironkernels.gemm(a, b, contract=plan_contract, out=out, backend=engine)  # noqa: E731
            row = measure(f"ironkernels-{engine}", run, **extra)
            _, rep = ironkernels.gemm(a, b, contract=plan_contract, out=out, report=True, backend=engine)
            row["products"] = f"{rep['products']}, {rep['product_column_blocks']} column block(s)"  # tune()'s choice
            row.update({key: rep[key] for key in ("moduli", "bits_a", "bits_b", "nonfinite_elements", "native_bound",
                                                  "native_target", "spread_a", "spread_b") if key in rep})

        for engine in args.engines.split(","):
            measure_ours(engine, Contract.native(), scaling="norm", contract="native")  # count: the report's
            for scaling in (s for s in args.scalings.split(",") if s):
                for nm in moduli_sweep:
                    c = Contract(nm, scaling)
                    measure_ours(engine, c, moduli=nm, scaling=scaling, contract=repr(c))
        if gemmul8 is not None:
            for fast in (True, False):
                for nm in moduli_sweep:
                    try:
                        ws = gemmul8.workspace(m, n, k, nm)
                        measure("gemmul8", lambda: gemmul8(a, b, out, nm, fast, ws), moduli=nm,
                                scaling="fast" if fast else "accurate")
                    except (RuntimeError, torch.OutOfMemoryError) as e:
                        print(f"gemmul8 {nm} {'fast' if fast else 'accurate'}: {e}")
        del a, b, out
        torch.cuda.empty_cache()
        print(f"  native err {native['max_rel_err']:.2e}", flush=True)
    write_result(args.out, gpu_hardware(torch), rows, extra={"ironkernels": ironkernels.__version__})


if __name__ == "__main__":
    main()
