"""fwt_quantize on CUDA arrays: codes, scales and nvfp4's tensor scale bit for bit the host path's for
every format, input dtype, rotation block, scale group, signs and scale layout where the rotation is a
power of two (the two rotations agree bit for bit there); for m·2^k rotations the host quantiser on the
device's own rotation; into given arrays; refusals before any write."""
import numpy as np
import pytest

import ironkernels as ik
from ironkernels.reference import quantize_reference

from device_arrays import get
from fwt_helpers import np_dtype

pytestmark = pytest.mark.gpu

FORMATS = ["float8_e4m3fn", "float8_e5m2", "int8", "int4", "mxfp4", "nvfp4"]
FIXED = {"mxfp4": 32, "nvfp4": 16}


def both(dev, x, **kw):
    """(device result, host result) as NumPy arrays: q, scales and, for nvfp4, the tensor scale."""
    def flat(r):
        q, s = r
        return [get(q)] + ([get(s[0]), get(s[1])] if isinstance(s, tuple) else [get(s)])
    return flat(ik.fwt_quantize(dev.put(x), **kw)), flat(ik.fwt_quantize(x, **kw))


@pytest.mark.parametrize("to", FORMATS)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("shape,block,group,signs,layout",
                         [((8, 256), None, None, None, "row-major"), ((3, 5, 128), 32, 32, 7, "row-major"),
                          ((130, 512), 128, 128, None, "swizzled-128x4"), ((4, 2048), 16, 64, 3, "row-major")])
def test_equals_the_host_path(dev, rng, to, dtype, shape, block, group, signs, layout):
    x = (rng.standard_normal(shape) * 4).astype(np_dtype(dtype))
    kw = dict(to=to, block=block, signs=signs, scale_layout=layout, group=None if to in FIXED else group)
    got, want = both(dev, x, **kw)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("to", FORMATS)
def test_zero_non_finite_and_empty(dev, rng, to):
    x = rng.standard_normal((4, 64)).astype(np.float32)
    x[1] = 0.0
    x[2, 5] = np.inf
    x[3, 7] = np.nan
    got, want = both(dev, x, to=to, block=16)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.view(np.uint8), w.view(np.uint8))
    got, want = both(dev, np.zeros((0, 64), np.float32), to=to)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_factor_rotation_is_the_host_quantiser_on_the_device_rotation(dev, rng):
    """m·2^k: the CUDA transform may round differently from the host's; the codes are the reference
    quantiser's on the device's own rotated values."""
    x = rng.standard_normal((6, 96)).astype(np.float32)
    q, s = ik.fwt_quantize(dev.put(x), to="int8", group=48)
    r = get(ik.fwt(dev.put(x), normalized=True))
    want_q, want_s = quantize_reference(r, "int8", 48)
    np.testing.assert_array_equal(get(q), want_q)
    np.testing.assert_array_equal(get(s), want_s)


def test_into_given_arrays_and_refusals(dev, rng):
    x = dev.put(rng.standard_normal((4, 128)).astype(np.float32))
    q, s = dev.empty((4, 128), "uint8"), dev.empty((4, 1), "float32")
    got_q, got_s = ik.fwt_quantize(x, to="float8_e4m3fn", out=q, scales=s)
    want_q, want_s = ik.fwt_quantize(get(x), to="float8_e4m3fn")
    np.testing.assert_array_equal(get(q), want_q)
    np.testing.assert_array_equal(get(s), want_s)
    with pytest.raises(ValueError, match="scales is on .*cpu.* but x is on .*cuda"):
        ik.fwt_quantize(x, to="int8", scales=np.zeros((4, 1), np.float32))
    with pytest.raises(ValueError, match="group = 3"):
        ik.fwt_quantize(x, to="int8", group=3)


def test_fp8_codes_feed_scaled_mm():
    """The FP8 codes and row scales straight into torch._scaled_mm: the product of the dequantised
    operands (to bfloat16's rounding), and, the rotation being orthonormal along k, a·wᵀ within FP8's."""
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
        pytest.skip("this PyTorch has no torch._scaled_mm / float8_e4m3fn")
    gen = torch.Generator(device="cuda").manual_seed(7)
    a = torch.randn(128, 512, device="cuda", generator=gen)
    w = torch.randn(64, 512, device="cuda", generator=gen)
    (qa, sa), (qw, sw) = (ik.fwt_quantize(v, to="float8_e4m3fn") for v in (a, w))  # one scale per row
    fa, fw = qa.view(torch.float8_e4m3fn), qw.view(torch.float8_e4m3fn)
    got = torch._scaled_mm(fa, fw.t(), scale_a=sa, scale_b=sw.t(), out_dtype=torch.bfloat16).float()
    dequantised = (fa.float() * sa) @ (fw.float() * sw).t()
    torch.testing.assert_close(got, dequantised, rtol=2 ** -7, atol=1e-2 * dequantised.abs().max().item())
    exact = a @ w.t()
    assert ((got - exact).norm() / exact.norm()).item() < 0.05
