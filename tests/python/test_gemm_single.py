"""gemm on float32: Contract.native() is SGEMM's accuracy (rtol = √k·2⁻²⁴): every element within
rtol·(|A||B|) plus its rounding to float32 of the exact product (exact reference: gemm_exact), with
fewer moduli than float64 takes, also on the contract tests' adversarial families (and complex64 on
the complex tests'); alpha, beta, c, out and transposes; refusals before any write."""
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings

import ironkernels as ik
from gemm_exact import ExactRef, check_certified
from ironkernels.reference import gemm_family
from test_gemm_complex import complex_cases, stacked
from test_gemm_contract import SETTINGS, cases, native_mask


@pytest.mark.parametrize("phi,m,k,n", [(0.5, 40, 200, 30), (2.0, 17, 1000, 9), (4.0, 8, 64, 70), (1.0, 1, 1, 1)])
def test_within_single_precision_of_the_exact_product(rng, phi, m, k, n):
    a = gemm_family(rng, (m, k), phi).astype(np.float32)
    b = gemm_family(rng, (k, n), phi).astype(np.float32)
    c, rep = ik.gemm(a, b, report=True)
    assert c.dtype == np.float32 and rep["dtype"] == "float32"
    rtol = math.sqrt(k) * 2.0**-24
    assert rep["rtol"] == rtol and rep["certified"]
    ref = ExactRef(a.astype(np.float64), b.astype(np.float64))
    exact, scale = ref.p.to_float(), ref.s.to_float()
    err = np.abs(c.astype(np.float64) - exact)
    assert (err <= rep["bound"] * scale + 2.0**-24 * np.abs(c) + 2.0**-52 * np.abs(exact) + 1e-300).all()
    _, rep64 = ik.gemm(a.astype(np.float64), b.astype(np.float64), report=True)
    assert rep["moduli"] <= rep64["moduli"]


def test_alpha_beta_c_out_transposes(rng):
    a = rng.standard_normal((30, 12)).astype(np.float32)
    b = rng.standard_normal((9, 30)).astype(np.float32)
    c = rng.standard_normal((12, 9)).astype(np.float32)
    out = np.zeros((12, 9), np.float32)
    assert ik.gemm(a, b, trans_a=True, trans_b=True, alpha=0.5, beta=-2.0, c=c, out=out) is out
    want = 0.5 * (a.T.astype(np.float64) @ b.T.astype(np.float64)) - 2.0 * c
    np.testing.assert_allclose(out, want, rtol=0, atol=1e-5 * np.abs(want).max())


def test_refusals_write_nothing():
    a = np.ones((3, 4), np.float32)
    out = np.full((3, 2), 7.0, np.float32)
    with pytest.raises(TypeError, match="a has dtype float32, b has float64"):
        ik.gemm(a, np.ones((4, 2)), out=out)
    with pytest.raises(TypeError, match="a has dtype float64, b has float32"):
        ik.gemm(np.ones((3, 4)), np.ones((4, 2), np.float32), out=out)
    with pytest.raises(ValueError, match="out has shape"):
        ik.gemm(a, np.ones((4, 2), np.float32), out=np.zeros((2, 2), np.float32))
    with pytest.raises(ValueError, match="inner dimensions"):
        ik.gemm(a, np.ones((3, 2), np.float32), out=out)
    assert (out == 7.0).all()


@pytest.mark.parametrize("phi,m,k,n", [(0.5, 20, 150, 13), (3.0, 9, 700, 11)])
def test_complex64_within_single_precision_of_the_exact_product(rng, phi, m, k, n):
    """complex64 (CGEMM): the complex128 path under rtol = √(2k)·2⁻²⁴, rounded once to complex64: each
    part within bound·((|Re A|+|Im A|)·(|Re B|+|Im B|)) of a long-double product plus its rounding."""
    parts = [gemm_family(rng, shape, phi).astype(np.float32) for shape in ((m, k), (m, k), (k, n), (k, n))]
    a, b = (parts[0] + 1j * parts[1]).astype(np.complex64), (parts[2] + 1j * parts[3]).astype(np.complex64)
    c, rep = ik.gemm(a, b, alpha=1 - 0.5j, report=True)
    assert c.dtype == np.complex64 and rep["dtype"] == "complex64" and rep["certified"]
    assert rep["rtol"] == math.sqrt(2 * k) * 2.0**-24
    ar, ai, br, bi = (p.astype(np.longdouble) for p in parts)
    re, im = ar @ br - ai @ bi, ar @ bi + ai @ br
    want_re, want_im = re + 0.5 * im, im - 0.5 * re  # (1 − ½i)(re + i·im)
    scale = ((np.abs(ar) + np.abs(ai)) @ (np.abs(br) + np.abs(bi))).astype(np.float64) * 1.5
    for got, want in ((c.real, want_re), (c.imag, want_im)):
        err = np.abs(got.astype(np.longdouble) - want).astype(np.float64)
        assert (err <= rep["bound"] * scale + 2.0**-23 * np.abs(got) + 2.0**-50 * scale + 1e-300).all()
    wide, rep_wide = ik.gemm(a.astype(np.complex128), b.astype(np.complex128), report=True)
    assert rep["moduli"] <= rep_wide["moduli"]


