"""gemm's certified contract on CUDA arrays, against the CPU reference and in exact arithmetic.

A subset of the CPU contract tests' inputs (gemm_exact's adversarial families at a few shapes, the
1×3 example, Inf/NaN lines, K past one 2^16 chunk), as device arrays of whichever framework is
here (device_arrays). For each certified contract (and one fixed plan):

- the GPU's report equals the CPU's in moduli, path, native lines and elements, bits kept and
  rtol; `certified` and `bound` too where no finite element went native (cuBLAS DGEMM meets γ_k, the
  CPU's compensated dot product γ_k²);
- every element meets the bound the GPU's report states, and the emulated ones rtol, as gemm_exact
  decides exactly; a fixed plan meets its a-priori bound;
- every element outside the report's native lines is bit for bit the CPU's;
- a second run gives the same bits; outputs are poisoned (NaN) before each run.
"""
import re

import numpy as np
import pytest

import ironkernels
from device_arrays import get
from gemm_exact import EXAMPLE_A, EXAMPLE_B, ExactRef, check_fixed, heavy_tails, integer_valued, ints_exact
from ironkernels import Contract, gemm
from test_gemm_contract import (CERTIFIED, Case, assert_certified_bounds, assert_ieee_on_nonfinite_lines,
                                assert_report, nonfinite_case)

pytestmark = pytest.mark.gpu

CONTRACTS = CERTIFIED + [Contract(moduli=14, scaling="accurate")]
REPORT_KEYS = ("moduli", "path", "native_rows", "native_cols", "native_row_indices", "native_col_indices",
               "native_elements", "nonfinite_elements", "bits_a", "bits_b", "rtol")


def assert_bitwise(got, want, mask=None):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    if mask is not None:
        got, want = got[mask], want[mask]
    np.testing.assert_array_equal(got.view(np.uint64), want.view(np.uint64))


def run_both(dev, a, b, contract):
    """CPU result and report; GPU result and report, and the GPU result of a second run."""
    m, n = a.shape[0], b.shape[1]
    want, rep_cpu = gemm(a, b, contract=contract, report=True)
    ga, gb = dev.put(a), dev.put(b)
    out = dev.full((m, n), np.nan)
    got, rep = gemm(ga, gb, contract=contract, out=out, report=True)
    assert got is out
    again = gemm(ga, gb, contract=contract, out=dev.full((m, n), np.nan))
    got, again = get(got), get(again)
    assert_bitwise(got, again)  # run to run
    return want, rep_cpu, got, rep


def assert_gpu_contract(a, b, contract, want, rep_cpu, got, rep, ref=None):
    """The GPU's report and result against the CPU's and the contract (module docstring)."""
    for key in REPORT_KEYS:
        assert rep[key] == rep_cpu[key], (key, rep[key], rep_cpu[key])
    if rep["native_elements"] == rep["nonfinite_elements"]:
        assert (rep["certified"], rep["bound"]) == (rep_cpu["certified"], rep_cpu["bound"])
    ref = ExactRef(a, b) if ref is None else ref
    if contract.certified:
        assert_certified_bounds(got, rep, a, b, contract, ref)
    else:
        assert not check_fixed(got, a, b, rep["bits_a"], rep["bits_b"], ref=ref)
    assert_ieee_on_nonfinite_lines(got, a, b)
    assert_report(rep, a, b, contract, backend="cuda")
    emulated = np.ones(want.shape, bool)
    emulated[rep["native_row_indices"], :] = False
    emulated[:, rep["native_col_indices"]] = False
    assert_bitwise(got, want, emulated)


