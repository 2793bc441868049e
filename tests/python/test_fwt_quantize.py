"""fwt_quantize on the host: every format's codes and scales bit for bit those of an independent
quantiser (ironkernels.reference.quantize_reference: ml_dtypes' casts) applied to the rotated values,
for every input dtype, rotation block, scale group and signs; dequantize within each format's rounding;
non-finite and zero groups; every refusal before anything is written."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ironkernels as ik
from ironkernels.reference import fwt_reference, quantize_reference

from fwt_helpers import np_dtype

FORMATS = ["float8_e4m3fn", "float8_e5m2", "int8", "int4", "mxfp4", "nvfp4"]
FIXED = {"mxfp4": 32, "nvfp4": 16}
PACKED = {"int4", "mxfp4", "nvfp4"}


def rotated(x, block=None, signs=None, normalized=True):
    """The float32 values fwt_quantize quantises: x's sign-flipped rows through the library's fwt (in
    float32 from 16-bit input, in float64 then rounded from float64), checked against the textbook
    rotation (fwt_reference on each block, float64) within float32's rounding, so that the block,
    normalisation and signs are wired independently of the library."""
    wide = np.asarray(x).astype(np.float64 if np.asarray(x).dtype == np.float64 else np.float32)
    if signs is not None:
        wide = wide * signs
    r = ik.fwt(wide, block=block, normalized=normalized).astype(np.float32)
    n = wide.shape[-1]
    b = block or n
    if b & (b - 1) == 0 and np.isfinite(wide).all():
        blocks = np.asarray(wide, np.float64).reshape(wide.shape[:-1] + (n // b, b))
        exact = fwt_reference(blocks, b ** -0.5 if normalized else 1.0).reshape(wide.shape)
        norm = np.sqrt(np.sum(exact.reshape(blocks.shape) ** 2, axis=-1, keepdims=True))
        tol = (2e-6 * np.abs(exact.reshape(blocks.shape)) + 2e-6 * norm).reshape(wide.shape) + b * 2.0**-149  # (subnormals)
        assert np.all(np.abs(r - exact) <= tol), "the rotation is not H · (signs ∘ x) per block"
    return r


def unpack(q, to):
    q = np.asarray(q)
    if to not in PACKED:
        return q
    return np.stack([q & 0xF, q >> 4], axis=-1).reshape(q.shape[:-1] + (2 * q.shape[-1],))


def assert_matches_reference(x, to, block=None, group=None, signs=None, normalized=True):
    q, s = ik.fwt_quantize(x, to=to, block=block, group=group, signs=signs, normalized=normalized)
    rng_signs = None
    if isinstance(signs, int):
        rng_signs = ik.rademacher_signs(np.asarray(x).shape[-1], signs)
    elif signs is not None:
        rng_signs = np.asarray(signs)
    r = rotated(x, block, rng_signs, normalized)
    g = FIXED.get(to, group or r.shape[-1])
    ref = quantize_reference(r, to, g)
    assert q.dtype == (np.int8 if to == "int8" else np.uint8)
    np.testing.assert_array_equal(unpack(q, to), ref[0])
    block_scales = s[0] if to == "nvfp4" else s
    np.testing.assert_array_equal(np.asarray(block_scales).view(np.uint32 if block_scales.dtype == np.float32 else np.uint8),
                                  np.asarray(ref[1]).view(np.uint32 if block_scales.dtype == np.float32 else np.uint8))
    if to == "nvfp4":
        assert s[1].dtype == np.float32 and s[1].shape == (1,) and s[1][0] == ref[2]
    return q, s, r


@pytest.mark.parametrize("to", FORMATS)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("shape,block,group", [((8, 256), None, None), ((3, 5, 128), 32, 32), ((16, 4096), 128, 128),
                                               ((4, 12 * 64), 64, 64), ((2, 1024), 16, 64), ((6, 96), None, 32)])
def test_codes_and_scales_equal_the_reference(rng, to, dtype, shape, block, group):
    if to in FIXED and shape[-1] % FIXED[to]:
        pytest.skip("N not a multiple of the format's block")
    x = (rng.standard_normal(shape) * np.exp(rng.standard_normal(shape[:-1] + (1,)))).astype(np.float32)
    x = x.astype(np_dtype(dtype))
    assert_matches_reference(x, to, block, None if to in FIXED else group)
    assert_matches_reference(x, to, block, None if to in FIXED else group, signs=7)


@pytest.mark.parametrize("to", FORMATS)
def test_dequantize_is_within_the_formats_rounding(rng, to):
    """|dequantize − r| per element: half a unit of the format at the element's magnitude (relative
    2^-4, 2^-3, 2^-2 for E4M3, E5M2, E2M1; half the quantum below the normal range; half a unit for
    integers), scaled back, plus what saturation cut off (MX's shared exponent leaves values up to 8
    units); an NVFP4 block whose scale underflows E4M3 next to the tensor's largest is all zeros."""
    x = rng.standard_normal((32, 512)).astype(np.float32) * 3
    x[3] *= 1e-30  # a tiny row
    q, s = ik.fwt_quantize(x, to=to, signs=11)
    r = rotated(x, signs=ik.rademacher_signs(512, 11))
    back = ik.dequantize(q, s, to=to)
    assert back.shape == r.shape and back.dtype == np.float32
    group = FIXED.get(to, 512)
    g = r.reshape(32, -1, group)
    if to == "nvfp4":
        scale = (np.asarray(s[0]).view(__import__("ml_dtypes").float8_e4m3fn).astype(np.float32) * s[1][0])[..., None]
    elif to == "mxfp4":
        scale = np.ldexp(np.float32(1), s.astype(np.int32) - 127)[..., None]
    else:
        scale = np.asarray(s)[..., None]
    rel, quantum, top = {"float8_e4m3fn": (2**-4, 2**-9, 448), "float8_e5m2": (2**-3, 2**-16, 57344),
                         "int8": (0, 1, 127), "int4": (0, 1, 7), "mxfp4": (2**-2, 0.5, 6), "nvfp4": (2**-2, 0.5, 6)}[to]
    with np.errstate(divide="ignore", invalid="ignore"):
        units = np.where(scale > 0, np.abs(g) / scale, 0)
    bound = (np.maximum(rel * units, quantum / 2) + np.maximum(units - top, 0)) * scale * (1 + 2**-20) + 1e-45
    if to == "nvfp4":  # a block scale below E4M3's smallest half step (2^-10) relative to the tensor's: codes 0
        bound = np.where(scale > 0, bound, 6 * 2.0**-10 * s[1][0] * (1 + 2**-20))
    assert (np.abs(back.reshape(g.shape) - g) <= bound).all()


