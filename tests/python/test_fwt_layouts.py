"""FWT on the CPU along any axis and of any stride, for complex and integer dtypes, and rows longer
than the GPU's one-tile limit, against the float64 (exact integer) reference."""
import numpy as np
import pytest

import ironkernels

from fwt_helpers import DTYPES
from fwt_layout_cases import AXIS_CASES, COMPLEX_DTYPES, INT_DTYPES, assert_transform, random_array

ALL = DTYPES + COMPLEX_DTYPES + INT_DTYPES


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape,axis", AXIS_CASES)
def test_any_axis(rng, dtype, shape, axis):
    x = random_array(rng, shape, dtype)
    assert_transform(ironkernels.fwt(x, axis=axis), x, dtype, axis)


@pytest.mark.parametrize("dtype", ["float32", "complex128", "int32", "float16"])
def test_strided_views_in_place_and_scaled(rng, dtype):
    base = random_array(rng, (6, 64, 10), dtype)
    x = base[::2, :, 1:9:3]  # strides in every dimension, the axis not contiguous either
    scale = 3 if dtype in INT_DTYPES else 0.5
    expect = x.copy()
    y = ironkernels.fwt(x, axis=1, scale=scale)
    assert_transform(y, expect, dtype, 1, scale)
    ironkernels.fwt(x, axis=1, scale=scale, out=x)  # in place on the view, the rest untouched
    np.testing.assert_array_equal(x, y)
    untouched = base.copy()
    untouched[::2, :, 1:9:3] = 0
    reference = np.array(base)
    reference[::2, :, 1:9:3] = 0
    np.testing.assert_array_equal(untouched, reference)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integers_wrap_and_invert(rng, dtype):
    x = random_array(rng, (4, 256), dtype)
    y = ironkernels.fwt(x, scale=-5)
    assert_transform(y, x, dtype, -1, -5)
    # H·H = N·I holds modulo 2^bits too: the transform twice is N·x, wrapped.
    twice = ironkernels.fwt(ironkernels.fwt(x))
    np.testing.assert_array_equal(twice, (x.astype(np.uint64) * np.uint64(256)).astype(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
@pytest.mark.parametrize("log_n", [16, 18, 20])
def test_long_rows(rng, dtype, log_n):
    x = random_array(rng, (2, 1 << log_n), dtype)
    assert_transform(ironkernels.fwt(x), x, dtype)


@pytest.mark.parametrize(
    "kwargs,error,match",
    [
        ({"normalized": True}, ValueError, "normalized=True is not defined for int32"),
        ({"scale": 0.5}, ValueError, "scale=0.5 is not an integer"),
    ],
)
def test_integer_scale_refusals(kwargs, error, match):
    x = np.arange(16, dtype=np.int32).reshape(2, 8)
    out = np.full_like(x, 7)
    with pytest.raises(error, match=match):
        ironkernels.fwt(x, out=out, **kwargs)
    assert (out == 7).all()


def test_complex_matches_parts(rng):
    x = random_array(rng, (3, 512), "complex128")
    y = ironkernels.fwt(x, normalized=True)
    np.testing.assert_allclose(y.real, ironkernels.fwt(np.ascontiguousarray(x.real), normalized=True), rtol=0, atol=1e-13)
    np.testing.assert_allclose(y.imag, ironkernels.fwt(np.ascontiguousarray(x.imag), normalized=True), rtol=0, atol=1e-13)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_one_long_row_over_threads(rng, dtype):
    """A row of 2^20 (fewer rows than threads) is shared by the threads, blocks then strips: the
    same result, bit for bit, as one thread, and within the contract."""
    from ironkernels import _core

    x = random_array(rng, (1, 1 << 20), dtype)
    threads = _core.cpu_threads()
    try:
        _core.set_cpu_threads(max(2, threads))
        shared = ironkernels.fwt(x, scale=3 if dtype in INT_DTYPES else 0.5)
        _core.set_cpu_threads(1)
        alone = ironkernels.fwt(x, scale=3 if dtype in INT_DTYPES else 0.5)
    finally:
        _core.set_cpu_threads(threads)
    np.testing.assert_array_equal(shared, alone)
    assert_transform(shared, x, dtype, -1, 3 if dtype in INT_DTYPES else 0.5)


def _bitreverse(k, bits):
    return int(format(k, f"0{bits}b")[::-1], 2) if bits else 0


@pytest.mark.parametrize("log_n", [0, 1, 2, 3, 4, 6, 9])
def test_orders_against_their_definitions(log_n):
    """sequency: row k of the transform changes sign k times; dyadic: row k is natural row
    bitreverse(k). The rows are those of fwt(I) along axis 0 (column j is the transform of e_j)."""
    n = 1 << log_n
    natural = ironkernels.fwt(np.eye(n), axis=0)
    walsh = ironkernels.fwt(np.eye(n), axis=0, order="sequency")
    paley = ironkernels.fwt(np.eye(n), axis=0, order="dyadic")
    changes = [int(np.sum(walsh[k, 1:] != walsh[k, :-1])) for k in range(n)]
    assert changes == list(range(n))
    np.testing.assert_array_equal(paley, natural[[_bitreverse(k, log_n) for k in range(n)]])
    assert sorted(map(tuple, walsh)) == sorted(map(tuple, natural))  # a permutation of the rows


@pytest.mark.parametrize("dtype", ["float32", "complex64", "int64", "bfloat16"])
@pytest.mark.parametrize("order", ["sequency", "dyadic"])
def test_orders_on_any_axis_in_place(rng, dtype, order):
    x = random_array(rng, (3, 256, 5), dtype)
    natural = ironkernels.fwt(x, axis=1)
    log_n = 8
    perm = [_bitreverse(k ^ (k >> 1) if order == "sequency" else k, log_n) for k in range(256)]
    got = ironkernels.fwt(x, axis=1, order=order)
    np.testing.assert_array_equal(got, natural[:, perm, :])
    ironkernels.fwt(x, axis=1, order=order, out=x)
    np.testing.assert_array_equal(x, got)


@pytest.mark.parametrize("order,error,match", [("walsh", ValueError, "order='walsh' is not an order"),
                                                (3, TypeError, "order must be a str")])
def test_order_refusals(order, error, match):
    x = np.ones((2, 8), np.float32)
    out = np.full_like(x, 7)
    with pytest.raises(error, match=match):
        ironkernels.fwt(x, order=order, out=out)
    assert (out == 7).all()


def _paley_first(q):
    """An independent Paley I matrix of order q + 1 (q prime, 3 mod 4), for the tests."""
    squares = {(a * a) % q for a in range(1, q)}
    chi = lambda a: 0 if a % q == 0 else (1 if a % q in squares else -1)  # noqa: E731
    s = np.zeros((q + 1, q + 1), np.int64)
    s[0, 1:], s[1:, 0] = 1, -1
    for i in range(q):
        for j in range(q):
            s[i + 1, j + 1] = chi(j - i)
    return s + np.eye(q + 1, dtype=np.int64)


@pytest.mark.parametrize("m", [12, 20, 28, 40])
@pytest.mark.parametrize("k", [0, 1, 4])
def test_m_times_power_of_two_is_hadamard(m, k):
    """N = m·2^k: the transform's matrix (fwt of the identity) has entries ±1 and H·Hᵀ = N·I,
    and is H_m ⊗ H_{2^k} with H_m the transform of length m; integers exact."""
    n = m << k
    h = ironkernels.fwt(np.eye(n, dtype=np.int64), axis=0)
    assert set(np.unique(h)) == {-1, 1}
    np.testing.assert_array_equal(h @ h.T, n * np.eye(n, dtype=np.int64))
    base = m if m != 40 else 20  # 40·2^k is 20·2^(k+1)
    hm = ironkernels.fwt(np.eye(base, dtype=np.int64), axis=0)
    np.testing.assert_array_equal(h, np.kron(hm, ironkernels.fwt(np.eye(n // base, dtype=np.int64), axis=0)))
    if base in (12, 20):  # the factor is Paley's first construction
        np.testing.assert_array_equal(hm, _paley_first(base - 1))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "int32", "bfloat16"])
def test_m_times_power_of_two_any_axis_scaled_in_place(rng, dtype):
    n = 12 * 16
    h = ironkernels.fwt(np.eye(n), axis=0)
    x = random_array(rng, (3, n, 5), dtype)
    scale = 3 if dtype in INT_DTYPES else 0.25
    got = ironkernels.fwt(x, axis=1, scale=scale)
    if dtype in INT_DTYPES:
        expect = (np.einsum("ij,ajb->aib", h.astype(np.int64), x.astype(np.int64)) * scale).astype(dtype)
        np.testing.assert_array_equal(got, expect)
    else:
        expect = np.einsum("ij,ajb->aib", h, np.asarray(x).astype(np.complex128 if "complex" in dtype else np.float64)) * scale
        tol = {"float32": 1e-5, "float64": 1e-12, "complex64": 1e-5, "bfloat16": 2e-2}[dtype]
        np.testing.assert_allclose(np.asarray(got).astype(expect.dtype), expect, rtol=tol, atol=tol * np.abs(expect).max())
    ironkernels.fwt(x, axis=1, scale=scale, out=x)
    np.testing.assert_array_equal(x, got)
