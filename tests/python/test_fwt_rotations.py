"""The rotation options of fwt and fwt_quantize on the host: signs= (the randomised Hadamard's D), a
caller's base matrix hadamard= (H_m ⊗ H_{2^k}, symmetric or not) and inverse=, against a dense
float64 (exact integer) product; their refusals before anything is written."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ironkernels as ik
from ironkernels.reference import hadamard_matrix

from fwt_layout_cases import random_array


def paley_one(q: int) -> np.ndarray:
    """Paley's first construction, order q + 1 for a prime q ≡ 3 (mod 4): I + S with S skew, so not
    symmetric (Hᵀ ≠ H): the transform and its transpose differ."""
    squares = {x * x % q for x in range(1, q)}
    chi = np.array([0] + [1 if a in squares else -1 for a in range(1, q)])
    s = np.zeros((q + 1, q + 1), np.int64)
    s[0, 1:], s[1:, 0] = 1, -1
    s[1:, 1:] = chi[(np.arange(q)[None, :] - np.arange(q)[:, None]) % q]
    return np.eye(q + 1, dtype=np.int64) + s


def equivalent(rng, h: np.ndarray) -> np.ndarray:
    """h with its rows and columns permuted and negated at random: another Hadamard matrix."""
    m = h.shape[0]
    return (h[rng.permutation(m)][:, rng.permutation(m)] * rng.choice([-1, 1], m)[:, None] * rng.choice([-1, 1], m))


def dense(h: np.ndarray, n: int) -> np.ndarray:
    return np.kron(h, hadamard_matrix(n // h.shape[0])).astype(np.float64)


def test_paley_one_is_hadamard_and_not_symmetric():
    for q in (3, 7, 11, 19, 23):
        h = paley_one(q)
        assert np.array_equal(h @ h.T, (q + 1) * np.eye(q + 1)) and not np.array_equal(h, h.T)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16", "complex128", "int32", "int64"])
@pytest.mark.parametrize("shape,axis,block", [((4, 64), -1, None), ((3, 96, 5), 1, 32), ((40, 3), 0, 20)])
def test_signs_are_the_transform_of_the_signed_input(rng, dtype, shape, axis, block):
    """fwt(x, signs=s) is bit for bit fwt(s ∘ x) (the sign flips are exact), for a seed and for given
    values, along any axis and with blocks; in place too."""
    x = random_array(rng, shape, dtype)
    n = shape[axis]
    s = ik.rademacher_signs(n, 41)
    where = [1] * len(shape)
    where[axis] = n
    signed = np.asarray(x) * s.reshape(where).astype(np.asarray(x).dtype)
    want = ik.fwt(signed, axis=axis, block=block)
    for given_signs in (41, s, s.astype(np.float64), list(s)):
        got = ik.fwt(x, axis=axis, block=block, signs=given_signs)
        np.testing.assert_array_equal(np.asarray(got).view(np.uint8), np.asarray(want).view(np.uint8))
    y = np.array(x)
    ik.fwt(y, axis=axis, block=block, signs=41, out=y)
    np.testing.assert_array_equal(y.view(np.uint8), np.asarray(want).view(np.uint8))


@pytest.mark.parametrize("q", [3, 11, 19, 23])
@pytest.mark.parametrize("k", [0, 1, 4])
def test_a_callers_matrix_against_the_dense_product(rng, q, k):
    """hadamard=H: y = (H ⊗ H_{2^k}) · x exactly on integers (two's-complement wrapping) and within
    float64's rounding on floats; the inverse applies Hᵀ and gives x back."""
    h = equivalent(rng, paley_one(q))
    n = (q + 1) << k
    xi = rng.integers(-1000, 1000, (5, n)).astype(np.int64)
    np.testing.assert_array_equal(ik.fwt(xi, hadamard=h), (xi @ dense(h, n).T.astype(np.int64)))
    x = rng.standard_normal((5, n))
    y = ik.fwt(x, hadamard=h, normalized=True)
    np.testing.assert_allclose(y, x @ dense(h, n).T / np.sqrt(n), rtol=0, atol=1e-13 * np.sqrt(n))
    np.testing.assert_allclose(ik.fwt(y, hadamard=h, normalized=True, inverse=True), x, rtol=0, atol=1e-13 * np.sqrt(n))
    assert not np.allclose(ik.fwt(y, hadamard=h, normalized=True), x)  # (Hᵀ, not H, undoes it)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32"])
@pytest.mark.parametrize("m", [12, 20, 28])
def test_the_builtin_matrix_given_is_the_builtin_transform(rng, dtype, m):
    """Passing the library's own H_m as hadamard= changes nothing, bit for bit (16-bit rounded between
    the two factors alike)."""
    h = ik.fwt(np.eye(m, dtype=np.int64)).astype(np.int8)  # column j is H·e_j: H (symmetric)
    x = random_array(rng, (6, m * 32), dtype)
    for kw in ({}, {"block": m * 4}, {"scale": 3} if dtype == "int32" else {"normalized": True}):
        got, want = ik.fwt(x, hadamard=h, **kw), ik.fwt(x, **kw)
        np.testing.assert_array_equal(np.asarray(got).view(np.uint8), np.asarray(want).view(np.uint8))


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_rotation_property(data):
    """Random matrices (Paley I, Sylvester 2/4, order 1, permuted and negated), lengths, blocks, signs,
    strided axes and inverse: y equals the dense float64 product, and the inverse gives x back."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    h = data.draw(st.sampled_from([paley_one(3), paley_one(7), paley_one(11), hadamard_matrix(2).astype(int),
                                   hadamard_matrix(4).astype(int), np.ones((1, 1), int)]))
    h = equivalent(rng, h)
    m = h.shape[0]
    block = m << data.draw(st.integers(0, 4))
    n = block * data.draw(st.integers(1, 3))
    rows = data.draw(st.integers(0, 4))
    base = rng.standard_normal((n, 2 * rows + 1))
    x = base[:, ::2]  # the axis first, strided
    seed = data.draw(st.one_of(st.none(), st.integers(0, 2**64 - 1)))
    d = np.ones(n) if seed is None else ik.rademacher_signs(n, seed).astype(np.float64)
    y = ik.fwt(x, axis=0, block=block, hadamard=h, signs=seed, scale=0.5)
    want = 0.5 * np.einsum("ij,bjr->bir", dense(h, block), (d[:, None] * x).reshape(n // block, block, -1)).reshape(x.shape)
    np.testing.assert_allclose(y, want, rtol=0, atol=1e-12 * block)
    back = ik.fwt(y, axis=0, block=block, hadamard=h, signs=seed, scale=0.5, inverse=True)
    np.testing.assert_allclose(back, x, rtol=0, atol=1e-12 * block)


def test_fwt_quantize_with_a_callers_matrix(rng):
    """fwt_quantize(hadamard=H) quantises fwt(hadamard=H)'s rotation: the codes and scales of the int8
    and float8 formats equal quantising that rotation without a matrix option."""
    h = equivalent(rng, paley_one(11))
    x = rng.standard_normal((8, 12 * 32)).astype(np.float32)
    r = ik.fwt(x * ik.rademacher_signs(384, 5), hadamard=h, block=96, normalized=True)
    for to in ("int8", "float8_e4m3fn"):
        q, s = ik.fwt_quantize(x, to=to, hadamard=h, block=96, group=96, signs=5)
        from ironkernels.reference import quantize_reference

        ref_q, ref_s = quantize_reference(np.asarray(r, np.float32), to, 96)[:2]
        np.testing.assert_array_equal(q, ref_q)
        np.testing.assert_array_equal(np.asarray(s).view(np.uint32), np.asarray(ref_s, np.float32).view(np.uint32))


def test_refusals_write_nothing(rng):
    h = paley_one(11)
    x = np.ones((2, 96), np.float32)
    out = np.full_like(x, 7)
    bad = [
        ({"hadamard": h * 2}, ValueError, "hadamard has dtype .* values other than ±1"),
        ({"hadamard": h[:5]}, ValueError, r"hadamard has shape \(5, 12\)"),
        ({"hadamard": np.ones((12, 12), int)}, ValueError, "not a Hadamard matrix: rows 0 and 1"),
        ({"hadamard": paley_one(7)}, ValueError, "not m·2\\^k for the hadamard of order m = 8"),
        ({"hadamard": h, "block": 32}, ValueError, "block = 32 .* 12·2\\^k"),
        ({"hadamard": h, "order": "sequency"}, ValueError, "order='sequency'"),
        ({"hadamard": "H12"}, TypeError, "hadamard must be an m × m array"),
        ({"hadamard": np.ones((600, 600), np.int8)}, ValueError, "order 1 … 512"),
        ({"signs": np.ones(95)}, ValueError, r"signs has shape \(95,\)"),
        ({"signs": np.full(96, 2)}, ValueError, "values other than ±1"),
        ({"signs": 1.5}, TypeError, "signs must be an int seed"),
    ]
    for kw, error, match in bad:
        with pytest.raises(error, match=match):
            ik.fwt(x, out=out, **kw)
    assert (out == 7).all()
    q, s = np.full((2, 96), 7, np.int8), np.full((2, 1), 7, np.float32)
    for kw, error, match in bad[:5]:
        with pytest.raises(error, match=match.replace("not m·2\\^k for the hadamard of order m = 8", "rotation's length 96")
                           .replace("block = 32 .* 12·2\\^k", "rotation's length 32")):
            ik.fwt_quantize(x, to="int8", out=q, scales=s, **kw)
    assert (q == 7).all() and (s == 7).all()