@pytest.mark.parametrize("to", FORMATS)
def test_zero_and_non_finite_groups(rng, to):
    """A group of zeros: codes 0 (scale 1; MX 2^-127; NV 0). A group holding NaN or an infinity: scale NaN
    (MX code 255, NV its NaN code), codes 0 (float8: NaN), and the other groups untouched by it."""
    x = rng.standard_normal((4, 64)).astype(np.float32)
    x[1] = 0.0
    x[2, 5] = np.inf
    x[3, 7] = np.nan
    x[0] *= 1e-3  # small values next to an infinity (nvfp4's tensor scale ignores the infinity)
    q, s, r = assert_matches_reference(x, to, block=16, group=None if to in FIXED else 16)
    assert not unpack(q, to)[1].any()
    assert unpack(q, to)[0].any(), "a finite row lost to another row's infinity"


@pytest.mark.parametrize("to", ["float8_e4m3fn", "float8_e5m2", "int8", "int4"])
def test_groups_too_small_for_qmax_over_amax(rng, to):
    """Groups whose largest magnitude is so small that qmax / amax overflows float32 (below about
    1e-36, subnormals included) are quantised like any other: each code is v · qmax / amax rounded
    (worked in float64 here), not the largest code for every element."""
    import ml_dtypes

    x = rng.standard_normal((4, 64)).astype(np.float32)
    x *= np.float32([1e-37, 1e-40, 3e-43, 1.0])[:, None]
    q, s, r = assert_matches_reference(x, to, block=16, group=16)
    g = r.astype(np.float64).reshape(4, 4, 16)
    qmax = {"float8_e4m3fn": 448, "float8_e5m2": 57344, "int8": 127, "int4": 7}[to]
    y = g * qmax / np.abs(g).max(axis=-1, keepdims=True)
    codes = unpack(q, to).reshape(g.shape)
    if to.startswith("float8"):
        got = codes.astype(np.uint8).view(getattr(ml_dtypes, to)).astype(np.float64)
        half_unit = np.maximum(np.abs(y) * (2.0**-4 if to == "float8_e4m3fn" else 2.0**-3), 2.0**-10 if to == "float8_e4m3fn" else 2.0**-17)
    else:
        got = codes.astype(np.int64)
        got = np.where(got > 7, got - 16, got) if to == "int4" else got
        half_unit = 0.5
    assert (np.abs(got - y) <= half_unit * (1 + 1e-5)).all()
    assert (np.abs(got).max(axis=-1) == qmax).all()


