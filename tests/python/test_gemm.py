"""gemm (Ozaki scheme II), CPU reference: exact on integers, within the rounding bound against a
long-double reference, IEEE semantics for Inf/NaN, layouts, alpha/beta/c/out, report, errors."""
import math

import numpy as np
import pytest

import ironkernels
from ironkernels import Contract, gemm
from ironkernels.reference import gemm_family, gemm_rounding_bound


family = gemm_family


def exact_reference(a, b):
    return np.matmul(a.astype(np.longdouble), b.astype(np.longdouble))


@pytest.mark.parametrize("scaling", ["fast", "accurate", "norm"])
@pytest.mark.parametrize("moduli", [4, 9, 14, 20])
def test_integer_inputs_give_the_exact_product(rng, moduli, scaling):
    a = rng.integers(-999, 1000, size=(21, 70)).astype(np.float64)
    b = rng.integers(-999, 1000, size=(70, 13)).astype(np.float64)
    want = (a.astype(np.int64) @ b.astype(np.int64)).astype(np.float64)
    np.testing.assert_array_equal(gemm(a, b, contract=Contract(moduli=moduli, scaling=scaling)), want)


@pytest.mark.parametrize("scaling", ["fast", "accurate", "norm"])
@pytest.mark.parametrize("phi", [0.5, 1.0, 2.0, 4.0])
@pytest.mark.parametrize("moduli", [8, 14, 18])
def test_error_within_the_rounding_bound(rng, phi, moduli, scaling):
    m, k, n = 19, 150, 17
    a, b = family(rng, (m, k), phi), family(rng, (k, n), phi)
    c, rep = gemm(a, b, contract=Contract(moduli=moduli, scaling=scaling), report=True)
    ref = exact_reference(a, b)
    bound = gemm_rounding_bound(a, b, rep["bits_a"], rep["bits_b"], ref)
    assert (np.abs((c - ref).astype(np.float64)) <= bound).all()


def fast_caps(moduli, k):
    """Fast scaling's caps from their definition, in exact integers: cap = floor(2^bits·μ), μ in
    [1, 2) with 20 fractional bits, the largest with 2k·cap_a·cap_b < P."""
    P = math.prod(ironkernels._gemm.MODULI[:moduli])
    ba, bb = ironkernels._gemm.fast_bits(moduli, k)
    caps = lambda mu: ((mu << ba) >> 20, (mu << bb) >> 20)  # noqa: E731
    lo, hi = 1 << 20, (1 << 21) - 1  # μ·2^20; μ = 1 always fits
    if max(ba, bb) >= 62:
        hi = lo
    while lo < hi:
        mid = (lo + hi + 1) // 2
        ca, cb = caps(mid)
        lo, hi = (mid, hi) if 2 * k * ca * cb < P else (lo, mid - 1)
    return caps(lo)


def fitted_shift(largest, cap):
    """The largest s with largest·2^s <= cap."""
    s = math.floor(math.log2(cap / largest)) + 1
    while math.ldexp(largest, s) > cap:
        s -= 1
    return s


@pytest.mark.parametrize("moduli", [3, 8, 14])
def test_scaled_elements_round_to_nearest_under_the_cap(rng, moduli):
    """gemm(a, I) is a as the method scales it: row i times the largest power of two 2^s that leaves
    max|a_i| at most cap_a, rounded to the nearest integer (ties to even), never truncated."""
    k = 16
    a = family(rng, (60, k), 1.0)
    c, rep = gemm(a, np.eye(k), contract=Contract(moduli=moduli, scaling="fast"), report=True)
    cap_a, _ = fast_caps(moduli, k)
    largest = np.abs(a).max(axis=1)
    s = np.array([fitted_shift(float(x), cap_a) for x in largest])
    unit = np.ldexp(1.0, -s)[:, None]
    want = np.rint(a / unit) * unit
    np.testing.assert_array_equal(c, want)
    assert (want != np.trunc(a / unit) * unit).any()  # these inputs tell rounding from truncation
    bits = s + np.frexp(largest)[1]  # kept below each row's exponent bound: fast_bits or one more
    fewest = ironkernels._gemm.fast_bits(moduli, k)[0]
    assert rep["bits_a"] == bits.min() >= fewest and bits.max() == fewest + 1


@pytest.mark.parametrize("phi", [0.5, 2.0, 4.0])
def test_accurate_scaling_keeps_at_least_the_fast_bits(rng, phi):
    a, b = family(rng, (25, 120), phi), family(rng, (120, 21), phi)
    ref = exact_reference(a, b)
    fast, rf = gemm(a, b, contract=Contract(14, "fast"), report=True)
    acc, ra = gemm(a, b, contract=Contract(14, "accurate"), report=True)
    assert ra["bits_a"] >= rf["bits_a"] and ra["bits_b"] >= rf["bits_b"]
    err = lambda c: float(np.abs((c - ref) / np.abs(ref).max()).max())  # noqa: E731
    assert err(acc) <= err(fast) * 1.01 + 1e-300


