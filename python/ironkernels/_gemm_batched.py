"""gemm on a batch: (batch, m, k) · (batch, k, n), either operand shared as one matrix, each product a
call of gemm under the same contract (its own certificate), into one (batch, m, n) result."""
from __future__ import annotations

from typing import Any, Callable

from ._gemm_contract import op_shape
from ._interop import dtype_name, empty_like, framework_of, shape_of

_FRAMEWORKS = ("numpy", "torch", "cupy")  # arrays that slice


def gemm_batched(gemm: Callable, a: Any, b: Any, *, c: Any, out: Any, report: bool, **kw: Any) -> Any:
    """gemm's batched path: `gemm` (the public call) for each product, with `kw`, the rest of its arguments."""
    arrays = {"a": a, "b": b, **({"c": c} if c is not None else {}), **({"out": out} if out is not None else {})}
    shapes = {}
    for name, x in arrays.items():
        fw = framework_of(x, f"gemm: {name}")
        if fw not in _FRAMEWORKS:
            raise TypeError(f"gemm: a batch of {fw} arrays; accepted: NumPy, PyTorch or CuPy arrays (sliced per product)")
        shapes[name] = tuple(shape_of(x))
        if len(shapes[name]) not in (2, 3):
            raise ValueError(f"gemm: {name} has shape {shapes[name]}; accepted: a matrix or a batch (batch, rows, cols)")
    batches = {shapes[name][0] for name in ("a", "b") if len(shapes[name]) == 3}
    if len(batches) != 1:
        raise ValueError(f"gemm: a has shape {shapes['a']} and b {shapes['b']}; accepted: batches of one size")
    batch = batches.pop()
    pick = lambda x, i: x[i] if len(tuple(shape_of(x))) == 3 else x  # noqa: E731  (a shared matrix)
    m, n = op_shape(shapes["a"], kw.get("trans_a"))[0], op_shape(shapes["b"], kw.get("trans_b"))[1]
    if out is None:
        complex_ = "complex128" in (dtype_name(a), dtype_name(b))
        out = empty_like(a, (batch, m, n), "complex128" if complex_ else "float64")
    elif shapes["out"] != (batch, m, n):
        raise ValueError(f"gemm: out has shape {shapes['out']}; accepted: ({batch}, {m}, {n})")
    reports = [gemm(pick(a, i), pick(b, i), c=None if c is None else pick(c, i), out=out[i], report=True, **kw)[1]
               for i in range(batch)]
    if not report:
        return out
    return out, {
        "certified": all(r["certified"] for r in reports),
        "bound": max((r["bound"] for r in reports), default=0.0),
        "backend": reports[0]["backend"] if reports else None,
        "batch": reports,
    }
