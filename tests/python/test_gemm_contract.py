"""gemm's certified contract on the CPU reference (host arrays), decided in exact arithmetic.

The reference is gemm_exact: products of the doubles' mantissas as Python integers, no long double
and no tolerance, so a reported violation is a real one. What is checked:

- certified contracts (Contract.native(), Contract(rtol=1e-6 / 1e-10 / 1e-14)) on adversarial
  families (gemm_exact.GENERATORS, under Hypothesis): every element outside the lines holding
  Inf/NaN meets the bound the report states, |c − P| <= bound·(|A||B|) + u·|c|, and bound = rtol
  where the report says certified (on the CPU always: its native elements come from a compensated
  dot product, within γ_k² + u|c|); the emulated elements, outside the report's native lines, meet
  rtol whatever the report says. The report's accounting (path, native lines and elements, moduli,
  rtol) is consistent;
- the 1×3 example [1e20, 1, 1]·[1e-20, 1, 1]ᵀ is exactly 3 under every certified contract;
- fixed plans Contract(moduli=n, scaling=s) meet their a-priori bound with the report's fewest bits;
- Inf/NaN lines follow IEEE and are counted; all-zero lines give zeros; integer matrices give the
  exact product; K past one 2^16 chunk; beta without c is refused before anything is written;
  Contract refuses bad rtol/bits/scaling combinations, naming the argument.

Underflow: the checks allow one rounding among the subnormals (2^-1075; k·2^-1074 for native dot
products), as docs/gemm.md states.
"""
import math
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from gemm_exact import (EXAMPLE_A, EXAMPLE_B, GENERATORS, ExactRef, check_certified, check_fixed, describe,
                        finite_elements, finite_lines, heavy_tails, ieee_product, integer_valued, ints_exact)
from ironkernels import Contract, gemm

CERTIFIED = [Contract.native(), Contract(rtol=1e-6), Contract(rtol=1e-10), Contract(rtol=1e-14)]
FIXED = [Contract(moduli=14, scaling="fast"), Contract(moduli=10, scaling="accurate"),
         Contract(moduli=6, scaling="norm")]
PATHS = ("emulated", "mixed", "native")
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ---------------------------------------------------------------------------------------------
# inputs


def low_high(lo, hi):
    """Exponent ranges (low <= high), often narrow enough for emulation, sometimes far beyond it."""
    return st.tuples(st.integers(lo, hi), st.integers(0, hi - lo)).map(lambda t: (t[0], min(hi, t[0] + t[1])))


# Each family's parameters, biased towards values the certificate can still emulate (exponent spans
# within ~60 bits) as well as ones that must go native.
PARAMS = {
    "spanning_lines": st.fixed_dictionaries({"E": st.one_of(st.integers(0, 64), st.integers(0, 300))}),
    "large_meets_zero": st.builds(lambda lh, tiny: {"low": lh[0], "high": lh[1], "tiny": tiny},
                                  low_high(1, 200), st.booleans()),
    "large_meets_tiny": st.builds(lambda lh: {"low": lh[0], "high": lh[1]}, low_high(1, 200)),
    "cancellation": st.fixed_dictionaries({"exact": st.booleans(),
                                           "big": st.one_of(st.integers(0, 40), st.integers(0, 200)),
                                           "mode": st.sampled_from(["pairs", "solve"])}),
    "heavy_tails": st.fixed_dictionaries({"phi": st.sampled_from([0.5, 1.0, 2.0, 4.0, 6.0, 8.0])}),
    "subnormal_mix": st.fixed_dictionaries({"frac": st.floats(0.0, 1.0), "large": st.sampled_from([0.0, 0.3])}),
    "zero_lines": st.fixed_dictionaries({"frac": st.floats(0.0, 1.0)}),
    "integer_valued": st.fixed_dictionaries({"bits": st.integers(1, 20)}),
    "fp16_valued": st.just({}),
    "nonfinite_lines": st.fixed_dictionaries({"count": st.integers(1, 3)}),
}
assert set(PARAMS) == set(GENERATORS)