@pytest.mark.parametrize("k", [1, 2, 3, 5, 8, 13, 130])
@pytest.mark.parametrize("moduli", [2, 6, 14])
def test_accurate_bound_holds_where_every_term_is_largest(rng, k, moduli):
    """Every |a|, |b| just below its line's power of two and one sign, so each rounds up to it:
    Σ|a'||b'| comes as close to the grouped magnitude bound of "accurate" scaling as it can, so a
    budget one bit too generous would overflow the CRT range. Short k also checks the budget never
    drops below "fast"; two moduli leave fast fewer bits than the magnitude bounds resolve."""
    m, n = 9, 7
    a = (1 - 2.0**-20) * 2.0 ** rng.integers(-3, 4, size=(m, 1)) * np.ones((m, k))
    b = (1 - 2.0**-20) * 2.0 ** rng.integers(-3, 4, size=(1, n)) * np.ones((k, n))
    a[:, ::3] *= 0.75  # some terms below the maximum, so groups are not all equal
    fast, rf = gemm(a, b, contract=Contract(moduli, "fast"), report=True)
    acc, ra = gemm(a, b, contract=Contract(moduli, "accurate"), report=True)
    assert ra["bits_a"] >= rf["bits_a"] and ra["bits_b"] >= rf["bits_b"]
    ref = exact_reference(a, b)
    for c, rep in ((fast, rf), (acc, ra)):
        bound = gemm_rounding_bound(a, b, rep["bits_a"], rep["bits_b"], ref)
        assert (np.abs((c - ref).astype(np.float64)) <= bound).all()


def test_twenty_moduli_match_or_beat_native_dgemm(rng):
    a, b = family(rng, (40, 300), 0.5), family(rng, (300, 40), 0.5)
    ref = exact_reference(a, b)
    ours = np.abs((gemm(a, b, contract=Contract(moduli=20)) - ref) / ref).max()
    native = np.abs((a @ b - ref) / ref).max()
    assert ours <= native * 1.0000001 + 1e-300


def test_nonfinite_follow_ieee(rng):
    a, b = family(rng, (6, 8), 1.0), family(rng, (8, 5), 1.0)
    a[2, 4] = np.inf
    b[1, 3] = np.nan
    c, rep = gemm(a, b, report=True)
    with np.errstate(invalid="ignore"):
        native = a @ b
    assert rep["nonfinite_elements"] == 6 + 5 - 1
    np.testing.assert_array_equal(np.isnan(c), np.isnan(native))
    np.testing.assert_array_equal(np.isinf(c), np.isinf(native))
    finite = np.isfinite(native)
    np.testing.assert_allclose(c[finite], native[finite], rtol=1e-12)


def test_transposes_alpha_beta_c_and_out(rng):
    a, b = family(rng, (30, 12), 1.0), family(rng, (9, 30), 1.0)  # op(a) = a.T (12x30), op(b) = b.T (30x9)
    c = family(rng, (12, 9), 1.0)
    want = -2.0 * exact_reference(a.T, b.T) + 0.5 * c.astype(np.longdouble)
    got = gemm(a, b, c=c, alpha=-2.0, beta=0.5, trans_a=True, trans_b=True, contract=Contract(moduli=18))
    np.testing.assert_allclose(got, want.astype(np.float64), rtol=1e-13, atol=1e-13)
    c_before = c.copy()
    out = gemm(a, b, c=c, alpha=-2.0, beta=0.5, trans_a=True, trans_b=True, contract=Contract(moduli=18), out=c)
    assert out is c
    np.testing.assert_allclose(c, want.astype(np.float64), rtol=1e-13, atol=1e-13)
    assert not np.array_equal(c, c_before)


def test_beta_zero_ignores_nan_in_c(rng):
    a, b = family(rng, (4, 5), 0.5), family(rng, (5, 3), 0.5)
    c = np.full((4, 3), np.nan)
    assert np.isfinite(gemm(a, b, c=c, beta=0.0)).all()


def test_strided_inputs_and_fortran_order(rng):
    big = family(rng, (40, 40), 1.0)
    a = big[::2, 1::3]  # strided view
    b = np.asfortranarray(family(rng, (a.shape[1], 7), 1.0))
    np.testing.assert_allclose(gemm(a, b, contract=Contract(moduli=18)), exact_reference(a, b).astype(np.float64),
                               rtol=1e-13, atol=1e-14)


def test_deterministic_and_report(rng):
    a, b = family(rng, (33, 45), 1.0), family(rng, (45, 29), 1.0)
    first, rep = gemm(a, b, report=True)  # the default contract is Contract.native()
    np.testing.assert_array_equal(first, gemm(a, b))
    nm = rep["moduli"]
    assert rep["path"] == "emulated" and rep["moduli_set"] == ironkernels._gemm.MODULI[:nm]
    assert rep["certified"] and rep["rtol"] == rep["bound"] == pytest.approx(np.sqrt(45) * 2.0**-53, rel=1e-15)
    assert rep["scaling"] == "norm" and rep["contract"] == "Contract.native()"
    assert rep["native_rows"] == rep["native_cols"] == rep["native_elements"] == 0
    assert rep["bits_a"] + rep["bits_b"] > 90 and rep["backend"] == "cpu-reference"
    # the count it chose, as a fixed plan: the same bits
    np.testing.assert_array_equal(first, gemm(a, b, contract=Contract(moduli=nm, scaling="norm")))


