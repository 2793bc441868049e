"""FWT on the CPU along any axis and of any stride, for complex and integer dtypes, and rows longer
than the GPU's one-tile limit, against the float64 (exact integer) reference."""
import numpy as np
import pytest

import ironkernels
from ironkernels.reference import fwt_reference

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


def _paley_second(q):
    """An independent Paley II matrix of order 2(q + 1) (q = 5, 9, 13 ≡ 1 mod 4): GF(q) from its
    addition and multiplication tables (GF(9) as pairs over GF(3) with i² = -1), the conference
    matrix [[0, 1ᵀ], [1, Q]], Q[x, y] = χ(y - x), then C ⊗ [[1, 1], [1, -1]] + I ⊗ [[1, -1], [-1, -1]]."""
    if q == 9:
        elems = [(a, b) for b in range(3) for a in range(3)]
        sub = lambda x, y: ((x[0] - y[0]) % 3, (x[1] - y[1]) % 3)  # noqa: E731
        mul = lambda x, y: ((x[0] * y[0] - x[1] * y[1]) % 3, (x[0] * y[1] + x[1] * y[0]) % 3)  # noqa: E731
        zero = (0, 0)
    else:
        elems, zero = list(range(q)), 0
        sub = lambda x, y: (x - y) % q  # noqa: E731
        mul = lambda x, y: (x * y) % q  # noqa: E731
    squares = {mul(x, x) for x in elems if x != zero}
    chi = lambda a: 0 if a == zero else (1 if a in squares else -1)  # noqa: E731
    c = np.zeros((q + 1, q + 1), np.int64)
    c[0, 1:], c[1:, 0] = 1, 1
    for i, x in enumerate(elems):
        for j, y in enumerate(elems):
            c[i + 1, j + 1] = chi(sub(y, x))
    return np.kron(c, [[1, 1], [1, -1]]) + np.kron(np.eye(q + 1, dtype=np.int64), [[1, -1], [-1, -1]])


