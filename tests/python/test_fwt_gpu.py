"""FWT on CUDA: every dtype and N = 2^0 … 2^15 against the CPU path and a float64 reference, outputs
poisoned before each run and every element checked; layouts, fallbacks, streams, determinism."""
import os
import subprocess
import sys

import numpy as np
import pytest

import ironkernels
from ironkernels import _core
from ironkernels._interop import resolve_stream

from device_arrays import get
from fwt_helpers import DTYPES, assert_fwt_close, np_dtype, random_input

pytestmark = pytest.mark.gpu


def as_float64(y):
    return np.asarray(get(y)).astype(np.float64)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("log_n", range(0, 16))
def test_gpu_matches_cpu_and_reference(dev, rng, dtype, log_n):
    n = 1 << log_n
    for batch in (1, 3, 37 if log_n < 14 else 5):
        x = random_input(rng, (batch, n), dtype)
        xd = dev.put(x)
        out = dev.poisoned_like(xd)
        y = ironkernels.fwt(xd, out=out)
        assert y is out
        got = as_float64(y)
        cpu = ironkernels.fwt(x)
        # GPU and CPU add in different orders: each meets the contract, and they agree within it.
        assert_fwt_close(cpu, x, dtype)
        assert_fwt_close(got, x, dtype, other=cpu)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("log_n", [3, 5, 7, 11, 12, 13, 14, 15])
