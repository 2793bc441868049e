"""ironkernels.jax: fwt, gemm and fwt_quantize as XLA FFI calls under jit and vmap (fwt and gemm under
grad too), equal to the package's calls on the same values (the host paths, or the CUDA kernels where
JAX has a GPU), refusals at trace time."""
import importlib.util
import os

import numpy as np
import pytest

# JAX takes 75% of the GPU's memory at its first call unless told not to; the other suites' arrays share it.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
if importlib.util.find_spec("ironkernels._jax_ffi") is None:
    pytest.skip("this copy was built without the JAX door (_jax_ffi)", allow_module_level=True)
import ironkernels.jax as ikj  # noqa: E402  (built: it must load)

import ironkernels as ik  # noqa: E402

from fwt_helpers import np_dtype  # noqa: E402

jax.config.update("jax_enable_x64", True)
CPU = jax.devices("cpu")[0]


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16", "complex64", "int32", "int64"])
@pytest.mark.parametrize("shape,axis,kw", [((4, 64), -1, {}), ((3, 96), 1, {"normalized": True}),
                                           ((256, 5), 0, {"scale": 3}), ((2, 1024), -1, {"block": 32}),
                                           ((6, 128), -1, {"order": "sequency"})])
def test_equals_the_package_transform(rng, dtype, shape, axis, kw):
    if dtype.startswith("int") and kw.get("normalized"):
        kw = {}
    x = (rng.standard_normal(shape) * 8).astype(np.float32)
    x = (x + 1j * x[::-1]).astype(dtype) if dtype.startswith("complex") else x.astype(np_dtype(dtype))
    got = ikj.fwt(jax.device_put(x, CPU), axis=axis, **kw)  # the host path, bit for bit (the GPU's: below)
    assert isinstance(got, jax.Array) and got.dtype == jnp.asarray(x).dtype and got.shape == x.shape
    np.testing.assert_array_equal(np.asarray(got), ik.fwt(x, axis=axis, **kw))


def test_jit_vmap_and_grad(rng):
    x = rng.standard_normal((4, 8, 64))
    jitted = jax.jit(lambda a: ikj.fwt(a, axis=1, block=4, normalized=True) + 1.0)
    np.testing.assert_allclose(np.asarray(jitted(x)), ik.fwt(x, axis=1, block=4, normalized=True) + 1.0, rtol=0,
                               atol=1e-12)
    for in_axes, out_axes in ((0, 0), (2, 2), (1, 0)):
        mapped = jax.vmap(lambda a: ikj.fwt(a, axis=0), in_axes=in_axes, out_axes=out_axes)(x)
        moved = np.moveaxis(x, in_axes, 0)  # each slice's axis 0 is the first of its two remaining axes
        want = np.moveaxis(ik.fwt(moved, axis=1), 0, out_axes)
        np.testing.assert_array_equal(np.asarray(mapped), want)
    w = rng.standard_normal(64)
    loss = lambda a: jnp.sum(ikj.fwt(a, normalized=True, order="dyadic") * w)  # noqa: E731
    grad = np.asarray(jax.grad(loss)(x[0]))
    # d/dx Σ w·(H x) = Hᵀ w = H w for every row
    np.testing.assert_allclose(grad, np.broadcast_to(ik.fwt(w, normalized=True, order="dyadic"), grad.shape), atol=1e-12)
    value, vjp = jax.vjp(lambda a: ikj.fwt(a, scale=0.5), x[0])
    np.testing.assert_allclose(np.asarray(vjp(jnp.ones_like(value))[0]), ik.fwt(np.ones_like(x[0]), scale=0.5))


