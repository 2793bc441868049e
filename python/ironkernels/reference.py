"""Independent NumPy references used by the tests, the demo and the benchmarks (float64, slow, simple)."""
from __future__ import annotations

import numpy as np


def hadamard_matrix(n: int) -> np.ndarray:
    """The Sylvester Hadamard matrix H[i, j] = (-1)^popcount(i & j), float64."""
    i = np.arange(n, dtype=np.uint64)
    bits = np.bitwise_and(i[:, None], i[None, :])
    parity = np.zeros_like(bits)
    while bits.any():
        parity ^= bits & np.uint64(1)
        bits >>= np.uint64(1)
    return np.where(parity == 0, 1.0, -1.0)


def fwt_reference(x: np.ndarray, scale: float = 1.0, axis: int = -1) -> np.ndarray:
    """scale · H_N · x along `axis` by the textbook radix-2 stages on reshapes: in float64
    (complex128 for complex input); integers exactly modulo 2^64 (uint64 wrapping) with an integer
    scale, returned in x's integer dtype (so modulo 2^32 for int32)."""
    x = np.asarray(x)
    integer = x.dtype.kind in "iu"
    work = np.uint64 if integer else (np.complex128 if x.dtype.kind == "c" else np.float64)
    y = np.moveaxis(np.array(x, copy=True).astype(work), axis, -1)
    n = y.shape[-1]
    shape = y.shape
    h = 1
    with np.errstate(over="ignore"):
        while h < n:
            y = y.reshape(-1, n // (2 * h), 2, h)
            y = np.stack([y[:, :, 0] + y[:, :, 1], y[:, :, 0] - y[:, :, 1]], axis=2)
            h *= 2
        y = y.reshape(shape)
        if integer:
            if scale != 1:
                y = y * np.uint64(int(scale) % 2**64)
            y = y.astype(x.dtype)
        else:
            y = y * scale
    return np.moveaxis(y, -1, axis)


def bf16_bits_from_float(x: np.ndarray) -> np.ndarray:
    """float32 values -> bfloat16 bit patterns (uint16), round to nearest even."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return u.astype(np.uint16)


def float_from_bf16_bits(b: np.ndarray) -> np.ndarray:
    """bfloat16 bit patterns (uint16) -> float32 values (exact)."""
    return (np.asarray(b, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def gemm_family(rng: np.random.Generator, shape: tuple, phi: float) -> np.ndarray:
    """(u - 0.5) · exp(φ · g), u uniform and g normal: the standard inputs of the emulated DGEMM."""
    return (rng.random(shape) - 0.5) * np.exp(phi * rng.standard_normal(shape))


def gemm_rounding_bound(a: np.ndarray, b: np.ndarray, bits_a: int, bits_b: int, ref: np.ndarray) -> np.ndarray:
    """The gemm contract per element of a·b: k · 2^(e_i + f_j) · (ε_a + ε_b + ε_a·ε_b), ε = 2^-(bits+1)
    (e_i, f_j the exponent bounds of row i of a and column j of b; each scaled element rounded to the
    nearest integer is off by at most half a unit), plus one rounding of the result."""
    ea = 2.0 ** (np.floor(np.log2(np.abs(a).max(axis=1))) + 1)
    eb = 2.0 ** (np.floor(np.log2(np.abs(b).max(axis=0))) + 1)
    eps_a, eps_b = 2.0 ** -(bits_a + 1), 2.0 ** -(bits_b + 1)
    scaling = a.shape[1] * np.outer(ea, eb) * (eps_a + eps_b + eps_a * eps_b)
    return scaling + 2.0**-52 * np.abs(np.asarray(ref, dtype=np.float64))


def lcn_crossing_counts(xy: np.ndarray, edges: np.ndarray, block: int = 512) -> np.ndarray:
    """Per-edge proper-crossing counts of a grid drawing, all pairs with NumPy in blocks of rows: edges
    sharing an endpoint never cross; otherwise strict orientation tests on both segments (int64)."""
    xy, edges = np.asarray(xy, np.int64), np.asarray(edges, np.int64).reshape(-1, 2)
    p, q, s, t = xy[edges[:, 0]], xy[edges[:, 1]], edges[:, 0], edges[:, 1]
    counts = np.zeros(len(edges), np.int64)

    def orient(a, b, c):
        return np.sign((b[..., 0] - a[..., 0]) * (c[..., 1] - a[..., 1]) - (b[..., 1] - a[..., 1]) * (c[..., 0] - a[..., 0]))

    for i0 in range(0, len(edges), block):
        a, b = p[i0:i0 + block, None], q[i0:i0 + block, None]
        o1, o2 = orient(a, b, p[None]), orient(a, b, q[None])
        o3, o4 = orient(p[None], q[None], a), orient(p[None], q[None], b)
        si, ti = s[i0:i0 + block, None], t[i0:i0 + block, None]
        disjoint = (s[None] != si) & (s[None] != ti) & (t[None] != si) & (t[None] != ti)
        counts[i0:i0 + block] = np.count_nonzero(disjoint & (o1 * o2 < 0) & (o3 * o4 < 0), axis=1)
    return counts


def quantize_reference(r: np.ndarray, to: str, group: int, global_amax: float = 0.0) -> tuple:
    """Independent quantiser of already rotated float32 values r (…, N): per group of `group` elements
    (MX 32, NV 16) the scale and the codes as fwt_quantize defines them, rounded by ml_dtypes' casts
    (nearest even) after clipping to the format's largest value (nvfp4: the tensor scale from
    `global_amax` where it is > 0). Returns (codes, scales[, tensor scale]): codes one per element
    (4-bit ones unpacked, in 0 … 15), int8 for "int8"."""
    import ml_dtypes

    r = np.asarray(r, np.float32)
    g = r.reshape(r.shape[:-1] + (r.shape[-1] // group, group))
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        finite = np.isfinite(g).all(axis=-1, keepdims=True)
        amax = np.where(finite, np.abs(np.where(np.isfinite(g), g, 0)).max(axis=-1, keepdims=True), np.float32(np.nan))
        amax = amax.astype(np.float32)
        if to in ("float8_e4m3fn", "float8_e5m2", "int8", "int4"):
            qmax = np.float32({"float8_e4m3fn": 448, "float8_e5m2": 57344, "int8": 127, "int4": 7}[to])
            scale = np.where(finite, np.where(amax > 0, amax / qmax, np.float32(1)), np.float32(np.nan)).astype(np.float32)
            inv = np.where(finite & (amax > 0), qmax / amax, np.float32(0)).astype(np.float32)
            # qmax / amax past float32 (amax below about 1e-36): (g · 2^64) · (qmax / (amax · 2^64)).
            pre = np.where(np.isinf(inv), np.float32(2.0**64), np.float32(1)).astype(np.float32)
            inv = np.where(np.isinf(inv), qmax / (amax * pre), inv).astype(np.float32)
            v = ((g * pre).astype(np.float32) * inv).astype(np.float32)
            if to.startswith("float8"):
                dt = getattr(ml_dtypes, to)
                codes = np.clip(v, -qmax, qmax).astype(dt).view(np.uint8)
                codes = np.where(finite, codes, np.uint8(0x7F))
            else:
                codes = np.clip(np.rint(v), -qmax, qmax).astype(np.int64)
                codes = np.where(finite, codes, 0)
                codes = codes.astype(np.int8) if to == "int8" else (codes & 0xF).astype(np.uint8)
            return codes.reshape(r.shape), scale[..., 0]
        e2m1 = ml_dtypes.float4_e2m1fn
        if to == "mxfp4":
            mant, exp = np.frexp(np.where(finite & (amax > 0), amax, np.float32(1)))
            code = np.clip(exp.astype(np.int64) - 1 - 2, -127, 127) + 127
            code = np.where(amax == 0, 0, code)
            code = np.where(finite, code, 255).astype(np.uint8)
            v = np.ldexp(g, 127 - code.astype(np.int32)).astype(np.float32)
            codes = np.clip(v, -6, 6).astype(e2m1).view(np.uint8) & 0xF
            codes = np.where(code == 255, 0, codes).astype(np.uint8)
            return codes.reshape(r.shape), code[..., 0]
        if to == "nvfp4":
            finite_r = np.abs(r[np.isfinite(r)])
            t = np.float32(global_amax) if global_amax > 0 else (np.float32(finite_r.max()) if finite_r.size
                                                                 else np.float32(0))
            encode = (np.float32(min(np.float32(448 * 6) / t, np.finfo(np.float32).max)) if t > 0
                      else np.float32(1))
            s = ((amax / np.float32(6)).astype(np.float32) * encode).astype(np.float32)
            scode = np.clip(s, 0, 448).astype(ml_dtypes.float8_e4m3fn)
            d = scode.astype(np.float32)
            scode = np.where(finite, scode.view(np.uint8), np.uint8(0x7F)).astype(np.uint8)
            mult = np.where(finite & (d > 0), (encode / d).astype(np.float32), np.float32(0)).astype(np.float32)
            v = (g * mult).astype(np.float32)
            codes = np.clip(v, -6, 6).astype(e2m1).view(np.uint8) & 0xF
            codes = np.where(mult > 0, codes, 0).astype(np.uint8)
            return codes.reshape(r.shape), scode[..., 0], np.float32(1) / encode
    raise ValueError(f"quantize_reference: unknown format {to!r}")

