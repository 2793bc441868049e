"""gemm on complex128 (ZGEMM): Re(op(a)·op(b)) and Im(op(a)·op(b)) as two real products over 2k, the
operands' parts interleaved along k (Re: (ReA, ImA)·(ReB, −ImB), Im: (ReA, ImA)·(ImB, ReB)), each
emulated under the call's contract and rounded once; docs/gemm.md states the bound this gives every
element."""
from __future__ import annotations

import numbers
from typing import Any, Callable

from ._gemm_contract import MAX_K, framework_arrays, op_shape
from ._interop import empty_like, on_stream, shape_of


def _interleave(first: Any, second: Any, axis: int, fw: str) -> Any:
    """first and second (same shape) interleaved along `axis`: positions 2l and 2l + 1 hold their l-th."""
    if fw == "torch":
        import torch

        z = torch.stack([first, second], dim=axis + 1)
    else:
        xp = __import__("cupy" if fw == "cupy" else "numpy")
        z = xp.stack([first, second], axis=axis + 1)
    shape = list(first.shape)
    shape[axis] *= 2
    return z.reshape(tuple(shape))


def stacked_operands(a: Any, b: Any, trans_a: bool, trans_b: bool, fw: str) -> tuple:
    """(x, y_re, y_im): real matrices with op(x)·op(y_re) = Re(op(a)·op(b)) and op(x)·op(y_im) =
    Im(op(a)·op(b)) over 2k, each pair of positions (2l, 2l + 1) of the inner dimension one term:
    op(x) = (Re op(a), Im op(a)), op(y_re) = (Re op(b), −Im op(b)) and op(y_im) = (Im op(b), Re op(b)),
    interleaved, in the operands' own orientation (the transposes stay flags). Interleaved, a column
    of y_re and of y_im holds the same magnitudes in lanes of the canonical line sum that differ in
    their lowest bit only, which that sum combines last: both parts get the same column facts bit for
    bit (docs/gemm.md)."""
    x = _interleave(a.real, a.imag, 0 if trans_a else 1, fw)
    axis = 1 if trans_b else 0
    return x, _interleave(b.real, -b.imag, axis, fw), _interleave(b.imag, b.real, axis, fw)


def _complex(re: Any, im: Any, fw: str) -> Any:
    """re + i·im, each part exactly as given (re + 1j·im would turn an infinite im's 0·∞ into a NaN real part)."""
    if fw == "torch":
        import torch

        return torch.complex(re, im)
    z = empty_like(re, tuple(re.shape), "complex128")
    z.real[...], z.imag[...] = re, im
    return z


def gemm_complex(gemm: Callable, a: Any, b: Any, *, c: Any, alpha: Any, beta: Any, trans_a: bool, trans_b: bool, contract: Any,
                 backend: str, engine: str, out: Any, stream: Any, report: bool) -> Any:
    """gemm's complex128 path: Re and Im by two real calls of `gemm` over 2k (the public call: the same
    contract, device, engine and stream), then alpha·(Re + i·Im) + beta·c."""
    arrays, fw = framework_arrays(a, b, c, out)
    for name, v in (("alpha", alpha), ("beta", beta)):
        if isinstance(v, bool) or not isinstance(v, numbers.Complex):
            raise TypeError(f"gemm: {name} must be a number, got {type(v).__name__}")
    if c is None and beta != 0:
        raise ValueError(f"gemm: beta = {beta} but c is None; give c= to add beta·c, or beta=0")
    m, n = op_shape(shape_of(a, "gemm: a"), trans_a)[0], op_shape(shape_of(b, "gemm: b"), trans_b)[1]
    for name in ("c", "out"):
        if name in arrays and tuple(shape_of(arrays[name])) != (m, n):
            raise ValueError(f"gemm: {name} has shape {tuple(shape_of(arrays[name]))}; expected ({m}, {n})")
    ka, kb = op_shape(shape_of(a), trans_a)[1], op_shape(shape_of(b), trans_b)[0]
    if ka != kb:
        raise ValueError(f"gemm: op(a) is {m}x{ka} but op(b) is {kb}x{n}; inner dimensions must match")
    if 2 * ka > MAX_K:
        raise ValueError(f"gemm: k = {ka} is above the supported maximum {MAX_K // 2} for complex128 (products over 2k)")
    kw = dict(trans_a=trans_a, trans_b=trans_b, contract=contract, backend=backend, engine=engine, stream=stream,
              report=True)
    with on_stream(stream, a):  # the framework's own operations in order with the products
        x, y_re, y_im = stacked_operands(a, b, trans_a, trans_b, fw)
        (re, rep_re), (im, rep_im) = gemm(x, y_re, **kw), gemm(x, y_im, **kw)
        del x, y_re, y_im
        z = _complex(re, im, fw)
        if alpha != 1:
            z = z * alpha
        if c is not None and beta != 0:
            z = z + beta * c
        if out is not None:
            out[...] = z
            z = out
    if not report:
        return z
    parts = [rep_re, rep_im]
    paths = {p["path"] for p in parts}
    rep = {
        "path": paths.pop() if len(paths) == 1 else "mixed",
        "moduli": max(p["moduli"] for p in parts),
        "certified": all(p["certified"] for p in parts),
        "rtol": rep_re["rtol"],
        "bound": max(p["bound"] for p in parts),
        "backend": rep_re["backend"],
        "contract": rep_re["contract"],
        "parts": {"re": rep_re, "im": rep_im},
    }
    return z, rep