class Case:
    """One generated input pair; its repr says how to rebuild it (Hypothesis prints it on failure)."""

    def __init__(self, name, m, k, n, params, seed, example):
        self.name, self.m, self.k, self.n, self.params, self.seed, self.example = name, m, k, n, params, seed, example
        rng = np.random.default_rng(seed)
        self.a, self.b = GENERATORS[name](rng, m, k, n, example=example, **params)

    def __repr__(self):
        return (f"Case({self.name!r}, m={self.m}, k={self.k}, n={self.n}, params={self.params!r}, seed={self.seed}, "
                f"example={self.example})  # GENERATORS[name](np.random.default_rng(seed), m, k, n, ...)")

    def _repr_pretty_(self, p, cycle):  # Hypothesis' printer: the recipe, not the arrays
        p.text(repr(self))


@st.composite
def shapes(draw, big_k=(300, 5000)):
    """m, n in 1 … 24 with k in 1 … 64 mostly; now and then k = 300 or 5000 with m, n in 1 … 3."""
    if big_k and draw(st.integers(0, 7)) == 0:
        return draw(st.integers(1, 3)), draw(st.sampled_from(big_k)), draw(st.integers(1, 3))
    return draw(st.integers(1, 24)), draw(st.integers(1, 64)), draw(st.integers(1, 24))


@st.composite
def cases(draw, names=tuple(sorted(GENERATORS)), big_k=(300, 5000), example=True):
    name = draw(st.sampled_from(names))
    m, k, n = draw(shapes(big_k))
    return Case(name, m, k, n, draw(PARAMS[name]), draw(st.integers(0, 2**32 - 1)),
                example and draw(st.integers(0, 4)) == 0)


def nonfinite_case(rng):
    """20×9 · 9×18 uniform in (−1, 1) with rows 2 (+Inf, meeting a zero in column 15), 5 (NaN) and 7
    (+Inf and −Inf: NaN or an infinity by the signs in b) of a and columns 1 (−Inf) and 11 (NaN) of b
    non-finite."""
    a, b = rng.uniform(-1, 1, (20, 9)), rng.uniform(-1, 1, (9, 18))
    a[2, 4] = np.inf
    a[5, 0] = np.nan
    a[7, 1], a[7, 3] = np.inf, -np.inf
    b[3, 1] = -np.inf
    b[6, 11] = np.nan
    b[4, 15] = 0.0
    return a, b


# ---------------------------------------------------------------------------------------------
# assertions shared with the GPU tests


def assert_report(rep, a, b, contract, backend="cpu-reference"):
    """The report's accounting against the inputs and the contract (spec: report keys)."""
    m, k, n = a.shape[0], a.shape[1], b.shape[1]
    rows_ok, cols_ok = finite_lines(a, b)
    bad_rows, bad_cols = int((~rows_ok).sum()), int((~cols_ok).sum())
    assert rep["backend"] == backend
    assert isinstance(rep["certified"], bool)  # its value: test_report_says_certified_for_every_certified_contract
    assert rep["rtol"] == (contract.rtol_at(k) if contract.certified else 0.0), (rep["rtol"], contract)
    assert rep["path"] in PATHS, rep["path"]
    nr, nc, ne = rep["native_rows"], rep["native_cols"], rep["native_elements"]
    assert bad_rows <= nr <= m and bad_cols <= nc <= n, (nr, nc, bad_rows, bad_cols)
    assert ne == nr * n + nc * m - nr * nc, (ne, nr, nc)  # native lines, each element counted once
    assert (rep["path"] == "emulated") == (ne == 0), (rep["path"], ne)
    if rep["path"] == "native":
        assert ne == m * n and rep["moduli"] == 0
    else:
        assert 2 <= rep["moduli"] <= 20
    assert rep["nonfinite_elements"] == int((~finite_elements(a, b)).sum())
    if not contract.certified:  # a fixed plan computes natively only the lines holding Inf/NaN
        assert rep["moduli"] == contract.moduli and rep["path"] != "native"
        assert nr == bad_rows and nc == bad_cols


