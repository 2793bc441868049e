"""gemm on complex128 (ZGEMM as one real product over 2k and 2n columns, the parts interleaved along
k: Re = (ReA, ImA)·(ReB, −ImB) and Im = (ReA, ImA)·(ImB, ReB)): every element of the real and the imaginary part within the contract's
bound of the exact complex product plus one rounding, checked in exact arithmetic; transposes, alpha,
beta and c, out; refusals before anything is written."""
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import ironkernels as ik
from gemm_exact import check_certified
from ironkernels.reference import gemm_family
from test_gemm_contract import GENERATORS, PARAMS, SETTINGS, Case, assert_certified_bounds, shapes

CERTIFIED = [ik.Contract.native(), ik.Contract(rtol=1e-10), ik.Contract(rtol=1e-6)]


def stacked(a, b):
    """Real (m × 2k) and (2k × n) matrices whose products are Re(ab) and Im(ab), the parts interleaved
    along k as gemm's complex path stacks them."""
    def rows(p, q):  # rows 2l, 2l + 1 from row l of p, q
        return np.stack([p, q], axis=1).reshape(2 * p.shape[0], p.shape[1])
    return rows(a.real.T, a.imag.T).T.copy(), rows(b.real, -b.imag), rows(b.imag, b.real)


@pytest.mark.parametrize("contract", CERTIFIED, ids=repr)
@pytest.mark.parametrize("phi,m,k,n", [(0.5, 20, 30, 17), (2.0, 33, 70, 9), (4.0, 8, 300, 12), (1.0, 1, 1, 1)])
def test_every_part_within_the_bound_of_the_exact_product(rng, contract, phi, m, k, n):
    a = gemm_family(rng, (m, k), phi) + 1j * gemm_family(rng, (m, k), phi)
    b = gemm_family(rng, (k, n), phi) + 1j * gemm_family(rng, (k, n), phi)
    c, rep = ik.gemm(a, b, contract=contract, report=True)
    assert c.dtype == np.complex128 and c.shape == (m, n) and set(rep["parts"]) == {"re", "im"}
    assert rep["certified"] == all(p["certified"] for p in rep["parts"].values())
    a2, b_re, b_im = stacked(a, b)
    # each part one real product over 2k: within bound·(|ReA||ReB| + |ImA||ImB|) (and its imaginary
    # twin) plus its one rounding
    assert not check_certified(c.real, a2, b_re, rep["bound"])
    assert not check_certified(c.imag, a2, b_im, rep["bound"])
    # and bit for bit the real call on the stacked operands
    assert_parts_of(c, ik.gemm(a2, np.hstack([b_re, b_im]), contract=contract))


def assert_parts_of(c, both):
    """c's parts are the real product's columns: Re its first half, Im its second."""
    n = c.shape[1]
    np.testing.assert_array_equal(c.real, both[:, :n])
    np.testing.assert_array_equal(c.imag, both[:, n:])


def test_transposes_scalars_c_and_out(rng):
    a = rng.standard_normal((6, 9)) + 1j * rng.standard_normal((6, 9))
    b = rng.standard_normal((9, 4)) + 1j * rng.standard_normal((9, 4))
    c = rng.standard_normal((6, 4)) + 1j * rng.standard_normal((6, 4))
    want = (0.5 - 2j) * (a @ b) + 1j * c
    got = ik.gemm(np.ascontiguousarray(a.T), np.ascontiguousarray(b.T), trans_a=True, trans_b=True, alpha=0.5 - 2j,
                  beta=1j, c=c)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-13 * np.abs(want).max())
    out = np.zeros((6, 4), np.complex128)
    assert ik.gemm(a, b, out=out) is out
    np.testing.assert_allclose(out, a @ b, rtol=0, atol=1e-13 * np.abs(a @ b).max())
    exact = np.round(rng.standard_normal((5, 5)) * 8) + 1j * np.round(rng.standard_normal((5, 5)) * 8)
    np.testing.assert_array_equal(ik.gemm(exact, exact), exact @ exact)  # small integers: exact


