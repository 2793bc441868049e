"""FP64-accurate matrix product by the Ozaki scheme II (integer moduli + Chinese remainder theorem).

Host arrays run on the CPU reference, CUDA arrays on the CUDA backend (INT8 products through the
library's wgmma or mma.sync kernels or cuBLAS); all compute the same integers and round once, so their
results agree bit for bit."""
from __future__ import annotations

import atexit
import numbers
from typing import Any, Optional

from . import _core
from ._interop import (call_core, device_of, dtype_name, empty, empty_like, framework_of, resolve_stream,
                       shape_of)

MODULI: tuple = tuple(_core.GEMM_MODULI)
"""The moduli in the order contracts take them: a contract with n moduli uses the first n."""
MAX_K: int = int(_core.GEMM_MAX_K)
BACKENDS: tuple = ("auto", "cpu", "cuda", "cublas", "mma", "wgmma")
"""gemm's backend values: by the arrays' device, the CPU reference, CUDA, CUDA on one INT8 product engine."""



def fast_bits(moduli: int, k: int) -> tuple:
    """Bits every row of op(A) and column of op(B) keeps at least under "fast" scaling for this many
    moduli and inner dimension k (a line whose largest element's mantissa fits keeps one more;
    "accurate" and "norm" keep at least as many as fast): (bits_a, bits_b), or (0, 0) if none."""
    return tuple(_core.gemm_fast_bits(int(moduli), int(k)))


class Contract:
    """What a gemm call promises: the number of moduli (2 … 20) and the scaling mode.

    The integer product is exact; the only error is the rounding of the power-of-two-scaled inputs
    to integers (to nearest). With n moduli, P = p_1 ⋯ p_n and k the inner dimension, "fast" scaling
    scales each row of op(A) (column of op(B)) by the largest power of two that leaves its largest
    magnitude at most a cap, cap_a·cap_b·k < P/2: it keeps at least ``bits_a`` (``bits_b``) bits below
    its largest element, ``bits_a + bits_b = bitlen(P) - 2 - ceil(log2 k)``, one more where its
    largest element's mantissa fits; ``report=True`` returns the fewest kept on each side.

    - ``Contract(moduli=n, scaling="accurate")``: exactly n moduli.
    - ``Contract(bits=b)``: the fewest moduli that keep at least b bits per row and column for the
      call's k (b ≤ 62).
    - ``Contract.native()``: resolved per call, from the operands: the fewest moduli whose error
      bound on this A and B is no worse than native DGEMM's (probabilistic) standard bound, both in
      the row-column form β·‖a_i‖₂·‖b_j‖₂; ours follows from each line's exponent spread √nnz·2^E/‖line‖₂
      and the bits kept (``ironkernels/gemm.hpp``, ``gemm_native_contract``). ``report=True`` returns the
      count, both bounds and the spreads. Norm scaling.

    scaling ``"fast"``: shifts from the largest exponent of each row/column.
    scaling ``"accurate"`` (default): rows of op(A) and columns of op(B) keep as many bits as a
    per-element bound of |op(A)|·|op(B)| from one extra small-integer product allows (never fewer
    than "fast").
    scaling ``"norm"``: each row of op(A) (column of op(B)) keeps as many bits as its 2-norm allows
    under Cauchy–Schwarz, ‖a'_i‖₂·‖b'_j‖₂ < P/2 (never fewer than "fast"); no extra product, the norms
    come from the pass that finds the exponents, summed in one fixed order on every backend. Its
    error is within a few times of "accurate"'s either way on the benchmark families.
    """

    SCALINGS = ("fast", "accurate", "norm")

    def __init__(self, moduli: Optional[int] = None, scaling: str = "accurate", *, bits: Optional[int] = None):
        if (moduli is None) == (bits is None):
            raise TypeError("Contract: give exactly one of moduli= (2 … 20) or bits= (1 … 62), or use Contract.native()")
        for name, v, lo, hi in (("moduli", moduli, 2, len(MODULI)), ("bits", bits, 1, 62)):
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise TypeError(f"Contract: {name} must be an int, got {type(v).__name__}")
            if not lo <= v <= hi:
                raise ValueError(f"Contract: {name} = {v}; accepted: {lo} … {hi}")
        if scaling not in self.SCALINGS:
            raise ValueError(f"Contract: scaling = {scaling!r}; accepted: {', '.join(map(repr, self.SCALINGS))}")
        self.moduli = None if moduli is None else int(moduli)
        self.bits = None if bits is None else int(bits)
        self.scaling = scaling
        self._native = False

    @classmethod
    def native(cls) -> "Contract":
        c = cls(moduli=2, scaling="norm")
        c.moduli = None
        c._native = True
        return c

    @property
    def is_native(self) -> bool:
        """Whether the count is resolved per call from the operands (Contract.native())."""
        return self._native

    def resolve(self, k: int) -> tuple:
        """(moduli, scaling) for a product with inner dimension k (not for Contract.native(), whose
        count depends on the operands: see :func:`native_moduli`)."""
        if self._native:
            raise ValueError("Contract.native() is resolved from the operands; use ironkernels.native_moduli(a, b)")
        if self.moduli is not None:
            return self.moduli, self.scaling
        for nm in range(2, len(MODULI) + 1):
            if min(fast_bits(nm, k)) >= self.bits:
                return nm, self.scaling
        best = min(fast_bits(len(MODULI), k))
        raise ValueError(f"Contract(bits={self.bits}): at k = {k} even {len(MODULI)} moduli keep only {best} bits")

    def __repr__(self) -> str:
        if self._native:
            return "Contract.native()"
        what = f"moduli={self.moduli}" if self.moduli is not None else f"bits={self.bits}"
        return f"Contract({what}, scaling={self.scaling!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Contract) and repr(self) == repr(other)

    def __hash__(self) -> int:
        return hash(repr(self))


