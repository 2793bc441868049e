"""FWT on the CPU: against an explicit Hadamard matrix, algebraic identities, every dtype, layouts,
in place, and every error case (with nothing written)."""
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ironkernels
from ironkernels.reference import fwt_reference, hadamard_matrix

from fwt_helpers import BF16, DTYPES, assert_fwt_close, np_dtype, random_input


@pytest.mark.parametrize("log_n", range(0, 13))
def test_matches_explicit_hadamard_matrix_float64(rng, log_n):
    n = 1 << log_n
    x = rng.standard_normal((5, n))
    got = ironkernels.fwt(x)
    want = x @ hadamard_matrix(n).T
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * np.sqrt(n) * np.abs(x).max())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("log_n", [0, 1, 2, 3, 4, 5, 7, 9, 10, 12])
def test_every_dtype_against_reference(rng, dtype, log_n):
    x = random_input(rng, (7, 1 << log_n), dtype)
    y = ironkernels.fwt(x)
    assert type(y) is np.ndarray and y.dtype == x.dtype and y.shape == x.shape
    assert_fwt_close(y, x, dtype)


@pytest.mark.parametrize("log_n", [13, 14, 16, 18, 20])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_long_rows_take_the_blocked_path(rng, dtype, log_n):
    x = random_input(rng, (2, 1 << log_n), dtype)
    assert_fwt_close(ironkernels.fwt(x), x, dtype)


def test_hadamard_squared_is_n_identity_exactly(rng):
    # Small integers: every intermediate is exact in float64, so H·H·x = N·x bit for bit.
    n = 1 << 11
    x = rng.integers(-1000, 1000, size=(3, n)).astype(np.float64)
    np.testing.assert_array_equal(ironkernels.fwt(ironkernels.fwt(x)), n * x)


def test_linearity(rng):
    x, z = rng.standard_normal((2, 4, 512))
    a, b = 0.75, -2.5
    np.testing.assert_allclose(ironkernels.fwt(a * x + b * z), a * ironkernels.fwt(x) + b * ironkernels.fwt(z),
                               rtol=1e-12, atol=1e-11)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normalized_is_orthonormal_and_involutive(rng, dtype):
    x = random_input(rng, (6, 4096), dtype)
    y = ironkernels.fwt(x, normalized=True)
    tol = 1e-5 if dtype == "float32" else 1e-13
    np.testing.assert_allclose(np.linalg.norm(y, axis=-1), np.linalg.norm(x, axis=-1), rtol=tol)
    np.testing.assert_allclose(ironkernels.fwt(y, normalized=True), x, rtol=0, atol=10 * tol)


def test_scale_overrides_normalized(rng):
    x = rng.standard_normal((3, 64))
    np.testing.assert_allclose(ironkernels.fwt(x, scale=0.5, normalized=True), 0.5 * fwt_reference(x), rtol=1e-13)


@pytest.mark.parametrize("dtype", DTYPES)
def test_in_place(rng, dtype):
    x = random_input(rng, (9, 256), dtype)
    x0 = x.copy()
    y = ironkernels.fwt(x, out=x)
    assert y is x
    assert_fwt_close(x, x0, dtype)


def test_out_is_returned_and_written(rng):
    x = rng.standard_normal((4, 32))
    out = np.full_like(x, np.nan)
    assert ironkernels.fwt(x, out=out) is out
    np.testing.assert_allclose(out, fwt_reference(x), atol=1e-12)


def test_non_contiguous_batch_dims(rng):
    base = rng.standard_normal((6, 10, 128)).astype(np.float32)
    x = base[::2, 3:9:2, :].transpose(1, 0, 2)  # strided and permuted batch dims
    assert not x.flags.c_contiguous
    y = ironkernels.fwt(x)
    assert y.flags.c_contiguous
    assert_fwt_close(y, x, "float32")
    out = np.zeros((12, 5, 128), np.float32)[::4, ::2]  # strided out
    ironkernels.fwt(x, out=out)
    assert_fwt_close(out, x, "float32")


