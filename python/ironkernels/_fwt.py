"""Fast Walsh–Hadamard transform."""
from __future__ import annotations

import numbers
from typing import Any, Optional

from . import _core
from ._interop import (core_view, device_of, dtype_name, empty_like, framework_of, is_numpy_bfloat16,
                       raise_unviewable, resolve_stream, shape_of)
from ._rotation import hadamard_matrix_of, signs_of

_DTYPES = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128", "int32", "int64")


def fwt(
    x: Any,
    *,
    axis: int = -1,
    scale: Optional[float] = None,
    normalized: bool = False,
    order: str = "natural",
    block: Optional[int] = None,
    signs: Any = None,
    hadamard: Any = None,
    inverse: bool = False,
    out: Any = None,
    stream: Any = None,
) -> Any:
    """Fast Walsh–Hadamard transform ``y = scale · H_N · D · x`` along ``axis`` (D = diag(signs), else I).

    ``H_N`` is the Sylvester Hadamard matrix in natural order, ``H[i, j] = (-1)^popcount(i & j)``
    (for N = m·2^k, ``H_m ⊗ H_{2^k}``), symmetric with ``H_N · H_N = N · I`` for every N: so
    ``fwt(fwt(x)) == N · x`` and ``fwt(x, normalized=True)`` is orthonormal (scale ``1/√N``).

    Args:
        x: array of float16, bfloat16, float32, float64, complex64, complex128, int32 or int64
            (NumPy, PyTorch, CuPy, or any DLPack producer), with N = 2^k, k ≤ 30, or N = m·2^k,
            m = 12, 20, 28 (``H_m`` Paley's second construction), along ``axis``;
            every dimension may have any stride (a strided axis is read in place, not transposed).
            float16/bfloat16 are computed in float32 and rounded once (on CUDA, N > 2^15 takes
            two or three passes over memory and rounds once per pass); complex as its real and
            imaginary parts; int32/int64 exactly modulo 2^32 / 2^64 (two's-complement wrapping).
        axis: the axis to transform (negative counts from the end).
        scale: multiplies the result (overrides ``normalized``); default 1. Integers take an
            integer scale only (the product wraps like the sums).
        normalized: scale by 1/√N (not for integers).
        order: ``"natural"`` (Hadamard), ``"sequency"`` (Walsh: output k is the coefficient of the
            row with k sign changes) or ``"dyadic"`` (Paley: bit-reversed natural order), for
            N = 2^k. On CUDA the orders take one more pass over memory (in place, through a
            workspace the size of x).
        block: the block-diagonal transform: ``H_block`` on each run of ``block`` consecutive
            elements along ``axis`` (a divisor of N of a length above: 16, 32, 128, …);
            ``normalized`` then scales by ``1/√block``. Default: the whole axis.
        signs: None, an int seed (``rademacher_signs(N, seed)``) or N values ±1 along the axis (N
            its whole length): the randomised Hadamard's diagonal D, applied to x before H (one more
            pass over memory on CUDA).
        hadamard: None, or an m × m host array of ±1 with H·Hᵀ = m·I (checked; m ≤ 512): the base
            matrix of lengths m·2^k, ``H_N = H ⊗ H_{2^k}``, in place of the built-in H_12, H_20,
            H_28 — the tables a model was rotated with offline (QuaRot's, SpinQuant's), say. Its
            H_m pass costs m operations per element (on CUDA one more pass over memory).
        inverse: undo the transform these arguments make: ``fwt(fwt(x, **kw), inverse=True, **kw)``
            gives x back: ``D · H_Nᵀ · y / (N · scale)`` (N the block's length with ``block``; ``H_Nᵀ``
            is ``H_N`` but for a caller's non-symmetric ``hadamard``). Floating and complex dtypes
            (integers wrap: no inverse).
        out: array of x's shape, dtype and device to write into; may be ``x`` itself (in place).
            Default: a new C-contiguous array of x's framework.
        stream: CUDA stream (int handle or object with ``__cuda_stream__``); default: the current
            stream of x's framework. Ignored for host arrays.

    Returns:
        ``out`` (or the new array), in x's framework. CUDA work is queued on the stream, not waited for.

    Raises:
        TypeError: wrong dtype, or not an array. ValueError: bad shape, N, axis, strides, or an
        ``out`` that mismatches or partially overlaps ``x``. Nothing is written when these are raised.
    """
    framework_of(x, "fwt: x")
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"fwt: axis must be an int, got {type(axis).__name__}")
    if scale is not None and (isinstance(scale, bool) or not isinstance(scale, numbers.Real)):
        raise TypeError(f"fwt: scale must be a real number or None, got {type(scale).__name__}")
    if not isinstance(normalized, (bool, numbers.Integral)):
        raise TypeError(f"fwt: normalized must be a bool, got {type(normalized).__name__}")
    if not isinstance(order, str):
        raise TypeError(f"fwt: order must be a str ('natural', 'sequency' or 'dyadic'), got {type(order).__name__}")
    if block is not None and (isinstance(block, bool) or not isinstance(block, numbers.Integral)):
        raise TypeError(f"fwt: block must be an int or None, got {type(block).__name__}")
    if block is not None and block < 1:
        raise ValueError(f"fwt: block = {block}; accepted: a positive divisor of N (2^k or m·2^k), or None")
    if not isinstance(inverse, (bool, numbers.Integral)):
        raise TypeError(f"fwt: inverse must be a bool, got {type(inverse).__name__}")
    x_dev = device_of(x)
    if out is not None:
        framework_of(out, "fwt: out")
        out_dev = device_of(out)
        if out_dev != x_dev:
            raise ValueError(
                f"fwt: out is on {out_dev[0]}:{out_dev[1]} but x is on "
                f"{x_dev[0]}:{x_dev[1]}; they must be on the same device (no implicit transfers)"
            )
        if is_numpy_bfloat16(x) and framework_of(out) == "numpy" and not is_numpy_bfloat16(out):
            raise TypeError(f"fwt: out has dtype {out.dtype} but x has {x.dtype}; they must match")
    result = out
    handle = resolve_stream(stream, x, x_dev)
    if result is None:
        if framework_of(x) == "dlpack" and dtype_name(x) not in _DTYPES:  # before allocating a result of it
            raise TypeError(f"fwt: x has dtype {dtype_name(x)}; accepted: {', '.join(_DTYPES)}")
        result = empty_like(x)
    sign_array = None
    if signs is not None:
        shape = shape_of(x, "fwt: x")
        if shape and -len(shape) <= axis < len(shape):  # (else the core names the axis)
            sign_array = signs_of(signs, shape[axis], "fwt")
    matrix = hadamard_matrix_of(hadamard, "fwt")
    try:
        _core.fwt(core_view(x), core_view(result), axis=int(axis), scale=None if scale is None else float(scale),
                  normalized=bool(normalized), stream=handle, as_bfloat16=is_numpy_bfloat16(x),
                  order=order, block=0 if block is None else int(block), signs=sign_array, hadamard=matrix,
                  inverse=bool(inverse))
    except TypeError as e:  # an array nanobind could not view: say which and why (nothing ran)
        raise_unviewable("fwt", e, {"x": x, "out": result}, ", ".join(_DTYPES))
    return result

