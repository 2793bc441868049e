"""JAX's own door: ``fwt``, ``gemm`` and ``fwt_quantize`` as XLA FFI calls (the CPU paths on host buffers,
the CUDA kernels on XLA's stream and scratch memory), so they run inside
``jax.jit`` and batch under ``jax.vmap``; ``fwt`` and ``gemm`` differentiate under ``jax.grad`` (fwt's
cotangent is its transposed transform; gemm's cotangents are gemms).

Needs a copy of ironkernels built with jaxlib present (``pip install jax && pip install
--no-build-isolation .``: the ``_jax_ffi`` module); the rest of the package never imports JAX."""
from __future__ import annotations

import functools
import importlib.util
import numbers
from typing import Optional

import jax
import jax.numpy as jnp
import numpy as np

if importlib.util.find_spec(f"{__package__}._jax_ffi") is None:  # a build without jaxlib's headers
    raise ImportError("ironkernels.jax: this copy of ironkernels was built without the JAX door (_jax_ffi); "
                      "rebuild with jax installed: pip install jax && pip install --no-build-isolation .")
try:
    from . import _jax_ffi
except ImportError as e:  # built, but it does not load here
    raise ImportError(f"ironkernels.jax: the JAX door (_jax_ffi) is in this copy but does not load: {e}") from e

__all__ = ["fwt", "gemm", "fwt_quantize"]

_ORDERS = {"natural": 0, "sequency": 1, "dyadic": 2}
_DTYPES = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128", "int32", "int64")


@functools.lru_cache(maxsize=None)
def _register() -> None:
    handlers = _jax_ffi.handlers()
    for op in ("fwt", "gemm", "fwt_quantize"):
        jax.ffi.register_ffi_target(f"ironkernels_{op}", handlers[f"{op}_cpu"], platform="cpu")
        if f"{op}_cuda" in handlers:
            jax.ffi.register_ffi_target(f"ironkernels_{op}", handlers[f"{op}_cuda"], platform="CUDA")


def fwt(x, *, axis: int = -1, scale: Optional[float] = None, normalized: bool = False, order: str = "natural",
        block: Optional[int] = None, signs=None, hadamard=None, inverse: bool = False):
    """``ironkernels.fwt`` on a JAX array (its contract: docs/fwt.md), traced as one XLA FFI call; the
    result is a new JAX array. The arguments are checked when traced (TypeError / ValueError); signs
    and hadamard are host values, constants of the traced program."""
    from ._rotation import hadamard_matrix_of, rotation_length_ok, signs_of

    _register()
    x = jnp.asarray(x)
    dtype = jnp.dtype(x.dtype).name
    if dtype not in _DTYPES:
        raise TypeError(f"fwt: x has dtype {dtype}; accepted: {', '.join(_DTYPES)}")
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"fwt: axis={axis!r} for an array of {x.ndim} dimensions")
    if order not in _ORDERS:
        raise ValueError(f"fwt: order={order!r} is not an order; accepted: 'natural', 'sequency', 'dyadic'")
    if block is not None and (isinstance(block, bool) or not isinstance(block, numbers.Integral) or block < 1):
        raise ValueError(f"fwt: block = {block!r}; accepted: a positive divisor of N (2^k or m·2^k), or None")
    n = x.shape[axis]
    matrix = hadamard_matrix_of(hadamard, "fwt")
    length = block or n
    if not rotation_length_ok(length, matrix) or n % length:
        kinds = f"{matrix.shape[0]}·2^k (the hadamard's order)" if matrix is not None else "2^k or m·2^k (m = 12, 20, 28)"
        raise ValueError(f"fwt: the transform length {length} (block, else N = x.shape[{axis}] = {n}); accepted: "
                         f"{kinds} dividing N")
    if order != "natural" and (length & (length - 1) or matrix is not None):
        raise ValueError(f"fwt: order={order!r} is defined for H_{{2^k}}; {length} takes order='natural'")
    if dtype.startswith("int") and (normalized or inverse or (scale is not None and float(scale) != int(scale))):
        raise ValueError("fwt: integer transforms take an integer scale, no normalization and no inverse")
    sign_array = signs_of(signs, n, "fwt")
    # A negative axis: the leading dimensions vmap adds leave it pointing at the same one. The signs
    # and the matrix as bytes: hashable, as custom_vjp's static arguments must be.
    return _fwt(x, axis - x.ndim if axis >= 0 else axis, None if scale is None else float(scale), bool(normalized),
                _ORDERS[order], int(block or 0), None if sign_array is None else sign_array.tobytes(),
                None if matrix is None else matrix.tobytes(), bool(inverse))


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2, 3, 4, 5, 6, 7, 8))
def _fwt(x, axis, scale, normalized, order, block, signs, hadamard, inverse):
    call = jax.ffi.ffi_call("ironkernels_fwt", jax.ShapeDtypeStruct(x.shape, x.dtype), vmap_method="broadcast_all")
    matrix_order = 0 if hadamard is None else int(round(len(hadamard) ** 0.5))
    return call(x, axis=np.int64(axis), scale=np.float64(0.0 if scale is None else scale),
                has_scale=scale is not None, normalized=normalized, order=np.int64(order), block=np.int64(block),
                has_signs=signs is not None,
                signs=np.ones(1, np.int8) if signs is None else np.frombuffer(signs, np.int8),
                hadamard_order=np.int64(matrix_order),
                hadamard=np.ones(1, np.int8) if hadamard is None else np.frombuffer(hadamard, np.int8), inverse=inverse)


