"""Hypothesis: random shapes, strides and `out` layouts for fwt and gemm, including outs that repeat
elements or overlap the inputs. Each call either returns the reference result (and leaves its inputs
as they were) or is refused with a ValueError that wrote nothing. Outs whose elements truly repeat,
or that truly share elements with an input (other than exactly, in place), must be refused; the
library may also refuse a few interleaved layouts it cannot prove distinct, but never silently."""
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import ironkernels as ik
from ironkernels.reference import fwt_reference

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


PAD = 2  # spare elements on each side of every view's buffer, so views shifted by up to PAD stay inside


def addresses(a: np.ndarray) -> np.ndarray:
    """The address of every element of a view, in index order (independent of the library)."""
    idx = np.indices(a.shape).reshape(a.ndim, -1)
    return a.__array_interface__["data"][0] + (np.asarray(a.strides)[:, None] * idx).sum(axis=0)


def shares_bytes(p: np.ndarray, q: np.ndarray) -> bool:
    bp = {int(x) + i for x in addresses(p) for i in range(p.itemsize)}
    return any(int(x) + i in bp for x in addresses(q) for i in range(q.itemsize))


def repeats(a: np.ndarray) -> bool:
    return len(np.unique(addresses(a))) != a.size


def same_elements(p: np.ndarray, q: np.ndarray) -> bool:
    return p.shape == q.shape and np.array_equal(addresses(p), addresses(q))


def root(a: np.ndarray) -> np.ndarray:
    """The buffer a view was made from (through as_strided's intermediate object too)."""
    while getattr(a, "base", None) is not None:
        a = a.base
    assert isinstance(a, np.ndarray)
    return a


