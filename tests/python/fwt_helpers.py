"""Shared by the CPU and GPU FWT tests: inputs of every dtype and the accuracy contract."""
import numpy as np

from ironkernels.reference import fwt_reference

try:
    import ml_dtypes

    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover
    BF16 = None

DTYPES = ["float32", "float64", "float16"] + (["bfloat16"] if BF16 is not None else [])
# Unit roundoff of the storage type: the one rounding of the result that 16-bit types add.
UNIT_ROUNDOFF = {"float32": 2.0**-24, "float64": 2.0**-53, "float16": 2.0**-11, "bfloat16": 2.0**-8}
# Error of the computation itself relative to the row norm (float32 accumulation for 16-bit types).
COMPUTE_EPS = {"float32": 1e-6, "float64": 1e-14, "float16": 1e-6, "bfloat16": 1e-6}


def np_dtype(name):
    return BF16 if name == "bfloat16" else np.dtype(name)


def random_input(rng, shape, dtype):
    return rng.standard_normal(shape).astype(np.float32).astype(np_dtype(dtype))


def fwt_bound(ref, dtype):
    """Allowed |y - ref| per element: u_storage·|ref| + eps·‖output row‖₂."""
    out_norm = np.linalg.norm(ref, axis=-1, keepdims=True)  # = scale·√N·‖x‖ per row
    return UNIT_ROUNDOFF[dtype] * np.abs(ref) + COMPUTE_EPS[dtype] * out_norm + 1e-300


def assert_fwt_close(got, x, dtype, scale=1.0, other=None):
    """Every element of `got` within the contract of the float64 reference; with `other` (another
    implementation's result on the same x), also within twice that bound of it."""
    got64 = np.asarray(got).astype(np.float64)
    ref = fwt_reference(np.asarray(x).astype(np.float64), scale)
    assert np.isfinite(got64).all(), "non-finite output (unwritten element or overflow)"
    if not ref.size:
        return
    bound = fwt_bound(ref, dtype)
    worst = np.max(np.abs(got64 - ref) / bound)
    assert worst <= 1.0, f"{dtype}: error {worst:.3g}x the allowed bound"
    if other is not None:
        apart = np.max(np.abs(got64 - np.asarray(other).astype(np.float64)) / bound)
        assert apart <= 2.0, f"{dtype}: the two implementations differ by {apart:.3g}x the bound"