GPU_CASES = [
    Case("spanning_lines", 24, 17, 24, {"E": 40}, 1, False),
    Case("spanning_lines", 7, 64, 5, {"E": 300}, 2, True),
    Case("large_meets_zero", 24, 17, 24, {"low": 10, "high": 20, "tiny": True}, 3, False),
    Case("large_meets_zero", 3, 300, 2, {"low": 40, "high": 200, "tiny": False}, 4, False),
    Case("large_meets_tiny", 7, 64, 5, {"low": 20, "high": 200}, 5, False),
    Case("large_meets_tiny", 1, 3, 1, {}, 6, True),  # the 1×3 example itself
    Case("cancellation", 24, 17, 24, {"exact": True, "big": 30, "mode": "pairs"}, 7, False),
    Case("cancellation", 7, 64, 5, {"exact": False, "big": 0, "mode": "solve"}, 8, False),
    Case("heavy_tails", 24, 17, 24, {"phi": 1.0}, 9, False),
    Case("heavy_tails", 2, 5000, 1, {"phi": 8.0}, 10, False),
    Case("subnormal_mix", 7, 64, 5, {"frac": 1.0, "large": 0.0}, 11, False),
    Case("subnormal_mix", 24, 17, 24, {"frac": 0.4, "large": 0.3}, 12, False),
    Case("zero_lines", 24, 17, 24, {"frac": 0.3}, 13, False),
    Case("integer_valued", 7, 64, 5, {"bits": 10}, 14, False),
    Case("integer_valued", 2, 5000, 1, {"bits": 10}, 15, False),
    Case("fp16_valued", 24, 17, 24, {}, 16, False),
    Case("fp16_valued", 3, 300, 2, {}, 17, True),
    Case("nonfinite_lines", 24, 17, 24, {"count": 2}, 18, False),
]


@pytest.mark.parametrize("contract", CERTIFIED, ids=repr)
def test_gpu_the_1e20_example_gives_exactly_3(dev, contract):
    got, rep = gemm(dev.put(EXAMPLE_A), dev.put(EXAMPLE_B), contract=contract, report=True)
    assert get(got).tolist() == [[3.0]]
    gamma = 3 * 2.0**-53 / (1 - 3 * 2.0**-53)  # the row went to cuBLAS DGEMM: certified where γ_3 <= rtol
    rtol = contract.rtol_at(3)
    assert rep["certified"] is (gamma <= rtol) and rep["bound"] == max(rtol, gamma) and rep["backend"] == "cuda"


@pytest.mark.parametrize("contract", CONTRACTS, ids=repr)
@pytest.mark.parametrize("case", GPU_CASES, ids=lambda c: f"{c.name}-{c.m}x{c.k}x{c.n}-{c.seed}")
def test_gpu_report_and_bounds_match_the_cpu_on_adversarial_inputs(dev, case, contract):
    a, b = case.a, case.b
    want, rep_cpu, got, rep = run_both(dev, a, b, contract)
    assert_gpu_contract(a, b, contract, want, rep_cpu, got, rep)
    if case.name == "integer_valued" and contract.certified:
        np.testing.assert_array_equal(got, ints_exact(a, b))


@pytest.mark.parametrize("contract", CONTRACTS, ids=repr)
def test_gpu_nonfinite_lines_follow_ieee_and_are_counted(dev, rng, contract):
    a, b = nonfinite_case(rng)
    want, rep_cpu, got, rep = run_both(dev, a, b, contract)
    assert_gpu_contract(a, b, contract, want, rep_cpu, got, rep)
    assert rep["nonfinite_elements"] == 3 * 18 + 2 * 20 - 3 * 2
    assert np.isnan(got[2, 15]) and np.isnan(got[5]).all() and np.isnan(got[:, 11]).all()


@pytest.mark.parametrize("contract", CONTRACTS, ids=repr)
def test_gpu_k_past_one_int32_chunk(dev, rng, contract):
    """k = 70000 > 2^16 with m = n = 2: integers exactly, heavy tails within the contract."""
    a, b = integer_valued(rng, 2, 70000, 2, bits=10)
    want, rep_cpu, got, rep = run_both(dev, a, b, contract)
    assert_gpu_contract(a, b, contract, want, rep_cpu, got, rep)
    np.testing.assert_array_equal(got, ints_exact(a, b))
    a, b = heavy_tails(rng, 2, 70000, 2, phi=2.0)
    want, rep_cpu, got, rep = run_both(dev, a, b, contract)
    assert_gpu_contract(a, b, contract, want, rep_cpu, got, rep)


def test_gpu_beta_without_c_is_refused_and_writes_nothing(dev, rng):
    a, b = heavy_tails(rng, 5, 7, 4, phi=1.0)
    out = dev.full((5, 4), -7.25)
    with pytest.raises(ValueError) as err:
        gemm(dev.put(a), dev.put(b), beta=2.0, out=out)
    msg = str(err.value)
    assert re.search(r"\bbeta\b", msg) and re.search(r"\bc\b", msg), msg
    assert (get(out) == -7.25).all()
