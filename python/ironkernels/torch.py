"""PyTorch's own door: ``fwt``, ``fwt_`` (in place), ``fwt_quantize`` and ``gemm`` as ``torch.library``
custom ops (``torch.ops.ironkernels.*``), with fake implementations so ``torch.compile(fullgraph=True)``
captures them without a graph break, and autograd for fwt and gemm. Each op calls the package's
function on the tensors (host or CUDA, the current stream), so its results are the package's.

    import ironkernels.torch as ikt
    y = ikt.fwt(x, block=128, normalized=True)          # differentiable; compiles
    q, scales = ikt.fwt_quantize(x, to="float8_e4m3fn", block=128)
"""
from __future__ import annotations

from typing import Optional

import numpy as np
import torch

import ironkernels as _ik

from ._fwt_quantize import _FIXED_GROUP, plan as _quantize_plan
from ._gemm_contract import op_shape, product_cotangents

__all__ = ["fwt", "fwt_", "fwt_quantize", "gemm"]

_ORDERS = ("natural", "sequency", "dyadic")


def _fwt_scale(scale: Optional[float], normalized: bool) -> tuple:
    return (None if scale is None else float(scale)), bool(normalized)


@torch.library.custom_op("ironkernels::fwt", mutates_args=())
def _fwt_op(x: torch.Tensor, axis: int, scale: Optional[float], normalized: bool, order: str, block: int,
            inverse: bool, signs: Optional[torch.Tensor], hadamard: Optional[torch.Tensor]) -> torch.Tensor:
    return _ik.fwt(x, axis=axis, scale=scale, normalized=normalized, order=order, block=block or None,
                   inverse=inverse, signs=_host(signs), hadamard=_host(hadamard))


@_fwt_op.register_fake
def _(x, axis, scale, normalized, order, block, inverse, signs, hadamard):
    return torch.empty(x.shape, dtype=x.dtype, device=x.device)


def _fwt_backward(ctx, grad):
    # The op is y = c·H·D·x (or its inverse, D·Hᵀ·x/(L·c)): the gradient is its transpose, c·D·Hᵀ·ȳ,
    # which is the inverse scaled by 1/(L·c) (and the transpose of the inverse, the forward scaled
    # alike): exact for every transform, a caller's non-symmetric H_m included.
    axis, scale, normalized, order, block, inverse, signs, hadamard = ctx.arguments
    length = block or grad.shape[axis]
    c = scale if scale is not None else (length ** -0.5 if normalized else 1.0)
    dx = _fwt_op(grad.contiguous(), axis, 1.0 / (length * c), False, order, block, not inverse, signs, hadamard)
    return (dx,) + (None,) * 8


def _fwt_setup(ctx, inputs, output):
    ctx.arguments = inputs[1:]


_fwt_op.register_autograd(_fwt_backward, setup_context=_fwt_setup)


@torch.library.custom_op("ironkernels::fwt_", mutates_args=("x",))
def _fwt_inplace_op(x: torch.Tensor, axis: int, scale: Optional[float], normalized: bool, order: str,
                    block: int, inverse: bool, signs: Optional[torch.Tensor], hadamard: Optional[torch.Tensor]) -> None:
    _ik.fwt(x, axis=axis, scale=scale, normalized=normalized, order=order, block=block or None, inverse=inverse,
            signs=_host(signs), hadamard=_host(hadamard), out=x)


@_fwt_inplace_op.register_fake
def _(x, axis, scale, normalized, order, block, inverse, signs, hadamard):
    return None


def _host(t: Optional[torch.Tensor]):
    return None if t is None else t.cpu().numpy()


def _rotation_tensors(x: torch.Tensor, axis: int, signs, hadamard) -> tuple:
    """signs (a seed, or values) and hadamard as the int8 host tensors the ops take, checked here."""
    from ._rotation import hadamard_matrix_of, signs_of

    if signs is not None:
        given = signs.cpu().numpy() if isinstance(signs, torch.Tensor) else signs
        if not -x.dim() <= axis < x.dim():
            raise ValueError(f"fwt: axis={axis} is out of range for an array of {x.dim()} dimensions")
        signs = torch.from_numpy(signs_of(given, x.shape[axis], "fwt"))
    if hadamard is not None:
        hadamard = torch.from_numpy(hadamard_matrix_of(hadamard.cpu().numpy() if isinstance(hadamard, torch.Tensor)
                                                       else hadamard, "fwt"))
    return signs, hadamard


def fwt(x: torch.Tensor, *, axis: int = -1, scale: Optional[float] = None, normalized: bool = False,
        order: str = "natural", block: Optional[int] = None, signs=None, hadamard=None,
        inverse: bool = False) -> torch.Tensor:
    """``ironkernels.fwt`` as the custom op ``torch.ops.ironkernels.fwt`` (a new tensor; autograd: the
    transposed transform of the gradient)."""
    scale, normalized = _fwt_scale(scale, normalized)
    signs, hadamard = _rotation_tensors(x, int(axis), signs, hadamard)
    return _fwt_op(x, int(axis), scale, normalized, str(order), int(block or 0), bool(inverse), signs, hadamard)


