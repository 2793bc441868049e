"""gemm on complex128 (ZGEMM): [Re(op(a)·op(b)) | Im(op(a)·op(b))] as one real product over 2k, the
operands' parts interleaved along k (Re: (ReA, ImA)·(ReB, −ImB), Im: (ReA, ImA)·(ImB, ReB)), emulated
under the call's contract, each element rounded once; on the wgmma engine by three INT8 products per
modulus (Karatsuba) with the same bits. docs/gemm.md states the bound this gives every element."""
from __future__ import annotations

import numbers
from typing import Any, Callable

from ._gemm_contract import MAX_K, framework_arrays, op_shape
from . import _core
from ._interop import device_of, empty_like, on_stream, resolve_stream, shape_of


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


def stacked_operands(a: Any, b: Any, trans_a: bool, trans_b: bool, fw: str, stream: Any = None) -> tuple:
    """(x, y): real matrices with op(x)·op(y) = [Re(op(a)·op(b)) | Im(op(a)·op(b))] over 2k, each pair
    of positions (2l, 2l + 1) of the inner dimension one term: op(x) = (Re op(a), Im op(a)) and op(y) =
    [Y_re | Y_im], Y_re = (Re op(b), −Im op(b)) and Y_im = (Im op(b), Re op(b)), interleaved, in the
    operands' own orientation (the transposes stay flags). Interleaved, a column of Y_re and the same
    column of Y_im hold the same magnitudes in lanes of the canonical line sum that differ in their
    lowest bit only, which that sum combines last: both get the same column scaling bit for bit, so
    the wgmma engine can form both parts from three products (docs/gemm.md). A CUDA b with
    contiguous rows is stacked by one kernel (gemm_complex_columns), on `stream`."""
    x = None if trans_a else _pairs_view(a, fw)
    if x is None:
        x = _interleave(a.real, a.imag, 0 if trans_a else 1, fw)
    k, n = op_shape(shape_of(b), trans_b)
    shape = (2 * n, 2 * k) if trans_b else (2 * k, 2 * n)
    y = empty_like(x, shape, "float64")
    if _rows_contiguous(b, fw):
        _core.gemm_complex_columns(b, trans_b, y, resolve_stream(stream, b))
        return x, y
    # op(y)'s rows 2l and 2l + 1 are y's rows (columns with trans_b) 2l and 2l + 1; Y_im after Y_re.
    half = (lambda rows, cols: y[cols, rows]) if trans_b else (lambda rows, cols: y[rows, cols])
    even, odd, re_cols, im_cols = slice(0, None, 2), slice(1, None, 2), slice(0, n), slice(n, 2 * n)
    half(even, re_cols)[...] = b.real
    _negated(b.imag, half(odd, re_cols), fw)
    half(even, im_cols)[...] = b.imag
    half(odd, im_cols)[...] = b.real
    return x, y


def _rows_contiguous(b: Any, fw: str) -> bool:
    """Whether b is a PyTorch or CuPy CUDA array (not lazily conjugated or negated) whose rows are contiguous."""
    if fw not in ("torch", "cupy") or device_of(b)[0] != "cuda" or (fw == "torch" and (b.is_conj() or b.is_neg())):
        return False
    rows, cols = shape_of(b)
    row_stride, col_stride = (b.stride() if fw == "torch" else (s // b.itemsize for s in b.strides))
    return (cols <= 1 or col_stride == 1) and (rows <= 1 or row_stride >= cols)


def _pairs_view(a: Any, fw: str) -> Any:
    """A row-major complex a (m × k) as the real m × 2k matrix of its (Re, Im) pairs, without a copy
    (its memory is that matrix); None where a is not row-major contiguous (or a lazily conjugated
    PyTorch tensor)."""
    m, k = shape_of(a)
    if fw == "torch":
        import torch

        if not a.is_contiguous() or a.is_conj():
            return None
        return torch.view_as_real(a).reshape(m, 2 * k)
    if not a.flags.c_contiguous:
        return None
    return a.view(__import__("cupy" if fw == "cupy" else "numpy").float64).reshape(m, 2 * k)


def _negated(v: Any, into: Any, fw: str) -> None:
    """into = −v, in place."""
    if fw == "torch":
        import torch

        torch.neg(v, out=into)
    else:
        __import__("cupy" if fw == "cupy" else "numpy").negative(v, out=into)


def _complex(re: Any, im: Any, fw: str) -> Any:
    """re + i·im, each part exactly as given (re + 1j·im would turn an infinite im's 0·∞ into a NaN real part)."""
    if fw == "torch":
        import torch

        return torch.complex(re, im)
    z = empty_like(re, tuple(re.shape), "complex128")
    z.real[...], z.imag[...] = re, im
    return z


def gemm_complex(gemm_float64: Callable, a: Any, b: Any, *, c: Any, alpha: Any, beta: Any, trans_a: bool,
                 trans_b: bool, contract: Any, backend: str, engine: str, out: Any, stream: Any, report: bool) -> Any:
    """gemm's complex128 path: Re and Im by one call of gemm's float64 path over 2k and 2n columns (the
    same contract, device, engine and stream), then alpha·(Re + i·Im) + beta·c."""
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
    with on_stream(stream, a):  # the framework's own operations in order with the products
        x, y = stacked_operands(a, b, trans_a, trans_b, fw, stream)
        both = gemm_float64(x, y, c=None, alpha=1.0, beta=0.0, trans_a=trans_a, trans_b=trans_b, contract=contract,
                            backend=backend, engine=engine, out=None, stream=stream, report=report,
                            complex_pairs=True)
        del x, y
        if report:
            both, rep = both
        z = _complex(both[:, :n], both[:, n:], fw)
        if alpha != 1:
            z = z * alpha
        if c is not None and beta != 0:
            z = z + beta * c
        if out is not None:
            out[...] = z
            z = out
    if not report:
        return z
    rep["parts"] = {"re": _part(rep, m, n, 0), "im": _part(rep, m, n, n)}
    return z, rep


def _part(rep: dict, m: int, n: int, first: int) -> dict:
    """The report of the product's columns [first, first + n), one part of the complex result: its
    native lines and elements (the whole product's count of elements in Inf/NaN lines left out)."""
    cols = [j - first for j in rep["native_col_indices"] if first <= j < first + n]
    rows = rep["native_row_indices"]
    native = len(rows) * n + len(cols) * m - len(rows) * len(cols)
    part = {key: v for key, v in rep.items() if key != "nonfinite_elements"}
    part.update(native_col_indices=cols, native_cols=len(cols), native_elements=native,
                path="native" if rep["path"] == "native" else "mixed" if native else "emulated")
    return part
