"""GEMM input families and error metrics, shared by accuracy_gemm.py and bench_gemm.py.

Families (A is m×k, B is k×n; every family works for rectangular shapes):

- φ (a number: 0.5, 1, 2, 4, 6, 8, …): (u − 0.5)·exp(φ·g), u uniform in [0, 1), g standard normal,
  for A and for B (heavy tails as φ grows).
- "rows": N(0, 1), each row of A and each column of B scaled by 2^e, e uniform integer in [−60, 60]
  per line.
- "wide": N(0, 1), every element of A and of B scaled by its own 2^e, e uniform integer in
  [−100, 100] (every line spans about 2^200).
- "outliers": N(0, 1); in each row i of A one entry A[i, p_i] (p_i uniform in [0, k)) is scaled by
  2^60 and row p_i of B is set to 0, so every large entry meets zeros.
- "mixed10", "mixed50": the φ = 0.5 pair in which 10% / 50% of A's rows (chosen at random) are
  replaced by "outliers" rows, with B's rows at their large entries' positions set to 0.

Drawing goes through a small backend: NumpyDraw (host arrays, numpy Generator) or TorchDraw (CUDA
tensors, torch Generator), so both give the same family from the same code.
"""
from __future__ import annotations

import numpy as np

OUTLIER_SCALE = 2.0 ** 60
ROWS_EXP = 60
WIDE_EXP = 100
MIXED = {"mixed10": 0.10, "mixed50": 0.50}
NAMED = ("rows", "wide", "outliers") + tuple(MIXED)


def check_family(family: str) -> str:
    """The family name, or ValueError if it is neither a number (φ) nor one of NAMED."""
    if family in NAMED:
        return family
    try:
        float(family)
    except ValueError:
        raise ValueError(f"unknown input family {family!r}; accepted: a number φ, {', '.join(NAMED)}") from None
    return family


def parse_families(text: str) -> list:
    return [check_family(f.strip()) for f in text.split(",") if f.strip()]


def family_phi(family: str):
    """φ of a heavy-tail family (0.5 for the mixed families), None for the others."""
    if family in MIXED:
        return 0.5
    if family in NAMED:
        return None
    return float(family)


def describe(family: str) -> str:
    if family == "rows":
        return f"N(0,1), rows of A and columns of B scaled by 2^e, e uniform in [-{ROWS_EXP}, {ROWS_EXP}]"
    if family == "wide":
        return f"N(0,1), every element scaled by 2^e, e uniform in [-{WIDE_EXP}, {WIDE_EXP}]"
    if family == "outliers":
        return "N(0,1), one entry per row of A scaled by 2^60, B zero in the rows those entries meet"
    if family in MIXED:
        return (f"(u-0.5)*exp(0.5*g), {round(100 * MIXED[family])}% of A's rows replaced by outlier rows "
                "(one entry scaled by 2^60, B zero in the rows it meets)")
    return f"(u-0.5)*exp({float(family):g}*g)"