@pytest.mark.parametrize("m", [12, 20, 28, 40])
@pytest.mark.parametrize("k", [0, 1, 4])
def test_m_times_power_of_two_is_hadamard(m, k):
    """N = m·2^k: the transform's matrix (fwt of the identity) has entries ±1, is symmetric with
    H·H = N·I (fwt(fwt(x)) = N·x), and is H_m ⊗ H_{2^k} with H_m Paley's second construction;
    integers exact."""
    n = m << k
    h = ironkernels.fwt(np.eye(n, dtype=np.int64), axis=0)
    assert set(np.unique(h)) == {-1, 1}
    np.testing.assert_array_equal(h, h.T)
    np.testing.assert_array_equal(h @ h, n * np.eye(n, dtype=np.int64))
    base = m if m != 40 else 20  # 40·2^k is 20·2^(k+1)
    hm = ironkernels.fwt(np.eye(base, dtype=np.int64), axis=0)
    np.testing.assert_array_equal(h, np.kron(hm, ironkernels.fwt(np.eye(n // base, dtype=np.int64), axis=0)))
    np.testing.assert_array_equal(hm, _paley_second(base // 2 - 1))


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


def _block_reference(x, block, axis, scale=1.0):
    """H_block on each run of `block` elements along `axis`: the reference on the axis split in two."""
    moved = np.moveaxis(np.asarray(x), axis, -1)
    split = moved.reshape(moved.shape[:-1] + (moved.shape[-1] // block, block))
    if block & (block - 1) == 0:
        y = fwt_reference(split, scale)
    else:  # m·2^k blocks: H_block from the library's whole-axis transform, checked above
        h = ironkernels.fwt(np.eye(block, dtype=np.int64), axis=0)
        if split.dtype.kind in "iu":  # exactly, wrapping modulo 2^64 and then the dtype's width
            y = (np.einsum("ij,...j->...i", h, split.astype(np.int64)) * np.int64(scale)).astype(split.dtype)
        else:
            y = np.einsum("ij,...j->...i", h.astype(np.float64),
                          split.astype(np.complex128 if split.dtype.kind == "c" else np.float64)) * scale
    return np.moveaxis(y.reshape(moved.shape), -1, axis)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "int32", "int64", "bfloat16"])
@pytest.mark.parametrize("shape,axis,block", [((3, 256), -1, 16), ((3, 256), -1, 32), ((2, 512, 3), 1, 128),
                                              ((4, 1024), -1, 1024), ((5, 96), -1, 12), ((2, 80, 4), 1, 20),
                                              ((64, 7), 0, 4), ((3, 2 << 14), -1, 1 << 13)])
def test_block_diagonal(rng, dtype, shape, axis, block):
    """block=b: H_b on each run of b elements (the head-dimension and MX/NV block rotations), any
    axis, normalized by 1/√b, integers exact; in place the same bits; orders within each block."""
    x = random_array(rng, shape, dtype)
    scale = 3 if dtype in INT_DTYPES else None
    got = ironkernels.fwt(x, axis=axis, block=block, **({"scale": scale} if scale else {"normalized": True}))
    want = _block_reference(x, block, axis, scale if scale else block ** -0.5)
    if dtype in INT_DTYPES:
        np.testing.assert_array_equal(got, want)
    else:
        tol = {"float32": 1e-5, "float64": 1e-12, "complex64": 1e-5, "bfloat16": 2e-2}[dtype]
        np.testing.assert_allclose(np.asarray(got).astype(want.dtype), want, rtol=tol, atol=tol * np.abs(want).max())
    y = x.copy()
    ironkernels.fwt(y, axis=axis, block=block, out=y, **({"scale": scale} if scale else {"normalized": True}))
    np.testing.assert_array_equal(y, got)
    if block & (block - 1) == 0 and dtype not in ("bfloat16",):
        ordered = ironkernels.fwt(x, axis=axis, block=block, order="dyadic")
        natural = ironkernels.fwt(x, axis=axis, block=block)
        log_b = block.bit_length() - 1
        perm = [int(format(k, f"0{log_b}b")[::-1], 2) if log_b else 0 for k in range(block)]
        index = np.concatenate([np.asarray(perm) + b0 for b0 in range(0, shape[axis], block)])
        np.testing.assert_array_equal(ordered, np.take(natural, index, axis=axis))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "complex64", "complex128"])
@pytest.mark.parametrize("n", [1, 8, 12, 20, 28, 40, 1 << 12, 12 << 8])
def test_inverse_undoes_the_transform(rng, dtype, n):
    """inverse=True with the forward's arguments gives x back, for every N (every H_N is symmetric with
    H·H = N·I), scaled, normalized, ordered and blocked alike."""
    x = random_array(rng, (3, n), dtype)
    tol = {"float32": 1e-5, "float64": 1e-12, "float16": 4e-3, "bfloat16": 3e-2, "complex64": 1e-5, "complex128": 1e-12}[dtype]
    wide = np.asarray(x).astype(np.complex128 if "complex" in dtype else np.float64)
    cases = [{}, {"normalized": True}, {"scale": -0.375}]
    if n & (n - 1) == 0:
        cases += [{"order": "sequency"}, {"order": "dyadic", "normalized": True}]
    if n % 4 == 0 and n >= 8:
        cases += [{"block": 4, "normalized": True}, {"block": n // 2 if (n // 2) & (n // 2 - 1) == 0 or n // 2 in (12, 20, 28) else 4}]
    for kw in cases:
        back = ironkernels.fwt(ironkernels.fwt(x, **kw), inverse=True, **kw)
        err = np.abs(np.asarray(back).astype(wide.dtype) - wide).max()
        assert err <= tol * max(1.0, np.abs(wide).max()) * (4 if dtype in ("float16", "bfloat16") else 1), (kw, err)


def test_block_and_inverse_refusals_write_nothing():
    x = np.ones((2, 48), np.float32)
    out = np.full_like(x, 7)
    for block, match in ((6, "block = 6"), (5, "block = 5"), (96, "block = 96"), (0, "block = 0"), (-4, "block = -4")):
        with pytest.raises(ValueError, match=match):
            ironkernels.fwt(x, block=block, out=out)
    with pytest.raises(TypeError, match="block must be an int"):
        ironkernels.fwt(x, block=16.0, out=out)
    with pytest.raises(TypeError, match="int32.*no inverse"):
        ironkernels.fwt(np.ones((2, 8), np.int32), inverse=True)
    with pytest.raises(ValueError, match="scale = 0"):
        ironkernels.fwt(x, inverse=True, scale=0.0, out=out)
    assert (out == 7).all()
