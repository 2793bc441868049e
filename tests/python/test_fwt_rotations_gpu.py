"""The rotation options on CUDA arrays: signs= bit for bit the transform of the signed input (the
signs pass is exact), a caller's hadamard= against the host path and the dense product, inverse=
giving x back, and fwt_quantize with a caller's matrix; outputs poisoned before each run."""
import numpy as np
import pytest

import ironkernels as ik

from device_arrays import get
from fwt_layout_cases import INT_DTYPES, random_array
from test_fwt_rotations import dense, equivalent, paley_one

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "complex64", "int32"])
@pytest.mark.parametrize("shape,axis,block", [((64, 4096), -1, None), ((8, 1 << 13), -1, 128), ((4, 512, 24), 1, 128),
                                              ((6, 960), -1, 20), ((3, 1 << 17), -1, None)])
def test_gpu_signs_are_the_transform_of_the_signed_input(dev, rng, dtype, shape, axis, block):
    x = random_array(rng, shape, dtype)
    n = shape[axis]
    where = [1] * len(shape)
    where[axis] = n
    signed = np.asarray(x) * ik.rademacher_signs(n, 9).reshape(where).astype(np.asarray(x).dtype)
    xd = dev.put(x)
    got = get(ik.fwt(xd, axis=axis, block=block, signs=9, out=dev.poisoned_like(xd)))
    want = get(ik.fwt(dev.put(signed), axis=axis, block=block))
    np.testing.assert_array_equal(np.asarray(got).view(np.uint8), np.asarray(want).view(np.uint8))
    ik.fwt(xd, axis=axis, block=block, signs=9, out=xd)  # in place
    np.testing.assert_array_equal(np.asarray(get(xd)).view(np.uint8), np.asarray(want).view(np.uint8))
    if dtype not in INT_DTYPES:
        # (normalized: the unnormalized 2^17-point transform of float16 overflows)
        forward = get(ik.fwt(dev.put(x), axis=axis, block=block, signs=9, normalized=True))
        back = get(ik.fwt(dev.put(forward), axis=axis, block=block, signs=9, inverse=True, normalized=True))
        wide = np.complex128 if "complex" in dtype else np.float64
        tol = {"float32": 1e-5, "complex64": 1e-5, "float64": 1e-12, "float16": 1e-2, "bfloat16": 6e-2}[dtype]
        err = np.abs(np.asarray(back).astype(wide) - np.asarray(x).astype(wide)).max()
        assert err <= tol * np.abs(np.asarray(x).astype(wide)).max()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64"])
@pytest.mark.parametrize("q,k,rows", [(3, 0, 7), (11, 3, 5), (19, 9, 3), (23, 6, 40)])
def test_gpu_callers_matrix(dev, rng, dtype, q, k, rows):
    """hadamard=H on CUDA: integers equal the host and the exact product; floating values within the
    16-bit or working precision's rounding of the dense product (the host's summation order, each
    factor rounded alike), and the inverse (Hᵀ) gives x back."""
    h = equivalent(rng, paley_one(q))
    n = (q + 1) << k
    x = random_array(rng, (rows, n), dtype)
    if dtype in INT_DTYPES:
        x = rng.integers(-1000, 1000, (rows, n)).astype(dtype)
    xd = dev.put(x)
    got = np.asarray(get(ik.fwt(xd, hadamard=h, out=dev.poisoned_like(xd))))
    cpu = np.asarray(ik.fwt(x, hadamard=h))
    if dtype in INT_DTYPES:
        np.testing.assert_array_equal(got, cpu)
        np.testing.assert_array_equal(got, np.asarray(x) @ dense(h, n).T.astype(np.int64))
        return
    exact = np.asarray(x).astype(np.float64) @ dense(h, n).T
    u = {"float32": 1e-6, "float64": 1e-15, "float16": 1e-3, "bfloat16": 8e-3}[dtype]
    scale = np.sqrt(n) * np.abs(np.asarray(x).astype(np.float64)).max()
    assert np.abs(got.astype(np.float64) - exact).max() <= 4 * u * scale
    assert np.abs(got.astype(np.float64) - cpu.astype(np.float64)).max() <= 4 * u * scale
    back = np.asarray(get(ik.fwt(dev.put(got), hadamard=h, inverse=True))).astype(np.float64)
    assert np.abs(back - np.asarray(x).astype(np.float64)).max() <= 8 * u * np.abs(np.asarray(x).astype(np.float64)).max() * 4


def test_gpu_fwt_quantize_with_a_callers_matrix(dev, rng):
    """The device's codes are the host quantiser's on the device's own rotation with that matrix."""
    from ironkernels.reference import quantize_reference

    h = equivalent(rng, paley_one(11))
    x = rng.standard_normal((64, 12 * 64)).astype(np.float32)
    xd = dev.put(x)
    r = np.asarray(get(ik.fwt(dev.put(x * ik.rademacher_signs(768, 2)), hadamard=h, block=192, normalized=True)))
    q, s = ik.fwt_quantize(xd, to="int8", hadamard=h, block=192, group=64, signs=2)
    ref_q, ref_s = quantize_reference(r.astype(np.float32), "int8", 64)[:2]
    np.testing.assert_array_equal(get(q), ref_q)
    np.testing.assert_array_equal(np.asarray(get(s)).view(np.uint32), np.asarray(ref_s, np.float32).view(np.uint32))