def narrowed(x, dtype):
    with np.errstate(over="ignore"):  # past float32's range: ±Inf, lines the contract leaves to IEEE
        return x.astype(dtype)


def assert_single_bounds(c, rep, a, b):
    """The report's promise for a float32 result, exactly: every element off the lines holding Inf/NaN
    within the report's bound·(|A||B|), plus the float64 result's rounding and the one to float32
    (2^-24·|c|, or 2^-150 among float32's subnormals); the emulated ones within rtol."""
    a, b, c = (np.asarray(x, np.float64) for x in (a, b, c))
    extra = np.empty(c.shape, object)
    for ij, v in np.ndenumerate(c):
        extra[ij] = (Fraction(2) ** -24 + Fraction(2) ** -76) * Fraction(abs(v)) + Fraction(2) ** -149 \
            if np.isfinite(v) else Fraction(0)
    ref, native = ExactRef(a, b), native_mask(rep, c.shape)
    over = check_certified(c, a, b, rep["rtol"], native_mask=native, ref=ref, extra=extra)
    assert not over, f"emulated elements past rtol {rep['rtol']}: {over[:5]}"
    over = check_certified(c, a, b, rep["bound"], native_mask=~native, ref=ref, extra=extra,
                           eta=(max(a.shape[1], 1), -1074))
    assert not over, f"native elements past the bound {rep['bound']}: {over[:5]}"


def magnitudes_fit_float32(*pairs):
    """Whether every |A||B| over the finite entries stays below 2^126 (no element can round past
    float32's largest value)."""
    finite = lambda x: np.abs(np.where(np.isfinite(x), x, 0.0)).astype(np.float64)  # noqa: E731
    return all((finite(a) @ finite(b)).max(initial=0.0) < 2.0**126 for a, b in pairs)


@settings(max_examples=120, **SETTINGS)
@given(case=cases(big_k=(300,)))
def test_float32_meets_its_certificate_on_adversarial_inputs(case):
    """The contract tests' families narrowed to float32 (exponents past its range become Inf or 0):
    Contract.native() as SGEMM's accuracy holds element by element."""
    a, b = narrowed(case.a, np.float32), narrowed(case.b, np.float32)
    assume(magnitudes_fit_float32((a, b)))
    c, rep = ik.gemm(a, b, report=True)
    assert c.dtype == np.float32 and rep["rtol"] == math.sqrt(case.k) * 2.0**-24 and rep["certified"]
    assert_single_bounds(c, rep, a, b)


@settings(max_examples=40, **SETTINGS)
@given(case=complex_cases())
def test_complex64_parts_meet_their_certificate_on_adversarial_inputs(case):
    """complex64 from the complex tests' parts of far apart exponents: each part against its half of
    the stacked real product, under rtol = √(2k)·2⁻²⁴."""
    a, b = narrowed(case.a, np.complex64), narrowed(case.b, np.complex64)
    a2, b_re, b_im = stacked(a.astype(np.complex128), b.astype(np.complex128))
    assume(magnitudes_fit_float32((a2, b_re), (a2, b_im)))
    c, rep = ik.gemm(a, b, report=True)
    assert c.dtype == np.complex64 and rep["rtol"] == math.sqrt(2 * a.shape[1]) * 2.0**-24
    assert_single_bounds(c.real, rep["parts"]["re"], a2, b_re)
    assert_single_bounds(c.imag, rep["parts"]["im"], a2, b_im)
