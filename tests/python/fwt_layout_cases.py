"""Inputs shared by the CPU and GPU tests of the FWT's axes, complex and integer dtypes and long rows:
arrays whose transformed axis is not the last, strided views, and exact integer references."""
import numpy as np

from ironkernels.reference import fwt_reference

from fwt_helpers import BF16, COMPUTE_EPS, UNIT_ROUNDOFF, np_dtype

INT_DTYPES = ["int32", "int64"]
COMPLEX_DTYPES = ["complex64", "complex128"]
REAL_OF = {"complex64": "float32", "complex128": "float64"}

# (shape, axis): the transformed axis first, in the middle, last; inner extents below, at and above
# one 16-byte vector, odd ones, and a size-1 dimension.
AXIS_CASES = [
    ((16, 3), 0),
    ((64, 1), 0),
    ((5, 32, 7), 1),
    ((3, 128, 4), 1),
    ((2, 256, 16), -2),
    ((1024, 8), 0),
    ((2, 8, 3, 5), 1),
    ((4096, 2), 0),
    ((3, 2, 2048, 32), 2),
]


def random_array(rng, shape, dtype):
    if dtype in INT_DTYPES:
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    if dtype in COMPLEX_DTYPES:
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(np.float32).astype(np_dtype(dtype))


def assert_transform(got, x, dtype, axis=-1, scale=1.0, roundings=1):
    """Integers: equal to the exact reference. Floating and complex: every element (each part)
    within the contract's bound around the float64 reference, normalised per line of the axis.
    `roundings` > 1: a 16-bit result rounded to its type between passes, each rounding an error of
    up to u times the line's RMS carried through the later passes (orthogonal up to their scale)."""
    got = np.asarray(got)
    ref = fwt_reference(np.asarray(x) if dtype != "bfloat16" else np.asarray(x).astype(np.float64), scale, axis)
    if dtype in INT_DTYPES:
        assert got.dtype == np.dtype(dtype)
        assert np.array_equal(got, ref), "integer transform is not exact"
        return
    real = REAL_OF.get(dtype, dtype)
    parts = [(got.real, ref.real), (got.imag, ref.imag)] if dtype in COMPLEX_DTYPES else [(got, ref)]
    line_norm = np.sqrt(np.sum(np.abs(ref) ** 2, axis=axis, keepdims=True))
    bound = UNIT_ROUNDOFF[real] * np.abs(ref) + COMPUTE_EPS[real] * line_norm + 1e-300
    if roundings > 1:
        rms = line_norm / np.sqrt(ref.shape[axis])
        bound = bound + 4 * (roundings - 1) * UNIT_ROUNDOFF[real] * rms
    for g, r in parts:
        g = np.asarray(g).astype(np.float64)
        assert np.isfinite(g).all(), "non-finite output (unwritten element or overflow)"
        worst = np.max(np.abs(g - r) / bound) if r.size else 0.0
        assert worst <= 1.0, f"{dtype}: error {worst:.3g}x the allowed bound"