def _fwt_forward(x, axis, scale, normalized, order, block, signs, hadamard, inverse):
    return _fwt(x, axis, scale, normalized, order, block, signs, hadamard, inverse), None


def _fwt_backward(axis, scale, normalized, order, block, signs, hadamard, inverse, _, g):
    # y = c·H·D·x (or its inverse D·Hᵀ·x/(L·c)): the cotangent is the transpose, c·D·Hᵀ·ḡ — the inverse
    # scaled by 1/(L·c) (or the forward, scaled alike).
    length = block or g.shape[axis]
    c = scale if scale is not None else (length ** -0.5 if normalized else 1.0)
    return (_fwt(g, axis, 1.0 / (length * c), False, order, block, signs, hadamard, not inverse),)


_fwt.defvjp(_fwt_forward, _fwt_backward)


def gemm(a, b, *, trans_a: bool = False, trans_b: bool = False, contract=None):
    """``op(a) · op(b)`` in float64 by ``ironkernels.gemm`` under ``contract`` (default
    ``Contract.native()``; its contract: docs/gemm.md), traced as one XLA FFI call: the CPU reference on
    host buffers, the CUDA plan (tuned once, its workspace XLA's scratch memory) on the GPU."""
    from ._gemm_contract import MAX_K, Contract

    _register()
    a, b = jnp.asarray(a), jnp.asarray(b)
    for name, x in (("a", a), ("b", b)):
        if x.dtype != jnp.float64:
            raise TypeError(f"gemm: {name} has dtype {jnp.dtype(x.dtype).name}; accepted: float64 (jax_enable_x64)")
        if x.ndim != 2:
            raise ValueError(f"gemm: {name} has shape {x.shape}; accepted: a matrix")
    m, k = a.shape[::-1] if trans_a else a.shape
    kb, n = b.shape[::-1] if trans_b else b.shape
    if k != kb:
        raise ValueError(f"gemm: op(a) is {m}x{k} but op(b) is {kb}x{n}; inner dimensions must match")
    if k > MAX_K:
        raise ValueError(f"gemm: k = {k} is above the supported maximum {MAX_K}")
    contract = Contract.native() if contract is None else contract
    if not isinstance(contract, Contract):
        raise TypeError(f"gemm: contract must be an ironkernels.Contract, got {type(contract).__name__}")
    rtol = 0.0 if contract.is_native or not contract.certified else contract.rtol_at(k)
    key = (bool(trans_a), bool(trans_b), int(contract.moduli or 0),
           {"fast": 0, "accurate": 1, "norm": 2}[contract.scaling], bool(contract.is_native), float(rtol))
    return _gemm(a, b, key)


