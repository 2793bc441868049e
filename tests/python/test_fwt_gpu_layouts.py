"""FWT on CUDA along any axis and of any stride, for complex and integer dtypes, and rows of
N = 2^16 … 2^24 (passes of the strided kernel), against the CPU path and the float64 (exact
integer) reference, outputs poisoned before each run."""
import numpy as np
import pytest

import ironkernels

from device_arrays import get
from fwt_helpers import DTYPES
from fwt_layout_cases import AXIS_CASES, COMPLEX_DTYPES, INT_DTYPES, assert_transform, random_array

pytestmark = pytest.mark.gpu
ALL = DTYPES + COMPLEX_DTYPES + INT_DTYPES


def check(dev, x, axis=-1, scale=None, xd=None, roundings=1):
    """GPU result against the reference and, as exactly as the dtype allows, against the CPU."""
    dtype = x.dtype.name
    xd = dev.put(x) if xd is None else xd
    kwargs = {} if scale is None else {"scale": scale}
    y = ironkernels.fwt(xd, axis=axis, out=dev.poisoned_like(xd), **kwargs)
    got = get(y)
    cpu = ironkernels.fwt(x, axis=axis, **kwargs)
    assert_transform(got, x, dtype, axis, 1.0 if scale is None else scale, roundings)
    if dtype in INT_DTYPES:
        np.testing.assert_array_equal(got, cpu)
    return got


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape,axis", AXIS_CASES)
def test_gpu_any_axis(dev, rng, dtype, shape, axis):
    check(dev, random_array(rng, shape, dtype), axis)


@pytest.mark.parametrize("dtype", ["float32", "float16", "complex64", "int64"])
@pytest.mark.parametrize("shape,axis", [((4, 1024, 64), 1), ((8, 64, 2048), 1), ((2, 8192, 8), 1), ((1 << 13, 512), 0)])
def test_gpu_strided_axis_larger(dev, rng, dtype, shape, axis):
    check(dev, random_array(rng, shape, dtype), axis, scale=3 if dtype in INT_DTYPES else 0.25)


@pytest.mark.parametrize("dtype,shape", [("float32", (3, 1 << 7, 64)), ("float32", (2, 1 << 10, 32)),
                                         ("float32", (2, 1 << 11, 16)), ("float32", (3, 1 << 12, 8)),
                                         ("int32", (2, 1 << 12, 8)), ("float64", (2, 1 << 11, 8)),
                                         ("int64", (3, 1 << 8, 32)), ("complex64", (2, 1 << 10, 64)),
                                         ("float64", (1, 1 << 9, 16)), ("float32", (2, 1 << 11, 64)),
                                         ("float32", (2, 1 << 12, 32)), ("int32", (1, 1 << 13, 16)),
                                         ("float64", (2, 1 << 12, 8)), ("int64", (2, 1 << 11, 16)),
                                         ("float64", (1, 1 << 13, 4)), ("complex64", (1, 1 << 12, 16)),
                                         ("float64", (2, 1 << 12, 32)), ("float32", (1, 1 << 13, 64))])
def test_gpu_strided_axis_column_pass(dev, rng, dtype, shape):
    """A strided axis of 2^7-2^13 lines in contiguous blocks of a power of two (the column pass;
    from 2^11 lines over a cluster, 128-, 64- and 32-byte columns): against the CPU and the reference,
    scaled; into an output of other batch strides (a slice of a larger tensor); in place the same
    bits."""
    x = random_array(rng, shape, dtype)
    xd = dev.put(x)
    scale = 3 if dtype in INT_DTYPES else 0.25
    got = check(dev, x, axis=1, xd=xd, scale=scale)
    wide = dev.zeros((shape[0] * 2,) + shape[1:], x.dtype)
    ironkernels.fwt(xd, axis=1, scale=scale, out=wide[::2])
    np.testing.assert_array_equal(get(wide[::2]), got)
    assert not get(wide[1::2]).any(), "wrote outside the output"
    ironkernels.fwt(xd, axis=1, scale=scale, out=xd)
    np.testing.assert_array_equal(get(xd), got)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("log_n", [0, 1, 2, 3, 5, 8, 12, 13, 14, 15, 16])