@st.composite
def strided_view(draw, shape, dtype, *, allow_repeats: bool):
    """A view of `shape` into a fresh buffer: any order of dims, gaps, reversed dims, and (when
    allowed) zero or too-small strides that fold elements onto each other."""
    itemsize = np.dtype(dtype).itemsize
    nd = len(shape)
    strides = [0] * nd
    order = draw(st.permutations(range(nd)))
    span = 1
    for d in reversed(order):  # innermost first
        kind = draw(st.sampled_from(["packed", "gap"] + (["zero", "fold"] if allow_repeats else [])))
        step = {"packed": span, "gap": span + draw(st.integers(1, 3)), "zero": 0,
                "fold": max(1, span // 2)}[kind]
        if d == nd - 1 and kind in ("packed", "gap") and draw(st.booleans()):
            step = 1  # most calls keep the last axis contiguous (fwt's fast rows)
        strides[d] = step * (-1 if draw(st.integers(0, 5)) == 0 else 1)
        span = max(span, abs(strides[d]) * (shape[d] - 1) + 1) if shape[d] else span
    low = sum(s * (n - 1) for s, n in zip(strides, shape) if s < 0 and n)
    high = sum(s * (n - 1) for s, n in zip(strides, shape) if s > 0 and n)
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    buf = rng.standard_normal(high - low + 1 + 2 * PAD).astype(dtype)
    return np.lib.stride_tricks.as_strided(buf[PAD - low:], shape, [s * itemsize for s in strides])


def shifted(view: np.ndarray, shift: int) -> np.ndarray:
    """The same layout `shift` elements (|shift| <= PAD) further into the view's buffer."""
    buf = root(view)
    start = (view.__array_interface__["data"][0] - buf.__array_interface__["data"][0]) // view.itemsize
    return np.lib.stride_tricks.as_strided(buf[start + shift:], view.shape, view.strides)


def draw_fwt_case(data):
    """(x, out or None, how out was made, axis): the transformed axis anywhere."""
    dtype = data.draw(st.sampled_from([np.float32, np.float64]))
    batch = data.draw(st.lists(st.integers(0, 3), min_size=0, max_size=3))
    log_n = data.draw(st.integers(0, 5))
    at = data.draw(st.integers(0, len(batch)))
    shape = tuple(batch[:at]) + (1 << log_n,) + tuple(batch[at:])
    axis = at - len(shape) if data.draw(st.booleans()) else at
    x = data.draw(strided_view(shape, dtype, allow_repeats=False))
    choice = data.draw(st.sampled_from(["new", "in_place", "view", "shares_x"]))
    out = {"new": None, "in_place": x}.get(choice)
    if choice == "view":
        out = data.draw(strided_view(shape, dtype, allow_repeats=True))
    elif choice == "shares_x":
        out = shifted(x, data.draw(st.integers(-PAD, PAD)))
    return x, out, choice, axis


def draw_gemm_case(data):
    """(a, b, c or None, out or None, keyword arguments, how out was made)."""
    m, n, k = (data.draw(st.integers(0, 5)) for _ in range(3))
    trans_a, trans_b = data.draw(st.booleans()), data.draw(st.booleans())
    a = data.draw(strided_view((k, m) if trans_a else (m, k), np.float64, allow_repeats=True))
    b = data.draw(strided_view((n, k) if trans_b else (k, n), np.float64, allow_repeats=True))
    beta = data.draw(st.sampled_from([0.0, 1.0, -0.5]))
    c = data.draw(st.one_of(st.none(), strided_view((m, n), np.float64, allow_repeats=True)))
    choice = data.draw(st.sampled_from(["new", "view", "c", "a"]))
    out = {"new": None, "c": c, "a": a if a.shape == (m, n) else None}.get(choice)
    if choice == "view":
        out = data.draw(strided_view((m, n), np.float64, allow_repeats=True))
    return a, b, c, out, dict(beta=beta, trans_a=trans_a, trans_b=trans_b), "new" if out is None else choice


@SETTINGS
@given(st.data())
def test_fwt_random_layouts_and_aliasing(data):
    x, out, choice, axis = draw_fwt_case(data)
    shape, dtype = x.shape, x.dtype
    x_before = x.copy()
    out_before = None if out is None else out.copy()
    expect = fwt_reference(x_before.astype(np.float64), axis=axis)
    refuse = out is not None and (repeats(out) or (shares_bytes(out, x) and not same_elements(out, x)))
    try:
        y = ik.fwt(x, out=out, axis=axis)
    except ValueError as e:
        event("refused (must)" if refuse else "refused")
        assert "repeats elements" in str(e) or "overlaps" in str(e), str(e)
        np.testing.assert_array_equal(x, x_before)
        if out is not None:
            np.testing.assert_array_equal(out, out_before)
        return
    event(f"computed, out={choice}")
    assert not refuse, f"accepted an out that aliases wrongly: shape {shape}, strides {None if out is None else out.strides}"
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(y, expect, rtol=tol, atol=tol * max(1.0, np.abs(expect).max(initial=0)))
    if out is None or not same_elements(out, x):
        np.testing.assert_array_equal(x, x_before)


@SETTINGS
@given(st.data())
def test_gemm_random_layouts_and_aliasing(data):
    a, b, c, out, kw, choice = draw_gemm_case(data)
    beta, trans_a, trans_b = kw["beta"], kw["trans_a"], kw["trans_b"]
    use_c = c is not None and beta != 0.0
    before = [v.copy() for v in (a, b, c, out) if v is not None]
    oa, ob = (a.T if trans_a else a), (b.T if trans_b else b)
    expect = oa @ ob + (beta * c if use_c else 0.0)
    refuse = out is not None and (repeats(out) or shares_bytes(out, a) or shares_bytes(out, b) or (
        use_c and shares_bytes(out, c) and not same_elements(out, c)))
    no_c = c is None and beta != 0.0  # beta without c: refused, naming both
    try:
        y = ik.gemm(a, b, c=c, beta=beta, trans_a=trans_a, trans_b=trans_b, out=out)
    except ValueError as e:
        event("refused (must)" if refuse or no_c else "refused")
        assert ("repeats elements" in str(e) or "overlaps" in str(e) or
                (no_c and "beta" in str(e) and "c is None" in str(e))), str(e)
        for v, v0 in zip([v for v in (a, b, c, out) if v is not None], before):
            np.testing.assert_array_equal(v, v0)
        return
    event(f"computed, out={choice}")
    assert not no_c, "accepted beta != 0 without c"
    assert not refuse, f"accepted an out that aliases wrongly: out strides {out.strides}"
    scale = np.abs(oa).sum(axis=1, keepdims=True) * np.abs(ob).max(initial=0) + (abs(beta) * np.abs(c) if use_c else 0) + 1
    assert np.all(np.abs(y - expect) <= 1e-12 * scale), (y, expect)
    for v, v0 in zip((a, b), before[:2]):
        if v is not out:
            np.testing.assert_array_equal(v, v0)


@pytest.mark.parametrize("m,n,k", [(0, 3, 2), (3, 0, 2), (3, 2, 0), (0, 0, 0)])
def test_gemm_empty_dimensions_follow_numpy(m, n, k):
    a, b = np.ones((m, k)), np.ones((k, n))
    np.testing.assert_array_equal(ik.gemm(a, b), a @ b)
    c = np.full((m, n), 2.0)
    np.testing.assert_array_equal(ik.gemm(a, b, c=c, beta=3.0), a @ b + 3.0 * c)
    nan_c = np.full((m, n), np.nan)
    np.testing.assert_array_equal(ik.gemm(a, b, c=nan_c, beta=0.0), np.zeros((m, n)))  # beta = 0 ignores c


# ------------------------------------------------------------------------ the same calls on a GPU
def mirror(cp, views):
    """Device copies of host views: each root buffer copied once, each view rebuilt on its copy with
    the same offset and strides (so views that share a host buffer share its device copy)."""
    roots, out = {}, []
    for v in views:
        if v is None:
            out.append(None)
            continue
        r = root(v)
        if id(r) not in roots:
            roots[id(r)] = (r, cp.asarray(r))
        host, dev = roots[id(r)]
        offset = (v.__array_interface__["data"][0] - host.__array_interface__["data"][0]) // v.itemsize
        out.append(cp.lib.stride_tricks.as_strided(dev[offset:], v.shape, v.strides))
    return out, [d for _, d in roots.values()]


def outcome(call):
    try:
        return "ok", call()
    except (TypeError, ValueError) as e:
        return type(e).__name__, str(e)


def misread_negative_strides(cp, dev, views) -> bool:
    """Whether a device refusal is the one for a producer that exports negative strides wrongly
    (CuPy before the fix of cupy#10172), and this CuPy does, and a view has one."""
    buggy = ik._core.describe(cp.zeros(2)[::-1])["strides"] != (-1,)
    negative = any(s < 0 for v in views if v is not None for s, e in zip(v.strides, v.shape) if e > 1)
    return dev[0] == "ValueError" and "exported them wrongly" in dev[1] and buggy and negative


def same_refusal(cp, dev_message, host_message, views) -> bool:
    """The device call's message is the host call's (device named as such), the strides aside where
    this CuPy exports negative ones wrongly and a view has one (even on a dimension of one element,
    where no layout check reads it)."""
    host_message = host_message.replace("cpu", "cuda:0")
    if dev_message == host_message:
        return True
    buggy = ik._core.describe(cp.zeros(2)[::-1])["strides"] != (-1,)
    negative = any(s < 0 for v in views if v is not None for s in v.strides)
    strides = re.compile(r"strides \([^)]*\)")
    return buggy and negative and strides.sub("strides", dev_message) == strides.sub("strides", host_message)


GPU_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.gpu
@GPU_SETTINGS
@given(st.data())
def test_fwt_layouts_on_the_device_as_on_the_host(data):
    """Device arrays and device outs of every layout above: refused exactly where the host call is
    (with the same message, nothing written), otherwise the CPU's result within rounding."""
    cp = pytest.importorskip("cupy")
    x, out, _, axis = draw_fwt_case(data)
    (dx, dout), buffers = mirror(cp, [x, out])
    before = [b.copy() for b in buffers]
    host = outcome(lambda: np.array(ik.fwt(x, out=out, axis=axis), copy=True))
    dev = outcome(lambda: cp.asnumpy(ik.fwt(dx, out=dout, axis=axis)))
    if misread_negative_strides(cp, dev, [x, out]):
        for b, b0 in zip(buffers, before):
            cp.testing.assert_array_equal(b, b0)
        return
    assert host[0] == dev[0], (host, dev)
    if host[0] != "ok":
        assert same_refusal(cp, dev[1], host[1], [x, out]), (host, dev)
        for b, b0 in zip(buffers, before):
            cp.testing.assert_array_equal(b, b0)
        return
    tol = 1e-5 if x.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(dev[1], host[1], rtol=tol, atol=tol * max(1.0, np.abs(host[1]).max(initial=0)))


@pytest.mark.gpu
@GPU_SETTINGS
@given(st.data())
def test_gemm_layouts_on_the_device_as_on_the_host(data):
    """As for fwt; the CUDA backend's results equal the CPU reference's bit for bit."""
    cp = pytest.importorskip("cupy")
    a, b, c, out, kw, _ = draw_gemm_case(data)
    (da, db, dc, dout), buffers = mirror(cp, [a, b, c, out])
    before = [x.copy() for x in buffers]
    host = outcome(lambda: np.array(ik.gemm(a, b, c=c, out=out, **kw), copy=True))
    dev = outcome(lambda: cp.asnumpy(ik.gemm(da, db, c=dc, out=dout, **kw)))
    if misread_negative_strides(cp, dev, [a, b, c, out]):
        for x, x0 in zip(buffers, before):
            cp.testing.assert_array_equal(x, x0)
        return
    assert host[0] == dev[0], (host, dev)
    if host[0] != "ok":
        assert same_refusal(cp, dev[1], host[1], [a, b, c, out]), (host, dev)
        for x, x0 in zip(buffers, before):
            cp.testing.assert_array_equal(x, x0)
        return
    np.testing.assert_array_equal(dev[1], host[1])


@pytest.mark.gpu
def test_reversed_cupy_rows_are_transformed_or_refused_by_name():
    """A batch read backwards: the right result where CuPy exports negative strides correctly, else a
    ValueError naming the wrong export; never a write outside the array."""
    cp = pytest.importorskip("cupy")
    base = cp.arange(4 * 8, dtype=cp.float64).reshape(4, 8)
    guard = cp.zeros((3, 4, 8))
    guard[1] = base
    x = guard[1][::-1]
    try:
        y = ik.fwt(x)
    except ValueError as e:
        assert "exported them wrongly" in str(e) and "fwt: x" in str(e)
    else:
        np.testing.assert_allclose(cp.asnumpy(y), fwt_reference(cp.asnumpy(base)[::-1]), rtol=1e-12)
    assert float(cp.abs(guard[0]).sum() + cp.abs(guard[2]).sum()) == 0.0