def assert_ieee_on_nonfinite_lines(c, a, b):
    """Elements in lines holding Inf/NaN: NaN where IEEE arithmetic gives NaN, the same signed
    infinities elsewhere (the generators keep finite values moderate, so the order cannot matter)."""
    mask = ~finite_elements(a, b)
    want = ieee_product(a, b)
    np.testing.assert_array_equal(np.isnan(c[mask]), np.isnan(want[mask]))
    inf = mask & np.isinf(want)
    np.testing.assert_array_equal(c[inf], want[inf])


def same_values(x, y):
    """Elementwise x == y with NaN equal to NaN (and −0 to +0)."""
    return (x == y) | (np.isnan(x) & np.isnan(y))


def native_mask(rep, shape):
    """The elements in the report's native lines (Inf/NaN lines included)."""
    mask = np.zeros(shape, bool)
    mask[rep["native_row_indices"], :] = True
    mask[:, rep["native_col_indices"]] = True
    return mask


def assert_certified_bounds(c, rep, a, b, contract, ref=None):
    """The report's promise, checked exactly: every finite-line element within bound·(|A||B|) + u|c|
    (bound = rtol where certified), and every element outside the native lines within rtol."""
    rtol = contract.rtol_at(a.shape[1])
    ref = ExactRef(a, b) if ref is None else ref
    assert rep["bound"] == rtol if rep["certified"] else rep["bound"] > rtol, (rep["certified"], rep["bound"], rtol)
    native = native_mask(rep, c.shape)
    over = check_certified(c, a, b, rtol, ref=ref, native_mask=native)
    assert not over, f"{contract} ({rep['path']}), emulated: " + describe(c, a, b, over, rtol, ref=ref)
    # natively computed: within the report's bound, k·2^-1074 beside it where the products underflow
    over = check_certified(c, a, b, rep["bound"], ref=ref, native_mask=~native, eta=(max(a.shape[1], 1), -1074))
    assert not over, f"{contract} ({rep['path']}), native, bound {rep['bound']}: " + describe(c, a, b, over, rtol, ref=ref)


# ---------------------------------------------------------------------------------------------
# the certified contract


@pytest.mark.parametrize("contract", CERTIFIED, ids=repr)
def test_the_1e20_example_gives_exactly_3(contract):
    c, rep = gemm(EXAMPLE_A, EXAMPLE_B, contract=contract, report=True)
    assert c.tolist() == [[3.0]]
    assert rep["certified"] is True and rep["path"] == "native" and rep["native_row_indices"] == [0]
    ct = gemm(np.ascontiguousarray(EXAMPLE_A.T), np.ascontiguousarray(EXAMPLE_B.T), trans_a=True, trans_b=True,
              contract=contract)
    assert ct.tolist() == [[3.0]]


@pytest.mark.parametrize("inputs", ["example", "uniform", "nonfinite", "native_worthy"])
def test_report_says_certified_on_the_cpu_for_every_certified_contract(rng, inputs):
    """On the CPU a certified contract's call is certified whatever path it takes (its native
    elements are within γ_k² of exact, below every tolerance here); a fixed plan never is.
    "native_worthy" (the 1e20 pattern in fp16 data at k = 300) sends lines native."""
    a, b = {"example": lambda: (EXAMPLE_A, EXAMPLE_B),
            "uniform": lambda: (rng.uniform(-1, 1, (6, 40)), rng.uniform(-1, 1, (40, 5))),
            "nonfinite": lambda: nonfinite_case(rng),
            "native_worthy": lambda: GENERATORS["fp16_valued"](np.random.default_rng(0), 1, 300, 1, example=True),
            }[inputs]()
    for contract in CERTIFIED + FIXED:
        _, rep = gemm(a, b, contract=contract, report=True)
        assert rep["certified"] is contract.certified, (contract, rep["path"], rep)
        assert rep["bound"] == (contract.rtol_at(a.shape[1]) if contract.certified else 0.0)


