"""gemm on batches: (batch, m, k) · (batch, k, n), either operand shared; each product is the 2-D call's
(the same bits, its own certificate and report), with c, out, transposes and complex128; refusals
before anything is written."""
import numpy as np
import pytest

import ironkernels as ik
from ironkernels.reference import gemm_family


@pytest.mark.parametrize("shared", [None, "a", "b"])
def test_each_product_is_the_matrix_calls(rng, shared):
    a = gemm_family(rng, (5, 12, 30), 2.0)
    b = gemm_family(rng, (5, 30, 8), 2.0)
    if shared == "a":
        a = a[0]
    if shared == "b":
        b = b[0]
    got, rep = ik.gemm(a, b, contract=ik.Contract(rtol=1e-10), report=True)
    assert got.shape == (5, 12, 8) and len(rep["batch"]) == 5
    for i in range(5):
        want, want_rep = ik.gemm(a if a.ndim == 2 else a[i], b if b.ndim == 2 else b[i], contract=ik.Contract(rtol=1e-10),
                                 report=True)
        np.testing.assert_array_equal(got[i].view(np.uint64), want.view(np.uint64))
        assert rep["batch"][i]["moduli"] == want_rep["moduli"]
    assert rep["certified"] == all(r["certified"] for r in rep["batch"])


def test_c_out_transposes_and_complex(rng):
    a = rng.standard_normal((3, 9, 6))
    b = rng.standard_normal((3, 4, 9))
    c = rng.standard_normal((3, 6, 4))
    out = np.zeros((3, 6, 4))
    assert ik.gemm(a, b, trans_a=True, trans_b=True, c=c, beta=2.0, alpha=-1.0, out=out) is out
    want = -np.einsum("bki,bjk->bij", a, b) + 2.0 * c
    np.testing.assert_allclose(out, want, rtol=0, atol=1e-13 * np.abs(want).max())
    z = rng.standard_normal((2, 5, 5)) + 1j * rng.standard_normal((2, 5, 5))
    np.testing.assert_allclose(ik.gemm(z, z), z @ z, rtol=0, atol=1e-13 * np.abs(z @ z).max())


def test_refusals_write_nothing(rng):
    out = np.full((2, 3, 4), 7.0)
    with pytest.raises(ValueError, match="batches of one size"):
        ik.gemm(np.ones((2, 3, 5)), np.ones((3, 5, 4)), out=out)
    with pytest.raises(ValueError, match="out has shape"):
        ik.gemm(np.ones((2, 3, 5)), np.ones((5, 4)), out=np.zeros((3, 3, 4)))
    with pytest.raises(ValueError, match="inner dimensions"):
        ik.gemm(np.ones((2, 3, 5)), np.ones((6, 4)), out=out)
    with pytest.raises(ValueError, match="a batch of them"):
        ik.gemm(np.ones((2, 2, 3, 5)), np.ones((5, 4)))
    assert (out == 7.0).all()


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_small_cuda_batches_run_as_one_native_product(rng, dtype):
    """On CUDA a certified batch of products below the emulation's crossover is one native batched
    product: within the bound its report states, against an exact product; an engine named keeps
    the emulation, product by product."""
    torch = pytest.importorskip("torch")
    a = gemm_family(rng, (16, 40, 24), 1.0)
    b = gemm_family(rng, (24, 8), 1.0)
    c = rng.standard_normal((16, 40, 8))
    if dtype == "complex128":
        a, b = a + 1j * gemm_family(rng, a.shape, 1.0), b - 1j * gemm_family(rng, b.shape, 1.0)
    ta, tb, tc = (torch.from_numpy(x).cuda() for x in (a, b, c))
    got, rep = ik.gemm(ta, tb, c=tc, beta=0.5, report=True)
    assert rep["path"] == "native" and rep["certified"] and got.shape == (16, 40, 8)
    exact = np.einsum("bik,kj->bij", a.astype(np.clongdouble), b.astype(np.clongdouble)) + 0.5 * c
    mag = np.einsum("bik,kj->bij", np.abs(a).astype(np.longdouble), np.abs(b).astype(np.longdouble)) + 0.5 * np.abs(c)
    err = np.abs(got.cpu().numpy() - exact)
    assert (err <= 2 * rep["bound"] * mag + 4 * 2.0**-53 * np.abs(exact)).all()
    grouped, rep = ik.gemm([ta[0], ta[1][:30]], tb, report=True)  # a group: each product natively
    assert rep["path"] == "native" and [g.shape for g in grouped] == [(40, 8), (30, 8)]
    err = np.abs(grouped[1].cpu().numpy() - exact[1][:30] + 0.5 * c[1][:30])
    assert (err <= 2 * rep["bound"] * mag[1][:30] + 4 * 2.0**-53 * np.abs(exact[1][:30])).all()
    if dtype == "float64":
        emulated, rep = ik.gemm(ta, tb, engine="mma", report=True)
        assert rep["batch"] is not None and all(r["path"] != "native" for r in rep["batch"])
        for i in range(16):
            want = ik.gemm(a[i], b)  # the CPU reference: the same bits
            np.testing.assert_array_equal(emulated[i].cpu().numpy().view(np.uint64), want.view(np.uint64))