@pytest.mark.parametrize("bits", [10, 30, 52])
def test_bits_contract_is_a_tolerance(rng, bits):
    a, b = family(rng, (12, 300), 1.0), family(rng, (300, 9), 1.0)
    contract = Contract(bits=bits)
    assert contract.certified and contract.rtol_at(300) == 2.0**-bits and contract.scaling == "norm"
    _, rep = gemm(a, b, contract=contract, report=True)
    assert rep["certified"] and rep["rtol"] == 2.0**-bits and rep["path"] == "emulated"
    fewer = gemm(a, b, contract=Contract(bits=bits - 8), report=True)[1]["moduli"]
    assert fewer <= rep["moduli"]


def test_edge_shapes(rng):
    assert gemm(np.zeros((3, 0)), np.zeros((0, 2))).tolist() == [[0.0, 0.0]] * 3
    assert gemm(np.array([[3.0]]), np.array([[-0.5]]))[0, 0] == -1.5
    x = np.array([[0.0, 0.0], [3e-310, -1e-309]])
    y = np.array([[1e8, 1.0], [2e8, 1e7]])
    z = gemm(x, y)
    assert (z[0] == 0).all()
    np.testing.assert_allclose(z[1, 0], 3e-310 * 1e8 - 1e-309 * 2e8, rtol=1e-15)


def test_engine_is_its_own_argument_and_the_former_spelling_warns():
    a, b = np.ones((2, 3)), np.ones((3, 2))
    with pytest.raises(ValueError, match="engine = 'mma'.*arrays are on cpu"):
        gemm(a, b, engine="mma")
    with pytest.raises(ValueError, match="engine = 'gpu'; accepted: 'auto', 'wgmma', 'mma', 'cublas'"):
        gemm(a, b, engine="gpu")
    with pytest.warns(DeprecationWarning, match="use engine='wgmma'"), pytest.raises(ValueError, match="arrays are on cpu"):
        gemm(a, b, backend="wgmma")
    np.testing.assert_array_equal(gemm(a, b, backend="cpu", engine="auto"), a @ b)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"contract": Contract(moduli=14), "backend": "gpu"}, ValueError, "backend"),
        ({"contract": Contract(moduli=14), "engine": "mma"}, ValueError, "arrays are on cpu"),
        ({"contract": Contract(moduli=14), "backend": "cuda"}, ValueError, "arrays are on cpu"),
        ({"contract": Contract(moduli=14), "backend": None}, ValueError, "backend"),
        ({"contract": "fast"}, TypeError, "Contract"),
        ({"alpha": "1"}, TypeError, "alpha"),
    ],
)
def test_bad_arguments(rng, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        gemm(np.ones((2, 3)), np.ones((3, 2)), **kwargs)


def test_bad_shapes_dtypes_contracts():
    with pytest.raises(ValueError, match="inner dimensions"):
        gemm(np.ones((2, 3)), np.ones((4, 2)))
    with pytest.raises(TypeError, match="float64"):
        gemm(np.ones((2, 3), np.int32), np.ones((3, 2), np.int32))
    with pytest.raises(ValueError, match="2 … 20"):
        Contract(moduli=21)
    with pytest.raises(ValueError, match="scaling"):
        Contract(moduli=14, scaling="exact")
    with pytest.raises(TypeError, match="exactly one"):
        Contract()
    with pytest.raises(TypeError, match="exactly one"):
        Contract(moduli=14, bits=30)
    with pytest.raises(ValueError, match="1 … 62"):
        Contract(bits=63)
    out = np.full((2, 2), 7.0)
    with pytest.raises(ValueError, match="shape"):
        gemm(np.ones((2, 3)), np.ones((3, 3)), out=out)
    assert (out == 7.0).all()


@pytest.mark.parametrize("phi", [0.5, 1.0, 2.0])
def test_native_error_no_worse_than_float64(rng, phi):
    """Contract.native() against native float64 arithmetic (NumPy's BLAS) on the same inputs: the
    max relative error over C, against a long-double reference (a factor 2 of slack for two random
    error patterns on 1024 elements)."""
    a, b = family(rng, (32, 2048), phi), family(rng, (2048, 32), phi)
    ref = exact_reference(a, b)
    got, rep = gemm(a, b, report=True)
    err = lambda c: float(np.max(np.abs(c - ref) / np.abs(ref)))  # noqa: E731
    assert err(got) <= 2 * err(a @ b), (rep["moduli"], err(got), err(a @ b))
    assert rep["certified"] or rep["path"] != "emulated"
