"""FP64-accurate matrix product by the Ozaki scheme II (integer moduli + Chinese remainder theorem).

Status: the CPU reference (host arrays). The CUDA backends and ``Contract.native()`` are in progress
(issue 3); until then CUDA arrays raise a ValueError."""
from __future__ import annotations

import numbers
from typing import Any, Optional

from . import _core
from ._interop import device_of, framework_of

MODULI: tuple = tuple(_core.GEMM_MODULI)
"""The moduli in the order contracts take them: a contract with n moduli uses the first n."""


class Contract:
    """What a gemm call promises: the number of moduli (2 … 20) and the scaling mode.

    The integer product is exact; the only error is the truncation of the power-of-two-scaled
    inputs. With n moduli, P = p_1 ⋯ p_n and k the inner dimension, every row of op(A) keeps
    ``bits_a`` and every column of op(B) ``bits_b`` bits below its largest element, with
    ``bits_a + bits_b = floor(log2 P) - 1 - ceil(log2 k)``; ``report=True`` returns both.

    scaling ``"fast"``: shifts from the largest exponent of each row/column (deterministic).
    scaling ``"accurate"``: rows of op(A) and columns of op(B) keep as many bits as a per-element bound
    of |op(A)|·|op(B)| from one extra small-integer product allows (never fewer than "fast").
    """

    SCALINGS = ("fast", "accurate")

    def __init__(self, moduli: int = 14, scaling: str = "fast"):
        if isinstance(moduli, bool) or not isinstance(moduli, numbers.Integral):
            raise TypeError(f"Contract: moduli must be an int, got {type(moduli).__name__}")
        if not 2 <= moduli <= len(MODULI):
            raise ValueError(f"Contract: moduli = {moduli}; accepted: 2 … {len(MODULI)}")
        if scaling not in self.SCALINGS:
            raise ValueError(f"Contract: scaling = {scaling!r}; accepted: {', '.join(map(repr, self.SCALINGS))}")
        self.moduli = int(moduli)
        self.scaling = scaling

    def __repr__(self) -> str:
        return f"Contract(moduli={self.moduli}, scaling={self.scaling!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Contract) and (self.moduli, self.scaling) == (other.moduli, other.scaling)


def _shape2(x: Any, name: str) -> tuple:
    if len(x.shape) != 2:
        raise ValueError(f"gemm: {name} must be two-dimensional, got shape {tuple(x.shape)}")
    return tuple(int(s) for s in x.shape)


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
        a, b: float64 matrices (NumPy, PyTorch, CuPy, ... host arrays for now), any strides.
        c: optional (m, n) float64 matrix added with weight ``beta``; ignored when ``beta == 0``
            (even if it holds NaN).
        trans_a, trans_b: use the transpose of a / b.
        contract: :class:`Contract`; default ``Contract(moduli=14, scaling="fast")``.
        backend: ``"auto"`` or ``"cpu"`` (the reference).
        out: (m, n) float64 array to write (may be ``c``); default a new array of a's framework.
        stream: reserved for the CUDA backends.
        report: also return a dict: the resolved plan (moduli, scaling, bits kept), the backend and
            how many elements took the IEEE path because of Inf/NaN inputs.

    NaN and ±Inf follow native DGEMM (IEEE) semantics: an element of C whose row of op(a) or
    column of op(b) holds a non-finite value is computed in native float64 arithmetic.
    """
    contract = Contract() if contract is None else contract
    if not isinstance(contract, Contract):
        raise TypeError(f"gemm: contract must be an ironkernels.Contract, got {type(contract).__name__}")
    if backend not in ("auto", "cpu"):
        raise ValueError(f"gemm: backend = {backend!r}; accepted: 'auto', 'cpu' (CUDA backends are in progress)")
    for name, v in (("alpha", alpha), ("beta", beta)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"gemm: {name} must be a real number, got {type(v).__name__}")
    fw = framework_of(a)
    framework_of(b)
    arrays = {"a": a, "b": b, **({"c": c} if c is not None else {}), **({"out": out} if out is not None else {})}
    for name, x in arrays.items():
        framework_of(x)
        if device_of(x)[0] != "cpu":
            raise ValueError(f"gemm: {name} is a CUDA array; the CUDA backends are in progress, only host arrays are accepted now")
    ma, ka = _shape2(a, "a")[::-1] if trans_a else _shape2(a, "a")
    kb, nb = _shape2(b, "b")[::-1] if trans_b else _shape2(b, "b")
    if ka != kb:
        raise ValueError(f"gemm: op(a) is {ma}x{ka} but op(b) is {kb}x{nb}; inner dimensions must match")
    for name, x in (("c", c), ("out", out)):
        if x is not None and _shape2(x, name) != (ma, nb):
            raise ValueError(f"gemm: {name} has shape {tuple(x.shape)}; expected ({ma}, {nb})")
    use_c = c is not None and beta != 0.0
    if out is None:
        import numpy as np

        if fw == "torch":
            import torch

            out = torch.empty((ma, nb), dtype=torch.float64)
        else:
            out = np.empty((ma, nb), dtype=np.float64)
        if use_c:
            out[...] = c
    elif use_c and out is not c:
        out[...] = c
    rep = _core.gemm_reference(a, b, out, alpha=float(alpha), beta=float(beta) if use_c else 0.0,
                               trans_a=bool(trans_a), trans_b=bool(trans_b), moduli=contract.moduli,
                               scaling=contract.scaling)
    if report:
        rep = dict(rep, scaling=contract.scaling, moduli_set=MODULI[: contract.moduli], backend="cpu-reference")
        return out, rep
    return out
