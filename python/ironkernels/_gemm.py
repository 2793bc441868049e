"""FP64-accurate matrix product by the Ozaki scheme II (integer moduli + Chinese remainder theorem).

Host arrays run on the CPU reference, CUDA arrays on the CUDA backend (INT8 products through the
library's wgmma or mma.sync kernels or cuBLAS); all compute the same integers and round once, so every
emulated element agrees bit for bit. Certified contracts (docs/gemm.md) compute the lines they
cannot certify in native float64."""
from __future__ import annotations

import atexit
import numbers
import warnings
from typing import Any, Optional

from . import _core
from ._gemm_batched import gemm_batched
from ._gemm_complex import gemm_complex
from ._gemm_contract import BACKENDS, ENGINES, MAX_K, MODULI, Contract, _shape2, fast_bits, op_shape  # noqa: F401
from ._gemm_grouped import gemm_grouped
from ._gemm_prepared import PreparedOperand, gemm_prepare, unwrap_prepared  # noqa: F401
from ._gemm_single import gemm_single
from ._interop import (call_core, describe, device_of, dtype_name, empty, empty_like, framework_of, resolve_stream,
                       shape_of, torch_stream, cupy_stream)

# The library's plan cache (C++, shared with C++ callers) keeps each plan's cuBLAS handle; it is
# emptied at exit while CUDA and cuBLAS are certainly alive, not during module teardown.
atexit.register(_core.gemm_plan_cache_clear)