def test_contract_tolerances_and_certified_flags():
    for k in (0, 1, 2, 3, 300, 5000, 70000):
        assert Contract.native().rtol_at(k) == math.sqrt(max(k, 1)) * 2.0**-53
    assert Contract(rtol=1e-10).rtol_at(7) == 1e-10
    assert Contract(bits=40).rtol_at(7) == 2.0**-40
    assert Contract(rtol=1e-6, scaling="norm").rtol_at(7) == 1e-6
    assert Contract(moduli=14).rtol_at(7) is None
    assert all(c.certified for c in CERTIFIED + [Contract(bits=1), Contract(bits=62)])
    assert not any(c.certified for c in FIXED)


@settings(max_examples=300, **SETTINGS)
@given(case=cases())
def test_certified_contracts_meet_their_bound_on_adversarial_inputs(case):
    a, b = case.a, case.b
    ref = ExactRef(a, b)
    for contract in CERTIFIED:
        c, rep = gemm(a, b, contract=contract, report=True)
        event(f"{case.name}: {rep['path']}")
        assert_certified_bounds(c, rep, a, b, contract, ref)
        assert_ieee_on_nonfinite_lines(c, a, b)
        assert_report(rep, a, b, contract)


@pytest.mark.parametrize("scaling", ["fast", "norm", "accurate"])
@pytest.mark.parametrize("moduli", [6, 10, 14])
@settings(max_examples=25, **SETTINGS)
@given(case=cases(big_k=(300,)))
def test_fixed_contract_meets_its_a_priori_bound(moduli, scaling, case):
    """(q_i/2)‖b_j‖₁(1+θ_j/2) + (r_j/2)‖a_i‖₁(1+θ_i/2) + u|c|, with q_i <= 2^(E_i − bits_a) and θ
    from the report's fewest bits on each side (an upper bound for every line)."""
    a, b = case.a, case.b
    contract = Contract(moduli=moduli, scaling=scaling)
    c, rep = gemm(a, b, contract=contract, report=True)
    assert_report(rep, a, b, contract)
    assert rep["certified"] is False and rep["scaling"] == scaling
    bad = check_fixed(c, a, b, rep["bits_a"], rep["bits_b"])
    assert not bad, f"bits {rep['bits_a']}, {rep['bits_b']}: " + describe(c, a, b, bad)
    assert_ieee_on_nonfinite_lines(c, a, b)


@pytest.mark.parametrize("contract", CERTIFIED + FIXED, ids=repr)
def test_nonfinite_lines_follow_ieee_and_are_counted(rng, contract):
    a, b = nonfinite_case(rng)
    c, rep = gemm(a, b, contract=contract, report=True)
    assert_report(rep, a, b, contract)
    assert rep["nonfinite_elements"] == 3 * 18 + 2 * 20 - 3 * 2
    assert_ieee_on_nonfinite_lines(c, a, b)
    assert np.isnan(c[2, 15]) and np.isnan(c[5]).all() and np.isnan(c[:, 11]).all()
    assert not np.isfinite(c[7]).any() and not np.isfinite(c[:, 1]).any()
    if contract.certified:
        assert_certified_bounds(c, rep, a, b, contract)
    if rep["path"] == "native":  # a certified call may find the whole call cheaper natively
        assert contract.certified and rep["native_rows"] == 20
        return
    # the finite lines here are benign: only the Inf/NaN lines go native, every other element is emulated
    assert (rep["native_rows"], rep["native_cols"]) == (3, 2)
    if contract.certified:
        bad = check_certified(c, a, b, contract.rtol_at(9))
    else:
        bad = check_fixed(c, a, b, rep["bits_a"], rep["bits_b"])
    assert not bad, describe(c, a, b, bad)


@pytest.mark.parametrize("contract", CERTIFIED + FIXED, ids=repr)
def test_all_zero_lines_give_exact_zeros(rng, contract):
    a, b = heavy_tails(rng, 12, 40, 10, phi=2.0)
    a[[0, 5]] = 0.0
    a[7] = -0.0
    b[:, 3] = 0.0
    c = gemm(a, b, contract=contract)
    assert (c[[0, 5, 7]] == 0).all() and (c[:, 3] == 0).all()
    assert (gemm(np.zeros((4, 9)), b[:9], contract=contract) == 0).all()
    assert (gemm(np.zeros((3, 0)), np.zeros((0, 2)), contract=contract) == 0).all()


