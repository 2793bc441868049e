"""Exact float64 matrix products for the gemm contract tests (no tests here).

Every finite double is an integer times a power of two. Each row i of `a` is written as integers
N_il times 2^ea_i (ea_i the lowest exponent of a set bit in the row), each column j of `b` as N_lj
times 2^eb_j, so the exact product is (Σ_l N_il·N_lj)·2^(ea_i + eb_j): Python integers in a NumPy
object matmul, with no rounding anywhere. The bound checks compare integers too (every term of the
bounds is a dyadic rational, or a rational with a small denominator), so "violated" means violated
in exact arithmetic, not within a float tolerance.

Representation: :class:`Dyadic` holds an (m, n) object array of Python ints `num` and an int64 array
`exp`, value num·2^exp. :func:`exact_product` returns that, and ``Dyadic.fractions()`` gives
`fractions.Fraction` elements (None in lines holding Inf/NaN, which have no exact value).

Underflow: a result that lands among the subnormals is off by up to half their spacing (2^-1075)
after one rounding, however small rtol is, and the bounds of the spec have no absolute term. The
checks add it: ETA = 2^-1075 for one rounding, k·2^-1074 for a native dot product of k terms. Away
from the subnormals these terms change nothing.

Generators take a NumPy Generator and the shape (m, k, n) and return float64 (a, b), with
a (m, k) and b (k, n); each accepts ``example=True``, which plants the 1×3 · 3×1 product
[1e20, 1, 1]·[1e-20, 1, 1]ᵀ (1e20·fl(1e-20) + 2, which rounds to 3.0) into one row
of a and one column of b (the rest of that row and column zero); at (m, k, n) = (1, 3, 1) that *is*
a = [[1e20, 1, 1]], b = [[1e-20], [1], [1]].
"""
from __future__ import annotations

from fractions import Fraction
from typing import Callable, Dict, Iterable, List, Optional, Tuple

import numpy as np

U = Fraction(1, 1 << 53)  # unit roundoff of float64
ETA = (1, -1075)  # half the smallest subnormal, as (int, exponent): one rounding's absolute error below 2^-1022

EXAMPLE_A = np.array([[1e20, 1.0, 1.0]])
EXAMPLE_B = np.array([[1e-20], [1.0], [1.0]])


# ---------------------------------------------------------------------------------------------
# exact arithmetic