def test_gpu_rows_every_dtype(dev, rng, dtype, log_n):
    """The last axis of every dtype: the table's row kernels (floating types), the strided kernel with
    several rows per vector (integers, complex parts) and their passes past one tile."""
    for batch in (1, 5):
        check(dev, random_array(rng, (batch, 1 << log_n), dtype),
              roundings=2 if log_n > 15 and dtype in ("float16", "bfloat16") else 1)


@pytest.mark.parametrize("dtype", DTYPES + ["complex64"])
@pytest.mark.parametrize("log_n", [16, 17, 18, 20, 22, 24])
def test_gpu_long_rows(dev, rng, dtype, log_n):
    rows = max(1, (1 << 22) >> log_n) + (1 if log_n < 22 else 0)
    x = random_array(rng, (rows, 1 << log_n), dtype)
    passes = 2 if log_n <= 24 else 3
    check(dev, x, scale=0.5, roundings=passes if dtype in ("float16", "bfloat16") else 1)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_gpu_long_rows_in_place_and_strided(dev, rng, dtype):
    x = random_array(rng, (3, 1 << 18), dtype)
    xd = dev.put(x)
    expect = get(ironkernels.fwt(xd))
    ironkernels.fwt(xd, out=xd)  # in place: the outer passes read what the inner one wrote
    np.testing.assert_array_equal(get(xd), expect)
    base = random_array(rng, (6, 1 << 17), dtype)
    view = dev.put(base)[::2]  # rows 2·N apart
    check(dev, base[::2], xd=view)


@pytest.mark.parametrize("dtype,log_n", [("float64", 15), ("int64", 15), ("complex128", 14), ("float32", 16),
                                       ("int32", 16), ("complex64", 15)])
def test_gpu_rows_of_256_kb_on_a_pair(dev, rng, dtype, log_n):
    """Rows of 256 KB (8-byte 2^15, 4-byte 2^16; complex parts as rows of twice the length) over a
    pair of CTAs, the row's top bits through distributed shared memory: scaled, one row and many,
    and in place the same bits."""
    scale = 3 if dtype in INT_DTYPES else 0.25
    for rows in (1, 37):
        x = random_array(rng, (rows, 1 << log_n), dtype)
        xd = dev.put(x)
        got = check(dev, x, xd=xd, scale=scale)
        ironkernels.fwt(xd, scale=scale, out=xd)
        np.testing.assert_array_equal(get(xd), got)


@pytest.mark.parametrize("dtype", ["float32", "int32", "complex128"])
def test_gpu_misaligned_and_odd_strides(dev, rng, dtype):
    """Layouts the vector kernels refuse take the shared-memory kernel, long lines in passes."""
    base = random_array(rng, (3, 1 + (1 << 15)), dtype)
    xd = dev.put(base)[:, 1:]  # rows start one element past 16-byte alignment
    check(dev, base[:, 1:], xd=xd)
    base = random_array(rng, (256, 7), dtype)
    check(dev, base, axis=0)  # inner extent 7


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_gpu_errors_write_nothing(dev, dtype):
    x = dev.zeros((4, 8), dtype)
    out = dev.full((4, 8), 7, dtype)
    with pytest.raises(ValueError, match="axis=2"):
        ironkernels.fwt(x, axis=2, out=out)
    with pytest.raises(ValueError, match="order='walsh' is not an order"):
        ironkernels.fwt(x, order="walsh", out=out)
    with pytest.raises(ValueError, match="order='sequency' is defined for H_\\{2\\^k\\}"):
        ironkernels.fwt(dev.zeros((4, 12), dtype), order="sequency")
    for n in (6, 36):  # no supported form: 3·2 (m·2^k needs m = 12, 20, 28), 9·4
        bad = dev.zeros((4, n), dtype)
        out_bad = dev.full((4, n), 7, dtype)
        with pytest.raises(ValueError, match=f"N = x.shape\\[1\\] = {n} is not 2\\^k or m·2\\^k"):
            ironkernels.fwt(bad, out=out_bad)
        assert (get(out_bad) == 7).all()
    with pytest.raises(TypeError, match="dtype"):
        ironkernels.fwt(x, out=dev.zeros((4, 8), "float64" if dtype == "int64" else "int32"))
    assert (get(out) == 7).all()


