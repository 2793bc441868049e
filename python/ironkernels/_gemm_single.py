"""gemm on float32 (SGEMM) and complex64 (CGEMM): the product emulated under a single-precision contract
— Contract.native() means rtol = √k·2⁻²⁴ (k taken at 2k for complex64, as the complex path counts it),
no worse than SGEMM's own bound, so far fewer moduli than float64 needs — on the operands widened to
float64 / complex128, then alpha·P + beta·C rounded once to float32 / complex64; docs/gemm.md states
the bound."""
from __future__ import annotations

import math
from typing import Any, Callable

from ._gemm_contract import Contract, _shape2, framework_arrays, op_shape
from ._interop import dtype_name, on_stream

WIDE = {"float32": "float64", "complex64": "complex128"}


def _as(x: Any, dtype: str, fw: str) -> Any:
    if fw == "torch":
        import torch

        return x.to(getattr(torch, dtype))
    return x.astype(dtype)


def gemm_single(gemm: Callable, a: Any, b: Any, *, c: Any, alpha: Any, beta: Any, contract: Any, out: Any, report: bool,
                **kw: Any) -> Any:
    """gemm's float32 and complex64 paths through `gemm` (the public call) on float64 / complex128; `kw`
    holds trans_a, trans_b, backend, engine and stream."""
    _, fw = framework_arrays(a, b, c, out)
    narrow = dtype_name(a)
    m, k = op_shape(_shape2(a, "a"), kw.get("trans_a"))
    n = op_shape(_shape2(b, "b"), kw.get("trans_b"))[1]
    if out is not None and _shape2(out, "out") != (m, n):
        raise ValueError(f"gemm: out has shape {_shape2(out, 'out')}; expected ({m}, {n})")
    k_counted = 2 * k if narrow == "complex64" else k
    single = Contract(rtol=math.sqrt(max(k_counted, 1)) * 2.0**-24) if contract.is_native else contract
    with on_stream(kw.get("stream"), a):  # the framework's own operations in order with the product
        wide_c = None if c is None or beta == 0 else _as(c, WIDE[narrow], fw)
        p, rep = gemm(_as(a, WIDE[narrow], fw), _as(b, WIDE[narrow], fw), c=wide_c, alpha=alpha, beta=beta,
                      contract=single, report=True, **kw)
        result = _as(p, narrow, fw)
        if out is not None:
            out[...] = result
            result = out
    if not report:
        return result
    return result, dict(rep, contract=repr(contract), dtype=narrow)