def split(x: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """x = mant·2^exp exactly, elementwise: int64 mantissas (|mant| < 2^53) and exponents.
    Non-finite elements (and zeros) give mant = 0."""
    x = np.asarray(x, dtype=np.float64)
    finite = np.isfinite(x)
    f, e = np.frexp(np.where(finite, x, 0.0))
    mant = (f * 2.0**53).astype(np.int64)  # exact: |f| < 1 has at most 53 significant bits
    return np.where(finite, mant, 0), (e.astype(np.int64) - 53)


def _lines(x: np.ndarray, axis: int) -> Tuple[np.ndarray, np.ndarray]:
    """Integers of x along `axis` lines with one exponent per line: x = N·2^e_line exactly.
    axis=1: rows (e has shape (m,)); axis=0: columns (e has shape (n,))."""
    mant, exp = split(x)
    big = np.iinfo(np.int64).max
    lo = np.where(mant != 0, exp, big).min(axis=axis)
    lo = np.where(lo == big, 0, lo)  # all-zero (or all non-finite) line: any exponent
    shift = np.where(mant != 0, exp - np.expand_dims(lo, axis), 0)
    n = np.left_shift(mant.astype(object), shift.astype(object))
    return n, lo.astype(np.int64)


def finite_lines(a: np.ndarray, b: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(rows of a that are all finite, columns of b that are all finite)."""
    return np.isfinite(a).all(axis=1), np.isfinite(b).all(axis=0)


def finite_elements(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(m, n) mask: the elements of a@b whose row of a and column of b are finite."""
    ra, cb = finite_lines(a, b)
    return ra[:, None] & cb[None, :]


class Dyadic:
    """An (m, n) matrix of exact values num·2^exp (num: object array of Python ints)."""

    def __init__(self, num: np.ndarray, exp: np.ndarray, defined: np.ndarray):
        self.num, self.exp, self.defined = num, exp, defined

    @property
    def shape(self) -> tuple:
        return self.num.shape

    def fraction(self, i: int, j: int) -> Optional[Fraction]:
        if not self.defined[i, j]:
            return None
        e = int(self.exp[i, j])
        n = int(self.num[i, j])
        return Fraction(n << e) if e >= 0 else Fraction(n, 1 << -e)

    def fractions(self) -> np.ndarray:
        """Object array of Fraction (None where a line holds Inf/NaN)."""
        out = np.empty(self.shape, dtype=object)
        for i, j in np.ndindex(*self.shape):
            out[i, j] = self.fraction(i, j)
        return out

    def to_float(self) -> np.ndarray:
        """The correctly rounded float64 of each element (NaN where undefined); CPython's int/int
        division rounds correctly, underflow included (overflow raises OverflowError)."""
        out = np.full(self.shape, np.nan)
        for i, j in np.ndindex(*self.shape):
            f = self.fraction(i, j)
            if f is not None:
                out[i, j] = f.numerator / f.denominator
        return out


def _exact(a: np.ndarray, b: np.ndarray, absolute: bool) -> Dyadic:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"shapes {a.shape} and {b.shape} do not multiply")
    m, n = a.shape[0], b.shape[1]
    if a.shape[1] == 0:  # an empty sum
        num = np.empty((m, n), dtype=object)
        num[...] = 0
        return Dyadic(num, np.zeros((m, n), np.int64), np.ones((m, n), bool))
    na, ea = _lines(np.abs(a) if absolute else a, axis=1)
    nb, eb = _lines(np.abs(b) if absolute else b, axis=0)
    num = np.matmul(na, nb)
    exp = ea[:, None] + eb[None, :]
    return Dyadic(num, exp, finite_elements(a, b))


def exact_product(a: np.ndarray, b: np.ndarray) -> Dyadic:
    """P = a@b exactly (elements in a row/column holding Inf/NaN are marked undefined)."""
    return _exact(a, b, absolute=False)


def exact_abs_product(a: np.ndarray, b: np.ndarray) -> Dyadic:
    """|a|@|b| exactly."""
    return _exact(a, b, absolute=True)


# ---------------------------------------------------------------------------------------------
# bound checks


class ExactRef:
    """P = a@b and S = |a|@|b| of one pair, computed once and passed to the checks as ref= (the
    checks compute them otherwise)."""

    def __init__(self, a: np.ndarray, b: np.ndarray):
        self.a, self.b = a, b
        self.p, self.s = exact_product(a, b), exact_abs_product(a, b)


def _violations(c, a, b, rel: Fraction, eta: Tuple[int, int], native_mask=None,
                extra: Optional[np.ndarray] = None, ref: Optional[ExactRef] = None) -> List[Tuple[int, int]]:
    """The (i, j) where |c − P| > rel·(|A||B|) + u·|c| + eta (+ extra_ij), exactly, over the
    elements with a finite row and column that native_mask (if given) does not mark."""
    c = np.asarray(c, dtype=np.float64)
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    m, n = a.shape[0], b.shape[1]
    if c.shape != (m, n):
        raise ValueError(f"c has shape {c.shape}; expected {(m, n)}")
    ref = ExactRef(a, b) if ref is None else ref
    p, s = ref.p, ref.s
    check = p.defined.copy()
    if native_mask is not None:
        check &= ~np.asarray(native_mask, dtype=bool)
    cm, ce = split(c)
    c_finite = np.isfinite(c)
    rp, rq = rel.numerator, rel.denominator
    en, ee = eta
    bad = []
    for i, j in zip(*np.nonzero(check)):
        if not c_finite[i, j]:
            bad.append((int(i), int(j)))
            continue
        e, cmij, ceij = int(p.exp[i, j]), int(cm[i, j]), int(ce[i, j])
        g = min(e, ceij - 53, ee)
        d = abs((cmij << (ceij - g)) - (int(p.num[i, j]) << (e - g)))
        slack = (abs(cmij) << (ceij - 53 - g)) + (en << (ee - g))  # u|c| + eta, in units of 2^g
        sg = int(s.num[i, j]) << (e - g)
        excess = rq * (d - slack) - rp * sg  # rq·(|c − P| − u|c| − eta − rel·S) / 2^g
        if extra is None:
            ok = excess <= 0
        else:
            ok = Fraction(excess, rq) * Fraction(2) ** g <= extra[i, j]
        if not ok:
            bad.append((int(i), int(j)))
    return bad


def check_certified(c, a, b, rtol: float, native_mask=None, ref: Optional[ExactRef] = None,
                    eta: Tuple[int, int] = ETA, extra: Optional[np.ndarray] = None) -> List[Tuple[int, int]]:
    """Elements violating |c_ij − P_ij| <= rtol·(|A||B|)_ij + 2^-53·|c_ij| + eta (eta = (n, e): n·2^e,
    by default one rounding among the subnormals) (+ extra_ij, Fractions, where given), in exact
    arithmetic (rtol taken as the exact value of the float); skips elements native_mask marks and
    those in lines holding Inf/NaN. ref: an ExactRef of (a, b) to reuse."""
    return _violations(c, a, b, Fraction(rtol), eta, native_mask, extra=extra, ref=ref)


def fixed_contract_bound(a, b, bits_a: int, bits_b: int) -> np.ndarray:
    """The a-priori bound of a fixed contract Contract(moduli=n, scaling=s) per element, without the
    final rounding: (q_i/2)‖b_j‖₁(1 + θ_j/2) + (r_j/2)‖a_i‖₁(1 + θ_i/2), with the fewest bits kept
    standing in for every line's (an upper bound): q_i = 2^(E_i − bits_a) (|a_il| < 2^E_i),
    r_j = 2^(F_j − bits_b), θ_i = min(1, nnz_i·2^-bits_a), θ_j = min(1, nnz_j·2^-bits_b).
    Object array of Fraction (lines holding Inf/NaN: 0, they are skipped anyway)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)

    def per_line(x: np.ndarray, bits: int):  # x: lines along axis 1
        x = np.where(np.isfinite(x), x, 0.0)
        n, e = _lines(np.abs(x), axis=1)
        out = []
        for i in range(x.shape[0]):
            nnz = int(np.count_nonzero(x[i]))
            if nnz == 0:
                out.append((Fraction(0), Fraction(0), Fraction(0)))
                continue
            E = int(np.frexp(np.abs(x[i]).max())[1])
            q = Fraction(2) ** (E - bits)
            norm1 = Fraction(int(sum(n[i]))) * Fraction(2) ** int(e[i])
            theta = min(Fraction(1), nnz * Fraction(2) ** -bits)
            out.append((q, norm1, theta))
        return out

    rows, cols = per_line(a, bits_a), per_line(b.T, bits_b)
    bound = np.empty((a.shape[0], b.shape[1]), dtype=object)
    for i, (q, na1, ti) in enumerate(rows):
        for j, (r, nb1, tj) in enumerate(cols):
            bound[i, j] = q / 2 * nb1 * (1 + tj / 2) + r / 2 * na1 * (1 + ti / 2)
    return bound


def check_fixed(c, a, b, bits_a: int, bits_b: int, native_mask=None,
                ref: Optional[ExactRef] = None) -> List[Tuple[int, int]]:
    """Elements violating a fixed contract's a-priori bound (fixed_contract_bound) + u·|c_ij|
    (+ 2^-1075 for underflow), exactly; skips as check_certified does."""
    return _violations(c, a, b, Fraction(0), ETA, native_mask, extra=fixed_contract_bound(a, b, bits_a, bits_b),
                       ref=ref)


def ieee_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a@b elementwise in IEEE arithmetic (products, then NumPy's sum): for lines holding Inf/NaN and
    moderate finite values (no overflow) its NaN-ness and infinities do not depend on the order."""
    with np.errstate(invalid="ignore", over="ignore"):
        return (np.asarray(a)[:, :, None] * np.asarray(b)[None, :, :]).sum(axis=1)


def describe(c, a, b, cells: Iterable[Tuple[int, int]], rtol: Optional[float] = None, limit: int = 5,
             ref: Optional[ExactRef] = None) -> str:
    """A short, float-rounded account of some violating elements for assertion messages."""
    ref = ExactRef(a, b) if ref is None else ref
    p, s = ref.p, ref.s
    lines = []
    for i, j in list(cells)[:limit]:
        pij, sij = p.fraction(i, j), s.fraction(i, j)
        err = abs(Fraction(float(c[i, j])) - pij) if np.isfinite(c[i, j]) else float("inf")
        ratio = float(err / sij) if sij else float("inf")
        lines.append(f"({i},{j}): c={float(c[i, j])!r} P≈{float(pij)!r} |c−P|/(|A||B|)≈{ratio:.3g}"
                     + (f" rtol={rtol:.3g}" if rtol is not None else ""))
    return "; ".join(lines)


# ---------------------------------------------------------------------------------------------
# adversarial generators: (rng, m, k, n, *, example=False, **params) -> (a (m,k), b (k,n))


def plant_example(rng: np.random.Generator, a: np.ndarray, b: np.ndarray) -> None:
    """In place: one row of a and one column of b become [1e20, 1, 1] and [1e-20, 1, 1] at three
    positions (zero elsewhere in that row and column). Needs k >= 3; does nothing otherwise."""
    m, k = a.shape
    n = b.shape[1]
    if k < 3:
        return
    i, j = int(rng.integers(m)), int(rng.integers(n))
    pos = np.sort(rng.choice(k, 3, replace=False)) if k > 3 else np.arange(3)
    a[i, :] = 0.0
    b[:, j] = 0.0
    a[i, pos] = EXAMPLE_A[0]
    b[pos, j] = EXAMPLE_B[:, 0]


GENERATORS: Dict[str, Callable] = {}


def generator(fn: Callable) -> Callable:
    """Registers fn and gives it the example= keyword."""

    def wrapped(rng, m, k, n, *, example: bool = False, **params):
        a, b = fn(rng, m, k, n, **params)
        a, b = np.array(a, dtype=np.float64, order="C"), np.array(b, dtype=np.float64, order="C")
        assert a.shape == (m, k) and b.shape == (k, n), (fn.__name__, a.shape, b.shape)
        if example:
            plant_example(rng, a, b)
        return a, b

    wrapped.__name__ = wrapped.__qualname__ = fn.__name__
    wrapped.__doc__ = fn.__doc__
    GENERATORS[fn.__name__] = wrapped
    return wrapped


def _signed_mantissas(rng, shape) -> np.ndarray:
    """Uniform in ±[1, 2)."""
    return (1.0 + rng.random(shape)) * rng.choice([-1.0, 1.0], size=shape)


def _spanning(rng, lines: int, length: int, E: int) -> np.ndarray:
    """lines × length, each line's magnitudes 2^x, x uniform in [o, o + E] with both ends present
    (o around −E/2, so products of two lines stay far inside float64's range)."""
    x = rng.uniform(0, E, size=(lines, length))
    if length >= 2:
        for r in range(lines):
            lo, hi = rng.choice(length, 2, replace=False)
            x[r, lo], x[r, hi] = 0.0, E
    o = -(E // 2) + rng.integers(-60, 61, size=(lines, 1))
    return np.ldexp(_signed_mantissas(rng, (lines, length)), np.floor(x).astype(int) + o)


@generator
def spanning_lines(rng, m, k, n, E: int = 300):
    """Rows of a and columns of b whose entries span 2^0 … 2^E (shifted per line)."""
    return _spanning(rng, m, k, E), _spanning(rng, n, k, E).T


@generator
def large_meets_zero(rng, m, k, n, low: int = 40, high: int = 200, tiny: bool = False):
    """Each row of a one entry ×2^(low…high), at positions where b's rows are zero (or, tiny=True,
    scaled down by as much); likewise each column of b one large entry where a's columns are zero."""
    a = (rng.random((m, k)) - 0.5) * np.exp(rng.standard_normal((m, k)))
    b = (rng.random((k, n)) - 0.5) * np.exp(rng.standard_normal((k, n)))
    perm = rng.permutation(k)
    la, lb = perm[: max(1, k // 2)], perm[max(1, k // 2):]
    for i in range(m):
        a[i, rng.choice(la)] *= 2.0 ** int(rng.integers(low, high + 1))
    if len(lb):
        for j in range(n):
            b[rng.choice(lb), j] *= 2.0 ** int(rng.integers(low, high + 1))
    if tiny:
        b[la, :] *= 2.0 ** -rng.integers(low, high + 1, size=(len(la), 1)).astype(float)
        if len(lb):
            a[:, lb] *= 2.0 ** -rng.integers(low, high + 1, size=(1, len(lb))).astype(float)
    else:
        b[la, :] = 0.0
        if len(lb):
            a[:, lb] = 0.0
    return a, b


@generator
def large_meets_tiny(rng, m, k, n, low: int = 20, high: int = 200):
    """The 1e20 pattern: a's column l* holds large entries (10^low … 10^high in binary powers,
    mantissa random), b's row l* the matching tiny ones, so that a_il*·b_l*j is O(1) like the other
    terms, which a scheme keeping the large entries' leading bits loses."""
    a = _signed_mantissas(rng, (m, k)) * 0.5
    b = _signed_mantissas(rng, (k, n)) * 0.5
    ls = rng.choice(k, size=max(1, k // 8), replace=False)
    for ell in ls:
        big = rng.integers(low, high + 1, size=m)
        a[:, ell] = np.ldexp(_signed_mantissas(rng, m), big)
        b[ell, :] = np.ldexp(_signed_mantissas(rng, n), -int(big.min()) - rng.integers(0, 4, size=n))
    return a, b


@generator
def cancellation(rng, m, k, n, exact: bool = True, big: int = 60, mode: str = "pairs"):
    """a@b (nearly) cancels. mode "pairs": columns of a come in pairs a_l' = a_l·2^t with
    b_l'j = −b_lj·2^-t (·(1 + δ), δ tiny, unless exact), scaled by 2^big so they dominate |A||B|;
    mode "solve": the last entry of each column of b is chosen so that one row's dot product
    nearly vanishes (exactly where it can be)."""
    a = (rng.random((m, k)) - 0.5) * np.exp(rng.standard_normal((m, k)))
    b = (rng.random((k, n)) - 0.5) * np.exp(rng.standard_normal((k, n)))
    if mode == "pairs":
        perm = rng.permutation(k)
        for p in range(k // 2):
            l, l2 = perm[2 * p], perm[2 * p + 1]
            t = int(rng.integers(-30, 31))
            a[:, l] *= 2.0**big
            a[:, l2] = a[:, l] * 2.0**t
            delta = 0.0 if exact else rng.uniform(-1, 1, size=n) * 2.0 ** -rng.integers(1, 52, size=n).astype(float)
            b[l2, :] = -b[l, :] * 2.0**-t * (1.0 + delta)
    else:
        for j in range(n):
            i = int(rng.integers(m))
            if a[i, -1] == 0 or k < 2:
                continue
            partial = float(np.dot(a[i, :-1], b[:-1, j]))
            b[-1, j] = -partial / a[i, -1]
            if not exact:
                b[-1, j] *= 1.0 + rng.uniform(-1, 1) * 2.0 ** -int(rng.integers(1, 52))
    return a, b


@generator
def heavy_tails(rng, m, k, n, phi: float = 8.0):
    """(u − ½)·exp(φ·g), u uniform, g normal: the standard family, φ up to 8."""
    return ((rng.random((m, k)) - 0.5) * np.exp(phi * rng.standard_normal((m, k))),
            (rng.random((k, n)) - 0.5) * np.exp(phi * rng.standard_normal((k, n))))


@generator
def subnormal_mix(rng, m, k, n, frac: float = 0.4, large: float = 0.3):
    """Subnormals (a fraction `frac` of a, and one row made of them) mixed with normal values from
    2^-40 to 2^40; b's values from 2^-40 to 2^40, a fraction `large` of them 2^600 … 2^900, and a few
    subnormals. Subnormal × large lands among the normal numbers, subnormal × small far below them
    (results that underflow); frac = 1 with large = 0 gives a scaled-down product the emulation
    can take whole."""
    sub = np.ldexp(rng.integers(1, 1 << 52, size=(m, k)).astype(np.float64), -1074)
    sub *= rng.choice([-1.0, 1.0], size=(m, k))
    normal = np.ldexp(_signed_mantissas(rng, (m, k)), rng.integers(-40, 41, size=(m, k)))
    a = np.where(rng.random((m, k)) < frac, sub, normal)
    if m > 1:
        a[rng.integers(m)] = sub[rng.integers(m)]  # one row all subnormal
    e = np.where(rng.random((k, n)) < large, rng.integers(600, 901, size=(k, n)), rng.integers(-40, 41, size=(k, n)))
    b = np.ldexp(_signed_mantissas(rng, (k, n)), e)
    bsub = np.ldexp(rng.integers(1, 1 << 52, size=(k, n)).astype(np.float64), -1074)
    b = np.where(rng.random((k, n)) < frac / 4, bsub, b)
    return a, b


@generator
def zero_lines(rng, m, k, n, frac: float = 0.3):
    """The standard family (φ = 1) with rows of a and columns of b zeroed (sometimes all of them)."""
    a = (rng.random((m, k)) - 0.5) * np.exp(rng.standard_normal((m, k)))
    b = (rng.random((k, n)) - 0.5) * np.exp(rng.standard_normal((k, n)))
    a[rng.random(m) < frac, :] = 0.0
    b[:, rng.random(n) < frac] = 0.0
    if rng.random() < 0.1:
        a[...] = 0.0
    return a, b


@generator
def integer_valued(rng, m, k, n, bits: int = 10):
    """Integers of magnitude < 2^bits (bits <= 20: exact products and sums for k <= 2^12)."""
    hi = 1 << bits
    return (rng.integers(-hi + 1, hi, size=(m, k)).astype(np.float64),
            rng.integers(-hi + 1, hi, size=(k, n)).astype(np.float64))


@generator
def fp16_valued(rng, m, k, n):
    """Every finite float16 bit pattern equally likely (subnormals 2^-24 … up to 65504)."""
    def draw(shape):
        bits = rng.integers(0, 0x7C00, size=shape).astype(np.uint16)  # finite magnitudes
        bits |= (rng.random(shape) < 0.5).astype(np.uint16) << 15
        return bits.view(np.float16).astype(np.float64)
    return draw((m, k)), draw((k, n))


@generator
def nonfinite_lines(rng, m, k, n, count: int = 2):
    """Uniform values in (−1, 1) with `count` Inf/−Inf/NaN planted in a and in b (in random lines),
    and a row of a holding both +Inf and −Inf where k allows."""
    a, b = rng.uniform(-1, 1, size=(m, k)), rng.uniform(-1, 1, size=(k, n))
    for x in (a, b):
        for _ in range(count):
            x[rng.integers(x.shape[0]), rng.integers(x.shape[1])] = rng.choice([np.inf, -np.inf, np.nan])
    if k >= 2 and rng.random() < 0.5:
        i = rng.integers(m)
        a[i, 0], a[i, 1] = np.inf, -np.inf
    return a, b


def ints_exact(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Exact a@b for integer-valued a, b with |entries| < 2^20 and small k (int64 arithmetic)."""
    return (a.astype(np.int64) @ b.astype(np.int64)).astype(np.float64)


def _self_test() -> None:  # run as a script: checks the helper against Fraction arithmetic
    import time

    rng = np.random.default_rng(0)
    # the 1x3 example
    p = exact_product(EXAMPLE_A, EXAMPLE_B).fraction(0, 0)
    assert p == Fraction(1e20) * Fraction(1e-20) + 2 and float(p) == 3.0
    assert check_certified(np.array([[3.0]]), EXAMPLE_A, EXAMPLE_B, 1e-15) == []
    assert check_certified(np.array([[0.0]]), EXAMPLE_A, EXAMPLE_B, 0.5) == [(0, 0)]  # 3 > 0.5·(1+1+1)
    assert check_certified(np.array([[0.0]]), EXAMPLE_A, EXAMPLE_B, 0.99) == [(0, 0)]  # 3 > 0.99·3
    assert check_certified(np.array([[2.0]]), EXAMPLE_A, EXAMPLE_B, 0.34) == []  # 1 <= 0.34·3
    for name, gen in GENERATORS.items():
        x, y = gen(rng, 1, 3, 1, example=True)
        assert np.array_equal(x, EXAMPLE_A) and np.array_equal(y, EXAMPLE_B), name
        for shape in [(1, 1, 1), (2, 1, 3), (5, 7, 4), (3, 64, 2)]:
            gen(rng, *shape)
    # against Fractions on tiny random cases from every generator
    for name, gen in GENERATORS.items():
        for shape in [(1, 1, 1), (2, 3, 2), (3, 5, 4)]:
            x, y = gen(rng, *shape)
            got = exact_product(x, y).fractions()
            gabs = exact_abs_product(x, y).fractions()
            for i, j in np.ndindex(shape[0], shape[2]):
                if not (np.isfinite(x[i]).all() and np.isfinite(y[:, j]).all()):
                    assert got[i, j] is None
                    continue
                terms = [Fraction(float(x[i, l])) * Fraction(float(y[l, j])) for l in range(shape[1])]
                want, wabs = sum(terms, Fraction(0)), sum(map(abs, terms), Fraction(0))
                assert got[i, j] == want and gabs[i, j] == wabs, (name, i, j)
    # bound checks against Fractions: perturb the exact result by a chosen amount
    x, y = heavy_tails(rng, 4, 6, 3, phi=2.0)
    p, s = exact_product(x, y).fractions(), exact_abs_product(x, y).fractions()
    c = exact_product(x, y).to_float()
    for i, j in np.ndindex(4, 3):
        assert abs(Fraction(c[i, j]) - p[i, j]) <= U * abs(Fraction(c[i, j]))
    rtol = 2.0**-30
    assert check_certified(c, x, y, rtol) == []
    c2 = c.copy()
    c2[1, 2] = float(p[1, 2] + 2 * Fraction(rtol) * s[1, 2])
    assert check_certified(c2, x, y, rtol) == [(1, 2)]
    c2[1, 2] = float(p[1, 2] + Fraction(rtol) * s[1, 2] / 2)
    assert check_certified(c2, x, y, rtol) == []
    mask = np.zeros((4, 3), bool)
    mask[1, 2] = True
    c2[1, 2] = np.nan
    assert check_certified(c2, x, y, rtol, native_mask=mask) == [] and check_certified(c2, x, y, rtol) == [(1, 2)]
    # timing: 64^3 with the widest generator
    x, y = spanning_lines(rng, 64, 64, 64)
    t = time.perf_counter()
    P = exact_product(x, y)
    t1 = time.perf_counter() - t
    c = P.to_float()
    t = time.perf_counter()
    bad = check_certified(c, x, y, 1e-14)
    t2 = time.perf_counter() - t
    assert bad == []
    x, y = heavy_tails(rng, 64, 64, 64)
    t = time.perf_counter()
    exact_product(x, y)
    t3 = time.perf_counter() - t
    print(f"self-test passed; 64^3 exact product {t1:.3f} s (spanning 2^300), {t3:.3f} s (heavy tails); "
          f"check_certified 64x64 {t2:.3f} s")


if __name__ == "__main__":
    _self_test()
