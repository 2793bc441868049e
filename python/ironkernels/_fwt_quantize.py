"""Rotate and quantise (fwt_quantize) and its inverse on the codes (dequantize)."""
from __future__ import annotations

import numbers
from typing import Any, NamedTuple, Optional

import numpy as np

from . import _core
from ._interop import (core_view, device_of, empty_like, framework_of, is_numpy_bfloat16, raise_unviewable,
                       resolve_stream, shape_of)
from ._rotation import hadamard_matrix_of, rotation_length_ok, signs_of

FORMATS = ("float8_e4m3fn", "float8_e5m2", "int8", "int4", "mxfp4", "nvfp4")
_PACKED = {"int4", "mxfp4", "nvfp4"}
_FIXED_GROUP = {"mxfp4": 32, "nvfp4": 16}


def _float_table(exponent: int, mantissa: int, nan_codes: tuple, inf_codes: tuple = ()) -> np.ndarray:
    """The value of every code of a small float format (sign, exponent, mantissa; bias 2^(e-1) - 1)."""
    codes = np.arange(1 << (1 + exponent + mantissa))
    sign = np.where(codes >> (exponent + mantissa) & 1, -1.0, 1.0)
    e, m = codes >> mantissa & ((1 << exponent) - 1), codes & ((1 << mantissa) - 1)
    bias = (1 << (exponent - 1)) - 1
    value = np.where(e == 0, np.ldexp(m.astype(np.float64), 1 - bias - mantissa),
                     np.ldexp((m + (1 << mantissa)).astype(np.float64), e - bias - mantissa))
    body = codes & ((1 << (exponent + mantissa)) - 1)
    value = np.where(np.isin(body, inf_codes), np.inf, value)
    value = np.where(np.isin(body, nan_codes), np.nan, value)
    return (sign * value).astype(np.float32)


_E4M3 = _float_table(4, 3, (0x7F,))
_E5M2 = _float_table(5, 2, (0x7D, 0x7E, 0x7F), (0x7C,))
_E2M1 = _float_table(2, 1, ())


class Plan(NamedTuple):
    """What fwt_quantize's arguments come to: the signs and the base matrix (int8, or None), the scale
    group, and the shapes of q and of the scales."""

    signs: Optional[np.ndarray]
    hadamard: Optional[np.ndarray]
    global_amax: float  # nvfp4's given amax, or 0.0 (the tensor's own)
    group: int
    q_shape: tuple
    s_shape: tuple


