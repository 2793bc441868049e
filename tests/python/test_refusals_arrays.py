"""Every bad input to fwt, gemm, Contract and empty: the exception type, a message naming the
argument and what is accepted, and every array handed in left byte for byte as it was. The CUDA
half repeats the array cases with device arrays (and a device `out`)."""
import numpy as np
import pytest

import ironkernels as ik
from ironkernels import Contract
from refusal_helpers import NoShape, Refusal, assert_refused, table

ml_dtypes = pytest.importorskip("ml_dtypes")


def rand(*shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def read_only(a):
    a = a.copy()
    a.flags.writeable = False
    return a


def repeated_rows(rows, n, dtype=np.float64):
    """A (rows, n) view whose rows all start at the same element (stride 0 between rows)."""
    base = np.zeros(n, dtype)
    return np.lib.stride_tricks.as_strided(base, (rows, n), (0, base.itemsize))


def overlapping_rows(rows, n, dtype=np.float64):
    """A (rows, n) view whose rows overlap by half a row."""
    base = np.zeros(rows * n, dtype)
    return np.lib.stride_tricks.as_strided(base, (rows, n), (base.itemsize * n // 2, base.itemsize))


def fwt_cases():
    x = rand(4, 8)
    x32 = rand(4, 8, dtype=np.float32)
    o = np.zeros((4, 8))
    buf = np.zeros(40)
    c = []
    add = c.append
    for dt in (np.uint8, np.uint32, np.int16, bool, np.float128 if hasattr(np, "float128") else np.int8):
        a = np.ones((2, 8), dt)
        add(Refusal(f"fwt-dtype-{np.dtype(dt).name}", lambda a=a: ik.fwt(a), TypeError, ["fwt: x", np.dtype(dt).name.replace("bool8", "bool"), "accepted: float16"], [a]))
    add(Refusal("fwt-dtype-object", lambda: ik.fwt(np.array([[1.0, 2.0]], dtype=object)), TypeError, ["fwt: x", "object", "accepted"]))
    big = np.ones((2, 8), ">f8")
    add(Refusal("fwt-byte-order", lambda: ik.fwt(big), TypeError, ["fwt: x", "byte order", "accepted: native"], [big]))
    big_out = np.zeros((4, 8), ">f8")
    add(Refusal("fwt-out-byte-order", lambda: ik.fwt(x, out=big_out), TypeError, ["fwt: out", "byte order"], [x, big_out]))
    ro = read_only(o)
    add(Refusal("fwt-out-read-only", lambda: ik.fwt(x, out=ro), ValueError, ["fwt: out", "read-only", "accepted"], [x, ro]))
    add(Refusal("fwt-x-list", lambda: ik.fwt([[1.0, 2.0]]), TypeError, ["fwt: x", "list"]))
    add(Refusal("fwt-x-none", lambda: ik.fwt(None), TypeError, ["fwt: x", "NoneType"]))
    add(Refusal("fwt-out-list", lambda: ik.fwt(x, out=[0.0] * 32), TypeError, ["fwt: out", "list"], [x]))
    add(Refusal("fwt-out-dtype", lambda: ik.fwt(x, out=np.zeros((4, 8), np.float32)), TypeError, ["out", "float32", "float64"], [x]))
    add(Refusal("fwt-out-shape", lambda: ik.fwt(x, out=np.zeros((4, 16))), ValueError, ["out", "shape", "(4, 16)", "(4, 8)"], [x]))
    add(Refusal("fwt-out-transposed-shape", lambda: ik.fwt(x, out=np.zeros((8, 4)).T.copy().T), ValueError, ["out", "shape"], [x]))
    rep = repeated_rows(4, 8)
    add(Refusal("fwt-out-zero-stride", lambda: ik.fwt(x, out=rep), ValueError, ["fwt: out", "repeats elements", "distinct"], [x, rep]))
    ovl = overlapping_rows(4, 8)
    add(Refusal("fwt-out-rows-overlap", lambda: ik.fwt(x, out=ovl), ValueError, ["fwt: out", "repeats elements"], [x, ovl]))
    add(Refusal("fwt-out-in-place-repeated", lambda: ik.fwt(rep, out=rep), ValueError, ["fwt: out", "repeats elements"], [rep]))
    xa, oa = buf[:32].reshape(4, 8), buf[4:36].reshape(4, 8)
    add(Refusal("fwt-out-partial-overlap", lambda: ik.fwt(xa, out=oa), ValueError, ["fwt: out overlaps x", "out=x"], [buf]))
    add(Refusal("fwt-length-not-power", lambda: ik.fwt(rand(3, 6)), ValueError, ["N = x.shape[1] = 6", "accepted: N = 2^k", "m·2^k with m = 12, 20, 28"]))
    add(Refusal("fwt-length-not-power-axis", lambda: ik.fwt(rand(36, 4), axis=0), ValueError, ["N = x.shape[0] = 36", "m·2^k"]))
    add(Refusal("fwt-length-zero-row", lambda: ik.fwt(np.zeros((3, 0))), ValueError, ["N = x.shape[1] = 0", "accepted: N = 2^k"]))
    add(Refusal("fwt-order-with-factor", lambda: ik.fwt(rand(2, 24), order="dyadic"), ValueError, ["order='dyadic'", "N = 24", "order='natural'"]))
    add(Refusal("fwt-too-long-cpu", lambda: ik.fwt(np.lib.stride_tricks.as_strided(np.zeros(1), (1 << 31,), (0,))), ValueError, ["2^31", "2^30"]))
    add(Refusal("fwt-python-float", lambda: ik.fwt(1.0), TypeError, ["fwt: x", "float"]))
    add(Refusal("fwt-numpy-scalar", lambda: ik.fwt(np.float64(1.0)), ValueError, ["fwt: x", "scalar"]))
    add(Refusal("fwt-0d", lambda: ik.fwt(np.array(1.0)), ValueError, ["x", "scalar"]))
    add(Refusal("fwt-axis-range", lambda: ik.fwt(x, axis=2), ValueError, ["axis=2", "out of range"], [x]))
    add(Refusal("fwt-axis-negative-range", lambda: ik.fwt(x, axis=-3), ValueError, ["axis=-3", "out of range", "2 dimensions"], [x]))
    add(Refusal("fwt-axis-float", lambda: ik.fwt(x, axis=1.0), TypeError, ["axis", "float"], [x]))
    add(Refusal("fwt-axis-bool", lambda: ik.fwt(x, axis=True), TypeError, ["axis", "bool"], [x]))
    add(Refusal("fwt-scale-str", lambda: ik.fwt(x, scale="2"), TypeError, ["scale", "str"], [x]))
    add(Refusal("fwt-scale-complex", lambda: ik.fwt(x, scale=1j), TypeError, ["scale", "complex"], [x]))
    add(Refusal("fwt-normalized-str", lambda: ik.fwt(x, normalized="yes"), TypeError, ["normalized", "str"], [x]))
    add(Refusal("fwt-order-unknown", lambda: ik.fwt(x, order="paley"), ValueError, ["order='paley'", "accepted: 'natural', 'sequency', 'dyadic'"], [x]))
    add(Refusal("fwt-order-not-str", lambda: ik.fwt(x, order=1), TypeError, ["order", "str", "int"], [x]))
    xi = np.ones((2, 8), np.int32)
    add(Refusal("fwt-int-normalized", lambda: ik.fwt(xi, normalized=True), ValueError, ["normalized=True", "int32", "integer scale"], [xi]))
    add(Refusal("fwt-int-fractional-scale", lambda: ik.fwt(xi, scale=0.25), ValueError, ["scale=0.25", "integer"], [xi]))
    xl = np.ones((2, 8), np.int64)
    add(Refusal("fwt-int-scale-out-of-range", lambda: ik.fwt(xl, scale=2.0**70), ValueError, ["scale=", "int64's range", "2^63"], [xl]))
    add(Refusal("fwt-complex-into-real", lambda: ik.fwt(np.ones((2, 8), np.complex64), out=np.zeros((2, 8), np.float32)), TypeError, ["out", "float32", "complex64"]))
    add(Refusal("fwt-stream-bool", lambda: ik.fwt(x, stream=True), TypeError, ["stream", "bool"], [x]))
    add(Refusal("fwt-stream-negative", lambda: ik.fwt(x, stream=-1), ValueError, ["stream", "-1"], [x]))
    add(Refusal("fwt-stream-object", lambda: ik.fwt(x, stream=object()), TypeError, ["stream", "object"], [x]))
    bf = np.ones((2, 8), ml_dtypes.bfloat16)
    u16 = np.zeros((2, 8), np.uint16)
    add(Refusal("fwt-bfloat16-into-uint16", lambda: ik.fwt(bf, out=u16), TypeError, ["out", "uint16", "bfloat16"], [bf, u16]))
    add(Refusal("fwt-uint16", lambda: ik.fwt(u16), TypeError, ["fwt: x", "uint16", "accepted"], [u16]))
    f16 = np.ones((2, 8), np.float16)
    add(Refusal("fwt-float16-into-bfloat16", lambda: ik.fwt(f16, out=np.zeros((2, 8), ml_dtypes.bfloat16)), TypeError, ["out", "bfloat16", "float16"], [f16]))
    add(Refusal("fwt-no-shape-producer-bad-dtype", lambda: ik.fwt(NoShape(np.ones((2, 8), np.uint32))), TypeError, ["fwt: x", "uint32"]))
    add(Refusal("fwt-no-lcn-in-dtype-list", lambda: ik.fwt(np.ones(8, np.int8)), TypeError, ["accepted: float16, bfloat16, float32, float64, complex64, complex128, int32, int64"]))
    add(Refusal("fwt-out-no-shape-producer-shape", lambda: ik.fwt(x32, out=NoShape(np.zeros((4, 4), np.float32))), ValueError, ["out", "shape"], [x32]))
    return c


def gemm_cases():
    a, b, c = rand(4, 3), rand(3, 5, seed=1), rand(4, 5, seed=2)
    sq, sq2 = rand(4, 4, seed=3), rand(4, 4, seed=4)
    out = np.zeros((4, 5))
    cs = []
    add = cs.append
    sqc = rand(4, 4, seed=5)
    add(Refusal("gemm-out-is-a-with-c", lambda: ik.gemm(sq, sq2, c=sqc, beta=1.0, out=sq), ValueError, ["gemm: out overlaps a", "accepted"], [sq, sq2, sqc]))
    add(Refusal("gemm-out-is-b-with-c", lambda: ik.gemm(sq, sq2, c=sqc, beta=1.0, out=sq2), ValueError, ["gemm: out overlaps b"], [sq, sq2, sqc]))
    add(Refusal("gemm-out-is-a", lambda: ik.gemm(sq, sq2, out=sq), ValueError, ["gemm: out overlaps a"], [sq, sq2]))
    view = np.zeros((8, 5))
    add(Refusal("gemm-out-overlaps-c-partially", lambda: ik.gemm(a, b, c=view[1:5], beta=2.0, out=view[0:4]), ValueError, ["gemm: out overlaps c", "same elements"], [a, b, view]))
    rep = repeated_rows(4, 5)
    add(Refusal("gemm-out-zero-stride", lambda: ik.gemm(a, b, out=rep), ValueError, ["gemm: out", "repeats elements"], [a, b, rep]))
    ovl = overlapping_rows(4, 6)[:, :5]
    add(Refusal("gemm-out-rows-overlap", lambda: ik.gemm(a, b, out=ovl), ValueError, ["gemm: out", "repeats elements"], [a, b, ovl]))
    ro = read_only(out)
    add(Refusal("gemm-out-read-only", lambda: ik.gemm(a, b, out=ro), ValueError, ["gemm: out", "read-only"], [a, b, ro]))
    ro_c = read_only(out)
    add(Refusal("gemm-out-read-only-with-c", lambda: ik.gemm(a, b, c=c, beta=1.0, out=ro_c), ValueError, ["gemm: out", "read-only"], [a, b, c, ro_c]))
    add(Refusal("gemm-a-dtype", lambda: ik.gemm(rand(4, 3).astype(np.float32), b), TypeError,
                ["gemm: a", "float32", "b has float64", "all of one dtype"], [b]))
    add(Refusal("gemm-b-dtype", lambda: ik.gemm(a, rand(3, 5).astype(np.int64)), TypeError, ["gemm: b", "accepted: float64"], [a]))
    add(Refusal("gemm-c-dtype", lambda: ik.gemm(a, b, c=c.astype(np.float32), beta=1.0), TypeError, ["gemm: c", "float32", "float64"], [a, b]))
    add(Refusal("gemm-out-dtype", lambda: ik.gemm(a, b, out=np.zeros((4, 5), np.float32)), TypeError, ["gemm: out", "float32", "float64"], [a, b]))
    add(Refusal("gemm-a-object", lambda: ik.gemm(np.array([[1.0]], dtype=object), np.ones((1, 1))), TypeError, ["gemm: a", "object"]))
    bo = np.ones((3, 5), ">f8")
    add(Refusal("gemm-b-byte-order", lambda: ik.gemm(a, bo), TypeError, ["gemm: b", "byte order"], [a, bo]))
    add(Refusal("gemm-a-list", lambda: ik.gemm([[1.0]], np.ones((1, 1))), TypeError, ["gemm: a", "list"]))
    add(Refusal("gemm-b-none", lambda: ik.gemm(a, None), TypeError, ["gemm: b", "NoneType"], [a]))
    add(Refusal("gemm-inner-mismatch", lambda: ik.gemm(a, a), ValueError, ["op(a) is 4x3", "op(b) is 4x3"], [a]))
    add(Refusal("gemm-inner-mismatch-trans", lambda: ik.gemm(a, b, trans_b=True), ValueError, ["op(b) is 5x3"], [a, b]))
    add(Refusal("gemm-a-1d", lambda: ik.gemm(np.ones(3), b), ValueError, ["gemm: a", "accepted: a matrix"], [b]))
    add(Refusal("gemm-b-4d", lambda: ik.gemm(a, np.ones((3, 5, 1, 1))), ValueError, ["gemm: b", "a batch of them"], [a]))
    add(Refusal("gemm-c-shape", lambda: ik.gemm(a, b, c=np.ones((5, 4)), beta=1.0), ValueError, ["gemm: c", "(5, 4)", "(4, 5)"], [a, b]))
    add(Refusal("gemm-out-shape", lambda: ik.gemm(a, b, out=np.ones((4, 4))), ValueError, ["gemm: out", "(4, 4)", "(4, 5)"], [a, b]))
    add(Refusal("gemm-alpha-str", lambda: ik.gemm(a, b, alpha="1"), TypeError, ["alpha", "str"], [a, b]))
    add(Refusal("gemm-beta-bool", lambda: ik.gemm(a, b, beta=True), TypeError, ["beta", "bool"], [a, b]))
    add(Refusal("gemm-beta-complex", lambda: ik.gemm(a, b, beta=1j), TypeError, ["beta", "complex"], [a, b]))
    add(Refusal("gemm-trans-str", lambda: ik.gemm(a, b, trans_a="no"), TypeError, ["trans_a", "str"], [a, b]))
    add(Refusal("gemm-contract-int", lambda: ik.gemm(a, b, contract=16), TypeError, ["contract", "int", "Contract"], [a, b]))
    add(Refusal("gemm-backend", lambda: ik.gemm(a, b, backend="gpu"), ValueError, ["backend", "'gpu'", "accepted", "'mma'"], [a, b]))
    add(Refusal("gemm-engine-device", lambda: ik.gemm(a, b, engine="mma"), ValueError, ["engine", "'mma'", "cpu", "no implicit transfers"], [a, b]))
    add(Refusal("gemm-engine-unknown", lambda: ik.gemm(a, b, engine="gpu"), ValueError, ["engine", "'gpu'", "accepted", "'wgmma'"], [a, b]))
    add(Refusal("gemm-backend-device", lambda: ik.gemm(a, b, backend="cuda"), ValueError, ["backend", "cpu", "no implicit transfers"], [a, b]))
    add(Refusal("gemm-stream-bool", lambda: ik.gemm(a, b, stream=False), TypeError, ["stream", "bool"], [a, b]))
    add(Refusal("gemm-contract-str", lambda: ik.gemm(a, b, contract="native"), TypeError, ["contract", "str"], [a, b]))
    add(Refusal("gemm-k-too-large", lambda: ik.gemm(np.lib.stride_tricks.as_strided(np.zeros(1), (1, (1 << 20) + 1), (0, 0)),
                                                  np.lib.stride_tricks.as_strided(np.zeros(1), ((1 << 20) + 1, 1), (0, 0))),
                ValueError, ["k = 1048577", "maximum"]))
    add(Refusal("gemm-no-shape-producer-dtype", lambda: ik.gemm(NoShape(np.ones((2, 2), np.float32)), np.ones((2, 2))), TypeError, ["gemm: a", "float32"]))
    add(Refusal("gemm-no-shape-producer-shape", lambda: ik.gemm(a, NoShape(np.ones((2, 2)))), ValueError, ["op(b) is 2x2"], [a]))
    return cs


def contract_and_empty_cases():
    c = []
    add = c.append
    add(Refusal("contract-neither", lambda: Contract(), TypeError, ["moduli=", "bits=", "rtol="]))
    add(Refusal("contract-both", lambda: Contract(moduli=14, bits=40), TypeError, ["exactly one"]))
    add(Refusal("contract-moduli-low", lambda: Contract(moduli=1), ValueError, ["moduli = 1", "2 … 20"]))
    add(Refusal("contract-moduli-high", lambda: Contract(moduli=21), ValueError, ["moduli = 21", "2 … 20"]))
    add(Refusal("contract-moduli-float", lambda: Contract(moduli=14.0), TypeError, ["moduli", "float"]))
    add(Refusal("contract-moduli-bool", lambda: Contract(moduli=True), TypeError, ["moduli", "bool"]))
    add(Refusal("contract-bits-zero", lambda: Contract(bits=0), ValueError, ["bits = 0", "1 … 62"]))
    add(Refusal("contract-bits-high", lambda: Contract(bits=63), ValueError, ["bits = 63", "1 … 62"]))
    add(Refusal("contract-scaling", lambda: Contract(moduli=14, scaling="exact"), ValueError,
                ["scaling = 'exact'", "'fast'", "'accurate'", "'norm'"]))
    add(Refusal("empty-dtype", lambda: ik.empty((2, 2), "int16"), TypeError, ["empty: dtype", "int16", "accepted"]))
    add(Refusal("empty-dtype-class", lambda: ik.empty((2, 2), np.uint32), TypeError, ["empty: dtype", "'uint32'", "accepted"]))
    add(Refusal("empty-shape-negative", lambda: ik.empty((2, -1)), ValueError, ["empty: shape", "negative"]))
    add(Refusal("empty-shape-float", lambda: ik.empty((2.5,)), TypeError, ["empty: shape", "ints"]))
    add(Refusal("empty-device", lambda: ik.empty((2,), device="gpu"), ValueError, ["empty: device", "'gpu'", "'cuda'"]))
    add(Refusal("empty-device-id", lambda: ik.empty((2,), device="cpu", device_id=-1), ValueError, ["device_id", "-1"]))
    return c


CASES = fwt_cases() + gemm_cases() + contract_and_empty_cases()


@table(CASES)
def test_refused(case):
    assert_refused(case)


def test_the_table_is_large():
    assert len(CASES) >= 60


@pytest.mark.skipif(bool(ik.cuda_devices()), reason="a CUDA device is visible")
def test_cuda_without_a_device_says_so():
    """Without a usable GPU (no driver, no device, or a CPU-only build), device='cuda' is refused by
    name, not with a CUDA runtime call and a source line."""
    msg = assert_refused(Refusal("empty-cuda-without-device", lambda: ik.empty((2,), device="cuda"), ValueError, ["cuda"]))
    assert "runtime.cpp" not in msg and "cudaGetDevice" not in msg


# ------------------------------------------------------------------------------------------ CUDA
def _device_cases():
    cp = pytest.importorskip("cupy")
    x = cp.asarray(rand(4, 8))
    c = []
    add = c.append
    rep = cp.lib.stride_tricks.as_strided(cp.zeros(8), (4, 8), (0, 8))
    add(Refusal("cuda-fwt-out-zero-stride", lambda: ik.fwt(x, out=rep), ValueError, ["fwt: out", "repeats elements"], [x, rep]))
    buf = cp.zeros(40)
    add(Refusal("cuda-fwt-out-partial-overlap", lambda: ik.fwt(buf[:32].reshape(4, 8), out=buf[4:36].reshape(4, 8)), ValueError, ["fwt: out overlaps x"], [buf]))
    add(Refusal("cuda-fwt-dtype", lambda: ik.fwt(cp.ones((2, 8), cp.int8)), TypeError, ["fwt: x", "int8", "accepted"]))
    add(Refusal("cuda-fwt-out-host", lambda: ik.fwt(x, out=np.zeros((4, 8))), ValueError, ["out is on cpu", "same device"], [x]))
    add(Refusal("cuda-fwt-length", lambda: ik.fwt(cp.zeros((1, 44), cp.float32)), ValueError, ["N = x.shape[1] = 44", "m·2^k"]))
    sq, sq2, sqc = (cp.asarray(rand(4, 4, seed=s)) for s in (1, 2, 3))
    add(Refusal("cuda-gemm-out-is-a-with-c", lambda: ik.gemm(sq, sq2, c=sqc, beta=1.0, out=sq), ValueError, ["gemm: out overlaps a"], [sq, sq2, sqc]))
    grep = cp.lib.stride_tricks.as_strided(cp.zeros(4), (4, 4), (0, 8))
    add(Refusal("cuda-gemm-out-zero-stride", lambda: ik.gemm(sq, sq2, out=grep), ValueError, ["gemm: out", "repeats elements"], [sq, sq2, grep]))
    add(Refusal("cuda-gemm-mixed-devices", lambda: ik.gemm(sq, rand(4, 4)), ValueError, ["gemm: b", "one device"], [sq]))
    add(Refusal("cuda-gemm-dtype", lambda: ik.gemm(sq.astype(cp.float32), sq2), TypeError, ["gemm: a", "float32", "b has float64", "one dtype"], [sq2]))
    add(Refusal("cuda-gemm-backend", lambda: ik.gemm(sq, sq2, backend="cpu"), ValueError, ["backend", "cuda"], [sq, sq2]))
    add(Refusal("cuda-empty-device-id", lambda: ik.empty((2,), device="cuda", device_id=999), ValueError, ["cuda:999", "does not exist"]))
    return c


@pytest.mark.gpu
def test_refused_on_the_device():
    cases = _device_cases()
    for case in cases:
        assert_refused(case)
