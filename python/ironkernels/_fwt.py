"""Fast Walsh–Hadamard transform."""
from __future__ import annotations

import numbers
from typing import Any, Optional

from . import _core
from ._interop import core_view, device_of, empty_like, framework_of, is_numpy_bfloat16, resolve_stream


def fwt(
    x: Any,
    *,
    axis: int = -1,
    scale: Optional[float] = None,
    normalized: bool = False,
    out: Any = None,
    stream: Any = None,
) -> Any:
    """Fast Walsh–Hadamard transform ``y = scale · H_N · x`` along ``axis``.

    ``H_N`` is the Sylvester Hadamard matrix in natural order, ``H[i, j] = (-1)^popcount(i & j)``,
    so ``fwt(fwt(x)) == N · x`` and ``fwt(x, normalized=True)`` is orthonormal (scale ``1/√N``).

    Args:
        x: array of float16, bfloat16, float32 or float64 (NumPy, PyTorch, CuPy, or any DLPack
            producer). The transformed axis must be contiguous and of length N = 2^k
            (k ≤ 15 on CUDA, ≤ 30 on the CPU); leading dims may have any shape and strides.
            float16/bfloat16 are computed in float32 and rounded once.
        axis: the axis to transform; only the last (-1) for now.
        scale: multiplies the result (overrides ``normalized``); default 1.
        normalized: scale by 1/√N.
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
    framework_of(x)  # raises TypeError for non-arrays
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"axis must be an int, got {type(axis).__name__}")
    if scale is not None and (isinstance(scale, bool) or not isinstance(scale, numbers.Real)):
        raise TypeError(f"scale must be a real number or None, got {type(scale).__name__}")
    if not isinstance(normalized, (bool, numbers.Integral)):
        raise TypeError(f"normalized must be a bool, got {type(normalized).__name__}")
    x_dev = device_of(x)
    if out is not None:
        framework_of(out)
        out_dev = device_of(out)
        if out_dev != x_dev:
            raise ValueError(
                f"out is on {out_dev[0]}:{out_dev[1]} but x is on "
                f"{x_dev[0]}:{x_dev[1]}; they must be on the same device (no implicit transfers)"
            )
    result = out
    handle = resolve_stream(stream, x, x_dev)
    if result is None:
        result = empty_like(x)
    _core.fwt(
        core_view(x),
        core_view(result),
        axis=int(axis),
        scale=None if scale is None else float(scale),
        normalized=bool(normalized),
        stream=handle,
        as_bfloat16=is_numpy_bfloat16(x),
    )
    return result