def test_rotation_options_under_jit_vmap_and_grad(rng):
    """signs, a caller's non-symmetric matrix and inverse: equal to the package's call, under jit and
    vmap; the gradient is the transposed transform (jax.test_util's numerical check)."""
    from jax.test_util import check_grads

    from test_fwt_rotations import paley_one

    h = paley_one(11)
    x = rng.standard_normal((3, 5, 48))
    for kw in ({"signs": 7}, {"hadamard": h, "normalized": True}, {"hadamard": h, "signs": 3, "block": 24, "scale": -0.5},
               {"hadamard": h, "signs": 3, "inverse": True}):
        got = jax.jit(lambda a: ikj.fwt(a, **kw))(jax.device_put(x, CPU))
        np.testing.assert_array_equal(np.asarray(got), ik.fwt(x, **kw))
        mapped = jax.vmap(lambda a: ikj.fwt(a, **kw))(jax.device_put(x, CPU))
        np.testing.assert_array_equal(np.asarray(mapped), ik.fwt(x, **kw))
        check_grads(lambda a: ikj.fwt(a, **kw), (x[0],), order=1, modes=("rev",))
    q, s = ikj.fwt_quantize(x[0].astype(np.float32), to="int8", hadamard=h, block=48, signs=2)
    want = ik.fwt_quantize(x[0].astype(np.float32), to="int8", hadamard=h, block=48, signs=2)
    np.testing.assert_array_equal(np.asarray(q), want[0])
    np.testing.assert_array_equal(np.asarray(s), want[1])
    q, (s, t) = ikj.fwt_quantize(x[0].astype(np.float32), to="nvfp4", block=16, global_amax=2.0)
    want = ik.fwt_quantize(x[0].astype(np.float32), to="nvfp4", block=16, global_amax=2.0)
    for g, w in ((q, want[0]), (s, want[1][0]), (t, want[1][1])):
        np.testing.assert_array_equal(np.asarray(g), w)
    with pytest.raises(ValueError, match="12·2\\^k"):
        ikj.fwt(jnp.ones((2, 64)), hadamard=h)


def test_refused_when_traced():
    x = jnp.ones((4, 12))
    with pytest.raises(ValueError, match="axis=2"):
        ikj.fwt(x, axis=2)
    with pytest.raises(ValueError, match="order='walsh'"):
        ikj.fwt(x, order="walsh")
    with pytest.raises(TypeError, match="dtype uint8"):
        ikj.fwt(jnp.ones((4, 8), jnp.uint8))
    with pytest.raises(ValueError, match="integer transforms"):
        ikj.fwt(jnp.ones((4, 8), jnp.int32), normalized=True)
    with pytest.raises(ValueError, match="transform length 5"):
        ikj.fwt(x, block=5)
    with pytest.raises(ValueError, match="transform length 6"):
        ikj.fwt(jnp.ones((4, 6)))
    with pytest.raises(ValueError, match="order='dyadic' is defined for H_{2\\^k}"):
        ikj.fwt(x, order="dyadic")
    with pytest.raises(TypeError, match="x has dtype int32"):
        ikj.fwt_quantize(jnp.ones((2, 16), jnp.int32), to="int8")
    with pytest.raises(ValueError, match="signs"):
        ikj.fwt_quantize(jnp.ones((2, 16)), to="int8", signs=np.ones(15))


def test_gemm_equals_the_package_gemm_and_differentiates(rng):
    a, b = rng.standard_normal((30, 70)), rng.standard_normal((70, 20))
    for contract in (None, ik.Contract(rtol=1e-8), ik.Contract(moduli=15, scaling="accurate")):
        got = jax.jit(lambda x, y: ikj.gemm(x, y, contract=contract))(a, b)
        np.testing.assert_array_equal(np.asarray(got), ik.gemm(a, b, contract=contract or ik.Contract.native()))
    for ta in (False, True):
        for tb in (False, True):
            x, y = (a.T.copy() if ta else a), (b.T.copy() if tb else b)
            loss = lambda p, q: jnp.sum(jnp.sin(ikj.gemm(p, q, trans_a=ta, trans_b=tb)))  # noqa: E731
            exact = lambda p, q: jnp.sum(jnp.sin((p.T if ta else p) @ (q.T if tb else q)))  # noqa: E731
            for got, want in zip(jax.grad(loss, (0, 1))(x, y), jax.grad(exact, (0, 1))(x, y)):
                np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12, atol=1e-12)
    batched = jax.vmap(ikj.gemm)(np.stack([a, 2 * a]), np.stack([b, b]))
    np.testing.assert_array_equal(np.asarray(batched[1]), ik.gemm(2 * a, b))
    with pytest.raises(TypeError, match="float64"):
        ikj.gemm(a.astype(np.float32), b.astype(np.float32))
    with pytest.raises(ValueError, match="inner dimensions"):
        ikj.gemm(a, a)


