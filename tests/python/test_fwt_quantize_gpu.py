"""fwt_quantize on CUDA arrays: the single-pass kernel's codes, scales and nvfp4 tensor scale bit for
bit the host path's (it rotates in the host's order) for every format, 16-bit and float32 input,
rotation and group from 2 to 2^15, signs and scale layout, and blocks only partly filled; the two-pass
path (float64, m·2^k, a caller's matrix, unaligned arrays, or forced) the host quantiser on the
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
    if dtype == "float64":  # the two-pass path: the quantiser on the device's rotation
        assert_device_rotation_quantised(dev, x, **kw)
        return
    got, want = both(dev, x, **kw)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def assert_device_rotation_quantised(dev, x, to, block=None, signs=None, scale_layout="row-major", group=None, xd=None):
    """The device's codes (of x, or of xd: x on the device) are the reference quantiser's on the
    device's own rotation (ik.fwt on the device, in float32 from 16-bit input, float64 then rounded
    from float64)."""
    n = x.shape[-1]
    wide = x.astype(np.float64 if x.dtype == np.float64 else np.float32)
    if signs is not None:
        wide = wide * (ik.rademacher_signs(n, signs) if isinstance(signs, int) else np.asarray(signs))
    r = np.asarray(get(ik.fwt(dev.put(wide), block=block, normalized=True))).astype(np.float32)
    g = FIXED.get(to, group or n)
    ref = quantize_reference(r, to, g)
    q, s = ik.fwt_quantize(dev.put(x) if xd is None else xd, to=to, block=block, signs=signs, scale_layout=scale_layout,
                           group=group)
    got_q = np.asarray(get(q))
    if to in ("int4", "mxfp4", "nvfp4"):
        got_q = np.stack([got_q & 0xF, got_q >> 4], axis=-1).reshape(got_q.shape[:-1] + (2 * got_q.shape[-1],))
    np.testing.assert_array_equal(got_q, ref[0])
    block_scales = np.asarray(get(s[0] if to == "nvfp4" else s))
    if scale_layout != "row-major":
        from ironkernels._fwt_quantize import unswizzle_scales

        block_scales = unswizzle_scales(block_scales, int(np.prod(x.shape[:-1])), n // g).reshape(ref[1].shape)
    np.testing.assert_array_equal(block_scales.view(np.uint8), np.asarray(ref[1]).view(np.uint8))


SPANS = [(2, 2), (16, 16), (32, 32), (128, 128), (128, 8), (512, 512), (1024, 64), (4096, 4096), (8192, 16),
         (1 << 14, 1 << 14), (1 << 15, 1 << 15), (1 << 15, 16), (16, 1 << 15), (256, 1024),
         (12 * 64, 64), (20 * 32, 32), (28 * 32, 16), (28 * 512, 128), (12 * 1024, 1024)]  # m·2^k: the H_m stage


@pytest.mark.parametrize("to", FORMATS)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("rotation,group", SPANS)
def test_single_pass_spans(dev, rng, to, dtype, rotation, group):
    """Every regime of the single-pass kernel: rotations in registers, across lanes, through the corner
    turn and (m·2^k) through the H_m stage; groups inside a thread's run, across lanes and across
    warps; a row count that leaves the last block partly empty; signs and the swizzled layout on
    alternate cases."""
    if to in FIXED:
        group = FIXED[to]
    n = max(rotation, group, 64)
    rows = max(1, (3 << 15) // n) + 1
    x = (rng.standard_normal((rows, n)) * np.exp(rng.standard_normal((rows, 1)))).astype(np_dtype(dtype))
    x[rows // 2, n // 3] = 0.0
    odd = (rotation + group) % 3 == 0
    kw = dict(to=to, block=rotation if rotation < n else None, group=None if to in FIXED else group,
              signs=5 if odd else None, scale_layout="swizzled-128x4" if odd else "row-major")
    got, want = both(dev, x, **kw)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.view(np.uint8), w.view(np.uint8))


@pytest.mark.parametrize("to", ["float8_e4m3fn", "int4", "nvfp4"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_rows_of_an_odd_multiple_of_16(dev, rng, to, dtype):
    """16-bit rows of 80 (16·5: one run of 16 past a multiple of 32) in blocks of 16, bit-equal to the host."""
    x = (rng.standard_normal((1000, 80)) * 3).astype(np_dtype(dtype))
    kw = dict(to=to, block=16, group=None if to in FIXED else 16)
    got, want = both(dev, x, **kw)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.view(np.uint8), w.view(np.uint8))


TWO_PASS = """
import numpy as np, ironkernels as ik
from device_arrays import pick
from test_fwt_quantize_gpu import assert_device_rotation_quantised
dev, rng = pick(), np.random.default_rng(4)
for to in ("float8_e4m3fn", "int4", "mxfp4", "nvfp4"):
    for dtype, shape, block in (("float32", (64, 4096), 128), ("bfloat16", (9, 1 << 15), None)):
        x = (rng.standard_normal(shape) * 3).astype(np.float32)
        if dtype == "bfloat16":
            import ml_dtypes
            x = x.astype(ml_dtypes.bfloat16)
        assert_device_rotation_quantised(dev, x, to, block=block, signs=3)
