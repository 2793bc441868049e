"""What every gemm path shares: the moduli and limits, the contracts (Contract), and the checks of a
call's arrays (one dtype; shapes of matrices)."""
from __future__ import annotations

import math
import numbers
from typing import Any, Callable, Optional

from . import _core
from ._interop import dtype_name, framework_of, shape_of

MODULI: tuple = tuple(_core.GEMM_MODULI)
"""The moduli in the order contracts take them: a contract with n moduli uses the first n."""
MAX_K: int = int(_core.GEMM_MAX_K)
BACKENDS: tuple = ("auto", "cpu", "cuda")
"""gemm's backend values: by the arrays' device, the CPU reference, CUDA."""
ENGINES: tuple = ("auto", "wgmma", "mma", "cublas")
"""gemm's INT8 product engines on CUDA: by the GPU and the shape, or one of them."""


def fast_bits(moduli: int, k: int) -> tuple:
    """Bits every row of op(A) and column of op(B) keeps at least under "fast" scaling for this many
    moduli and inner dimension k (a line whose largest element's mantissa fits keeps one more;
    "accurate" and "norm" keep at least as many as fast): (bits_a, bits_b), or (0, 0) if none."""
    return tuple(_core.gemm_fast_bits(int(moduli), int(k)))


class Contract:
    """What a gemm call promises (docs/gemm.md).

    Certified contracts hold element by element: every element of P = op(a)·op(b) that is emulated
    meets ``|P̂_ij − P_ij| <= rtol·(|op(a)|·|op(b)|)_ij`` plus the rounding of P̂_ij, certified per call
    from a scan of the operands and one small INT8 product of their magnitudes; the count of moduli is
    chosen per call, and lines of op(a) / op(b) that no count certifies are computed in native float64
    (cuBLAS DGEMM on the GPU), or the whole call where that is cheaper. ``report=True`` says which.

    - ``Contract.native()`` (the default): rtol = √k·2⁻⁵³, native DGEMM's own probabilistic bound
      taken componentwise.
    - ``Contract(rtol=r)``: 0 < r < 1.
    - ``Contract(bits=b)``: rtol = 2⁻ᵇ, 1 <= b <= 62.

    A fixed plan is not certified: ``Contract(moduli=n, scaling=...)`` takes exactly n moduli (2 … 20)
    and meets only the a-priori bound of docs/gemm.md, which grows with each line's exponent range.
    Its scaling: ``"accurate"`` (default; a per-element bound of |op(A)|·|op(B)| from one extra
    small-integer product), ``"fast"`` (each line's largest exponent) or ``"norm"`` (each line's
    2-norm under Cauchy–Schwarz; the scaling of certified contracts).
    """

    SCALINGS = ("fast", "accurate", "norm")

    def __init__(self, moduli: Optional[int] = None, scaling: Optional[str] = None, *, bits: Optional[int] = None,
                 rtol: Optional[float] = None):
        given = [name for name, v in (("moduli", moduli), ("bits", bits), ("rtol", rtol)) if v is not None]
        if len(given) != 1:
            raise TypeError("Contract: give exactly one of moduli= (2 … 20), bits= (1 … 62) or rtol= (0 < rtol < 1), "
                            f"or use Contract.native(); got {', '.join(given) or 'none'}")
        for name, v, lo, hi in (("moduli", moduli, 2, len(MODULI)), ("bits", bits, 1, 62)):
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise TypeError(f"Contract: {name} must be an int, got {type(v).__name__}")
            if not lo <= v <= hi:
                raise ValueError(f"Contract: {name} = {v}; accepted: {lo} … {hi}")
        if rtol is not None:
            if isinstance(rtol, bool) or not isinstance(rtol, numbers.Real):
                raise TypeError(f"Contract: rtol must be a real number, got {type(rtol).__name__}")
            if not 0.0 < float(rtol) < 1.0:
                raise ValueError(f"Contract: rtol = {rtol}; accepted: 0 < rtol < 1")
        certified = moduli is None
        if scaling is not None and (scaling not in self.SCALINGS or (certified and scaling != "norm")):
            accepted = "'norm' (certified contracts)" if certified else ", ".join(map(repr, self.SCALINGS))
            raise ValueError(f"Contract: scaling = {scaling!r}; accepted: {accepted}")
        self.moduli = None if moduli is None else int(moduli)
        self.bits = None if bits is None else int(bits)
        self._rtol = float(2.0 ** -self.bits) if bits is not None else (None if rtol is None else float(rtol))
        self.scaling = "norm" if certified else (scaling or "accurate")
        self._native = False

    @classmethod
    def native(cls) -> "Contract":
        c = cls(bits=53)
        c.bits, c._rtol, c._native = None, None, True
        return c

    @property
    def is_native(self) -> bool:
        """Whether this is Contract.native() (rtol = √k·2⁻⁵³, resolved at each call's k)."""
        return self._native

    @property
    def certified(self) -> bool:
        """Whether every element is certified to rtol (or computed natively): all but fixed plans."""
        return self.moduli is None

    def rtol_at(self, k: int) -> Optional[float]:
        """The tolerance at inner dimension k (None for a fixed plan)."""
        if self._native:
            return math.sqrt(max(int(k), 1)) * 2.0 ** -53
        return self._rtol

    def __repr__(self) -> str:
        if self._native:
            return "Contract.native()"
        if self.moduli is not None:
            return f"Contract(moduli={self.moduli}, scaling={self.scaling!r})"
        return f"Contract(bits={self.bits})" if self.bits is not None else f"Contract(rtol={self._rtol!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Contract) and repr(self) == repr(other)

    def __hash__(self) -> int:
        return hash(repr(self))