@pytest.mark.parametrize("to", ["float8_e4m3fn", "int4", "mxfp4", "nvfp4"])
def test_fwt_quantize_equals_the_package_call(rng, to):
    x = rng.standard_normal((3, 4, 256)).astype(np.float32)
    kw = dict(to=to, block=128, signs=5, **({} if to in ("mxfp4", "nvfp4") else {"group": 64}))
    got = jax.jit(lambda v: ikj.fwt_quantize(v, **kw))(jax.device_put(x, CPU))
    want = ik.fwt_quantize(x, **kw)
    np.testing.assert_array_equal(np.asarray(got[0]), want[0])
    flat = lambda s: s if isinstance(s, tuple) else (s,)  # noqa: E731
    for g, w in zip(flat(got[1]), flat(want[1])):
        np.testing.assert_array_equal(np.asarray(g), w)
    # each slice its own call's (nvfp4: its tensor scale)
    mapped = jax.vmap(lambda v: ikj.fwt_quantize(v, **kw)[0])(jax.device_put(x, CPU))
    want_each = np.stack([ik.fwt_quantize(v, **kw)[0] for v in x])
    np.testing.assert_array_equal(np.asarray(mapped), want_each)
    swizzled = ikj.fwt_quantize(x[0], **kw, scale_layout="swizzled-128x4")
    np.testing.assert_array_equal(np.asarray(flat(swizzled[1])[0]),
                                  flat(ik.fwt_quantize(x[0], **kw, scale_layout="swizzled-128x4")[1])[0])


@pytest.mark.gpu
def test_on_the_gpu_equals_the_package_transform(rng):
    try:
        gpu = jax.devices("gpu")[0]
    except RuntimeError:
        pytest.skip("JAX has no GPU backend here (pip install 'jax[cuda13]')")
    x = rng.standard_normal((64, 4096)).astype(np.float32)
    got = jax.jit(lambda a: ikj.fwt(a, normalized=True))(jax.device_put(x, gpu))
    assert got.devices() == {gpu}
    want = ik.fwt(x, normalized=True)
    np.testing.assert_allclose(np.asarray(got), want, rtol=0, atol=1e-5 * np.abs(want).max())
    grad = jax.grad(lambda a: jnp.sum(ikj.fwt(a, block=128) ** 2))(jax.device_put(x[:4], gpu))
    np.testing.assert_allclose(np.asarray(grad), 2 * 128 * x[:4], rtol=1e-4, atol=1e-3)
    a, b = rng.standard_normal((300, 400)), rng.standard_normal((400, 200))
    got = jax.jit(ikj.gemm)(jax.device_put(a, gpu), jax.device_put(b, gpu))
    np.testing.assert_array_equal(np.asarray(got), ik.gemm(a, b))  # emulated elements: the CPU's, bit for bit
    for to in ("float8_e4m3fn", "nvfp4"):  # the CUDA path's codes: the host's bit for bit (a power-of-two rotation)
        head = np.ascontiguousarray(x[:8, :1024])
        got = jax.jit(lambda v: ikj.fwt_quantize(v, to=to, block=128, signs=9))(jax.device_put(head, gpu))
        want = ik.fwt_quantize(head, to=to, block=128, signs=9)
        np.testing.assert_array_equal(np.asarray(got[0]), want[0])
        flat = lambda s: s if isinstance(s, tuple) else (s,)  # noqa: E731
        for g, w in zip(flat(got[1]), flat(want[1])):
            np.testing.assert_array_equal(np.asarray(g), w)

