"""gemm on complex128 (ZGEMM): op(a)·op(b) from the four real products of the parts, each emulated under
the call's contract, combined in float64; docs/gemm.md states the bound this gives every element."""
from __future__ import annotations

import numbers
from typing import Any, Callable

from ._gemm_contract import framework_arrays, op_shape
from ._interop import shape_of

def _complex(re: Any, im: Any, fw: str) -> Any:
    if fw == "torch":
        import torch

        return torch.complex(re, im)
    return re + 1j * im


def gemm_complex(gemm: Callable, a: Any, b: Any, *, c: Any, alpha: Any, beta: Any, trans_a: bool, trans_b: bool, contract: Any,
                 backend: str, engine: str, out: Any, stream: Any, report: bool) -> Any:
    """gemm's complex128 path: Re = ReA·ReB − ImA·ImB and Im = ReA·ImB + ImA·ReB by four real calls of
    `gemm` (the public call: the same contract, device, engine and stream), then alpha·(Re + i·Im) + beta·c."""
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
    kw = dict(trans_a=trans_a, trans_b=trans_b, contract=contract, backend=backend, engine=engine, stream=stream,
              report=True)
    (rr, rep_rr), (ii, rep_ii), (ri, rep_ri), (ir, rep_ir) = (
        gemm(x, y, **kw) for x, y in ((a.real, b.real), (a.imag, b.imag), (a.real, b.imag), (a.imag, b.real)))
    z = _complex(rr - ii, ri + ir, fw)
    if alpha != 1:
        z = z * alpha
    if c is not None and beta != 0:
        z = z + beta * c
    if out is not None:
        out[...] = z
        z = out
    if not report:
        return z
    parts = [rep_rr, rep_ii, rep_ri, rep_ir]
    paths = {p["path"] for p in parts}
    rep = {
        "path": paths.pop() if len(paths) == 1 else "mixed",
        "moduli": max(p["moduli"] for p in parts),
        "certified": all(p["certified"] for p in parts),
        "rtol": rep_rr["rtol"],
        "bound": max(p["bound"] for p in parts),
        "backend": rep_rr["backend"],
        "contract": rep_rr["contract"],
        "parts": dict(zip(("re·re", "im·im", "re·im", "im·re"), parts)),
    }
    return z, rep
