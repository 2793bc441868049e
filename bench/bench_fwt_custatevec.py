"""A Hadamard on every qubit of a complex64 state vector: ironkernels.fwt against cuStateVec, per
../BENCHMARKS protocol (see bench/README.md).

H^{⊗n} on a state of 2^n amplitudes is the orthonormal FWT of length 2^n, so ours is one call,
``fwt(sv, normalized=True, out=sv)`` (in place: two or three passes over the state). cuStateVec
(the ``custatevec-cu13`` wheel, its C library through ctypes) is timed with
``custatevecApplyMatrix`` in place on the same state, with the gate matrix on the device, in each
of its reasonable forms: one 2x2 H per qubit (n calls), and H^{⊗t} as a dense 2^t x 2^t matrix on t
adjacent qubits at a time (ceil(n/t) calls, t = 2 … 6), since fusing gates into dense blocks is
what a simulator does for a layer like this. The row compares ours with cuStateVec's fastest form.
Before timing, both results are compared on the same input (max |difference| over the whole state,
and against the float64 reference at 2^20). Medians of timed calls (CUDA events, after >= 25 ms of
warm-up), over two rounds in rotated order; each row keeps the faster round of each.

    python bench/bench_fwt_custatevec.py [--out bench/results/fwt-h200-custatevec.json]
                                         [--qubits 26,27,28,29,30] [--lib PATH]
"""
from __future__ import annotations

import argparse
import ctypes
import glob
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(__file__))
import ironkernels  # noqa: E402
from ironkernels.reference import fwt_reference  # noqa: E402
from _common import gpu_hardware, time_cuda, write_result  # noqa: E402

CUDA_C_32F = 4
CUSTATEVEC_MATRIX_LAYOUT_ROW = 1
CUSTATEVEC_COMPUTE_32F = 4


def load_custatevec(path: str | None) -> ctypes.CDLL:
    """libcustatevec.so.1 from --lib, else from a `cuquantum/lib` folder on sys.path (where the wheel
    installs it). Its libcublas/libcublasLt are loaded first, globally, from the CUDA toolkit or the
    PyTorch wheels."""
    for dep in ("libcublasLt.so.13", "libcublas.so.13"):
        try:
            ctypes.CDLL(dep, mode=ctypes.RTLD_GLOBAL)
        except OSError:
            hits = [h for p in sys.path for h in glob.glob(os.path.join(p, "nvidia", "*", "lib", dep))]
            if hits:
                ctypes.CDLL(hits[0], mode=ctypes.RTLD_GLOBAL)
    if path is None:
        hits = [h for p in sys.path for h in glob.glob(os.path.join(p, "cuquantum", "lib", "libcustatevec.so*"))]
        if not hits:
            raise SystemExit("libcustatevec.so.1 not found: install the custatevec-cu13 wheel or pass --lib")
        path = hits[0]
    lib = ctypes.CDLL(path)
    lib.custatevecGetVersion.restype = ctypes.c_size_t
    lib.custatevecApplyMatrix.argtypes = [
        ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_int,
        ctypes.c_int, ctypes.c_int32, ctypes.POINTER(ctypes.c_int32), ctypes.c_uint32,
        ctypes.POINTER(ctypes.c_int32), ctypes.POINTER(ctypes.c_int32), ctypes.c_uint32, ctypes.c_int,
        ctypes.c_void_p, ctypes.c_size_t]
    lib.custatevecApplyMatrixGetWorkspaceSize.argtypes = [
        ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
        ctypes.c_int32, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_int, ctypes.POINTER(ctypes.c_size_t)]
    return lib


def check(status: int, call: str) -> None:
    if status != 0:
        raise RuntimeError(f"{call} returned cuStateVec status {status}")


class HadamardLayer:
    """H on every qubit of a 2^n complex64 state through custatevecApplyMatrix, t qubits per call."""

    def __init__(self, lib, handle, n: int, t: int):
        self.lib, self.handle, self.n = lib, handle, n
        self.blocks = []
        for q in range(0, n, t):
            width = min(t, n - q)
            m = _hadamard_power(width)
            targets = (ctypes.c_int32 * width)(*range(q, q + width))
            self.blocks.append((torch.from_numpy(np.ascontiguousarray(m)).cuda(), targets, width))
        size = ctypes.c_size_t(0)
        for m, _, width in self.blocks:
            s = ctypes.c_size_t(0)
            check(lib.custatevecApplyMatrixGetWorkspaceSize(
                handle, CUDA_C_32F, n, ctypes.c_void_p(m.data_ptr()), CUDA_C_32F, CUSTATEVEC_MATRIX_LAYOUT_ROW,
                0, width, 0, CUSTATEVEC_COMPUTE_32F, ctypes.byref(s)), "custatevecApplyMatrixGetWorkspaceSize")
            size.value = max(size.value, s.value)
        self.workspace = torch.empty(max(size.value, 1), dtype=torch.uint8, device="cuda")
        self.workspace_bytes = size.value

    def __call__(self, sv: torch.Tensor) -> None:
        for m, targets, width in self.blocks:
            check(self.lib.custatevecApplyMatrix(
                self.handle, ctypes.c_void_p(sv.data_ptr()), CUDA_C_32F, self.n, ctypes.c_void_p(m.data_ptr()),
                CUDA_C_32F, CUSTATEVEC_MATRIX_LAYOUT_ROW, 0, targets, width, None, None, 0, CUSTATEVEC_COMPUTE_32F,
                ctypes.c_void_p(self.workspace.data_ptr()) if self.workspace_bytes else None,
                self.workspace_bytes), "custatevecApplyMatrix")