def test_nvfp4_empty_and_tiny_tensors():
    """No values: the tensor scale of a zero tensor (1). Values so small that 2688 / amax overflows:
    the encode scale stops at FLT_MAX, zero groups stay zero (not NaN)."""
    q, (s, t) = ik.fwt_quantize(np.zeros((0, 16), np.float32), to="nvfp4")
    assert q.shape == (0, 8) and t[0] == 1.0
    x = np.zeros((2, 32), np.float32)
    x[0, 3] = 1e-37
    q, (s, t) = ik.fwt_quantize(x, to="nvfp4", normalized=False)
    assert np.isfinite(t[0]) and t[0] > 0 and (s != 0x7F).all()


def test_signs_are_seeded_and_given_alike(rng):
    s = ik.rademacher_signs(4096, 2024)
    assert s.dtype == np.int8 and set(np.unique(s)) == {-1, 1} and abs(int(s.sum())) < 300
    np.testing.assert_array_equal(s, ik.rademacher_signs(4096, 2024))
    with pytest.raises(ValueError, match="n = -5"):
        ik.rademacher_signs(-5, 1)
    assert not np.array_equal(s, ik.rademacher_signs(4096, 2025))
    def splitmix64(z):  # the documented generator, in Python integers
        z = (z + 0x9E3779B97F4A7C15) % 2**64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2**64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2**64
        return z ^ (z >> 31)

    seed = 2**64 - 3  # wraps past 2^64
    assert ik.rademacher_signs(8, seed).tolist() == [-1 if splitmix64((seed + j) % 2**64) & 1 else 1 for j in range(8)]
    x = rng.standard_normal((3, 4096)).astype(np.float32)
    a, sa = ik.fwt_quantize(x, to="float8_e4m3fn", block=128, signs=2024)
    b, sb = ik.fwt_quantize(x, to="float8_e4m3fn", block=128, signs=s)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(sa, sb)


def test_into_given_arrays_and_torch_tensors(rng):
    x = rng.standard_normal((5, 128)).astype(np.float32)
    q, s = np.zeros((5, 64), np.uint8), np.zeros((5, 4), np.uint8)
    block_scales, tensor = np.zeros((5, 8), np.uint8), np.zeros(1, np.float32)
    got, gs = ik.fwt_quantize(x, to="nvfp4", out=q, scales=(block_scales, tensor))
    assert got is q and gs[0] is block_scales and gs[1] is tensor and q.any()
    got, gs = ik.fwt_quantize(x, to="mxfp4", out=np.zeros((5, 64), np.uint8), scales=s)
    assert gs is s
    torch = pytest.importorskip("torch")
    tq, ts = ik.fwt_quantize(torch.from_numpy(x), to="float8_e4m3fn", group=32)
    assert isinstance(tq, torch.Tensor) and tq.dtype == torch.uint8 and ts.dtype == torch.float32
    nq, ns = ik.fwt_quantize(x, to="float8_e4m3fn", group=32)
    np.testing.assert_array_equal(tq.numpy(), nq)


