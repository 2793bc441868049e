"""The installed package: one copy of the library, the lcn submodule, arrays from any DLPack producer
(ironkernels.empty's own have no .shape or .dtype), and empty gemm dimensions on the device."""
import glob
import os

import numpy as np
import pytest

import ironkernels as ik
from ironkernels.reference import fwt_reference
from refusal_helpers import NoShape


def test_the_library_is_installed_once():
    lib = os.path.join(os.path.dirname(ik.__file__), "lib")
    if not os.path.isdir(lib):
        pytest.skip("not a pip-installed copy (no lib folder beside the package)")
    files = sorted(os.path.basename(f) for f in glob.glob(os.path.join(lib, "libironkernels*")))
    # (once: no versioned copies beside it; CUDA builds add the cuBLAS drop-in)
    assert files == ["libironkernels.so"] + (["libironkernels_cublas.so"] if ik.build_info()["cuda"] else []), files


def test_lcn_is_a_package_whose_names_resolve():
    import importlib
    import sys

    assert "lcn" in ik.__all__ and ik.lcn is sys.modules["ironkernels.lcn"]
    assert hasattr(ik.lcn, "__path__"), "ironkernels.lcn should be a package"
    for name in ik.lcn.__all__:
        value = getattr(ik.lcn, name)
        module = getattr(value, "__module__", None)
        if module is not None and callable(value):
            assert module.startswith("ironkernels.lcn"), (name, module)
            assert getattr(importlib.import_module(module), value.__name__) is value


def test_arrays_without_shape_work_everywhere(rng):
    x = rng.standard_normal((6, 16))
    e = ik.empty((6, 16), "float64")
    np.from_dlpack(e)[...] = x
    y = ik.fwt(e)  # an ironkernels array in, one out
    np.testing.assert_allclose(np.from_dlpack(y), fwt_reference(x), rtol=1e-12, atol=1e-12)
    ik.fwt(NoShape(x.copy()), out=e)
    np.testing.assert_allclose(np.from_dlpack(e), fwt_reference(x), rtol=1e-12, atol=1e-12)
    a, b = rng.standard_normal((5, 4)), rng.standard_normal((4, 3))
    c = ik.gemm(NoShape(a), NoShape(b))
    np.testing.assert_allclose(np.from_dlpack(c), a @ b, rtol=1e-13)
    out = ik.empty((5, 3), "float64")
    ik.gemm(a, NoShape(b), out=out)
    np.testing.assert_allclose(np.from_dlpack(out), a @ b, rtol=1e-13)
    for c in (rng.standard_normal((5, 3)), np.asfortranarray(rng.standard_normal((5, 3)))):
        got = np.from_dlpack(ik.gemm(NoShape(a), NoShape(b), c=NoShape(c), beta=-2.0))
        assert got.flags.f_contiguous == c.flags.f_contiguous  # out takes c's layout: one span to copy
        np.testing.assert_allclose(got, a @ b - 2 * c, rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128", "int32", "int64"])
def test_fwt_of_a_framework_free_array_allocates_its_dtype(dtype):
    """A result allocated for an array of no framework (empty's own, JAX's) has the input's dtype,
    whichever of fwt's dtypes it is."""
    x = np.arange(12).reshape(3, 4).astype(dtype)
    e = ik.empty(x.shape, dtype)
    np.from_dlpack(e)[...] = x
    y = np.from_dlpack(ik.fwt(NoShape(np.from_dlpack(e))))
    assert y.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(y, fwt_reference(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)))


def test_count_crossings_of_framework_free_arrays():
    """Arrays with no .shape and no len() (empty's own, any bare DLPack producer): the result is
    allocated from their DLPack shape."""
    xy = np.array([[0, 0], [4, 4], [0, 4], [4, 0]], np.int64)
    edges = np.array([[0, 1], [2, 3]], np.int64)
    got = ik.lcn.count_crossings(NoShape(xy), NoShape(edges))
    np.testing.assert_array_equal(np.from_dlpack(got), [1, 1])


def test_empty_takes_the_dtypes_it_lists_in_every_spelling():
    import ml_dtypes

    for dtype in ("float32", np.float32, np.dtype("float32")):
        assert np.from_dlpack(ik.empty((4, 4), dtype)).dtype == np.float32
    assert np.from_dlpack(ik.empty((2,), np.int64)).dtype == np.int64
    assert tuple(ik.empty((3,), ml_dtypes.bfloat16).__dlpack_device__()) == (1, 0)


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k", [(0, 3, 2), (3, 0, 2), (3, 2, 0), (0, 0, 0)])
def test_gemm_empty_dimensions_on_the_device(m, n, k):
    cp = pytest.importorskip("cupy")
    a, b = cp.ones((m, k)), cp.ones((k, n))
    assert ik.gemm(a, b).shape == (m, n)
    c = cp.full((m, n), 2.0)
    cp.testing.assert_array_equal(ik.gemm(a, b, c=c, beta=3.0), cp.full((m, n), 6.0))
    out = cp.full((m, n), 7.0)
    ik.gemm(a, b, c=cp.full((m, n), cp.nan), beta=0.0, out=out)
    cp.testing.assert_array_equal(out, cp.zeros((m, n)))


def test_calls_without_an_array_take_the_loaded_frameworks_stream(monkeypatch):
    """lcn.Evaluator has no array to take a stream from: torch's current stream when torch is
    loaded, else CuPy's, else the default stream."""
    import sys
    import types

    from ironkernels._interop import loaded_framework_stream

    monkeypatch.delitem(sys.modules, "torch", raising=False)
    monkeypatch.delitem(sys.modules, "cupy", raising=False)
    assert loaded_framework_stream(0) == 0

    class Device:
        def __init__(self, index):
            self.index = index

        def __enter__(self):
            cupy.current = self.index

        def __exit__(self, *exc):
            cupy.current = None

    cupy = types.SimpleNamespace(current=None)
    cupy.cuda = types.SimpleNamespace(Device=Device, get_current_stream=lambda: types.SimpleNamespace(ptr=500 + cupy.current))
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    assert loaded_framework_stream(1) == 501
    torch = types.SimpleNamespace(_C=types.SimpleNamespace(_cuda_getCurrentRawStream=lambda index: 700 + index))
    monkeypatch.setitem(sys.modules, "torch", torch)
    assert loaded_framework_stream(2) == 702