def _natural_index(k, log_n, order):
    g = k ^ (k >> 1) if order == "sequency" else k
    return int(format(g, f"0{log_n}b")[::-1], 2) if log_n else 0


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "complex64", "complex128", "int32", "int64"])
@pytest.mark.parametrize("order", ["sequency", "dyadic"])
@pytest.mark.parametrize("shape,axis", [((3, 1), -1), ((5, 2), -1), ((4, 256), -1), ((5, 1 << 10), -1),
                                        ((3, 1 << 11, 2), 1), ((2, 1 << 12, 3), 1), ((3, 1 << 15), -1),
                                        ((2, 1 << 17), -1), ((1, 1 << 20), -1), ((3, 512, 5), 1), ((1024, 6), 0)])
def test_gpu_orders(dev, rng, dtype, order, shape, axis):
    """Output k is natural output natural_index(k): the result put back in natural order meets the
    contract against the reference; integers equal the CPU's; in place gives the same bits."""
    x = random_array(rng, shape, dtype)
    xd = dev.put(x)
    got = get(ironkernels.fwt(xd, axis=axis, order=order, out=dev.poisoned_like(xd)))
    n = shape[axis]
    log_n = n.bit_length() - 1
    where = [slice(None)] * len(shape)
    where[axis] = [_natural_index(k, log_n, order) for k in range(n)]
    natural = np.empty_like(got)
    natural[tuple(where)] = got
    sixteen = dtype in ("float16", "bfloat16")
    assert_transform(natural, x, dtype, axis, roundings=2 if sixteen and n > 1 << 15 else 1)
    if dtype in INT_DTYPES:
        np.testing.assert_array_equal(got, ironkernels.fwt(x, axis=axis, order=order))
    ironkernels.fwt(xd, axis=axis, order=order, out=xd)
    np.testing.assert_array_equal(get(xd), got)


# The row lengths whose table kernel applies the order in its store on Hopper (log2 N), by dtype:
# the plain tile configurations (complex values as rows of their parts, one bit longer).
ORDERED_STORE_MAX = {"float32": 14, "int32": 14, "float64": 13, "int64": 13, "float16": 11, "bfloat16": 11,
                     "complex64": 13, "complex128": 12}


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("order", ["sequency", "dyadic"])
def test_gpu_orders_in_the_row_store(dev, rng, dtype, order):
    """Where the row kernel applies the order as it stores, the ordered output is the natural GPU
    output permuted, bit for bit, at every length (partial last tiles, scaled, in place too)."""
    scale = 3 if dtype in INT_DTYPES else 0.5
    for log_n in range(ORDERED_STORE_MAX[dtype] + 1):
        n = 1 << log_n
        x = random_array(rng, (max(3, 4099 >> log_n), n), dtype)
        xd = dev.put(x)
        natural = get(ironkernels.fwt(xd, scale=scale))
        got = get(ironkernels.fwt(xd, order=order, scale=scale, out=dev.poisoned_like(xd)))
        index = [_natural_index(k, log_n, order) for k in range(n)]
        np.testing.assert_array_equal(got, natural[:, index], err_msg=f"{dtype} {order} N = 2^{log_n}")
        ironkernels.fwt(xd, order=order, scale=scale, out=xd)
        np.testing.assert_array_equal(get(xd), got, err_msg=f"{dtype} {order} N = 2^{log_n} in place")


@pytest.mark.parametrize("m", [12, 20, 28, 40])
@pytest.mark.parametrize("k", [0, 1, 4])
def test_gpu_m_times_power_of_two_is_hadamard(dev, m, k):
    """The CUDA transform of the identity: entries ±1, H·Hᵀ = N·I, equal to the CPU's (exact)."""
    n = m << k
    eye = np.eye(n, dtype=np.int64)
    h = get(ironkernels.fwt(dev.put(eye), axis=0))
    assert set(np.unique(h)) == {-1, 1}
    np.testing.assert_array_equal(h @ h.T, n * eye)
    np.testing.assert_array_equal(h, ironkernels.fwt(eye, axis=0))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "complex64", "int32", "int64"])