@settings(max_examples=50, **SETTINGS)
@given(m_k_n=shapes(), seed=st.integers(0, 2**32 - 1), bits=st.integers(1, 10))
def test_integer_matrices_give_the_exact_product(m_k_n, seed, bits):
    a, b = integer_valued(np.random.default_rng(seed), *m_k_n, bits=bits)
    want = ints_exact(a, b)
    for contract in CERTIFIED:
        np.testing.assert_array_equal(gemm(a, b, contract=contract), want, err_msg=repr(contract))


@pytest.mark.parametrize("contract", CERTIFIED + [Contract(moduli=14)], ids=repr)
def test_k_past_one_int32_chunk(rng, contract):
    """k = 70000 > 2^16: the INT32 products run in chunks; m = n = 2."""
    m, k, n = 2, 70000, 2
    a, b = integer_valued(rng, m, k, n, bits=10)
    c, rep = gemm(a, b, contract=contract, report=True)
    assert_report(rep, a, b, contract)
    np.testing.assert_array_equal(c, ints_exact(a, b))
    a, b = heavy_tails(rng, m, k, n, phi=2.0)
    c, rep = gemm(a, b, contract=contract, report=True)
    assert_report(rep, a, b, contract)
    if contract.certified:
        assert_certified_bounds(c, rep, a, b, contract)
    else:
        assert not check_fixed(c, a, b, rep["bits_a"], rep["bits_b"])


# ---------------------------------------------------------------------------------------------
# refusals


@pytest.mark.parametrize("contract", [None, Contract(rtol=1e-10), Contract(moduli=14)], ids=repr)
def test_beta_without_c_is_refused_and_writes_nothing(rng, contract):
    a, b = heavy_tails(rng, 5, 7, 4, phi=1.0)
    out = np.full((5, 4), -7.25)
    with pytest.raises(ValueError) as err:
        gemm(a, b, beta=2.0, out=out, contract=contract)
    msg = str(err.value)
    assert re.search(r"\bbeta\b", msg) and re.search(r"\bc\b", msg), msg
    assert (out == -7.25).all()
    np.testing.assert_array_equal(gemm(a, b, beta=0.0, contract=contract), gemm(a, b, contract=contract))


@pytest.mark.parametrize(
    "kwargs, names",
    [
        ({"rtol": 0.0}, ["rtol"]),
        ({"rtol": -1e-3}, ["rtol"]),
        ({"rtol": 1.0}, ["rtol"]),
        ({"rtol": 2.0}, ["rtol"]),
        ({"rtol": float("nan")}, ["rtol"]),
        ({"rtol": float("inf")}, ["rtol"]),
        ({"rtol": "1e-6"}, ["rtol"]),
        ({"bits": 0}, ["bits"]),
        ({"bits": 63}, ["bits"]),
        ({"moduli": 14, "bits": 30}, ["moduli", "bits"]),
        ({"moduli": 14, "rtol": 1e-6}, ["moduli", "rtol"]),
        ({"bits": 30, "rtol": 1e-6}, ["bits", "rtol"]),
        ({"rtol": 1e-6, "scaling": "fast"}, ["scaling"]),
        ({"rtol": 1e-6, "scaling": "accurate"}, ["scaling"]),
        ({"bits": 30, "scaling": "fast"}, ["scaling"]),
        ({"bits": 30, "scaling": "accurate"}, ["scaling"]),
    ],
    ids=lambda x: repr(x) if isinstance(x, dict) else None,
)
def test_contract_refusals_name_the_argument(kwargs, names):
    with pytest.raises((ValueError, TypeError)) as err:
        Contract(**kwargs)
    for name in names:
        assert name in str(err.value), (name, str(err.value))


def test_certified_contracts_accept_norm_scaling():
    assert Contract(rtol=1e-6, scaling="norm").certified and Contract(bits=30, scaling="norm").certified
