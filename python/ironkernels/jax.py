"""JAX's own door: ``ironkernels.jax.fwt`` as an XLA FFI call (the CPU transform on host buffers, the CUDA
kernels on XLA's stream), so it runs inside ``jax.jit``, batches under ``jax.vmap`` and differentiates
under ``jax.grad`` (every Hadamard the transform applies is symmetric: it is its own transpose).

Needs a copy of ironkernels built with jaxlib present (``pip install jax && pip install
--no-build-isolation .``: the ``_jax_ffi`` module); the rest of the package never imports JAX."""
from __future__ import annotations

import functools
import numbers
from typing import Optional

import jax
import jax.numpy as jnp
import numpy as np

try:
    from . import _jax_ffi
except ImportError as e:  # a build without jaxlib's headers
    raise ImportError("ironkernels.jax: this copy of ironkernels was built without the JAX door (_jax_ffi); "
                      "rebuild with jax installed: pip install jax && pip install --no-build-isolation .") from e

__all__ = ["fwt"]

_ORDERS = {"natural": 0, "sequency": 1, "dyadic": 2}
_DTYPES = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128", "int32", "int64")


@functools.lru_cache(maxsize=None)
def _register() -> None:
    handlers = _jax_ffi.handlers()
    jax.ffi.register_ffi_target("ironkernels_fwt", handlers["fwt_cpu"], platform="cpu")
    if "fwt_cuda" in handlers:
        jax.ffi.register_ffi_target("ironkernels_fwt", handlers["fwt_cuda"], platform="CUDA")


def fwt(x, *, axis: int = -1, scale: Optional[float] = None, normalized: bool = False, order: str = "natural",
        block: Optional[int] = None):
    """``ironkernels.fwt`` on a JAX array (its contract: docs/fwt.md), traced as one XLA FFI call; the
    result is a new JAX array. The arguments are checked when traced (TypeError / ValueError)."""
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
    if dtype.startswith("int") and (normalized or (scale is not None and float(scale) != int(scale))):
        raise ValueError("fwt: integer transforms take an integer scale and no normalization")
    # A negative axis: the leading dimensions vmap adds leave it pointing at the same one.
    return _fwt(x, axis - x.ndim if axis >= 0 else axis, None if scale is None else float(scale), bool(normalized),
                _ORDERS[order], int(block or 0))


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2, 3, 4, 5))
def _fwt(x, axis, scale, normalized, order, block):
    call = jax.ffi.ffi_call("ironkernels_fwt", jax.ShapeDtypeStruct(x.shape, x.dtype), vmap_method="broadcast_all")
    return call(x, axis=np.int64(axis), scale=np.float64(0.0 if scale is None else scale),
                has_scale=scale is not None, normalized=normalized, order=np.int64(order), block=np.int64(block))


def _fwt_forward(x, axis, scale, normalized, order, block):
    return _fwt(x, axis, scale, normalized, order, block), None


def _fwt_backward(axis, scale, normalized, order, block, _, g):
    # The transform is linear with a symmetric matrix: its transpose is itself, with the same scale.
    return (_fwt(g, axis, scale, normalized, order, block),)


_fwt.defvjp(_fwt_forward, _fwt_backward)