def native_moduli(a: Any, b: Any, *, trans_a: bool = False, trans_b: bool = False, stream: Any = None) -> dict:
    """Contract.native() resolved for op(a)·op(b) (host or CUDA float64 matrices; on CUDA it runs on
    `stream` and waits for it): ``moduli``, ``native_bound`` (ours, β at that count), ``native_target``
    (native DGEMM's, √k·u) and the exponent spreads ``spread_a``, ``spread_b``."""
    arrays = {"a": a, "b": b}
    for name, x in arrays.items():
        framework_of(x, f"gemm: {name}")
        if dtype_name(x) != "float64":
            raise TypeError(f"gemm: {name} has dtype {dtype_name(x)}; accepted: float64")
        _shape2(x, name)
    where = device_of(a)
    if device_of(b) != where:
        raise ValueError(f"gemm: b is on {device_of(b)} but a is on {where}; all arrays must be on one device")
    handle = resolve_stream(stream, a, where) if where[0] == "cuda" else 0
    return call_core("gemm", lambda: _core.gemm_native_contract(a, b, bool(trans_a), bool(trans_b), handle),
                     arrays, "float64")


def _shape2(x: Any, name: str) -> tuple:
    shape = shape_of(x, f"gemm: {name}")
    if len(shape) != 2:
        raise ValueError(f"gemm: {name} must be two-dimensional, got shape {shape}")
    return shape


# The library's plan cache (C++, shared with C++ callers) keeps each plan's cuBLAS handle; it is
# emptied at exit while CUDA and cuBLAS are certainly alive, not during module teardown.
atexit.register(_core.gemm_plan_cache_clear)


def _cupy_stream(cupy, handle: int, device_id: int) -> Any:
    """A CuPy stream object for a raw handle (Stream.from_external in CuPy >= 14)."""
    from_external = getattr(cupy.cuda.Stream, "from_external", None)
    if from_external is not None:

        class _Handle:  # the CUDA stream protocol: (version, handle)
            def __cuda_stream__(self):
                return (0, handle)

        return from_external(_Handle())
    return cupy.cuda.ExternalStream(handle, device_id)