def test_refusals_write_nothing(rng):
    x = rng.standard_normal((2, 64)).astype(np.float32)
    q, s = np.full((2, 64), 7, np.uint8), np.full((2, 1), 7.0, np.float32)
    cases = [
        (dict(to="float8"), ValueError, "to='float8'"),
        (dict(to="int8"), TypeError, "q has dtype uint8; accepted: int8"),
        (dict(to="float8_e4m3fn", block=48), ValueError, "rotation's length 48"),
        (dict(to="float8_e4m3fn", group=24), ValueError, "group = 24"),
        (dict(to="mxfp4", group=16), ValueError, "blocks are 32"),
        (dict(to="float8_e4m3fn", signs=np.ones(63)), ValueError, "signs"),
        (dict(to="float8_e4m3fn", signs=np.full(64, 2)), ValueError, "signs"),
        (dict(to="float8_e4m3fn", block=0), ValueError, "block = 0"),
        (dict(to="float8_e4m3fn", block=16.0), TypeError, "block must be an int"),
    ]
    for kwargs, error, match in cases:
        with pytest.raises(error, match=match):
            ik.fwt_quantize(x, out=q, scales=s, **kwargs)
    with pytest.raises(ValueError, match="scales has shape"):
        ik.fwt_quantize(x, to="float8_e4m3fn", out=q, scales=np.zeros((2, 2), np.float32))
    with pytest.raises(ValueError, match="overlap"):
        ik.fwt_quantize(x, to="float8_e4m3fn", out=q, scales=q.reshape(-1)[:8].view(np.float32).reshape(2, 1))
    with pytest.raises(ValueError, match="not C-contiguous"):
        ik.fwt_quantize(np.asfortranarray(np.ones((4, 64), np.float32)), to="int8")
    with pytest.raises(TypeError, match="x has dtype int32"):
        ik.fwt_quantize(np.ones((2, 64), np.int32), to="int8")
    assert (q == 7).all() and (s == 7.0).all()


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_random_shapes_formats_and_scales(data):
    """Hypothesis: random formats, row counts, N = 2^k or m·2^k, blocks and groups, values spanning
    2^±40 per row, zeros and ties: always the reference's codes and scales."""
    to = data.draw(st.sampled_from(FORMATS))
    n = data.draw(st.sampled_from([32, 64, 96, 128, 160, 224, 512, 1024, 12 * 32]))
    blocks = [b for b in (None, 16, 32, 64, 128, 12, 20, 28, 96) if b is None or (n % b == 0 and b <= n)]
    block = data.draw(st.sampled_from(blocks))
    groups = [g for g in (None, 16, 32, 64, n) if g is None or n % g == 0] if to not in FIXED else [None]
    group = data.draw(st.sampled_from(groups))
    if to in FIXED and n % FIXED[to]:
        return
    rows = data.draw(st.integers(1, 6))
    seed = data.draw(st.integers(0, 2**32))
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, n)) * np.ldexp(1.0, rng.integers(-40, 40, size=(rows, 1)))
    if data.draw(st.booleans()):
        x = np.round(x * 4) / 4  # ties after the rotation
    x = x.astype(data.draw(st.sampled_from([np.float32, np.float64])))
    assert_matches_reference(x, to, block, group, signs=seed if data.draw(st.booleans()) else None,
                             normalized=data.draw(st.booleans()))