@pytest.mark.parametrize("shape,axis", [((3, 12), -1), ((1500, 20 << 1), -1), ((5, 20 << 3), -1), ((2, 28 << 9), -1),
                                        ((2, 28 << 10), -1), ((3, 12 << 9), -1), ((5, 12 << 10), -1),
                                        ((3, 20 << 11), -1), ((2, 12 << 16), -1), ((2, 28 << 15), -1),
                                        ((1, 20 << 17), -1), ((1, 12 << 20), -1), ((3, 12 << 4, 5), 1),
                                        ((40 << 2, 3), 0)])
def test_gpu_m_times_power_of_two(dev, rng, dtype, shape, axis):
    """N = m·2^k on CUDA (one pass up to 2^10: packed rows by bulk copies, other layouts through the
    factor tile; past one table row the blocks' transforms, then H_m ⊗ H_{2^A} across them; on
    other strides H_{2^k} on each block, then H_m across them) against the CPU, which the CPU tests
    check against H_m ⊗ H_{2^k}; integers exact; scaled; in place the same bits."""
    x = random_array(rng, shape, dtype)
    xd = dev.put(x)
    scale = 3 if dtype in INT_DTYPES else 0.25
    got = get(ironkernels.fwt(xd, axis=axis, scale=scale, out=dev.poisoned_like(xd)))
    wide = np.asarray(x).astype(np.complex128 if "complex" in dtype else np.float64) if dtype not in INT_DTYPES else x
    expect = ironkernels.fwt(wide, axis=axis, scale=scale)
    if dtype in INT_DTYPES:
        np.testing.assert_array_equal(got, expect)
    else:
        # Each pass rounds (16-bit: to its type between them): u·|y| plus eps times the line's norm.
        u = {"float32": 2e-6, "complex64": 2e-6, "float64": 1e-14, "float16": 2e-3, "bfloat16": 1.6e-2}[dtype]
        line = np.sqrt(np.sum(np.abs(expect) ** 2, axis=axis, keepdims=True))
        err = np.abs(np.asarray(got).astype(expect.dtype) - expect)
        assert np.isfinite(got.astype(expect.dtype)).all()
        assert np.all(err <= 2 * u * np.abs(expect) + 4 * u * line), f"{dtype}: max error {err.max():.3g}"
    ironkernels.fwt(xd, axis=axis, scale=scale, out=xd)
    np.testing.assert_array_equal(get(xd), got)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("n", [20 << 3, 28 << 10, 12 << 16])
def test_gpu_m_times_power_of_two_strided_rows(dev, rng, dtype, n):
    """Rows that are not back to back (a slice of a larger batch): the same as the CPU's."""
    full = random_array(rng, (3, 3, n), dtype)
    xd = dev.put(full)[:, 1:]
    x = np.ascontiguousarray(full[:, 1:])
    got = get(ironkernels.fwt(xd))
    expect = ironkernels.fwt(x.astype(np.float64) if dtype != "int32" else x)
    if dtype == "int32":
        np.testing.assert_array_equal(got, expect)
    else:
        u = 2e-6 if dtype == "float32" else 1e-14
        line = np.sqrt(np.sum(expect ** 2, axis=-1, keepdims=True))
        assert np.all(np.abs(got - expect) <= 2 * u * np.abs(expect) + 4 * u * line)


