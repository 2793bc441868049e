"""gemm on float32 (SGEMM): the product emulated under a float32-accurate contract — Contract.native()
means rtol = √k·2⁻²⁴, no worse than SGEMM's own bound, so far fewer moduli than float64 needs — then
alpha·P + beta·c rounded once to float32; docs/gemm.md states the bound."""
from __future__ import annotations

import math
from typing import Any, Callable

from ._gemm_contract import Contract, _shape2, framework_arrays, op_shape
from ._interop import on_stream


def _float64(x: Any, fw: str) -> Any:
    return x.double() if fw == "torch" else x.astype("float64")


def gemm_single(gemm: Callable, a: Any, b: Any, *, c: Any, alpha: float, beta: float, contract: Any, out: Any, report: bool,
                **kw: Any) -> Any:
    """gemm's float32 path through `gemm` (the public call) on float64; `kw` holds trans_a, trans_b,
    backend, engine and stream."""
    _, fw = framework_arrays(a, b, c, out)
    m, k = op_shape(_shape2(a, "a"), kw.get("trans_a"))
    n = op_shape(_shape2(b, "b"), kw.get("trans_b"))[1]
    if out is not None and _shape2(out, "out") != (m, n):
        raise ValueError(f"gemm: out has shape {_shape2(out, 'out')}; expected ({m}, {n})")
    single = Contract(rtol=math.sqrt(max(k, 1)) * 2.0**-24) if contract.is_native else contract
    with on_stream(kw.get("stream"), a):  # the framework's own operations in order with the product
        wide_c = None if c is None or beta == 0 else _float64(c, fw)
        p, rep = gemm(_float64(a, fw), _float64(b, fw), c=wide_c, alpha=alpha, beta=beta, contract=single, report=True,
                      **kw)
        result = p.float() if fw == "torch" else p.astype("float32")
        if out is not None:
            out[...] = result
            result = out
    if not report:
        return result
    return result, dict(rep, contract=repr(contract), dtype="float32")
