"""cuBLAS FP64 emulation (cublasGemmEx with CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT, strategy EAGER),
called through ctypes for bench_gemm.py. Needs cuBLAS >= 13.1 (CUDA 13.0 Update 2).

Modes: "fixed55" (mantissa control FIXED, 55 bits: 7 INT8 slices) and "dynamic" (the library picks
the bits per call). The handle is this module's own (emulation math mode), with a workspace sized by
NVIDIA's formula (CUDALibrarySamples cublas_utils.h, getFixedPointWorkspaceSizeInBytes).
Enum values: cublas_api.h / library_types.h of CUDA 13.0 Update 2.
"""
from __future__ import annotations

import ctypes

import torch

CUBLAS_OP_N = 0
CUBLAS_GEMM_DEFAULT = -1
CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH = 8
CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT = 79
CUBLAS_EMULATION_STRATEGY_EAGER = 2
CUDA_R_64F = 1
MANTISSA_CONTROL = {"dynamic": 0, "fixed55": 1}


def _workspace_bytes(m: int, n: int, k: int, bits: int, dynamic: bool) -> int:
    cdiv = lambda a, b: (a + b - 1) // b  # noqa: E731
    slices = cdiv(bits + 1, 8)
    pm, pn, pk = cdiv(m, 1024) * 1024, cdiv(n, 1024) * 1024, cdiv(k, 128) * 128
    gemm_ws = (pm * pk + pn * pk) * slices + 4 * (pm + pn)
    adaptive = 4 * (m * cdiv(k, 64) + n * cdiv(k, 64) + m * n) if dynamic else 0
    return int(max(gemm_ws, adaptive) * 1.25) + (128 << 20)


class CublasEmulation:
    def __init__(self, mode: str):
        if mode not in MANTISSA_CONTROL:
            raise ValueError(f"mode {mode!r}; accepted: {', '.join(MANTISSA_CONTROL)}")
        self.mode = mode
        self.lib = ctypes.CDLL("libcublas.so.13")
        if not hasattr(self.lib, "cublasSetFixedPointEmulationMantissaControl"):
            raise RuntimeError("this cuBLAS has no FP64 fixed-point emulation (needs 13.1)")
        self.handle = ctypes.c_void_p()
        self._check(self.lib.cublasCreate_v2(ctypes.byref(self.handle)), "cublasCreate")
        h = self.handle
        self._check(self.lib.cublasSetMathMode(h, CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH), "cublasSetMathMode")
        self._check(self.lib.cublasSetEmulationStrategy(h, CUBLAS_EMULATION_STRATEGY_EAGER), "cublasSetEmulationStrategy")
        self._check(self.lib.cublasSetFixedPointEmulationMantissaControl(h, MANTISSA_CONTROL[mode]),
                    "cublasSetFixedPointEmulationMantissaControl")
        if mode == "fixed55":
            self._check(self.lib.cublasSetFixedPointEmulationMaxMantissaBitCount(h, 55),
                        "cublasSetFixedPointEmulationMaxMantissaBitCount")
        self.workspace = None

    def _check(self, status: int, what: str) -> None:
        if status != 0:
            raise RuntimeError(f"{what} failed: cuBLAS status {status}")

    def gemm(self, a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        """out = a @ b for row-major float64 CUDA tensors (column-major outᵀ = bᵀ·aᵀ)."""
        m, k = a.shape
        n = b.shape[1]
        need = _workspace_bytes(n, m, k, 79 if self.mode == "dynamic" else 55, self.mode == "dynamic")
        if self.workspace is None or self.workspace.numel() < need:
            self.workspace = torch.empty(need, dtype=torch.uint8, device=a.device)
            self._check(self.lib.cublasSetWorkspace_v2(self.handle, ctypes.c_void_p(self.workspace.data_ptr()),
                                                       ctypes.c_size_t(need)), "cublasSetWorkspace")
        stream = torch.cuda.current_stream(a.device).cuda_stream
        self._check(self.lib.cublasSetStream_v2(self.handle, ctypes.c_void_p(stream)), "cublasSetStream")
        alpha, beta = ctypes.c_double(1.0), ctypes.c_double(0.0)
        self._check(self.lib.cublasGemmEx(
            self.handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, ctypes.byref(alpha), ctypes.c_void_p(b.data_ptr()),
            CUDA_R_64F, n, ctypes.c_void_p(a.data_ptr()), CUDA_R_64F, k, ctypes.byref(beta),
            ctypes.c_void_p(out.data_ptr()), CUDA_R_64F, n, CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT,
            CUBLAS_GEMM_DEFAULT), "cublasGemmEx(emulated)")
        return out
