"""gemm on a group: lists of matrices of different shapes, a[i] · b[i] for each i (either operand may be
one matrix shared by all), each product the 2-D call's (its own certificate; on CUDA, under a
certified contract, small products natively as in a batch: _gemm_batched), into a list of results.
Every shape is checked before any product is computed."""
from __future__ import annotations

from typing import Any, Callable

from ._gemm_batched import combined_report, native_product, result_like, takes_native_route
from ._gemm_contract import op_shape
from ._interop import device_of, dtype_name, framework_of, shape_of

_DTYPES = ("float64", "float32", "complex128")


def _as_list(x: Any, count: int, name: str) -> list:
    if isinstance(x, (list, tuple)):
        if len(x) != count:
            raise ValueError(f"gemm: {name} is a list of {len(x)} matrices; the group has {count} products")
        return list(x)
    return [x] * count


def gemm_grouped(gemm: Callable, a: Any, b: Any, *, c: Any, out: Any, report: bool, **kw: Any) -> Any:
    """gemm's grouped path: `gemm` (the public call) for each product, with `kw`, the rest of its arguments."""
    lists = [len(x) for x in (a, b) if isinstance(x, (list, tuple))]
    count = lists[0]
    if len(set(lists)) != 1:
        raise ValueError(f"gemm: a is a list of {len(a)} matrices and b of {len(b)}; accepted: lists of one length")
    groups = {"a": _as_list(a, count, "a"), "b": _as_list(b, count, "b")}
    if c is not None:
        groups["c"] = _as_list(c, count, "c")
    if out is not None:
        if not isinstance(out, (list, tuple)):
            raise TypeError(f"gemm: out is a {type(out).__name__} for a group of products; accepted: a list of matrices")
        groups["out"] = _as_list(out, count, "out")
    where = None
    shapes = []
    for i in range(count):
        for name, items in groups.items():
            x, what = items[i], f"gemm: {name}[{i}]"
            framework_of(x, what)
            if where is None:
                where = device_of(x)
            if device_of(x) != where:
                raise ValueError(f"{what} is on {device_of(x)} but a[0] is on {where}; all arrays must be on one device")
            if len(tuple(shape_of(x, what))) != 2:
                raise ValueError(f"{what} has shape {tuple(shape_of(x))}; accepted: a matrix")
            if dtype_name(x) not in _DTYPES:
                raise TypeError(f"{what} has dtype {dtype_name(x)}; accepted: {', '.join(_DTYPES)}")
        m, k = op_shape(tuple(shape_of(groups["a"][i])), kw.get("trans_a"))
        kb, n = op_shape(tuple(shape_of(groups["b"][i])), kw.get("trans_b"))
        if k != kb:
            raise ValueError(f"gemm: op(a[{i}]) is {m}x{k} but op(b[{i}]) is {kb}x{n}; inner dimensions must match")
        for name in ("c", "out"):
            if name in groups and tuple(shape_of(groups[name][i])) != (m, n):
                raise ValueError(f"gemm: {name}[{i}] has shape {tuple(shape_of(groups[name][i]))}; expected ({m}, {n})")
        shapes.append((m, n, k))
    if c is None and kw.get("beta", 0.0) != 0:
        raise ValueError(f"gemm: beta = {kw['beta']} but c is None; give c= to add beta·c, or beta=0")
    results = []
    for i, (m, n, k) in enumerate(shapes):
        ai, bi = groups["a"][i], groups["b"][i]
        ci = groups["c"][i] if c is not None else None
        oi = groups["out"][i] if out is not None else None
        arrays = {"a": ai, "b": bi, **({"c": ci} if ci is not None else {}), **({"out": oi} if oi is not None else {})}
        if takes_native_route(arrays, m, n, k, kw):
            if oi is None:
                oi = result_like(ai, bi, (m, n))
            results.append(native_product(ai, bi, c=ci, out=oi, k=k, report=True, what="a product of a group", **kw))
        else:
            results.append(gemm(ai, bi, c=ci, out=oi, report=True, **kw) if report else (gemm(ai, bi, c=ci, out=oi, **kw), None))
    products = [r[0] for r in results]
    if not report:
        return products
    return products, combined_report([r[1] for r in results], "group")