def _hadamard_power(t: int) -> np.ndarray:
    """H^{⊗t} = (H_2 / √2)^{⊗t}, built in float64 and rounded once."""
    h = np.array([[1.0]])
    for _ in range(t):
        h = np.kron(h, np.array([[1.0, 1.0], [1.0, -1.0]]) / np.sqrt(2.0))
    return h.astype(np.complex64)


def random_state(n: int) -> torch.Tensor:
    sv = torch.randn(2 ** n, dtype=torch.complex64, device="cuda")
    return sv / torch.linalg.vector_norm(sv)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="bench/results/fwt-h200-custatevec.json")
    ap.add_argument("--qubits", default="26,27,28,29,30")
    ap.add_argument("--fused", default="1,2,3,4,5,6", help="qubits per cuStateVec call to try (1 included)")
    ap.add_argument("--lib", default=None)
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args()
    lib = load_custatevec(args.lib)
    handle = ctypes.c_void_p()
    check(lib.custatevecCreate(ctypes.byref(handle)), "custatevecCreate")
    check(lib.custatevecSetStream(handle, ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)),
          "custatevecSetStream")
    version = lib.custatevecGetVersion()
    fused = [int(t) for t in args.fused.split(",")]

    # Correctness on a state small enough for the float64 reference.
    sv = random_state(20)
    ref = fwt_reference(sv.cpu().numpy(), scale=2.0 ** -10)
    ours = ironkernels.fwt(sv.clone(), normalized=True)
    theirs = {}
    for t in fused:
        s = sv.clone()
        HadamardLayer(lib, handle, 20, t)(s)
        theirs[t] = float(np.max(np.abs(s.cpu().numpy() - ref)))
    ours_err = float(np.max(np.abs(ours.cpu().numpy() - ref)))
    print(f"2^20 max |error| vs float64: ours {ours_err:.2e}, cuStateVec by qubits per call {theirs}", flush=True)
    if not all(e <= 1e-5 for e in [ours_err, *theirs.values()]):
        raise SystemExit("a result differs from the reference")

    rows = []
    for n in (int(q) for q in args.qubits.split(",")):
        sv = random_state(n)
        layers = {t: HadamardLayer(lib, handle, n, t) for t in fused}
        a, b = sv.clone(), sv
        ironkernels.fwt(a, normalized=True, out=a)
        layers[max(fused)](b)
        diff = float(torch.max(torch.abs(a - b)).item())
        del a
        torch.cuda.empty_cache()
        print(f"2^{n}: max |ours - cuStateVec| {diff:.2e}", flush=True)
        if not diff <= 1e-5:
            raise SystemExit(f"2^{n}: the results differ by {diff}")
        impls = {"ironkernels": lambda: ironkernels.fwt(sv, normalized=True, out=sv)}
        for t, layer in layers.items():
            impls[f"custatevec_{t}"] = (lambda layer=layer: layer(sv))
        best = {}
        names = list(impls)
        for r in range(2):
            order = names[r % len(names):] + names[:r % len(names)]
            for name in order:
                ms = time_cuda(torch, impls[name], reps=args.reps)["median_ms"]
                best[name] = min(best.get(name, math.inf), ms)
        fastest = min((k for k in best if k != "ironkernels"), key=best.get)
        row = {"qubits": n, "amplitudes": 2 ** n, "bytes": 8 * 2 ** n, "ironkernels_ms": best["ironkernels"],
               "custatevec_ms_by_qubits_per_call": {k.split("_")[1]: v for k, v in best.items() if k != "ironkernels"},
               "custatevec_fastest": fastest, "custatevec_ms": best[fastest],
               "speedup": best[fastest] / best["ironkernels"],
               "speedup_vs_one_gate_per_call": best["custatevec_1"] / best["ironkernels"], "max_abs_diff": diff,
               "ironkernels_gb_per_s_per_pass_equivalent": 2 * 8 * 2 ** n / best["ironkernels"] / 1e6}
        rows.append(row)
        print(f"2^{n}: ours {best['ironkernels']:.2f} ms, cuStateVec fastest ({fastest}) {best[fastest]:.2f} ms, "
              f"{row['speedup']:.1f}x; all: " + ", ".join(f"{k} {v:.2f}" for k, v in best.items()), flush=True)
        del sv, layers, impls
        torch.cuda.empty_cache()
    lib.custatevecDestroy(handle)
    write_result(args.out, {**gpu_hardware(torch), "custatevec": version}, rows,
                 {"call": "custatevecApplyMatrix(sv, CUDA_C_32F, n, H^{⊗t} on the device, CUDA_C_32F, ROW, "
                          "adjoint 0, targets [q, q+t), no controls, CUSTATEVEC_COMPUTE_32F, workspace) for "
                          "q = 0, t, 2t, …; ours: ironkernels.fwt(sv, normalized=True, out=sv)"})


if __name__ == "__main__":
    main()