# Each setting the dispatch reads once per process, in a process of its own: every strided tile
# shape, the cluster sizes, clusters off and everywhere, the other split of long rows, the column
# pass (the outer pass of long rows, a strided axis) off and wherever it takes the lines, a strided
# axis's column pass without clusters.
FORCED_SETTINGS = [("IRONKERNELS_FWT_STRIDED_SHAPE", s) for s in ("narrow", "wide", "tall")] + [
    ("IRONKERNELS_FWT_STRIDED_CLUSTERS", "0"), ("IRONKERNELS_FWT_STRIDED_CLUSTERS", "all"),
    ("IRONKERNELS_FWT_CLUSTER_BITS", "1"), ("IRONKERNELS_FWT_CLUSTER_BITS", "2"), ("IRONKERNELS_FWT_ROW_BITS", "14"),
    ("IRONKERNELS_FWT_OUTER_COLUMNS", "0"), ("IRONKERNELS_FWT_OUTER_COLUMNS", "1"),
    ("IRONKERNELS_FWT_CLUSTER_COLUMNS", "0")]
FORCED_CASES = """
import sys
import numpy as np
import ironkernels
from device_arrays import get, pick
from fwt_layout_cases import assert_transform, random_array
rng = np.random.default_rng(7)
dev = pick()
cases = [((3, 1 << 16), "float32", -1), ((2, 1 << 17), "float32", -1), ((2, 1 << 15), "float64", -1),
         ((2, 1 << 15), "complex64", -1), ((2, 1 << 14), "complex128", -1), ((4, 1 << 10, 64), "float32", 1),
         ((2, 1 << 11, 8), "float32", 1), ((2, 1 << 12, 8), "int32", 1), ((2, 1 << 13, 8), "float64", 1),
         ((64, 1 << 6, 16), "float32", 1), ((2, 1 << 9, 64), "int64", 1), ((1, 1 << 24), "float32", -1),
         ((2, 1 << 21), "int32", -1), ((1, 1 << 22), "float64", -1), ((2, 1 << 11, 64), "float32", 1),
         ((1, 1 << 12, 16), "float32", 1)]
for shape, dtype, axis in cases:
    x = random_array(rng, shape, dtype)
    xd = dev.put(x)
    y = get(ironkernels.fwt(xd, axis=axis, out=dev.poisoned_like(xd)))
    assert_transform(y, x, dtype, axis)
print("ok")
"""


@pytest.mark.parametrize("name,value", FORCED_SETTINGS)
def test_gpu_forced_configurations(dev, name, value):
    import os
    import subprocess
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, IRONKERNELS_DEV_OVERRIDES="1", **{name: value})
    env["PYTHONPATH"] = os.pathsep.join([here] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    done = subprocess.run([sys.executable, "-c", FORCED_CASES], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "complex64", "int32"])
@pytest.mark.parametrize("shape,axis,block", [((64, 4096), -1, 16), ((64, 4096), -1, 32), ((8, 1 << 13), -1, 128),
                                              ((3, 1 << 17), -1, 1 << 12), ((4, 512, 24), 1, 128), ((6, 960), -1, 20)])
def test_gpu_block_diagonal_and_inverse(dev, rng, dtype, shape, axis, block):
    """block=b on CUDA (the axis viewed as (N/b, b): the row and strided kernels on blocks) equals the
    CPU's (integers exactly; floating within the contract, against the reference on the CPU tests'
    side), and inverse=True gives x back."""
    x = random_array(rng, shape, dtype)
    kw = {"scale": 3} if dtype in INT_DTYPES else {"normalized": True}
    xd = dev.put(x)
    got = get(ironkernels.fwt(xd, axis=axis, block=block, out=dev.poisoned_like(xd), **kw))
    cpu = ironkernels.fwt(x, axis=axis, block=block, **kw)
    if dtype in INT_DTYPES:
        np.testing.assert_array_equal(got, cpu)
        return
    wide = np.complex128 if "complex" in dtype else np.float64
    u = {"float32": 2e-6, "complex64": 2e-6, "float16": 2e-3, "bfloat16": 1.6e-2}[dtype]
    ref = np.asarray(cpu).astype(wide)
    assert np.all(np.abs(np.asarray(got).astype(wide) - ref) <= 2 * u * (np.abs(ref) + np.abs(ref).max()))
    back = get(ironkernels.fwt(dev.put(got), axis=axis, block=block, inverse=True, **kw))
    err = np.abs(np.asarray(back).astype(wide) - np.asarray(x).astype(wide)).max()
    assert err <= 8 * u * np.abs(np.asarray(x).astype(wide)).max()
