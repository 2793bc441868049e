"""Operand reuse (gemm_prepare): every call with a prepared operand gives the bits and the report of
the plain call, on the CPU and on CUDA, for every m, contract, engine and transpose, across calls
whose certificates choose other counts (its residues recomputed) and across streams; refusals name
the argument and write nothing."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ironkernels
from ironkernels import Contract, PreparedOperand, gemm, gemm_prepare
from ironkernels.reference import gemm_family

from device_arrays import get

CONTRACTS = [Contract.native(), Contract(rtol=1e-9), Contract(moduli=12, scaling="norm"),
             Contract(moduli=14, scaling="fast")]
REPORT_KEYS = ("moduli", "path", "bits_a", "bits_b", "certified", "bound", "native_row_indices",
               "native_col_indices", "native_elements", "nonfinite_elements")


def operands(rng, m, n, k):
    """A few A of one k: plain, one with a row spanning most of the exponent range (more moduli or
    that row natively), one with an Inf; and a B with a wide column and a zero column."""
    b = gemm_family(rng, (k, n), 0.5)
    b[:, 2] *= np.ldexp(1.0, rng.integers(-600, 0, size=k))
    b[:, 5] = 0.0
    plain = gemm_family(rng, (m, k), 1.0)
    wide = plain.copy()
    wide[1] *= np.ldexp(1.0, rng.integers(-900, 100, size=k))
    inf = plain.copy()
    inf[0, 3] = np.inf
    return b, [plain, wide, inf, plain]


def assert_same_call(x, y):
    (got, rep), (want, rep_want) = x, y
    np.testing.assert_array_equal(get(got).view(np.uint64), get(want).view(np.uint64))
    for key in REPORT_KEYS:
        assert rep[key] == rep_want[key], key
    assert rep["prepared_b"] and not rep_want["prepared_b"]


@pytest.mark.parametrize("contract", CONTRACTS, ids=repr)
@pytest.mark.parametrize("trans_b", [False, True])
def test_cpu_prepared_calls_are_plain_calls(rng, contract, trans_b):
    b, many_a = operands(rng, 9, 11, 70)
    stored = np.ascontiguousarray(b.T) if trans_b else b
    prepared = gemm_prepare(stored, trans_b=trans_b, contract=contract)
    assert prepared.nbytes == 0 and "70x11" in repr(prepared)
    for a in many_a:
        assert_same_call(gemm(a, prepared, report=True),
                         gemm(a, stored, trans_b=trans_b, contract=contract, report=True))


def test_refusals_name_the_argument_and_write_nothing(rng):
    b = rng.standard_normal((8, 6))
    with pytest.raises(ValueError, match="accurate"):
        gemm_prepare(b, contract=Contract(moduli=14, scaling="accurate"))
    with pytest.raises(TypeError, match="float64"):
        gemm_prepare(b.astype(np.float32))
    with pytest.raises(ValueError, match="2-D"):
        gemm_prepare(b[None])
    with pytest.raises(TypeError, match="trans_b"):
        gemm_prepare(b, trans_b=1)
    with pytest.raises(TypeError, match="contract"):
        gemm_prepare(b, contract="native")
    prepared = gemm_prepare(b)
    out = np.full((4, 6), 7.0)
    for call, match in ((lambda: gemm(rng.standard_normal((4, 8)), prepared, trans_b=True, out=out), "trans_b"),
                        (lambda: gemm(rng.standard_normal((4, 8)), prepared, contract=Contract(rtol=1e-6), out=out),
                         "contract"),
                        (lambda: gemm(rng.standard_normal((2, 4, 8)), prepared), "2-D float64"),
                        (lambda: gemm(rng.standard_normal((4, 8)) + 0j, prepared), "2-D float64"),
                        (lambda: gemm([rng.standard_normal((4, 8))], prepared), "a list"),
                        (lambda: gemm(rng.standard_normal((4, 7)), prepared, out=out), "inner dimensions")):
        with pytest.raises(ValueError, match=match):
            call()
    assert (out == 7.0).all()
    assert isinstance(prepared, PreparedOperand) and ironkernels.gemm_prepare is gemm_prepare


@pytest.mark.gpu
@pytest.mark.parametrize("engine", ["cublas", "mma", "wgmma"])
@pytest.mark.parametrize("contract", CONTRACTS, ids=repr)
@pytest.mark.parametrize("trans_b", [False, True])
def test_gpu_prepared_calls_are_plain_calls(dev, rng, engine, contract, trans_b):
    """One prepared B for plans of several m (its state serves any m), A whose certificates choose
    other counts or native rows, the count changing back and forth (its residues recomputed): the
    plain call's bits and report every time, which are the CPU's."""
    from ironkernels import _core

    if not _core.gemm_engine_available(engine, 0):
        pytest.skip(f"the {engine} engine does not run on this GPU / build")
    k, n = 1500, 300
    b, many_a = operands(rng, 200, n, k)
    stored = dev.put(np.ascontiguousarray(b.T) if trans_b else b)
    prepared = gemm_prepare(stored, trans_b=trans_b, contract=contract)
    assert prepared.nbytes > 0
    counts = set()
    for m in (200, 37):
        for a in many_a:
            a = dev.put(a[:m])
            got = gemm(a, prepared, engine=engine, out=dev.poisoned((m, n)), report=True)
            want = gemm(a, stored, trans_b=trans_b, contract=contract, engine=engine, report=True)
            assert_same_call(got, want)
            counts.add(got[1]["moduli"])
            assert prepared._native.residue_count in (0, got[1]["moduli"])
    if contract.certified:
        assert len(counts - {0}) >= 1


@pytest.mark.gpu
def test_gpu_prepared_operand_across_streams(dev, rng):
    """Prepared on one stream, used on another and on the current one: each use waits for the
    preparation and the uses before it."""
    b, many_a = operands(rng, 64, 96, 2048)
    gb, many_a = dev.put(b), [dev.put(a) for a in many_a]
    want = [get(gemm(a, gb)) for a in many_a]  # plain calls (their native lines are cuBLAS's, as the prepared ones')
    _, side, handle = dev.stream()
    prepared = gemm_prepare(gb, stream=handle)
    got = [gemm(a, prepared) for a in many_a]
    got.append(gemm(many_a[1], prepared, stream=handle))
    dev.synchronize()
    for g, w in zip(got, want + [want[1]]):
        np.testing.assert_array_equal(get(g).view(np.uint64), w.view(np.uint64))


@pytest.mark.gpu
def test_gpu_plan_refuses_another_operands_preparation(dev, rng):
    from ironkernels import _core

    b = dev.put(rng.standard_normal((64, 32)))
    other = dev.put(rng.standard_normal((64, 32)))
    prepared = gemm_prepare(b)
    plan = _core.gemm_plan(16, 32, 64, False, False, 0, "norm", 0, "auto", True, 0.0)
    ws = dev.empty((plan.workspace_bytes // 8 + 1,), "float64")
    out = dev.zeros((16, 32))
    a = dev.put(rng.standard_normal((16, 64)))
    with pytest.raises(ValueError, match="not the array prepared_b"):
        plan.run(a, other, out, 1.0, 0.0, ws, 0, prepared_b=prepared._native)
    wider = _core.gemm_plan(16, 32, 128, False, False, 0, "norm", 0, "auto", True, 0.0)
    with pytest.raises(ValueError, match="prepared_b holds"):
        wider.run(dev.put(rng.standard_normal((16, 128))), dev.put(rng.standard_normal((128, 32))), out, 1.0, 0.0,
                  dev.empty((wider.workspace_bytes // 8 + 1,), "float64"), 0, prepared_b=prepared._native)
    fixed = _core.gemm_plan(16, 32, 64, False, False, 14, "fast", 0, "auto", False, 0.0)
    with pytest.raises(ValueError, match="another contract"):
        fixed.run(a, b, out, 1.0, 0.0, dev.empty((fixed.workspace_bytes // 8 + 1,), "float64"), 0,
                  prepared_b=prepared._native)
    assert (get(out) == 0).all()


@st.composite
def prepared_cases(draw):
    """A thin or square product with B in either layout and transpose, lines spread over up to 2^±600
    (more moduli, native lines), zeros and an Inf now and then, under a drawn contract."""
    m, n, k = draw(st.integers(1, 70)), draw(st.integers(1, 70)), draw(st.integers(1, 3000))
    seed = draw(st.integers(0, 2**32 - 1))
    spread = draw(st.sampled_from([0, 40, 600]))
    return m, n, k, seed, spread, draw(st.booleans()), draw(st.booleans()), draw(st.sampled_from(CONTRACTS))


@pytest.mark.gpu
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=prepared_cases())
def test_gpu_prepared_property(dev, case):
    """Any shape, layout and contract: two calls with one prepared operand (the second at its cached
    residues) give the plain call's bits and report."""
    m, n, k, seed, spread, trans_b, fortran, contract = case
    rng = np.random.default_rng(seed)
    b = rng.standard_normal((k, n)) * np.ldexp(1.0, rng.integers(-spread, spread + 1, size=(k, n)))
    a = rng.standard_normal((m, k)) * np.ldexp(1.0, rng.integers(-spread, spread + 1, size=(m, k)))
    if seed % 5 == 0:
        a[seed % m, seed % k] = np.inf
    if seed % 3 == 0:
        b[:, seed % n] = 0.0
    stored = dev.put(np.ascontiguousarray(b.T) if trans_b else b, "F" if fortran else "C")
    prepared = gemm_prepare(stored, trans_b=trans_b, contract=contract)
    ga = dev.put(a)
    want = gemm(ga, stored, trans_b=trans_b, contract=contract, report=True)
    for _ in range(2):
        assert_same_call(gemm(ga, prepared, out=dev.poisoned((m, n)), report=True), want)