def plan(shape: tuple, to: str, block: Optional[int], group: Optional[int], signs: Any, scale_layout: str,
         hadamard: Any = None, global_amax: Optional[float] = None) -> Plan:
    """The checks of fwt_quantize's arguments that need only x's shape (shared with ironkernels.jax,
    where they run when traced): TypeError / ValueError naming the argument."""
    if not isinstance(to, str) or to not in FORMATS:
        raise ValueError(f"fwt_quantize: to={to!r}; accepted: {', '.join(repr(f) for f in FORMATS)}")
    for name, v in (("block", block), ("group", group)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Integral)):
            raise TypeError(f"fwt_quantize: {name} must be an int or None, got {type(v).__name__}")
        if v is not None and v < 1:
            raise ValueError(f"fwt_quantize: {name} = {v}; accepted: a positive divisor of N, or None")
    if scale_layout not in ("row-major", "swizzled-128x4"):
        raise ValueError(f"fwt_quantize: scale_layout={scale_layout!r}; accepted: 'row-major', 'swizzled-128x4'")
    shape = tuple(shape)
    if not shape:
        raise ValueError("fwt_quantize: x must have at least one dimension, got a scalar")
    n = shape[-1]
    length = block or n
    matrix = hadamard_matrix_of(hadamard, "fwt_quantize")
    if n and (not rotation_length_ok(length, matrix) or n % length):
        kinds = f"{matrix.shape[0]}·2^k (the hadamard's order)" if matrix is not None else "2^k or m·2^k (m = 12, 20, 28)"
        raise ValueError(f"fwt_quantize: the rotation's length {length} (block, else N = x.shape[-1]) for N = {n}; "
                         f"accepted: {kinds} dividing N")
    sign_array = signs_of(signs, n, "fwt_quantize")
    if global_amax is not None:
        if isinstance(global_amax, bool) or not isinstance(global_amax, numbers.Real):
            raise TypeError(f"fwt_quantize: global_amax must be a float or None, got {type(global_amax).__name__}")
        if to != "nvfp4" or not 0.0 < float(global_amax) <= 3.4028234663852886e38:
            raise ValueError(f"fwt_quantize: global_amax = {global_amax} for {to}; accepted: a positive finite float32 "
                             "value, for nvfp4 only, or None")
    g = group if group is not None else _FIXED_GROUP.get(to, n)
    if to in _FIXED_GROUP and g != _FIXED_GROUP[to]:
        raise ValueError(f"fwt_quantize: group = {group} for {to}, whose blocks are {_FIXED_GROUP[to]}; accepted: None "
                         f"or {_FIXED_GROUP[to]}")
    if n and (g < 1 or n % g):
        raise ValueError(f"fwt_quantize: group = {g} does not divide N = {n}; accepted: a divisor of N")
    rows = int(np.prod(shape[:-1], dtype=np.int64))
    q_shape = shape[:-1] + ((n // 2) if to in _PACKED else n,)
    groups = n // g if g else 0
    s_shape = (shape[:-1] + (groups,) if scale_layout == "row-major"
               else (-(-rows // 128) * 128 * (-(-groups // 4) * 4),))
    return Plan(sign_array, matrix, 0.0 if global_amax is None else float(global_amax), g, q_shape, s_shape)


def fwt_quantize(
    x: Any,
    *,
    to: str,
    block: Optional[int] = None,
    group: Optional[int] = None,
    signs: Any = None,
    hadamard: Any = None,
    normalized: bool = True,
    scale_layout: str = "row-major",
    global_amax: Optional[float] = None,
    out: Any = None,
    scales: Any = None,
    stream: Any = None,
) -> tuple:
    """Rotate the last axis by a Hadamard and quantise: ``r = H · (signs ∘ x) / √b`` (b = ``block``,
    else N), then each group of r with one scale. Returns ``(q, scales)`` in x's framework; for
    ``"nvfp4"`` scales is ``(block_scales, tensor_scale)``.

    Args:
        x: (…, N) float16, bfloat16, float32 or float64, C-contiguous, on the host or a CUDA device
            (there in one pass over memory for power-of-two rotations and groups of up to 2^15 from
            16-bit and float32 rows; docs/fwt.md says which calls take two).
        to: ``"float8_e4m3fn"``, ``"float8_e5m2"`` (q: uint8 codes, one per value; view them as the
            framework's float8 dtype), ``"int8"`` (q: int8 in [-127, 127]), ``"int4"`` (two's
            complement in [-7, 7]), ``"mxfp4"`` (OCP MX: E2M1 values, blocks of 32, E8M0 scales) or
            ``"nvfp4"`` (E2M1, blocks of 16, E4M3 scales and one float32 tensor scale); the 4-bit
            formats two per byte, element 2i in the low nibble.
        block: the rotation's length: H_block on each run of ``block`` elements (16, 32, 128, …),
            else the whole row.
        group: elements per scale along the row (float8 / int formats; default the row); MX and NV
            fix it at 32 and 16.
        signs: None, an int seed (``rademacher_signs(N, seed)``) or N values ±1: the randomised
            Hadamard's diagonal, applied to x before H.
        hadamard: None, or an m × m host array of ±1 with H·Hᵀ = m·I (checked): the base matrix of
            rotations of m·2^k, ``H_m ⊗ H_{2^k}``, in place of the built-in H_12, H_20, H_28 — e.g.
            the tables a model was rotated with offline (QuaRot's, SpinQuant's).
        normalized: scale the rotation by ``1/√b`` (orthonormal); False: unscaled.
        global_amax: nvfp4 only: the rotated tensor's largest magnitude as calibrated beforehand
            (the tensor scale is then 2688 / it, larger values saturate), so that x is read once;
            None: this tensor's own (on CUDA a second read of x).
        scale_layout: ``"row-major"`` (scales of shape (…, N / group)) or ``"swizzled-128x4"``: the
            tiles block-scaled GEMMs read (cuBLASLt, CUTLASS): 128 rows × 4 groups per 512-entry
            tile, tiles in row-major order, entry (r % 32)·16 + (r // 32 % 4)·4 + c % 4 within one,
            padded with zeros; a flat array (rows = the product of x's leading dimensions).
        out, scales: arrays to write into (q's and the scales' shapes and dtypes above; nvfp4's
            scales a (block_scales, tensor_scale) pair).
        stream: for CUDA arrays: a handle or stream object; default the framework's current stream.

    Every element's code is the format's rounding to nearest even, saturating, of ``r · m`` with one
    multiplier m per group (docs/fwt.md gives m and the scale for each format); ``dequantize``
    gives back ``code · scale``. Raises TypeError / ValueError before anything is written.
    """
    framework_of(x, "fwt_quantize: x")
    p = plan(shape_of(x, "fwt_quantize: x"), to, block, group, signs, scale_layout, hadamard, global_amax)
    sign_array, g, q_shape, s_shape = p.signs, p.group, p.q_shape, p.s_shape
    tensor_scale = None
    if to == "nvfp4" and scales is not None:
        if not isinstance(scales, tuple) or len(scales) != 2:
            raise TypeError("fwt_quantize: scales for nvfp4 must be a (block_scales, tensor_scale) pair")
        scales, tensor_scale = scales
    q = out if out is not None else empty_like(x, q_shape, "int8" if to == "int8" else "uint8")
    s = scales if scales is not None else empty_like(x, s_shape, "uint8" if to in _FIXED_GROUP else "float32")
    if to == "nvfp4" and tensor_scale is None:
        tensor_scale = empty_like(x, (1,), "float32")
    arrays = {"x": x, "q": q, "scales": s, **({"tensor_scale": tensor_scale} if tensor_scale is not None else {})}
    for name, a in arrays.items():
        if device_of(a) != device_of(x):
            raise ValueError(f"fwt_quantize: {name} is on {device_of(a)} but x is on {device_of(x)}; they must be on "
                             "one device")
    try:
        _core.fwt_quantize(core_view(x), core_view(q), core_view(s),
                           None if tensor_scale is None else core_view(tensor_scale), to=to, block=block or 0,
                           group=g if to not in _FIXED_GROUP else 0, normalized=bool(normalized), signs=sign_array,
                           hadamard=p.hadamard, global_amax=p.global_amax, as_bfloat16=is_numpy_bfloat16(x), scale_layout=scale_layout,
                           stream=resolve_stream(stream, x))
    except TypeError as e:
        raise_unviewable("fwt_quantize", e, arrays, "float16, bfloat16, float32, float64 (x); uint8, int8, float32 "
                         "(outputs)", writable=("q", "scales", "tensor_scale"))
    return q, ((s, tensor_scale) if to == "nvfp4" else s)


def unswizzle_scales(scales: Any, rows: int, groups: int) -> np.ndarray:
    """Row-major (rows, groups) scales from the swizzled-128x4 layout (see fwt_quantize)."""
    flat = _host(scales, "scales").reshape(-1)
    tiles_r, tiles_c = -(-rows // 128), -(-groups // 4)
    if flat.size != tiles_r * 128 * tiles_c * 4:
        raise ValueError(f"scales has {flat.size} entries; the swizzled-128x4 layout of {rows} × {groups} scales has "
                         f"{tiles_r * 128 * tiles_c * 4}")
    r, c = np.arange(rows)[:, None], np.arange(groups)[None, :]
    at = ((r // 128) * tiles_c + c // 4) * 512 + (r % 32) * 16 + (r // 32 % 4) * 4 + c % 4
    return flat[at]


def dequantize(q: Any, scales: Any, *, to: str, scale_layout: str = "row-major", group: Optional[int] = None) -> np.ndarray:
    """The values ``fwt_quantize`` encoded: code · scale per group (nvfp4: · the tensor scale), as
    float32 NumPy arrays of x's shape. The rotated values, not x: ``fwt(dequantize(...),
    inverse=True, block=..., normalized=...)`` (and the signs again) approximates x. Swizzled scales
    need the ``group`` they were made with (MX and NV imply theirs)."""
    if not isinstance(to, str) or to not in FORMATS:
        raise ValueError(f"dequantize: to={to!r}; accepted: {', '.join(repr(f) for f in FORMATS)}")
    tensor = None
    if to == "nvfp4":
        if not isinstance(scales, tuple) or len(scales) != 2:
            raise TypeError("dequantize: scales for nvfp4 must be the (block_scales, tensor_scale) pair")
        scales, tensor = scales
    codes, s = _host(q, "q"), _host(scales, "scales")
    if to in _PACKED:
        low, high = codes.astype(np.uint8) & 0xF, codes.astype(np.uint8) >> 4
        codes = np.stack([low, high], axis=-1).reshape(codes.shape[:-1] + (2 * codes.shape[-1],))
    n = codes.shape[-1]
    if scale_layout == "swizzled-128x4":
        rows = int(np.prod(codes.shape[:-1], dtype=np.int64))
        if to not in _FIXED_GROUP and group is None:
            raise ValueError(f"dequantize: scale_layout='swizzled-128x4' for {to} needs the group the scales were "
                             "made with (the layout does not show it)")
        group = _FIXED_GROUP.get(to) or group
        if n % group:
            raise ValueError(f"dequantize: group = {group} does not divide N = {n}")
        s = unswizzle_scales(s, rows, n // group).reshape(codes.shape[:-1] + (n // group,))
    elif scale_layout != "row-major":
        raise ValueError(f"dequantize: scale_layout={scale_layout!r}; accepted: 'row-major', 'swizzled-128x4'")
    if s.shape[:-1] != codes.shape[:-1] or s.shape[-1] == 0 or n % s.shape[-1]:
        raise ValueError(f"dequantize: scales has shape {s.shape} for values of shape {codes.shape}; accepted: "
                         "(…, N / group)")
    if to in ("float8_e4m3fn", "float8_e5m2"):
        values = (_E4M3 if to == "float8_e4m3fn" else _E5M2)[codes.astype(np.uint8)]
    elif to == "int8":
        values = codes.astype(np.int8).astype(np.float32)
    elif to == "int4":
        values = ((codes.astype(np.int16) ^ 8) - 8).astype(np.float32)
    else:
        values = _E2M1[codes.astype(np.int64)]
    if to == "mxfp4":
        scale = np.where(s == 255, np.float32(np.nan), np.ldexp(np.float32(1), s.astype(np.int32) - 127)).astype(np.float32)
    elif to == "nvfp4":
        scale = _E4M3[s.astype(np.uint8)] * _host(tensor, "tensor_scale")[0]
    else:
        scale = s.astype(np.float32)
    return values * np.repeat(scale, n // s.shape[-1], axis=-1)


def _host(a: Any, name: str) -> np.ndarray:
    if device_of(a)[0] != "cpu":
        raise ValueError(f"dequantize: {name} is on {device_of(a)}; accepted: host arrays")
    return np.asarray(a) if framework_of(a, f"dequantize: {name}") == "numpy" else np.from_dlpack(a)