def test_gpu_many_tiles_per_block(dev, rng, dtype, log_n):
    """Batches of 2^23 elements with a ragged last tile: every block of a resident grid loops over
    several tiles, refilling its shared-memory stages, and the grids of a block per row (split rows:
    float32 2^15, 16-bit 2^13 and 2^15 on Hopper) have thousands of blocks."""
    n = 1 << log_n
    x = random_input(rng, ((1 << 23) // n + 3, n), dtype)
    xd = dev.put(x)
    y = ironkernels.fwt(xd, out=dev.poisoned_like(xd))
    assert_fwt_close(as_float64(y), x, dtype, other=ironkernels.fwt(x))


LONG_ROWS_SCRIPT = """
import sys
import numpy as np
import ironkernels
sys.path.insert(0, sys.argv[1])
from device_arrays import get, pick
from fwt_helpers import DTYPES, assert_fwt_close, random_input
rng = np.random.default_rng(5)
dev = pick()
for dtype in DTYPES:
    for log_n in (13, 14, 15):
        x = random_input(rng, (7, 1 << log_n), dtype)
        y = get(ironkernels.fwt(dev.put(x)))
        assert_fwt_close(y, x, dtype, other=ironkernels.fwt(x))
print("ok")
"""


@pytest.mark.parametrize("setting", [("IRONKERNELS_FWT_MAX_SMEM", str(99 * 1024))], ids=["99KB-per-block"])
def test_gpu_long_rows_other_configurations(dev, setting):
    """The longest rows in the configurations a different GPU takes, within the contract: a GPU with
    99 KB of shared memory per block (sm_86/89; IRONKERNELS_FWT_MAX_SMEM stands in for one here)
    takes the compact ones. In a fresh process: the setting is read once per process."""
    env = {**os.environ, setting[0]: setting[1], "IRONKERNELS_DEV_OVERRIDES": "1"}
    done = subprocess.run([sys.executable, "-c", LONG_ROWS_SCRIPT, os.path.dirname(__file__)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("log_n", [4, 5, 10, 11])
def test_gpu_subnormal_inputs(dev, rng, dtype, log_n):
    """Rows of subnormal 16-bit values (the first stages run on the tensor cores, which must not
    flush them): the result is within the contract of the exact transform."""
    n = 1 << log_n
    tiny = {"float16": 2.0**-24, "bfloat16": 2.0**-133}[dtype]  # smallest subnormal, times small ints
    x = (rng.integers(-8, 9, size=(8, n)) * tiny).astype(np.float32).astype(np_dtype(dtype))
    assert np.count_nonzero(np.asarray(x, np.float64)) > 0
    xd = dev.put(x)
    y = ironkernels.fwt(xd, out=dev.poisoned_like(xd))
    assert_fwt_close(as_float64(y), x, dtype, other=ironkernels.fwt(x))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("log_n", [0, 2, 5, 9, 12, 15])
def test_gpu_scaled_in_place_and_strided(dev, rng, dtype, log_n):
    n = 1 << log_n
    x = random_input(rng, (4, 6, n), dtype)
    xd = dev.put(x)
    view = xd[1::2, ::3]  # strided batch dims
    ref_in = np.asarray(x, np.float64)[1::2, ::3]
    y = ironkernels.fwt(view, normalized=True)
    assert_fwt_close(as_float64(y), ref_in, dtype, scale=n**-0.5)
    ironkernels.fwt(view, out=view, scale=-2.0)  # in place on a strided view
    assert_fwt_close(as_float64(view), ref_in, dtype, scale=-2.0)
    # The rows not in the view are untouched.
    untouched = as_float64(xd[0::2])
    np.testing.assert_array_equal(untouched, np.asarray(x, np.float64)[0::2])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("log_n", [4, 9, 10, 11, 12, 13, 15])
def test_gpu_uniform_row_stride_scaled_in_place(dev, rng, dtype, log_n):
    """Every 5th row of a batch (one uniform row stride: the vector kernels, not the fallback),
    scaled out of place and in place; the rows between are untouched."""
    n = 1 << log_n
    x = random_input(rng, (23, n), dtype)
    xd = dev.put(x)
    view = xd[::5]
    ref_in = np.asarray(x, np.float64)[::5]
    y = ironkernels.fwt(view, scale=0.25, out=dev.poisoned_like(view))
    assert_fwt_close(as_float64(y), ref_in, dtype, scale=0.25)
    ironkernels.fwt(view, out=view, normalized=True)
    assert_fwt_close(as_float64(view), ref_in, dtype, scale=n**-0.5)
    rest = np.ones(23, bool)
    rest[::5] = False
    np.testing.assert_array_equal(as_float64(xd)[rest], np.asarray(x, np.float64)[rest])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("log_n", [1, 3, 8, 13, 15])
def test_gpu_misaligned_takes_the_fallback(dev, rng, dtype, log_n):
    n = 1 << log_n
    x = random_input(rng, (3 * n + 1,), dtype)
    xd = dev.put(x)
    view = xd[1:].reshape(3, n)  # starts 1 element past a 16-byte boundary
    out = dev.poisoned_like(view)
    ironkernels.fwt(view, out=out)
    assert_fwt_close(as_float64(out), np.asarray(x, np.float64)[1:].reshape(3, n), dtype)


def test_gpu_deterministic_run_to_run(dev, rng):
    for dtype in DTYPES:
        xd = dev.put(random_input(rng, (64, 1 << 13), dtype))
        a, b = get(ironkernels.fwt(xd)), get(ironkernels.fwt(xd))
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


def test_gpu_streams(dev, rng):
    x_host = random_input(rng, (256, 4096), "float32")
    x = dev.put(x_host)
    stream, current, handle = dev.stream()
    for given in (stream, handle):
        with current:
            y = ironkernels.fwt(x, stream=given)
        dev.synchronize()
        assert_fwt_close(get(y), x_host, "float32")
    with current:  # default: the framework's current stream
        assert resolve_stream(None, x) == handle
        y = ironkernels.fwt(x)
    dev.synchronize()
    assert_fwt_close(get(y), x_host, "float32")


def test_gpu_framework_free_arrays(rng):
    x = random_input(rng, (16, 1024), "float32")
    dx = ironkernels.empty(x.shape, "float32", "cuda")
    dy = ironkernels.empty(x.shape, "float32", "cuda")
    _core.copy_(dx, x)
    _core.fill_bytes_(dy, 0xFF)
    ironkernels.fwt(dx, out=dy)
    got = np.empty_like(x)
    _core.copy_(got, dy)
    _core.synchronize()
    assert_fwt_close(got, x, "float32")


def test_gpu_cupy_in_cupy_out(rng):
    cupy = pytest.importorskip("cupy")
    x = random_input(rng, (8, 2048), "float32")
    y = ironkernels.fwt(cupy.asarray(x))
    assert isinstance(y, cupy.ndarray)
    assert_fwt_close(cupy.asnumpy(y), x, "float32")


def test_gpu_errors_leave_out_untouched(dev):
    odd = dev.zeros((36, 8), "float32")
    with pytest.raises(ValueError, match="x.shape\\[0\\] = 36"):
        ironkernels.fwt(odd, axis=0)
    x = dev.full((2, 8), 1.0, "float32")
    host_out = np.full((2, 8), 7.0, np.float32)
    with pytest.raises(ValueError, match="same device"):
        ironkernels.fwt(x, out=host_out)
    assert (host_out == 7.0).all()
    out = dev.full((2, 8), 7.0, "float64")
    with pytest.raises(TypeError, match="dtype"):
        ironkernels.fwt(x, out=out)
    assert (get(out) == 7.0).all()