class NumpyDraw:
    """Host arrays (float64) from a numpy Generator."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    def normal(self, shape):
        return self.rng.standard_normal(shape)

    def uniform(self, shape):
        return self.rng.random(shape)

    def exp(self, x):
        return np.exp(x)

    def randint(self, lo, hi, shape):
        """Integers uniform in [lo, hi] (both included)."""
        return self.rng.integers(lo, hi + 1, size=shape)

    def pow2(self, e):
        """2^e exactly (integer e in [-1022, 1023]), built from the exponent bits."""
        return ((np.asarray(e, dtype=np.int64) + 1023) << 52).view(np.float64)

    def arange(self, n):
        return np.arange(n)

    def subset(self, n, count):
        """count distinct indices in [0, n)."""
        return self.rng.choice(n, size=count, replace=False)


class TorchDraw:
    """CUDA float64 tensors from a torch Generator (given, or made from seed)."""

    def __init__(self, torch, seed: int = 0, gen=None):
        self.torch = torch
        self.gen = gen if gen is not None else torch.Generator(device="cuda").manual_seed(seed)

    def normal(self, shape):
        return self.torch.randn(shape, generator=self.gen, device="cuda", dtype=self.torch.float64)

    def uniform(self, shape):
        return self.torch.rand(shape, generator=self.gen, device="cuda", dtype=self.torch.float64)

    def exp(self, x):
        return self.torch.exp(x)

    def randint(self, lo, hi, shape):
        return self.torch.randint(lo, hi + 1, shape, generator=self.gen, device="cuda", dtype=self.torch.int64)

    def pow2(self, e):
        return ((e.to(self.torch.int64) + 1023) << 52).view(self.torch.float64)

    def arange(self, n):
        return self.torch.arange(n, device="cuda")

    def subset(self, n, count):
        return self.torch.randperm(n, generator=self.gen, device="cuda")[:count]


def _heavy(xp, shape, phi):
    return (xp.uniform(shape) - 0.5) * xp.exp(phi * xp.normal(shape))


def _outlier_rows(xp, a, b, rows):
    """Replace rows `rows` of a (in place) by N(0,1) rows with one entry scaled by 2^60, at a random
    column p_i each, and set row p_i of b to 0 (in place)."""
    count, k = len(rows), a.shape[1]
    if count == 0:
        return
    p = xp.randint(0, k - 1, (count,))
    new = xp.normal((count, k))
    new[xp.arange(count), p] *= OUTLIER_SCALE
    a[rows] = new
    b[p, :] = 0.0


def draw(family: str, m: int, k: int, n: int, xp):
    """(A, B) of one family: A is m×k, B is k×n, float64, drawn by xp (NumpyDraw or TorchDraw)."""
    family = check_family(family)
    if family == "rows":
        a = xp.normal((m, k)) * xp.pow2(xp.randint(-ROWS_EXP, ROWS_EXP, (m, 1)))
        b = xp.normal((k, n)) * xp.pow2(xp.randint(-ROWS_EXP, ROWS_EXP, (1, n)))
        return a, b
    if family == "wide":
        a = xp.normal((m, k)) * xp.pow2(xp.randint(-WIDE_EXP, WIDE_EXP, (m, k)))
        b = xp.normal((k, n)) * xp.pow2(xp.randint(-WIDE_EXP, WIDE_EXP, (k, n)))
        return a, b
    if family == "outliers":
        a, b = xp.normal((m, k)), xp.normal((k, n))
        _outlier_rows(xp, a, b, xp.arange(m))
        return a, b
    if family in MIXED:
        a, b = _heavy(xp, (m, k), 0.5), _heavy(xp, (k, n), 0.5)
        _outlier_rows(xp, a, b, xp.subset(m, int(round(MIXED[family] * m))))
        return a, b
    phi = float(family)
    return _heavy(xp, (m, k), phi), _heavy(xp, (k, n), phi)


# ---- error metrics on sampled entries ---------------------------------------------------------------

METRIC = ("on sampled entries: max |C-ref|/|ref| (ref != 0), max |C-ref|, RMS(C-ref), "
          "max |C-ref|/(|A||B|)_ij (componentwise; |A||B| in float64)")


def abs_product(a_rows, b_cols):
    """(|A||B|) on the sampled rows of A and columns of B, in float64. Its own rounding (relative
    error at most about k·2^-53) does not matter for a denominator of errors of order 2^-53 and up."""
    return np.abs(np.asarray(a_rows, dtype=np.float64)) @ np.abs(np.asarray(b_cols, dtype=np.float64))


def errors(c, ref, absprod, prefix: str = "") -> dict:
    """max relative (entries with ref != 0), max absolute, RMS, max componentwise |C-ref|/(|A||B|)
    (where (|A||B|)_ij = 0 the exact product is 0: error 0 if C is 0 there, else inf). NaN in C gives
    NaN (reported, not hidden)."""
    c = np.asarray(c)
    d = np.abs(c - ref)  # long double
    mask = ref != 0
    rel = float(np.max(d[mask] / np.abs(ref[mask]))) if mask.any() else 0.0
    if np.isnan(c).any():
        rel = float("nan")
    d64 = d.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        comp = np.where(absprod > 0, d64 / np.where(absprod > 0, absprod, 1.0), np.where(d64 == 0, 0.0, d64 * np.inf))
    return {prefix + "max_rel_err": rel, prefix + "max_abs_err": float(np.max(d64)),
            prefix + "rms_err": float(np.sqrt(np.mean(d64 * d64))),
            prefix + "max_componentwise_err": float(np.max(comp))}