@pytest.mark.parametrize("to", ["float8_e4m3fn", "float8_e5m2", "mxfp4"])
def test_dequantize_decodes_every_code_as_ml_dtypes_does(to):
    """dequantize's own code tables (the package does not need ml_dtypes) against ml_dtypes' casts."""
    import ml_dtypes

    if to == "mxfp4":
        q = np.arange(256, dtype=np.uint8).reshape(8, 32)  # every pair of E2M1 codes, scale 2^0
        got = ik.dequantize(q, np.full((8, 2), 127, np.uint8), to=to)
        want = unpack(q, to).astype(np.uint8).view(ml_dtypes.float4_e2m1fn).astype(np.float32)
    else:
        q = np.arange(256, dtype=np.uint8).reshape(1, 256)
        got = ik.dequantize(q, np.ones((1, 1), np.float32), to=to)
        want = q.view(getattr(ml_dtypes, to)).astype(np.float32)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("to,rows,n", [("mxfp4", 300, 256), ("nvfp4", 129, 96), ("float8_e4m3fn", 5, 64)])
def test_swizzled_scales_are_the_row_major_ones_in_128x4_tiles(rng, to, rows, n):
    """scale_layout="swizzled-128x4": the same scales, entry (r, c) at tile (r // 128, c // 4), offset
    (r % 32)·16 + (r // 32 % 4)·4 + c % 4 (cuBLASLt's block-scale layout, built here independently by
    reshapes), zeros in the padding; the same codes; dequantize reads it back."""
    x = rng.standard_normal((rows, n)).astype(np.float32)
    group = None if to in FIXED else 16
    q, s = ik.fwt_quantize(x, to=to, group=group)
    qs, ss = ik.fwt_quantize(x, to=to, group=group, scale_layout="swizzled-128x4")
    np.testing.assert_array_equal(q, qs)
    flat_rm, flat_sw = (s[0], ss[0]) if to == "nvfp4" else (s, ss)
    g = flat_rm.shape[-1]
    padded = np.zeros((-(-rows // 128) * 128, -(-g // 4) * 4), flat_rm.dtype)
    padded[:rows, :g] = flat_rm
    tiles = padded.reshape(padded.shape[0] // 128, 128, padded.shape[1] // 4, 4).transpose(0, 2, 1, 3)
    want = tiles.reshape(-1, 4, 32, 4).transpose(0, 2, 1, 3).reshape(-1)
    assert flat_sw.shape == want.shape
    np.testing.assert_array_equal(flat_sw.view(np.uint8), want.view(np.uint8))
    np.testing.assert_array_equal(ik.dequantize(qs, ss, to=to, scale_layout="swizzled-128x4", group=group),
                                  ik.dequantize(q, s, to=to))
    if group is not None:
        with pytest.raises(ValueError, match="needs the group"):
            ik.dequantize(qs, ss, to=to, scale_layout="swizzled-128x4")


def test_nvfp4_with_a_calibrated_global_amax(rng):
    """global_amax: the tensor scale from the caller's amax (values above it saturate), the codes and
    block scales the reference quantiser's with that amax; refused for other formats and bad values."""
    x = (rng.standard_normal((16, 256)) * 2).astype(np.float32)
    r = rotated(x, 128)
    for amax in (float(np.abs(r).max()), 1.5, 1e3):
        q, (s, t) = ik.fwt_quantize(x, to="nvfp4", block=128, global_amax=amax)
        ref = quantize_reference(r, "nvfp4", 16, global_amax=amax)
        np.testing.assert_array_equal(unpack(q, "nvfp4"), ref[0])
        np.testing.assert_array_equal(np.asarray(s), ref[1])
        assert t[0] == ref[2]
    q, s = np.full((16, 128), 7, np.uint8), (np.full((16, 16), 7, np.uint8), np.full(1, 7, np.float32))
    for to, amax, error in (("int8", 2.0, ValueError), ("nvfp4", -1.0, ValueError), ("nvfp4", float("inf"), ValueError),
                            ("nvfp4", 0.0, ValueError), ("nvfp4", "2", TypeError)):
        with pytest.raises(error, match="global_amax"):
            ik.fwt_quantize(x, to=to, global_amax=amax, out=q if to == "nvfp4" else None,
                            scales=s if to == "nvfp4" else None)
    assert (q == 7).all() and (s[0] == 7).all() and (s[1] == 7).all()
