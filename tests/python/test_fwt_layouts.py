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