print("ok")
"""


def test_two_pass_path_forced():
    """IRONKERNELS_FWT_QUANTIZE_TWO_PASS=1: the same calls through the two-pass path."""
    import os
    import subprocess
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, IRONKERNELS_DEV_OVERRIDES="1", IRONKERNELS_FWT_QUANTIZE_TWO_PASS="1")
    env["PYTHONPATH"] = os.pathsep.join([here] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    done = subprocess.run([sys.executable, "-c", TWO_PASS], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]


@pytest.mark.parametrize("dtype,shape,block", [("bfloat16", (64, 4096), 128), ("float64", (8, 1024), None)])
def test_nvfp4_global_amax(dev, rng, dtype, shape, block):
    """nvfp4 with a calibrated global_amax (one read of x on the single-pass path; the two-pass path for
    float64): the host's codes, block scales and tensor scale."""
    x = (rng.standard_normal(shape) * 3).astype(np_dtype(dtype))
    for amax in (2.5, 40.0):
        kw = dict(to="nvfp4", block=block, global_amax=amax)
        got, want = both(dev, x, **kw)
        if dtype == "float64":  # the device's rotation may round differently: the tensor scale is the given one
            np.testing.assert_array_equal(got[2], want[2])
            continue
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.view(np.uint8), w.view(np.uint8))


def test_unaligned_rows_take_the_two_pass_path(dev, rng):
    """x starting 4 bytes into its allocation (not 16-byte aligned): the two-pass path, still the
    quantiser on the device's rotation."""
    flat = dev.put(rng.standard_normal(8 * 256 + 1).astype(np.float32))
    try:
        xd = flat[1:].reshape(8, 256)
    except (TypeError, AttributeError, NotImplementedError):
        pytest.skip("this array type has no offset views")
    assert_device_rotation_quantised(dev, np.asarray(get(xd)), "int8", block=128, xd=xd)


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


@pytest.mark.parametrize("to", FORMATS)
@pytest.mark.parametrize("rotation,group", [(16, 16), (128, 128), (4096, 128), (1 << 15, 16)])
def test_groups_below_the_scales_range(dev, rng, to, rotation, group):
    """Groups so small that qmax / amax overflows float32 (float32 subnormals and values near 1e-37)
    beside ordinary ones: the single pass's prescaled codes and its other regimes, the host's bit for bit."""
    n = max(rotation, 64)
    x = rng.standard_normal((8, n)).astype(np.float32)
    x *= np.float32([1e-37, 1e-40, 3e-43, 1.0, 1e-38, 1e-30, 0.0, 1e-44])[:, None]
    got, want = both(dev, x, to=to, block=rotation if rotation < n else None, group=None if to in FIXED else group)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.view(np.uint8), w.view(np.uint8))


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