def fwt_(x: torch.Tensor, *, axis: int = -1, scale: Optional[float] = None, normalized: bool = False,
         order: str = "natural", block: Optional[int] = None, signs=None, hadamard=None,
         inverse: bool = False) -> torch.Tensor:
    """The transform in place (``torch.ops.ironkernels.fwt_``, declared as mutating x); returns x."""
    scale, normalized = _fwt_scale(scale, normalized)
    signs, hadamard = _rotation_tensors(x, int(axis), signs, hadamard)
    _fwt_inplace_op(x, int(axis), scale, normalized, str(order), int(block or 0), bool(inverse), signs, hadamard)
    return x


@torch.library.custom_op("ironkernels::fwt_quantize", mutates_args=())
def _fwt_quantize_op(x: torch.Tensor, to: str, block: int, group: int, signs: Optional[torch.Tensor],
                     normalized: bool, scale_layout: str, hadamard: Optional[torch.Tensor],
                     global_amax: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    q, s = _ik.fwt_quantize(x, to=to, block=block or None, group=group or None, signs=_host(signs),
                            hadamard=_host(hadamard), normalized=normalized, scale_layout=scale_layout,
                            global_amax=global_amax or None)
    if to == "nvfp4":
        return q, s[0], s[1]
    return q, s, torch.ones(1, dtype=torch.float32, device=x.device)


@_fwt_quantize_op.register_fake
def _(x, to, block, group, signs, normalized, scale_layout, hadamard, global_amax):
    order = None if hadamard is None else np.ones(tuple(hadamard.shape), np.int8)  # (only its order matters here)
    p = _quantize_plan(tuple(x.shape), to, block or None, group or None, None, scale_layout, order)
    q = torch.empty(p.q_shape, dtype=torch.int8 if to == "int8" else torch.uint8, device=x.device)
    s = torch.empty(p.s_shape, dtype=torch.uint8 if to in _FIXED_GROUP else torch.float32, device=x.device)
    return q, s, torch.empty(1, dtype=torch.float32, device=x.device)


def fwt_quantize(x: torch.Tensor, *, to: str, block: Optional[int] = None, group: Optional[int] = None,
                 signs=None, hadamard=None, normalized: bool = True, scale_layout: str = "row-major",
                 global_amax: Optional[float] = None):
    """``ironkernels.fwt_quantize`` as ``torch.ops.ironkernels.fwt_quantize``: ``(q, scales)``, for nvfp4
    ``(q, (block_scales, tensor_scale))``. An int seed for ``signs`` becomes its ±1 vector here (the
    op's arguments are tensors)."""
    if signs is not None or hadamard is not None:  # the seed's ±1 vector, the values checked
        p = _quantize_plan(tuple(x.shape), to, block, group,
                           signs.cpu().numpy() if isinstance(signs, torch.Tensor) else signs, scale_layout,
                           hadamard.cpu().numpy() if isinstance(hadamard, torch.Tensor) else hadamard)
        signs = None if p.signs is None else torch.from_numpy(p.signs)
        hadamard = None if p.hadamard is None else torch.from_numpy(p.hadamard)
    q, s, t = _fwt_quantize_op(x, str(to), int(block or 0), int(group or 0), signs, bool(normalized), str(scale_layout),
                               hadamard, float(global_amax or 0.0))
    return q, ((s, t) if to == "nvfp4" else s)


@torch.library.custom_op("ironkernels::gemm", mutates_args=())
def _gemm_op(a: torch.Tensor, b: torch.Tensor, trans_a: bool, trans_b: bool, moduli: int, scaling: str,
             rtol: float) -> torch.Tensor:
    contract = (_ik.Contract(moduli=moduli, scaling=scaling) if moduli else
                _ik.Contract(rtol=rtol) if rtol > 0 else _ik.Contract.native())
    return _ik.gemm(a, b, trans_a=trans_a, trans_b=trans_b, contract=contract)


@_gemm_op.register_fake
def _(a, b, trans_a, trans_b, moduli, scaling, rtol):
    m, n = op_shape(a.shape, trans_a)[0], op_shape(b.shape, trans_b)[1]
    return torch.empty(a.shape[:-2] + (m, n), dtype=a.dtype, device=a.device)


def _gemm_backward(ctx, grad):
    trans_a, trans_b, moduli, scaling, rtol = ctx.arguments
    da, db = product_cotangents(lambda x, y, tx, ty: _gemm_op(x, y, tx, ty, moduli, scaling, rtol),
                                *ctx.saved_tensors, grad.contiguous(), trans_a, trans_b)
    return da, db, None, None, None, None, None


def _gemm_setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0], inputs[1])
    ctx.arguments = inputs[2:]


_gemm_op.register_autograd(_gemm_backward, setup_context=_gemm_setup)


def gemm(a: torch.Tensor, b: torch.Tensor, *, trans_a: bool = False, trans_b: bool = False,
         contract: Optional["_ik.Contract"] = None) -> torch.Tensor:
    """``ironkernels.gemm`` as ``torch.ops.ironkernels.gemm`` (autograd: the two products of the
    gradient under the same contract)."""
    contract = _ik.Contract.native() if contract is None else contract
    if not isinstance(contract, _ik.Contract):
        raise TypeError(f"gemm: contract must be an ironkernels.Contract, got {type(contract).__name__}")
    rtol = 0.0 if contract.is_native or not contract.certified else contract.rtol_at(1)
    return _gemm_op(a, b, bool(trans_a), bool(trans_b), int(contract.moduli or 0), contract.scaling, float(rtol))