@pytest.mark.parametrize("shared", [None, "a", "b"])
def test_a_group_is_each_products_matrix_call(rng, shared):
    """Lists of matrices of different shapes: each product the 2-D call's bits and report."""
    dims = [(7, 30, 5), (1, 12, 9), (20, 3, 16)]
    a = [gemm_family(rng, (m, k), 2.0) for m, k, _ in dims]
    b = [gemm_family(rng, (k, n), 2.0) for _, k, n in dims]
    if shared == "a":
        a, b = a[0], [gemm_family(rng, (30, n), 1.0) for *_, n in dims]
    if shared == "b":
        a, b = [gemm_family(rng, (m, 30), 1.0) for m, *_ in dims], b[0]
    got, rep = ik.gemm(a, b, contract=ik.Contract(rtol=1e-10), report=True)
    assert isinstance(got, list) and len(got) == 3 and len(rep["group"]) == 3
    for i in range(3):
        ai, bi = (a if not isinstance(a, list) else a[i]), (b if not isinstance(b, list) else b[i])
        want, want_rep = ik.gemm(ai, bi, contract=ik.Contract(rtol=1e-10), report=True)
        np.testing.assert_array_equal(got[i].view(np.uint64), want.view(np.uint64))
        assert rep["group"][i]["moduli"] == want_rep["moduli"]
    assert ik.gemm([], []) == []


def test_a_group_with_c_out_transposes_and_complex(rng):
    a = [rng.standard_normal((9, 6)), rng.standard_normal((4, 2))]
    b = [rng.standard_normal((3, 9)), rng.standard_normal((5, 4))]
    c = [rng.standard_normal((6, 3)), rng.standard_normal((2, 5))]
    out = [np.zeros((6, 3)), np.zeros((2, 5))]
    res = ik.gemm(a, b, trans_a=True, trans_b=True, c=c, beta=2.0, alpha=-1.0, out=out)
    for i in range(2):
        assert res[i] is out[i]
        want = -a[i].T @ b[i].T + 2.0 * c[i]
        np.testing.assert_allclose(out[i], want, rtol=0, atol=1e-13 * np.abs(want).max())
    z = [rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4)), rng.standard_normal((2, 3)) + 0j]
    w = [rng.standard_normal((4, 2)) - 1j * rng.standard_normal((4, 2)), rng.standard_normal((3, 3)) + 1j]
    for got, want in zip(ik.gemm(z, w), (z[0] @ w[0], z[1] @ w[1])):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-13 * np.abs(want).max())


def test_a_group_is_checked_whole_before_any_product(rng):
    """A bad shape, length, dtype or out anywhere in the group: refused, nothing written."""
    a = [np.ones((2, 3)), np.ones((4, 5))]
    out = [np.full((2, 2), 7.0), np.full((4, 2), 7.0)]
    cases = [([np.ones((3, 2)), np.ones((6, 2))], "inner dimensions"),
             ([np.ones((3, 2))], "lists of one length"),
             ([np.ones((3, 2)), np.ones((5, 2), np.int32)], "has dtype int32"),
             ([np.ones((3, 2)), np.ones((2, 5, 2))], "accepted: a matrix")]
    for b, message in cases:
        with pytest.raises((ValueError, TypeError), match=message):
            ik.gemm(a, b, out=out)
        assert all((o == 7.0).all() for o in out)
    with pytest.raises(ValueError, match=r"out\[1\] has shape"):
        ik.gemm(a, [np.ones((3, 2)), np.ones((5, 2))], out=[out[0], np.zeros((4, 3))])
    with pytest.raises(TypeError, match="accepted: a list of matrices"):
        ik.gemm(a, [np.ones((3, 2)), np.ones((5, 2))], out=out[0])
    assert all((o == 7.0).all() for o in out)