def test_refusals_write_nothing(rng):
    a = np.ones((3, 4), np.complex128)
    out = np.full((3, 2), 7 + 7j)
    with pytest.raises(TypeError, match="a has dtype complex128, b has float64"):
        ik.gemm(a, np.ones((4, 2)), out=out)
    with pytest.raises(ValueError, match="out has shape"):
        ik.gemm(a, np.ones((4, 2), np.complex128), out=np.zeros((2, 2), np.complex128))
    with pytest.raises(ValueError, match="beta = 1j but c is None"):
        ik.gemm(a, np.ones((4, 2), np.complex128), beta=1j, out=out)
    with pytest.raises(ValueError, match="inner dimensions"):
        ik.gemm(a, np.ones((3, 2), np.complex128), out=out)
    big = np.lib.stride_tricks.as_strided(np.zeros(1, np.complex128), (1, (1 << 19) + 1), (0, 0))
    with pytest.raises(ValueError, match="above the supported maximum 524288 for complex128"):
        ik.gemm(big, np.zeros(((1 << 19) + 1, 2), np.complex128), out=out[:1])
    from refusal_helpers import NoShape

    with pytest.raises(TypeError, match="NumPy, PyTorch or CuPy"):
        ik.gemm(NoShape(a), NoShape(np.ones((4, 2), np.complex128)))
    assert (out == 7 + 7j).all()


class ComplexCase:
    """Real and imaginary parts from two of the contract tests' cases of one shape, the imaginary
    part of a scaled by 2^s and of b by 2^(-s//2); its repr is the recipe."""

    def __init__(self, re: Case, im: Case, s: int):
        self.re, self.im, self.s = re, im, s
        with np.errstate(over="ignore", invalid="ignore"):
            self.a = re.a + 1j * np.ldexp(im.a, s)
            self.b = re.b + 1j * np.ldexp(im.b, -s // 2)

    def __repr__(self):
        return f"ComplexCase({self.re!r}, {self.im!r}, s={self.s})"

    def _repr_pretty_(self, p, cycle):
        p.text(repr(self))


@st.composite
def complex_cases(draw):
    """Parts of far apart exponents sharing each stacked row."""
    m, k, n = draw(shapes(big_k=(300,)))
    re, im = (Case(name, m, k, n, draw(PARAMS[name]), draw(st.integers(0, 2**32 - 1)), False)
              for name in (draw(st.sampled_from(sorted(GENERATORS))), draw(st.sampled_from(sorted(GENERATORS)))))
    return ComplexCase(re, im, draw(st.sampled_from([0, -40, 40, -700])))


@settings(max_examples=60, **SETTINGS)
@given(case=complex_cases())
def test_every_part_meets_its_certificate_on_adversarial_inputs(case):
    """Each part is its half of the real product over 2k: its report's promise holds exactly (lines
    holding Inf/NaN aside), and the parts are that product's bits."""
    a, b = case.a, case.b
    a2, b_re, b_im = stacked(a, b)
    finite = lambda x: np.abs(np.where(np.isfinite(x), x, 0.0))  # noqa: E731
    with np.errstate(over="ignore"):  # (sums past float64's range round to ±∞, rightly: not this test's)
        assume(all((finite(a2) @ finite(y)).max(initial=0.0) < 2.0**1000 for y in (b_re, b_im)))
    for contract in CERTIFIED:
        c, rep = ik.gemm(a, b, contract=contract, report=True)
        assert_certified_bounds(c.real, rep["parts"]["re"], a2, b_re, contract)
        assert_certified_bounds(c.imag, rep["parts"]["im"], a2, b_im, contract)
        assert_parts_of(c, ik.gemm(a2, np.hstack([b_re, b_im]), contract=contract))


def test_an_infinite_imaginary_part_leaves_the_real_part_alone():
    """Im overflowing to ∞ with Re finite: the real part stays finite (re + 1j·im would make it NaN)."""
    a = np.array([[1e-300 + 1e300j]])
    b = np.array([[1e10 + 0j]])
    c = ik.gemm(a, b)
    assert c[0, 0].real == 1e-290 and c[0, 0].imag == np.inf
