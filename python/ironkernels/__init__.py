"""ironkernels: GPU kernels under stated contracts.

- :func:`fwt` — batched fast Walsh–Hadamard transform (CPU and CUDA); :func:`fwt_quantize` — the
  rotation quantised to FP8, INT8/4, MXFP4 or NVFP4 in one call (CPU and CUDA).
- :func:`gemm` — FP64-accurate matrix product by the Ozaki scheme II on INT8 tensor cores (CPU and CUDA);
  :func:`gemm_prepare` — one operand's share of gemm done once, for many products with it;
  :func:`cublas_preload` — the library that runs an unchanged program's cuBLAS DGEMMs through it.
- :mod:`ironkernels.lcn` — grid drawings: exact crossing counts, validity, incremental moves (CPU and CUDA).

Arrays from NumPy, PyTorch, CuPy (anything with ``__dlpack__``) are used in place, without copies;
host arrays run on the CPU, CUDA arrays on their GPU, and results come back in the caller's framework.
"""
from __future__ import annotations

import os as _os
from typing import Optional as _Optional


def _load_pip_cublas() -> None:
    """cuBLAS from NVIDIA's pip wheel (`pip install "ironkernels[cublas]"`), loaded before the library
    opens it by name, so that its dlopen finds it loaded; the system's is used otherwise."""
    try:
        import nvidia  # namespace package of NVIDIA's CUDA wheels
    except ImportError:
        return
    import ctypes

    for base in getattr(nvidia, "__path__", []):
        lib = _os.path.join(base, "cu13", "lib")
        names = ("libcublasLt.so.13", "libcublas.so.13")
        if all(_os.path.exists(_os.path.join(lib, n)) for n in names):
            try:
                for n in names:
                    ctypes.CDLL(_os.path.join(lib, n), mode=ctypes.RTLD_GLOBAL)
            except OSError:  # a broken or mismatched wheel: the system's cuBLAS, if any, is used instead
                pass
            return


_load_pip_cublas()

from . import _core, lcn  # noqa: E402
from ._fwt import fwt  # noqa: E402
from ._fwt_quantize import dequantize, fwt_quantize  # noqa: E402
from ._rotation import rademacher_signs  # noqa: E402
from ._gemm import Contract, PreparedOperand, gemm, gemm_prepare  # noqa: E402
from ._interop import empty  # noqa: E402

__version__: str = _core.__version__

__all__ = ["fwt", "fwt_quantize", "dequantize", "rademacher_signs", "gemm", "gemm_prepare", "PreparedOperand", "Contract", "empty", "lcn", "build_info", "cuda_devices", "cmake_dir", "include_dir", "cublas_preload", "__version__"]


def build_info() -> dict:
    """How this copy was built: version, CUDA on/off, architectures, cuBLAS, CPU kernel variants."""
    return dict(_core.build_info())


def cuda_devices() -> list:
    """The CUDA devices this process sees (empty without CUDA, a driver or a GPU)."""
    return list(_core.cuda_devices())


def cmake_dir() -> str:
    """Folder holding ironkernelsConfig.cmake: pass as ``-Dironkernels_DIR=...`` to CMake."""
    return _os.path.join(_os.path.dirname(__file__), "lib", "cmake", "ironkernels")


def cublas_preload() -> _Optional[str]:
    """Path of ``libironkernels_cublas.so``, the cuBLAS drop-in: ``LD_PRELOAD=<it> program`` runs the
    program's large DGEMMs, ZGEMMs and SGEMMs (cublas{D,Z,S}gemm_v2, cublasGemmEx on float64, complex128
    and float32, their strided-batched forms) under ``Contract.native()`` and passes every other call to
    cuBLAS (docs/gemm.md). None in a CPU-only build."""
    path = _os.path.join(_os.path.dirname(__file__), "lib", "libironkernels_cublas.so")
    return path if _os.path.exists(path) else None


def include_dir() -> str:
    """Folder holding the C++ headers (``ironkernels/ironkernels.hpp``)."""
    return _os.path.join(_os.path.dirname(__file__), "include")
