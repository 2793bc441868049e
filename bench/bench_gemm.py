"""Emulated DGEMM on the GPU: ironkernels (Ozaki II, INT8 products through cuBLAS, with --engines mma
also through its own mma.sync kernel: impl "ironkernels-mma") against native cublasDgemm, cuBLAS FP64
emulation and GEMMul8, per ../BENCHMARKS protocol (see bench/README.md).

For each shape and each input family of --families (bench/_gemm_families.py; default φ = 0.5: the
(u - 0.5)·exp(φ·g) inputs; also 8, rows, wide, outliers, mixed10, mixed50: where emulation pays and
where it cannot), A and B drawn on the GPU, fresh per shape and family; each implementation's output
poisoned (NaN) before its first call and checked to be fully written; errors on 48 × 48 sampled
entries (max relative, max absolute, RMS, max componentwise |C-ref|/(|A||B|)) against a long-double
product of the sampled rows and columns; median of --reps timed calls (CUDA events around each full
Python call, queued back to back, after at least 2 warm-up calls and 25 ms). DGEMM-equivalent TFLOP/s
= 2·m·n·k / time; speedup_vs_dgemm = cublasDgemm's median in the same round / this median.
--rounds R times every case R times, the implementations' order rotated by one each round; every
round's rows are kept (`round`, `position`). Rows of ours also carry the report's path, moduli,
native_rows, native_cols, native_elements, certified, rtol, bits_a, bits_b.

Peers: cuBLAS FP64 emulation (when this cuBLAS supports it on the device), and GEMMul8 when
IRONKERNELS_PEER_GEMMUL8 names a shared library built beside the project (bench/README.md lists the
C entry points it must export); otherwise they are marked not available.

    python bench/bench_gemm.py [--out bench/results/gemm-h200.json] [--shapes 1024,...,16384x16384x1024]
                               [--engines cuda,mma] [--families 0.5,8,mixed10,mixed50,outliers] [--rounds 3]
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
from _common import gpu_hardware, sampled_reference, time_cuda, write_result  # noqa: E402
from _gemm_families import METRIC, TorchDraw, abs_product, describe, draw, errors, family_phi, parse_families  # noqa: E402

try:
    from _cublas_emulation import CublasEmulation  # noqa: E402
except ImportError:  # pragma: no cover
    CublasEmulation = None

DEFAULT_SHAPES = "1024,2048,4096,8192,16384,16384x16384x1024,1024x1024x65536"
REPORT_KEYS = ("path", "certified", "rtol", "native_rows", "native_cols", "native_elements", "bits_a", "bits_b",
               "nonfinite_elements", "scaling")


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


def _engine(name: str) -> str:
    """gemm's engine= for an --engines entry ("cuda": the default, engine="auto")."""
    return "auto" if name == "cuda" else name


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "gemm-h200.json"))
    ap.add_argument("--shapes", default=DEFAULT_SHAPES)
    ap.add_argument("--families", default="0.5",
                    help="input families (bench/_gemm_families.py): a number φ, rows, wide, outliers, mixed10, mixed50")
    ap.add_argument("--moduli", default="12,13,14,15,16,17,18", help="ironkernels and GEMMul8 sweeps")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=1,
                    help="rounds per case, the implementations' order rotated by one from round to round")
    ap.add_argument("--samples", type=int, default=48)
    ap.add_argument("--scalings", default="fast,accurate,norm", help="ironkernels scalings of the moduli sweep")
    ap.add_argument("--emulations", default="fixed55,dynamic",
                    help="cuBLAS FP64 emulation modes timed beside (cuBLAS >= 13.1); '' for none")
    ap.add_argument("--engines", default="cuda", help="ironkernels backends to time: cuda (the default engine: wgmma where it runs), wgmma, cublas, mma")
    args = ap.parse_args()
    families = parse_families(args.families)
    torch.backends.cuda.matmul.allow_tf32 = False
    xp = TorchDraw(torch, gen=torch.Generator(device="cuda").manual_seed(2026))
    rng = np.random.default_rng(2026)
    peer_path = os.environ.get("IRONKERNELS_PEER_GEMMUL8")
    gemmul8 = Gemmul8(peer_path) if peer_path else None
    if gemmul8 is None:
        print("gemmul8: not available (set IRONKERNELS_PEER_GEMMUL8)")
    emulations = {}
    if CublasEmulation is not None:
        for mode in (m for m in args.emulations.split(",") if m):
            try:
                emulations[mode] = CublasEmulation(mode)
            except (OSError, RuntimeError) as e:
                print(f"cublas-emu-{mode}: not available ({e})")
    rows = []
    moduli_sweep = [int(x) for x in args.moduli.split(",")]
    for (m, n, k), family in ((shape, family) for shape in parse_shapes(args.shapes) for family in families):
        a, b = draw(family, m, k, n, xp)
        ri = np.sort(rng.choice(m, size=min(args.samples, m), replace=False))
        ci = np.sort(rng.choice(n, size=min(args.samples, n), replace=False))
        rt, ct = torch.as_tensor(ri, device="cuda"), torch.as_tensor(ci, device="cuda")
        a_s, b_s = a[rt].cpu().numpy(), b[:, ct].cpu().numpy()
        ref = sampled_reference(a_s, b_s, slice(None), slice(None))
        absprod = abs_product(a_s, b_s)
        out = torch.empty((m, n), dtype=torch.float64, device="cuda")
        flop = 2.0 * m * n * k
        base = {"m": m, "n": n, "k": k, "family": family, "phi": family_phi(family), "inputs": describe(family),
                "timing_scope": "full Python call (CUDA events)",
                "reference": "long double (80-bit) on sampled entries", "metric": METRIC}

        # Each case: (impl, make, extra, ours). make() returns the call to time, allocating what it needs
        # (GEMMul8's workspace) outside the timing; the call is dropped after its timing.
        cases = [("cublas-dgemm", lambda: (lambda: torch.matmul(a, b, out=out)), {"moduli": None, "scaling": None}, None)]
        for mode, emu in emulations.items():
            cases.append((f"cublas-emu-{mode}", lambda emu=emu: (lambda: emu.gemm(a, b, out)),
                          {"moduli": None, "scaling": None}, None))
        for engine in args.engines.split(","):
            plans = [(Contract.native(), {"contract": "native"})]  # count and scaling: the report's
            for scaling in (s for s in args.scalings.split(",") if s):
                for nm in moduli_sweep:
                    c = Contract(moduli=nm, scaling=scaling)
                    plans.append((c, {"moduli": nm, "scaling": scaling, "contract": repr(c)}))
            for contract, extra in plans:
                cases.append((f"ironkernels-{engine}",
                              lambda engine=engine, contract=contract:
                              (lambda: ironkernels.gemm(a, b, contract=contract, out=out, engine=_engine(engine))),
                              extra, (engine, contract)))
        if gemmul8 is not None:
            for fast in (True, False):
                for nm in moduli_sweep:
                    def make(nm=nm, fast=fast):
                        ws = gemmul8.workspace(m, n, k, nm)
                        return lambda: gemmul8(a, b, out, nm, fast, ws)
                    cases.append(("gemmul8", make, {"moduli": nm, "scaling": "fast" if fast else "accurate"}, None))

        checked = {}  # case index -> errors and report fields, from the call before its first timing

        def check(i, fn):
            impl, _, extra, ours = cases[i]
            out.fill_(float("nan"))
            fn()
            torch.cuda.synchronize()
            if bool(torch.isnan(out).any()):  # not fully written (or NaN): reported, never hidden
                res = {key: float("nan") for key in ("max_rel_err", "max_abs_err", "rms_err", "max_componentwise_err")}
            else:
                res = errors(out[rt][:, ct].cpu().numpy(), ref, absprod)
            if ours is not None:
                engine, contract = ours
                _, rep = ironkernels.gemm(a, b, contract=contract, out=out, report=True, engine=_engine(engine))
                if "products" in rep:
                    res["products"] = f"{rep['products']}, {rep.get('product_column_blocks')} column block(s)"  # tune()'s choice
                res.update({key: rep.get(key) for key in REPORT_KEYS})
                res["contract_moduli"] = extra.get("moduli")  # the fixed contract's count (None for native())
                res["moduli"] = rep.get("moduli")  # the report's: moduli of the emulated part, 0 if none
            checked[i] = res

        dead = set()  # cases that failed (peer not available on this device, out of memory)
        for r in range(args.rounds):
            live = [i for i in range(len(cases)) if i not in dead]
            shift = r % len(live)
            round_rows = []
            for position, i in enumerate(live[shift:] + live[:shift]):
                impl, make, extra, _ = cases[i]
                try:
                    fn = make()
                    if i not in checked:
                        check(i, fn)
                    t = time_cuda(torch, fn, reps=args.reps, warmup=2)
                except (RuntimeError, torch.OutOfMemoryError) as e:
                    if cases[i][3] is not None:  # ours: a failure is a failure, not "not available"
                        raise
                    print(f"{impl} {extra.get('moduli') or ''} {extra.get('scaling') or ''}: not available ({e})")
                    dead.add(i)
                    continue
                finally:
                    fn = None
                row = dict(base, impl=impl)
                row.update(extra)
                row.update(checked[i])  # the report's fields override the case's (moduli of native())
                row.update(t, round=r, position=position, tflops=flop / (t["median_ms"] * 1e-3) / 1e12)
                round_rows.append(row)
                print(f"{m}x{n}x{k} {family:>8} r{r} {impl:<22} {str(row.get('moduli', '')):>4} "
                      f"{row.get('scaling', '') or '':<8} {row.get('path', '') or '':<8} "
                      f"{t['median_ms']:9.3f} ms {row['tflops']:7.2f} TFLOP/s  err {row['max_rel_err']:.2e}", flush=True)
            dgemm = next((x for x in round_rows if x["impl"] == "cublas-dgemm"), None)
            for row in round_rows:  # the ratio to DGEMM of the same round (> 1: faster than DGEMM)
                row["dgemm_median_ms"] = dgemm["median_ms"] if dgemm else None
                row["speedup_vs_dgemm"] = dgemm["median_ms"] / row["median_ms"] if dgemm else None
            rows.extend(round_rows)
            if dgemm:
                print(f"  round {r}: dgemm {dgemm['median_ms']:.3f} ms, err {dgemm['max_rel_err']:.2e}", flush=True)
        del a, b, out
        torch.cuda.empty_cache()
    write_result(args.out, gpu_hardware(torch), rows, extra={"ironkernels": ironkernels.__version__})


if __name__ == "__main__":
    main()