def _workspace(nbytes: int, like: Any, fw: str, device_id: int, stream: int) -> Any:
    """Scratch device memory from the caller's framework, ordered on `stream`: PyTorch's caching
    allocator (record_stream keeps it until the stream's work is done), CuPy's pool (per stream),
    else an ironkernels buffer."""
    nbytes = max(int(nbytes), 1)
    if fw == "torch":
        import torch

        ws = torch.empty(nbytes, dtype=torch.uint8, device=like.device)
        ws.record_stream(torch_stream(stream, like.device))
        return ws
    if fw == "cupy":
        import cupy

        with cupy.cuda.Device(device_id), cupy_stream(cupy, stream, device_id):
            return cupy.empty(nbytes, dtype=cupy.uint8)
    return empty([(nbytes + 7) // 8], "float64", "cuda", device_id)


def _copy(dst: Any, src: Any, fw: str, stream: int) -> None:
    """dst[...] = src, ordered on `stream` for CUDA arrays."""
    if device_of(dst)[0] == "cpu":
        if framework_of(dst) in ("numpy", "torch"):
            dst[...] = src
        else:  # no item assignment (empty's own arrays, other DLPack producers): through NumPy views
            import numpy as np

            np.from_dlpack(dst)[...] = np.from_dlpack(src)
    elif fw == "torch":
        import torch

        with torch.cuda.stream(torch_stream(stream, dst.device)):
            dst.copy_(src)
    elif fw == "cupy":
        import cupy

        with cupy_stream(cupy, stream, dst.device.id):
            dst[...] = src
    else:
        try:
            _core.copy_(dst, src, stream)
        except ValueError:
            d, s = describe(dst), describe(src)
            raise ValueError(f"gemm: out (strides {d['strides']}) and c (strides {s['strides']}) are CUDA arrays of no "
                             "framework this package can copy between; accepted: c and out of one dense layout (both "
                             "C- or both Fortran-ordered), out=c, or PyTorch / CuPy arrays") from None


def gemm(
    a: Any,
    b: Any,
    *,
    c: Any = None,
    alpha: float = 1.0,
    beta: float = 0.0,
    trans_a: bool = False,
    trans_b: bool = False,
    contract: Optional[Contract] = None,
    backend: str = "auto",
    engine: str = "auto",
    out: Any = None,
    stream: Any = None,
    report: bool = False,
) -> Any:
    """``alpha · op(a) · op(b) + beta · c`` in float64, computed exactly in integers and rounded once.

    Args:
        a, b: float64 matrices (NumPy, PyTorch, CuPy, ... host or CUDA arrays), any strides; host
            arrays run on the CPU reference, CUDA arrays on their GPU (all arrays on one device).
            complex128 (NumPy, PyTorch, CuPy): both parts one real product over 2k and 2n
            columns under ``contract`` (docs/gemm.md; on the wgmma engine three INT8 products per
            modulus, Karatsuba); alpha and beta may then be complex, and the report holds each
            part's native lines under ``parts``. Batches (NumPy, PyTorch, CuPy):
            a (batch, m, k) and/or b (batch, k, n), the other operand shared, c and out batched
            alike: one certified product per matrix (the report's ``batch`` lists their reports);
            on CUDA (PyTorch, CuPy) under a certified contract, where m, n or k is below 4096, one
            native batched product instead (docs/gemm.md). Groups: lists of matrices of any shapes
            (either operand may be one shared matrix; c and out lists alike): the products, as a
            list, each the 2-D call's (the report's ``group`` lists their reports).
            float32 and complex64 (NumPy, PyTorch, CuPy): ``Contract.native()`` means rtol = √k·2⁻²⁴
            (single precision's accuracy, far fewer moduli; k at 2k for complex64), the result
            rounded once to float32 / complex64.
            b may be a :class:`PreparedOperand` from :func:`gemm_prepare` (a 2-D float64 a): op(b)'s
            share of the call is then the prepared one's, trans_b and contract too.
        c: optional (m, n) float64 matrix added with weight ``beta``; ignored when ``beta == 0``
            (even if it holds NaN); ``beta != 0`` needs it.
        trans_a, trans_b: use the transpose of a / b.
        contract: :class:`Contract`; default ``Contract.native()``.
        backend: ``"auto"`` (by the arrays' device), ``"cpu"`` or ``"cuda"`` (must match the device).
        engine: the INT8 products' engine on CUDA arrays: ``"auto"`` (``"wgmma"`` where it is available
            and C has at least half as many 128 × 256 tiles as the GPU has SMs, else ``"cublas"``),
            ``"wgmma"`` (the library's TMA and wgmma kernel, compute capability 9.0), ``"cublas"`` or
            ``"mma"`` (the library's mma.sync kernel, compute capability 8.0+). Every engine gives the
            same bits. (``backend="wgmma"`` and the like still work, with a DeprecationWarning.)
        out: (m, n) float64 array to write (may be ``c``); default a new array of a's framework.
        stream: CUDA stream (int handle or object with ``__cuda_stream__``); default the framework's
            current stream. The call does not synchronise (unless ``report=True``), except the first
            CUDA call of each (shape, contract, device), which times cublasGemmEx against cuBLASLt's
            algorithms for the INT8 products once (whole and in column blocks) and keeps the fastest
            (exact either way).
        report: also return a dict: what the call did (``path``: "emulated", "mixed" or "native";
            ``moduli`` of the emulated elements, 0 if none; ``native_rows``, ``native_cols``,
            ``native_elements``: the lines and elements computed in native float64), what it
            guarantees (``certified``, ``rtol``, ``bound``: every element meets
            ``bound·(|op(a)|·|op(b)|)_ij`` plus its rounding, docs/gemm.md), the bits kept, the backend,
            the phase times and the INT8 product backend and its calls per product (CUDA: ``products``,
            ``product_column_blocks``), and the elements in lines holding Inf/NaN.

    Certified contracts wait once per call on CUDA, after the scan and before the products: the
    certificate's decision sizes the native part. NaN and ±Inf follow native DGEMM (IEEE)
    semantics: an element of C whose row of op(a) or column of op(b) holds a non-finite value is
    computed in native float64 arithmetic.
    """
    b, trans_b, contract, prepared = unwrap_prepared(b, a, trans_b, contract)
    contract = Contract.native() if contract is None else contract
    if not isinstance(contract, Contract):
        raise TypeError(f"gemm: contract must be an ironkernels.Contract, got {type(contract).__name__}")
    engine_arg = "engine"
    if isinstance(backend, str) and backend in ENGINES[1:] and engine == "auto":  # the former spelling
        warnings.warn(f"gemm: backend={backend!r} names an INT8 engine; use engine={backend!r} (backend is the "
                      "device: 'auto', 'cpu' or 'cuda')", DeprecationWarning, stacklevel=2)
        backend, engine, engine_arg = "auto", backend, "backend"
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise ValueError(f"gemm: backend = {backend!r}; accepted: {', '.join(map(repr, BACKENDS))} (the INT8 "
                         f"engine is engine=: {', '.join(map(repr, ENGINES))})")
    if not isinstance(engine, str) or engine not in ENGINES:
        raise ValueError(f"gemm: engine = {engine!r}; accepted: {', '.join(map(repr, ENGINES))}")
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return gemm_grouped(gemm, a, b, c=c, out=out, report=report, alpha=alpha, beta=beta, trans_a=trans_a,
                            trans_b=trans_b, contract=contract, backend=backend, engine=engine, stream=stream)
    framework_of(a, "gemm: a"), framework_of(b, "gemm: b")
    if 3 in (len(shape_of(a, "gemm: a")), len(shape_of(b, "gemm: b"))):
        return gemm_batched(gemm, a, b, c=c, out=out, report=report, alpha=alpha, beta=beta, trans_a=trans_a,
                            trans_b=trans_b, contract=contract, backend=backend, engine=engine, stream=stream)
    if {"float32", "complex64"} & {dtype_name(a), dtype_name(b)}:
        return gemm_single(gemm, a, b, c=c, alpha=alpha, beta=beta, contract=contract, out=out, report=report,
                           trans_a=trans_a, trans_b=trans_b, backend=backend, engine=engine, stream=stream)
    if "complex128" in (dtype_name(a), dtype_name(b)):
        return gemm_complex(_gemm_float64, a, b, c=c, alpha=alpha, beta=beta, trans_a=trans_a, trans_b=trans_b,
                            contract=contract, backend=backend, engine=engine, out=out, stream=stream, report=report)
    return _gemm_float64(a, b, c=c, alpha=alpha, beta=beta, trans_a=trans_a, trans_b=trans_b, contract=contract,
                         backend=backend, engine=engine, engine_arg=engine_arg, out=out, stream=stream, report=report,
                         prepared=prepared)


def _gemm_float64(a: Any, b: Any, *, c: Any, alpha: Any, beta: Any, trans_a: Any, trans_b: Any, contract: Contract,
                  backend: str, engine: str, out: Any, stream: Any, report: Any, engine_arg: str = "engine",
                  prepared: Optional[PreparedOperand] = None, complex_pairs: bool = False) -> Any:
    """gemm's float64 path, after the dispatch on batches, groups and dtypes. complex_pairs: b is the
    complex path's [Y_re | Y_im] (GemmColumns::complex_pairs: the wgmma engine then shares products
    between the parts; the bits are the same either way)."""
    for name, v in (("alpha", alpha), ("beta", beta)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"gemm: {name} must be a real number, got {type(v).__name__}")
    for name, v in (("trans_a", trans_a), ("trans_b", trans_b), ("report", report)):
        if not isinstance(v, (bool, numbers.Integral)):
            raise TypeError(f"gemm: {name} must be a bool, got {type(v).__name__}")
    fw = framework_of(a, "gemm: a")
    arrays = {"a": a, "b": b, **({"c": c} if c is not None else {}), **({"out": out} if out is not None else {})}
    where = device_of(a)
    for name, x in arrays.items():
        framework_of(x, f"gemm: {name}")
        if device_of(x) != where:
            raise ValueError(f"gemm: {name} is on {device_of(x)} but a is on {where}; all arrays must be on one device")
    if backend != "auto" and (backend == "cpu") != (where[0] == "cpu"):
        raise ValueError(f"gemm: backend = {backend!r} but the arrays are on {where[0]}; no implicit transfers")
    if engine != "auto" and where[0] == "cpu":
        raise ValueError(f"gemm: {engine_arg} = {engine!r} (an INT8 engine of the CUDA backend) but the arrays are "
                         "on cpu; no implicit transfers")
    for name, x in arrays.items():
        if dtype_name(x) != "float64":
            raise TypeError(f"gemm: {name} has dtype {dtype_name(x)}; accepted: float64")
    ma, ka = op_shape(_shape2(a, "a"), trans_a)
    kb, nb = op_shape(_shape2(b, "b"), trans_b)
    if ka != kb:
        raise ValueError(f"gemm: op(a) is {ma}x{ka} but op(b) is {kb}x{nb}; inner dimensions must match")
    for name in ("c", "out"):
        if name in arrays and _shape2(arrays[name], name) != (ma, nb):
            raise ValueError(f"gemm: {name} has shape {_shape2(arrays[name], name)}; expected ({ma}, {nb})")
    if ka > MAX_K:
        raise ValueError(f"gemm: k = {ka} is above the supported maximum {MAX_K}")
    if c is None and beta != 0.0:
        raise ValueError(f"gemm: beta = {beta} but c is None; give c= to add beta·c, or beta=0")
    use_c = c is not None and beta != 0.0
    if out is not None:  # every check on out before anything is written (c is copied into it first)
        inputs = [("a", a), ("b", b)] + ([("c", c)] if use_c else [])
        call_core("gemm", lambda: _core.check_output("gemm", "out", out, inputs, same_as="c"), arrays, "float64")
    cuda = where[0] == "cuda"
    handle = resolve_stream(stream, a, where)
    # A certified contract's count is chosen inside the call, from the operands.
    moduli, scaling = contract.moduli or 0, contract.scaling
    rtol = 0.0 if contract.is_native or not contract.certified else contract.rtol_at(ka)
    if cuda:
        products = engine
        plan = _core.gemm_plan(ma, nb, ka, bool(trans_a), bool(trans_b), moduli, scaling, where[1], products,
                               contract.is_native, rtol, complex_pairs)
    if out is None:
        out = empty_like(c) if use_c else empty_like(a, (ma, nb))
    if use_c and out is not c:
        _copy(out, c, fw, handle if cuda else 0)
    if cuda:
        ws = _workspace(plan.workspace_bytes, a, fw, where[1], handle)
        plan.tune_once(ws, handle)  # the fastest INT8 product algorithm, once per plan (exact either way)
        native_b = prepared._native if prepared is not None else None
        times = call_core("gemm", lambda: plan.run(a, b, out, float(alpha), float(beta) if use_c else 0.0, ws, handle,
                                                   timed=bool(report), prepared_b=native_b), arrays, "float64")
        if report:
            rep = dict(plan.report(ws, handle), **times, backend="cuda")
    else:
        rep = call_core("gemm", lambda: _core.gemm_reference(
            a, b, out, alpha=float(alpha), beta=float(beta) if use_c else 0.0, trans_a=bool(trans_a),
            trans_b=bool(trans_b), moduli=moduli, scaling=scaling, native=contract.is_native, rtol=rtol), arrays,
            "float64")
        rep["backend"] = "cpu-reference"
    if report:
        rep.update(scaling=scaling, moduli_set=MODULI[:rep["moduli"]], contract=repr(contract),
                   prepared_b=prepared is not None)
        return out, rep
    return out