@functools.partial(jax.custom_vjp, nondiff_argnums=(2,))
def _gemm(a, b, key):
    trans_a, trans_b, moduli, scaling, native, rtol = key
    m = a.shape[1] if trans_a else a.shape[0]
    n = b.shape[0] if trans_b else b.shape[1]
    call = jax.ffi.ffi_call("ironkernels_gemm", jax.ShapeDtypeStruct((m, n), jnp.float64), vmap_method="sequential")
    return call(a, b, trans_a=trans_a, trans_b=trans_b, moduli=np.int64(moduli), scaling=np.int64(scaling),
                native=native, rtol=np.float64(rtol))


def _gemm_forward(a, b, key):
    return _gemm(a, b, key), (a, b)


def _gemm_backward(key, saved, g):
    # Each cotangent a gemm under the same contract.
    from ._gemm_contract import MAX_K, product_cotangents

    if max(g.shape) > MAX_K:  # the cotangents contract over m (for dB) and n (for dA)
        raise ValueError(f"gemm: the gradient contracts over {max(g.shape)}, above the supported maximum {MAX_K}")
    rest = key[2:]
    return product_cotangents(lambda x, y, tx, ty: _gemm(x, y, (tx, ty) + rest), *saved, g, key[0], key[1])


_gemm.defvjp(_gemm_forward, _gemm_backward)


def fwt_quantize(x, *, to: str, block: Optional[int] = None, group: Optional[int] = None, signs=None, hadamard=None,
                 normalized: bool = True, scale_layout: str = "row-major", global_amax: Optional[float] = None):
    """``ironkernels.fwt_quantize`` on a JAX array (host or CUDA buffers), traced as one XLA FFI call: returns
    JAX arrays ``(q, scales)``, for nvfp4 ``(q, (block_scales, tensor_scale))``."""
    from ._fwt_quantize import _FIXED_GROUP, FORMATS, plan

    _register()
    x = jnp.asarray(x)
    if jnp.dtype(x.dtype).name not in ("float16", "bfloat16", "float32", "float64"):
        raise TypeError(f"fwt_quantize: x has dtype {jnp.dtype(x.dtype).name}; accepted: float16, bfloat16, float32, "
                        "float64")
    p = plan(x.shape, to, block, group, signs, scale_layout, hadamard, global_amax)
    sign_array, g, q_shape, s_shape = p.signs, p.group, p.q_shape, p.s_shape
    results = (jax.ShapeDtypeStruct(q_shape, jnp.int8 if to == "int8" else jnp.uint8),
               jax.ShapeDtypeStruct(s_shape, jnp.uint8 if to in _FIXED_GROUP else jnp.float32),
               jax.ShapeDtypeStruct((1,), jnp.float32))
    # Batched alike only where each slice's outputs are its own rows: swizzled tiles span rows, and
    # nvfp4's tensor scale spans the tensor, so those run slice by slice.
    batchable = scale_layout == "row-major" and (to != "nvfp4" or p.global_amax > 0)
    call = jax.ffi.ffi_call("ironkernels_fwt_quantize", results,
                            vmap_method="broadcast_all" if batchable else "sequential")
    q, s, t = call(x, to=np.int64(FORMATS.index(to)), block=np.int64(block or 0),
                   group=np.int64(g if to not in _FIXED_GROUP else 0), normalized=bool(normalized),
                   scale_layout=np.int64(scale_layout != "row-major"), has_signs=sign_array is not None,
                   signs=sign_array if sign_array is not None else np.ones(1, np.int8),
                   hadamard_order=np.int64(0 if p.hadamard is None else p.hadamard.shape[0]),
                   hadamard=np.ones(1, np.int8) if p.hadamard is None else p.hadamard.reshape(-1),
                   global_amax=np.float64(p.global_amax))
    return q, ((s, t) if to == "nvfp4" else s)