def same_dtype(arrays: dict) -> None:
    """TypeError unless a, b, c and out share one dtype (gemm converts nothing)."""
    dtypes = {name: dtype_name(x) for name, x in arrays.items()}
    if len(set(dtypes.values())) > 1:
        listed = ", ".join(f"{name} has {d}" for name, d in dtypes.items()).replace("a has", "a has dtype", 1)
        raise TypeError(f"gemm: {listed}; accepted: a, b, c and out all of one dtype (float64, float32, complex128 or "
                        "complex64; no implicit conversion)")


def framework_arrays(a: Any, b: Any, c: Any, out: Any) -> tuple:
    """({name: array}, framework) of a call whose path works on views of its arrays (.real / .imag,
    float64 copies): one dtype, and one of NumPy, PyTorch and CuPy; TypeError naming the array otherwise."""
    arrays = {"a": a, "b": b, **({"c": c} if c is not None else {}), **({"out": out} if out is not None else {})}
    fw = framework_of(a, "gemm: a")
    same_dtype(arrays)
    for name, x in arrays.items():
        x_fw = framework_of(x, f"gemm: {name}")
        if x_fw not in ("numpy", "torch", "cupy") or x_fw != fw:
            d = dtype_name(x)
            raise TypeError(f"gemm: {name} is a {d} array of {x_fw if x_fw != 'dlpack' else 'no framework'} beside "
                            f"a's {fw}; accepted for {d}: NumPy, PyTorch or CuPy arrays of one framework")
    return arrays, fw


def _shape2(x: Any, name: str) -> tuple:
    shape = shape_of(x, f"gemm: {name}")
    if len(shape) != 2:
        raise ValueError(f"gemm: {name} has shape {shape}; accepted: a matrix, or a batch of them (batch, rows, cols)")
    return shape


def op_shape(shape: tuple, trans: bool) -> tuple:
    """(rows, cols) of op(x) for a matrix of `shape` (its last two dimensions)."""
    rows, cols = tuple(shape)[-2:]
    return (cols, rows) if trans else (rows, cols)


def product_cotangents(product: Callable, a: Any, b: Any, g: Any, trans_a: bool, trans_b: bool) -> tuple:
    """(dA, dB) of C = op(A)·op(B) for the cotangent G: d op(A) = G·op(B)ᵀ and d op(B) = op(A)ᵀ·G,
    transposed back where op transposes; each a call product(x, y, trans_x, trans_y) of the same gemm."""
    da = product(b, g, trans_b, True) if trans_a else product(g, b, False, not trans_b)
    db = product(g, a, True, trans_a) if trans_b else product(a, g, not trans_a, False)
    return da, db