def test_batch_dims_merge_or_are_limited(rng):
    base = rng.standard_normal((2,) * 9 + (16,))
    assert_fwt_close(ironkernels.fwt(base), base, "float64")  # 9 contiguous batch dims merge into one
    reversed_dims = base.transpose(*range(8, -1, -1), 9)  # 9 batch dims no two of which merge
    with pytest.raises(ValueError, match="batch dimensions"):
        ironkernels.fwt(reversed_dims)
    partly = base.transpose(1, 0, *range(2, 10))  # two dims swapped: 3 groups, fine
    assert_fwt_close(ironkernels.fwt(partly), partly, "float64")


def test_empty_batch_and_n_equals_one(rng):
    assert ironkernels.fwt(np.zeros((0, 8), np.float32)).shape == (0, 8)
    x = rng.standard_normal((5, 1))
    np.testing.assert_array_equal(ironkernels.fwt(x, scale=3.0), 3.0 * x)


def test_thread_count_does_not_change_bits(rng):
    x = rng.standard_normal((257, 1024)).astype(np.float32)
    saved = ironkernels._core.cpu_threads()
    try:
        ironkernels._core.set_cpu_threads(1)
        one = ironkernels.fwt(x)
        ironkernels._core.set_cpu_threads(4)
        four = ironkernels.fwt(x)
    finally:
        ironkernels._core.set_cpu_threads(saved)
    np.testing.assert_array_equal(one, four)


@settings(max_examples=60, deadline=None)
@given(
    batch=st.lists(st.integers(0, 4), min_size=0, max_size=3),
    log_n=st.integers(0, 12),
    dtype=st.sampled_from(DTYPES),
    normalized=st.booleans(),
    seed=st.integers(0, 2**31),
)
def test_random_shapes(batch, log_n, dtype, normalized, seed):
    rng = np.random.default_rng(seed)
    x = random_input(rng, tuple(batch) + (1 << log_n,), dtype)
    y = ironkernels.fwt(x, normalized=normalized)
    assert y.shape == x.shape
    assert_fwt_close(y, x, dtype, scale=(1 << log_n) ** -0.5 if normalized else 1.0)


# ---------------------------------------------------------------- errors: precise, and nothing written

def _poisoned(shape, dtype=np.float32):
    return np.full(shape, 7.0, dtype=dtype)


@pytest.mark.parametrize(
    "x, kwargs, exc, match",
    [
        (np.ones((2, 8), np.uint32), {}, TypeError, "float16, bfloat16, float32, float64, complex64"),
        (np.ones((2, 8), np.int8), {}, TypeError, "accepted"),
        (np.ones((2, 6), np.float32), {}, ValueError, "not 2\\^k or m·2\\^k"),
        (np.ones((2, 8), np.float32), {"axis": -3}, ValueError, "axis=-3"),
        (np.ones((6, 8), np.float32), {"axis": 0}, ValueError, "x.shape\\[0\\] = 6"),
        (np.ones((2, 8), np.float32), {"axis": 5}, ValueError, "out of range"),
        (np.float32(3.0), {}, ValueError, "at least one dimension"),
        (np.ones((2, 8), np.float32), {"scale": "2"}, TypeError, "scale"),
        (np.ones((2, 8), np.float32), {"axis": 1.0}, TypeError, "axis"),
        (np.ones((2, 8), np.float32), {"stream": "s"}, TypeError, "stream"),
    ],
)
def test_bad_arguments_raise_precisely(x, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        ironkernels.fwt(x, **kwargs)


def test_not_an_array():
    with pytest.raises(TypeError, match="fwt: x must be an array .* got list"):
        ironkernels.fwt([1.0, 2.0])


def test_n_too_large_on_cpu():
    x = np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), shape=(1 << 31,), strides=(4,))
    with pytest.raises(ValueError, match="2\\^30"):
        ironkernels.fwt(x, out=x)


@pytest.mark.parametrize(
    "out, exc, match",
    [
        (_poisoned((2, 16)), ValueError, "shape"),
        (_poisoned((2, 8), np.float64), TypeError, "dtype"),
        (_poisoned((2, 8), np.complex64), TypeError, "dtype"),
    ],
)
def test_bad_out_is_left_untouched(out, exc, match):
    before = out.copy()
    with pytest.raises(exc, match=match):
        ironkernels.fwt(np.ones((2, 8), np.float32), out=out)
    np.testing.assert_array_equal(out, before)


