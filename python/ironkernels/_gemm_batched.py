"""gemm on a batch: (batch, m, k) · (batch, k, n), either operand shared as one matrix, into one
(batch, m, n) result. Each product is a call of gemm under the same contract (its own certificate);
on CUDA, under a certified contract, a batch of products with a dimension below the emulation's
crossover runs instead as one native batched DGEMM / ZGEMM (cuBLAS through the arrays' framework),
which such a contract allows and which is faster there (docs/gemm.md)."""
from __future__ import annotations

from typing import Any, Callable

from ._gemm_contract import op_shape
from ._interop import device_of, dtype_name, empty_like, framework_of, on_stream, shape_of

_FRAMEWORKS = ("numpy", "torch", "cupy")  # arrays that slice
# Products with m, n or k below this are faster in native float64 than emulated on H100/H200
# (single 4096³ products run at about 1.0× DGEMM, batches of smaller ones far below it:
# bench/DECISIONS.md, gemm batched).
NATIVE_BATCH_BELOW = 4096


def _transposed(x: Any, trans: bool) -> Any:
    return x.swapaxes(-1, -2) if trans else x


def takes_native_route(arrays: dict, m: int, n: int, k: int, kw: dict) -> bool:
    """Whether products of this size on these arrays run natively (the module docstring)."""
    contract = kw.get("contract")
    return (contract is not None and contract.certified and kw.get("engine") == "auto"  # (an engine named
            and kw.get("backend") in ("auto", "cuda") and min(m, n, k) < NATIVE_BATCH_BELOW  # asks for the emulation)
            and {framework_of(x) for x in arrays.values()} <= {"torch", "cupy"}
            and len({device_of(x) for x in arrays.values()}) == 1 and device_of(arrays["a"])[0] == "cuda"
            and {dtype_name(x) for x in arrays.values()} <= {"float64", "complex128"})


def result_like(a: Any, b: Any, shape: tuple) -> Any:
    """A new result of `shape` for op(a)·op(b) in a's framework and device: complex128 where either is."""
    return empty_like(a, shape, "complex128" if "complex128" in (dtype_name(a), dtype_name(b)) else "float64")


def _c_contiguous(x: Any) -> bool:
    return x.is_contiguous() if framework_of(x) == "torch" else bool(x.flags.c_contiguous)


def native_product(a: Any, b: Any, *, c: Any, out: Any, k: int, report: bool, what: str, **kw: Any) -> Any:
    """out = alpha · op(a) · op(b) (+ beta · c) natively (the framework's batched matmul: cuBLAS) on the
    call's stream, and its report."""
    alpha, beta = kw.get("alpha", 1.0), kw.get("beta", 0.0)
    x, y = _transposed(a, bool(kw.get("trans_a"))), _transposed(b, bool(kw.get("trans_b")))
    # Straight into out (no product buffer, no copy) where the framework's matmul can write it.
    direct = _c_contiguous(out) and len({dtype_name(v) for v in (x, y, out)}) == 1
    with on_stream(kw.get("stream"), a):
        if alpha == 1 and (c is None or beta == 0) and direct:
            __import__(framework_of(a)).matmul(x, y, out=out)
        else:
            p = x @ y
            if alpha != 1:
                p = p * alpha
            if c is not None and beta != 0:
                p = p + beta * c
            out[...] = p
    if not report:
        return out
    if "complex128" in (dtype_name(a), dtype_name(b)):
        k *= 2  # (each part a sum of 2k real products, as on the emulated path)
    unit, rtol = 2.0**-53, kw["contract"].rtol_at(k)
    return out, {"path": "native", "certified": True, "rtol": rtol, "bound": max(rtol, k * unit / (1 - k * unit)),
                 "backend": "cuda", "batch": None,
                 "native_reason": f"{what} with a dimension below {NATIVE_BATCH_BELOW}: native (cuBLAS)"}


def combined_report(reports: list, key: str) -> dict:
    """The report of several products: their path ("mixed" where they differ), whether all are
    certified, the largest bound, and each one's report under `key`."""
    paths = {r["path"] for r in reports}
    return {
        "path": paths.pop() if len(paths) == 1 else "mixed",
        "certified": all(r["certified"] for r in reports),
        "bound": max((r["bound"] for r in reports), default=0.0),
        "backend": reports[0]["backend"] if reports else None,
        key: reports,
    }


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
        out = result_like(a, b, (batch, m, n))
    elif shapes["out"] != (batch, m, n):
        raise ValueError(f"gemm: out has shape {shapes['out']}; accepted: ({batch}, {m}, {n})")
    k = op_shape(shapes["a"], kw.get("trans_a"))[1]
    if takes_native_route({**arrays, "out": out}, m, n, k, kw):
        return native_product(a, b, c=c, out=out, k=k, report=report, what="a batch of products", **kw)
    # Products one by one, on the stream in order (each call waits only where its contract does).
    results = [gemm(pick(a, i), pick(b, i), c=None if c is None else pick(c, i), out=out[i], report=report, **kw)
               for i in range(batch)]
    if not report:
        return out
    return out, combined_report([r[1] for r in results], "batch")