def _workspace(nbytes: int, like: Any, fw: str, device_id: int, stream: int) -> Any:
    """Scratch device memory from the caller's framework, ordered on `stream`: PyTorch's caching
    allocator (record_stream keeps it until the stream's work is done), CuPy's pool (per stream),
    else an ironkernels buffer."""
    nbytes = max(int(nbytes), 1)
    if fw == "torch":
        import torch

        ws = torch.empty(nbytes, dtype=torch.uint8, device=like.device)
        ws.record_stream(torch.cuda.ExternalStream(stream, device=like.device))
        return ws
    if fw == "cupy":
        import cupy

        with cupy.cuda.Device(device_id), _cupy_stream(cupy, stream, device_id):
            return cupy.empty(nbytes, dtype=cupy.uint8)
    return empty([(nbytes + 7) // 8], "float64", "cuda", device_id)


def _copy(dst: Any, src: Any, fw: str, stream: int) -> None:
    """dst[...] = src, ordered on `stream` for CUDA arrays."""
    if device_of(dst)[0] == "cpu":
        dst[...] = src
    elif fw == "torch":
        import torch

        with torch.cuda.stream(torch.cuda.ExternalStream(stream, device=dst.device)):
            dst.copy_(src)
    elif fw == "cupy":
        import cupy

        with _cupy_stream(cupy, stream, dst.device.id):
            dst[...] = src
    else:
        _core.copy_(dst, src, stream)


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
    out: Any = None,
    stream: Any = None,
    report: bool = False,
) -> Any:
    """``alpha · op(a) · op(b) + beta · c`` in float64, computed exactly in integers and rounded once.

    Args:
        a, b: float64 matrices (NumPy, PyTorch, CuPy, ... host or CUDA arrays), any strides; host
            arrays run on the CPU reference, CUDA arrays on their GPU (all arrays on one device).
        c: optional (m, n) float64 matrix added with weight ``beta``; ignored when ``beta == 0``
            (even if it holds NaN).
        trans_a, trans_b: use the transpose of a / b.
        contract: :class:`Contract`; default ``Contract.native()``.
        backend: ``"auto"`` (by the arrays' device), ``"cpu"`` or ``"cuda"`` (must match the device);
            on CUDA arrays also the INT8 product engine: ``"wgmma"`` (the library's TMA and wgmma
            kernel, compute capability 9.0; what ``"auto"`` and ``"cuda"`` run where it is available and
            C has at least half as many 128 × 256 tiles as the GPU has SMs), ``"cublas"`` (what they run
            elsewhere) or ``"mma"`` (the library's mma.sync kernel, compute
            capability 8.0+). Every engine gives the same bits.
        out: (m, n) float64 array to write (may be ``c``); default a new array of a's framework.
        stream: CUDA stream (int handle or object with ``__cuda_stream__``); default the framework's
            current stream. The call does not synchronise (unless ``report=True``), except the first
            CUDA call of each (shape, contract, device), which times cublasGemmEx against cuBLASLt's
            algorithms for the INT8 products once (whole and in column blocks) and keeps the fastest
            (exact either way).
        report: also return a dict: the resolved plan (moduli, scaling, bits kept), the backend, the
            phase times and the INT8 product backend and its calls per product (CUDA:
            ``products``, ``product_column_blocks``), and how many elements took the IEEE path
            because of Inf/NaN inputs.

    NaN and ±Inf follow native DGEMM (IEEE) semantics: an element of C whose row of op(a) or
    column of op(b) holds a non-finite value is computed in native float64 arithmetic.
    """
    contract = Contract.native() if contract is None else contract
    if not isinstance(contract, Contract):
        raise TypeError(f"gemm: contract must be an ironkernels.Contract, got {type(contract).__name__}")
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise ValueError(f"gemm: backend = {backend!r}; accepted: {', '.join(map(repr, BACKENDS))}")
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
    for name, x in arrays.items():
        if dtype_name(x) != "float64":
            raise TypeError(f"gemm: {name} has dtype {dtype_name(x)}; accepted: float64")
    ma, ka = _shape2(a, "a")[::-1] if trans_a else _shape2(a, "a")
    kb, nb = _shape2(b, "b")[::-1] if trans_b else _shape2(b, "b")
    if ka != kb:
        raise ValueError(f"gemm: op(a) is {ma}x{ka} but op(b) is {kb}x{nb}; inner dimensions must match")
    for name in ("c", "out"):
        if name in arrays and _shape2(arrays[name], name) != (ma, nb):
            raise ValueError(f"gemm: {name} has shape {_shape2(arrays[name], name)}; expected ({ma}, {nb})")
    if ka > MAX_K:
        raise ValueError(f"gemm: k = {ka} is above the supported maximum {MAX_K}")
    use_c = c is not None and beta != 0.0
    if out is not None:  # every check on out before anything is written (c is copied into it first)
        inputs = [("a", a), ("b", b)] + ([("c", c)] if use_c else [])
        call_core("gemm", lambda: _core.check_output("gemm", "out", out, inputs, same_as="c"), arrays, "float64")
    cuda = where[0] == "cuda"
    handle = resolve_stream(stream, a, where)
    # Contract.native(): the count is resolved inside the call (on CUDA on the device, without waiting).
    moduli, scaling = (0, contract.scaling) if contract.is_native else contract.resolve(max(ka, 1))
    if cuda:
        products = backend if backend in ("cublas", "mma", "wgmma") else "auto"
        plan = _core.gemm_plan(ma, nb, ka, bool(trans_a), bool(trans_b), moduli, scaling, where[1], products,
                               contract.is_native)
    if out is None:
        out = empty_like(a, (ma, nb))
    if use_c and out is not c:
        _copy(out, c, fw, handle if cuda else 0)
    if cuda:
        ws = _workspace(plan.workspace_bytes, a, fw, where[1], handle)
        plan.tune_once(ws, handle)  # the fastest INT8 product algorithm, once per plan (exact either way)
        times = call_core("gemm", lambda: plan.run(a, b, out, float(alpha), float(beta) if use_c else 0.0, ws, handle,
                                                   timed=bool(report)), arrays, "float64")
        if report:
            rep = dict(plan.report(ws, handle), **times, backend="cuda")
    else:
        rep = call_core("gemm", lambda: _core.gemm_reference(
            a, b, out, alpha=float(alpha), beta=float(beta) if use_c else 0.0, trans_a=bool(trans_a),
            trans_b=bool(trans_b), moduli=moduli, scaling=scaling, native=contract.is_native), arrays, "float64")
        rep["backend"] = "cpu-reference"
    if report:
        rep.update(scaling=scaling, moduli_set=MODULI[:rep["moduli"]], contract=repr(contract))
        return out, rep
    return out