def test_partial_overlap_rejected_and_untouched():
    buf = np.arange(40, dtype=np.float32)
    before = buf.copy()
    with pytest.raises(ValueError, match="overlaps"):
        ironkernels.fwt(buf[0:32].reshape(4, 8), out=buf[8:40].reshape(4, 8))
    np.testing.assert_array_equal(buf, before)


def _isa_inputs(dtype):
    """Every 16-bit pattern as rows of N = 1 (widen and round alone), and rows of several lengths whose
    results fall in the subnormal range, near the largest finite value, overflow, or hold NaN / Inf."""
    rng = np.random.default_rng(99)
    cases = {"patterns": np.arange(65536, dtype=np.uint16).view(np_dtype(dtype)).reshape(-1, 1)}
    for log_n in (3, 7, 12, 13):
        n = 1 << log_n
        mags = np.array([2.0**-30, 2.0**-20, 2.0**-12, 1.0, 2.0**8, 2.0**12, 2.0**120])[:, None]
        x = (rng.standard_normal((7, 9, n)) * mags[:, :, None].repeat(9, 1)).reshape(-1, n)
        x[-1, 0], x[-2, n // 2], x[-3, 1] = np.nan, np.inf, -np.inf
        with np.errstate(over="ignore"):  # 2^120 overflows float16 to Inf on purpose
            cases[f"n{n}"] = x.astype(np.float32).astype(np_dtype(dtype))
    return cases


@pytest.mark.parametrize("dtype", ["float16"] + (["bfloat16"] if BF16 is not None else []))
def test_16bit_bits_do_not_depend_on_cpu_isa(tmp_path, dtype):
    """The per-ISA 16-bit paths (F16C / AVX-512 conversions) give the baseline variant's bits: the same
    code run in a subprocess with IRONKERNELS_CPU_ISA=baseline. N = 1 rows match exactly, NaNs included;
    after a transform a NaN may carry either sign (IEEE leaves it open), so there both must be NaN."""
    cases = _isa_inputs(dtype)
    np.savez(tmp_path / "x.npz", **{k: v.view(np.uint16) for k, v in cases.items()})
    script = (
        "import sys, numpy as np, ironkernels\n"
        "from fwt_helpers import np_dtype\n"
        "d = np.load(sys.argv[1])\n"
        "out = {k: ironkernels.fwt(d[k].view(np_dtype(sys.argv[3]))).view(np.uint16) for k in d.files}\n"
        "np.savez(sys.argv[2], isa=ironkernels.build_info()['cpu_isa_active'], **out)\n"
    )
    env = dict(os.environ, IRONKERNELS_CPU_ISA="baseline",
               PYTHONPATH=os.pathsep.join([os.path.dirname(__file__)] + sys.path))
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "x.npz"), str(tmp_path / "y.npz"), dtype],
                   env=env, check=True)
    base = np.load(tmp_path / "y.npz")
    assert str(base["isa"]) == "baseline"
    exp_mask, man_mask = (0x7C00, 0x03FF) if dtype == "float16" else (0x7F80, 0x007F)
    for k, x in cases.items():
        got, want = ironkernels.fwt(x).view(np.uint16), base[k]
        if k == "patterns":
            np.testing.assert_array_equal(got, want)
            continue
        nan = lambda b: ((b & exp_mask) == exp_mask) & ((b & man_mask) != 0)  # noqa: E731
        both_nan = nan(got) & nan(want)
        assert both_nan.any() and np.isinf(np.asarray(x, np.float32)).any()
        np.testing.assert_array_equal(np.where(both_nan, 0, got), np.where(both_nan, 0, want), err_msg=k)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_bits_do_not_depend_on_cpu_isa(tmp_path, dtype):
    """Every ISA variant runs the butterflies bit by bit in the same order (only their grouping into
    passes and registers differs), so the active variant gives the baseline variant's bits: rows
    of 1 to 2^17 elements (every register-group and cache path), scaled, in a subprocess with
    IRONKERNELS_CPU_ISA=baseline."""
    rng = np.random.default_rng(7)
    cases = {f"n{log_n}": rng.standard_normal((3, 1 << log_n)).astype(dtype) for log_n in list(range(14)) + [15, 17]}
    np.savez(tmp_path / "x.npz", **cases)
    script = (
        "import sys, numpy as np, ironkernels\n"
        "d = np.load(sys.argv[1])\n"
        "out = {k: ironkernels.fwt(d[k], scale=0.5) for k in d.files}\n"
        "np.savez(sys.argv[2], isa=ironkernels.build_info()['cpu_isa_active'], **out)\n"
    )
    env = dict(os.environ, IRONKERNELS_CPU_ISA="baseline")
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "x.npz"), str(tmp_path / "y.npz")], env=env, check=True)
    base = np.load(tmp_path / "y.npz")
    assert str(base["isa"]) == "baseline"
    for k, x in cases.items():
        np.testing.assert_array_equal(ironkernels.fwt(x, scale=0.5), base[k], err_msg=k)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_out_of_place_gives_the_in_place_bits(rng, dtype):
    """Out of place into a NumPy result and into rows of a larger array on a 64-byte boundary (the
    alignment ironkernels.empty and PyTorch give): the bits of the transform in place, and nothing
    written outside `out`."""
    for log_n in (0, 1, 3, 5, 8, 11, 12, 13, 15):
        x = random_input(rng, (37, 1 << log_n), dtype)
        scale = 3 if dtype.startswith("int") else 0.5
        want = x.copy()
        ironkernels.fwt(want, out=want, scale=scale)
        np.testing.assert_array_equal(ironkernels.fwt(x, scale=scale), want, err_msg=f"2^{log_n}")
        row_bytes = np.dtype(dtype).itemsize << log_n
        raw = np.empty(39 * row_bytes + 64, np.uint8)  # rows 1..37 of `pad` on a 64-byte boundary
        start = (-(raw.ctypes.data + row_bytes)) % 64
        pad = raw[start:start + 39 * row_bytes].view(dtype).reshape(39, 1 << log_n)
        pad[...] = 7
        out = pad[1:38]
        assert out.ctypes.data % 64 == 0
        ironkernels.fwt(x, out=out, scale=scale)
        np.testing.assert_array_equal(out, want, err_msg=f"2^{log_n}, aligned out")
        assert (pad[0] == 7).all() and (pad[38] == 7).all()


@pytest.mark.skipif(BF16 is None, reason="needs ml_dtypes")
def test_numpy_bfloat16_roundtrip(rng):
    x = random_input(rng, (3, 64), "bfloat16")
    y = ironkernels.fwt(x)
    assert y.dtype == np_dtype("bfloat16")
    assert_fwt_close(y, x, "bfloat16")


@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_cpu_tensors_in_torch_out(rng, dtype):
    """Host torch tensors (the path that hands the extension a DLPack capsule from
    torch.utils.dlpack.to_dlpack): the result is a torch tensor, in place works, the reference holds."""
    torch = pytest.importorskip("torch")
    x = random_input(rng, (3, 4, 256), dtype)
    xt = torch.from_numpy(np.array(x, np.float32)).to(getattr(torch, dtype))  # (a copy: x stays the reference)
    y = ironkernels.fwt(xt)
    assert isinstance(y, torch.Tensor) and y.dtype == xt.dtype and y.shape == xt.shape and y.device == xt.device
    assert_fwt_close(y.to(torch.float64).numpy(), x, dtype)
    ironkernels.fwt(xt, out=xt, normalized=True)
    assert_fwt_close(xt.to(torch.float64).numpy(), x, dtype, scale=256**-0.5)


def test_torch_tensor_on_another_device_is_refused_untouched():
    """A tensor that is neither on the CPU nor on a CUDA GPU (here torch's meta device) gets the
    precise device error, and out is not written."""
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError, match="accepted: CPU or CUDA memory"):
        ironkernels.fwt(torch.empty(2, 8, device="meta"))
    out = torch.full((2, 8), 7.0)
    with pytest.raises(TypeError, match="torch device 'meta'"):
        ironkernels.fwt(torch.empty(2, 8, device="meta"), out=out)
    assert bool((out == 7.0).all())
