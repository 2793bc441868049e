"""Device arrays for the GPU suites, from whichever framework this Python has: PyTorch with CUDA, else
CuPy, else ironkernels' own memory (`ironkernels.empty`, seen through strided DLPack views), so the
suites run wherever a GPU is and skip only where there is none.

`IRONKERNELS_TEST_ARRAYS` = torch | cupy | own picks one. `own-cpu` runs the GPU suites' code on host
memory, to check the tests themselves on a machine without a GPU (their GPU-only assertions fail
there, as they should)."""
from __future__ import annotations

import ctypes
import os

import numpy as np
import pytest

import ironkernels
from ironkernels import _core

try:
    import ml_dtypes

    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover
    BF16 = None


# ---- DLPack (dlpack.h, unversioned) -------------------------------------------------------------
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype, _capsule_new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype, _capsule_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]

_DL_CPU, _DL_CUDA = 1, 2


def _dl_dtype(dtype: np.dtype) -> _DLDataType:
    code = 4 if dtype == BF16 else {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}[dtype.kind]
    return _DLDataType(code, dtype.itemsize * 8, 1)


def _data_pointer(array) -> int:
    """The data pointer of a DLPack producer, read from a capsule that is then released unused."""
    capsule = array.__dlpack__()  # held while its tensor is read
    tensor = _DLManagedTensor.from_address(_capsule_pointer(capsule, b"dltensor")).dl_tensor
    return (tensor.data or 0) + tensor.byte_offset


class OwnArray:
    """A strided view of memory from `ironkernels.empty`. The view's shape, strides and offset live in a
    NumPy array over a one-element buffer that is never read (`_layout`), so NumPy's basic indexing,
    reshape and .T make the views; __dlpack__ hands a view to any consumer."""

    def __init__(self, buffer, layout: np.ndarray, origin: int, device: tuple):
        self._buffer, self._layout, self._origin, self._device = buffer, layout, origin, device
        self._pointer = _data_pointer(buffer)
        self._exported = []  # DLPack structures handed out live as long as the view

    @classmethod
    def empty(cls, shape, dtype, device):
        dtype, shape = np.dtype(dtype), tuple(int(s) for s in shape)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        # float64 words: the dtype the package's copy takes that holds any bytes, 8-byte aligned
        buffer = ironkernels.empty((max(-(-nbytes // 8), 1),), "float64", device[0], device[1])
        strides, step = [], dtype.itemsize
        for s in reversed(shape):
            strides.insert(0, step)
            step *= max(s, 1)
        layout = np.lib.stride_tricks.as_strided(np.empty(1, dtype), shape, tuple(strides))
        return cls(buffer, layout, layout.__array_interface__["data"][0], device)

    def _view(self, layout):
        return OwnArray(self._buffer, layout, self._origin, self._device)

    shape = property(lambda self: self._layout.shape)
    dtype = property(lambda self: self._layout.dtype)
    ndim = property(lambda self: self._layout.ndim)
    T = property(lambda self: self._view(self._layout.T))
    offset = property(lambda self: self._layout.__array_interface__["data"][0] - self._origin)

    def __getitem__(self, index):
        view = self._layout[index]
        if not isinstance(view, np.ndarray) or view.base is None:  # a copy: advanced indexing
            raise TypeError("OwnArray takes basic indexing (slices and integers) only")
        return self._view(view)

    def reshape(self, *shape):
        return self._view(np.reshape(self._layout, shape[0] if len(shape) == 1 else shape, copy=False))

    def __dlpack_device__(self):
        return (_DL_CUDA if self._device[0] == "cuda" else _DL_CPU, self._device[1])

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        rank, itemsize = self.ndim, self.dtype.itemsize
        shape = (ctypes.c_int64 * max(rank, 1))(*self.shape)
        strides = (ctypes.c_int64 * max(rank, 1))(*(s // itemsize for s in self._layout.strides))
        managed = _DLManagedTensor()
        managed.dl_tensor = _DLTensor(self._pointer + self.offset, _DLDevice(*self.__dlpack_device__()), rank,
                                      _dl_dtype(self.dtype), shape, strides, 0)
        self._exported.append((managed, shape, strides))
        return _capsule_new(ctypes.addressof(managed), b"dltensor", None)

    def _buffer_bytes(self) -> np.ndarray:
        host = np.empty(ironkernels._interop.shape_of(self._buffer), np.float64)
        _core.copy_(host, self._buffer)
        self._sync()
        return host.view(np.uint8)

    def _sync(self):
        if self._device[0] == "cuda":
            _core.synchronize(0, self._device[1])

    def numpy(self) -> np.ndarray:
        if self._layout.size == 0:
            return np.empty(self.shape, self.dtype)
        whole = self._buffer_bytes()[self.offset:]
        typed = whole[: whole.size - whole.size % self.dtype.itemsize].view(self.dtype)
        return np.lib.stride_tricks.as_strided(typed, self.shape, self._layout.strides).copy()

    def write(self, x) -> "OwnArray":
        """Copies x (broadcast to this view's shape) into the view's elements."""
        x = np.broadcast_to(np.asarray(x).astype(self.dtype), self.shape)
        if x.size:
            whole = self._buffer_bytes()
            typed = whole[self.offset:]
            typed = typed[: typed.size - typed.size % self.dtype.itemsize].view(self.dtype)
            np.lib.stride_tricks.as_strided(typed, self.shape, self._layout.strides)[...] = x
            _core.copy_(self._buffer, whole.view(np.float64))
            self._sync()
        return self


# ---- one interface over the frameworks --------------------------------------------------------
def _poison(dtype: np.dtype):
    """NaN for floating and complex types, a byte pattern no transform makes of small inputs for ints."""
    return np.nan if dtype.kind in "fcV" or dtype == BF16 else np.frombuffer(b"\x5a" * dtype.itemsize, dtype)[0]


class Arrays:
    """put/get NumPy arrays to and from the device, allocate, poison, synchronise, and streams where the
    framework has them. `name` says which framework holds the arrays."""

    name = "?"

    def put(self, x, order="C"):
        raise NotImplementedError

    def empty(self, shape, dtype):
        raise NotImplementedError

    def full(self, shape, value, dtype="float64"):
        out = self.empty(shape, dtype)
        return self.fill(out, value)

    def zeros(self, shape, dtype="float64"):
        return self.full(shape, 0, dtype)

    def poisoned_like(self, y):
        return self.full(tuple(y.shape), _poison(dtype_of(y)), dtype_of(y))

    def poisoned(self, shape, dtype="float64"):
        return self.full(shape, _poison(np.dtype(dtype)), dtype)

    def copy(self, y):
        return self.put(get(y))

    def current_stream(self) -> int:
        """The handle of the framework's current stream (0, the default stream, for the package's own)."""
        return 0

    def stream(self):
        """(a new stream object of the framework, a context manager making it current, its handle) — or a
        skip where the framework has no streams."""
        pytest.skip(f"needs a framework with CUDA streams (PyTorch or CuPy); the arrays here are {self.name}")


class TorchArrays(Arrays):
    name = "PyTorch's"

    def __init__(self, torch):
        self.t = torch

    def put(self, x, order="C"):
        x = np.asarray(x)
        if x.dtype == BF16:
            y = self.t.from_numpy(np.ascontiguousarray(x.astype(np.float32))).cuda().to(self.t.bfloat16)
        else:
            y = self.t.from_numpy(np.ascontiguousarray(x)).cuda()
        return y if order == "C" else y.T.contiguous().T

    def empty(self, shape, dtype):
        dtype = np.dtype(dtype)
        name = "bfloat16" if dtype == BF16 else dtype.name
        return self.t.empty(tuple(shape), dtype=getattr(self.t, name), device="cuda")

    def fill(self, y, value):
        if isinstance(value, np.generic) and value.dtype.kind in "iu":
            value = int(value)
        y.fill_(value)
        return y

    def synchronize(self):
        self.t.cuda.synchronize()

    def current_stream(self):
        return self.t.cuda.current_stream().cuda_stream

    def stream(self):
        s = self.t.cuda.Stream()
        return s, self.t.cuda.stream(s), s.cuda_stream


class CupyArrays(Arrays):
    """CuPy has no bfloat16: those arrays are ironkernels' own."""
    name = "CuPy's"

    def __init__(self, cupy):
        self.cp = cupy
        self.own = OwnArrays(("cuda", 0))

    def put(self, x, order="C"):
        x = np.asarray(x)
        if x.dtype == BF16:
            return self.own.put(x, order)
        y = self.cp.asarray(np.ascontiguousarray(x))
        return y if order == "C" else self.cp.asfortranarray(y)

    def empty(self, shape, dtype):
        dtype = np.dtype(dtype)
        return self.own.empty(shape, dtype) if dtype == BF16 else self.cp.empty(tuple(shape), dtype)

    def fill(self, y, value):
        if isinstance(y, OwnArray):
            return self.own.fill(y, value)
        y.fill(value)
        return y

    def synchronize(self):
        self.cp.cuda.runtime.deviceSynchronize()

    def current_stream(self):
        return self.cp.cuda.get_current_stream().ptr

    def stream(self):
        s = self.cp.cuda.Stream(non_blocking=True)
        return s, s, s.ptr


class OwnArrays(Arrays):
    name = "ironkernels' own"

    def __init__(self, device):
        self.device = device

    def put(self, x, order="C"):
        x = np.asarray(x)
        if order == "F":
            return self.put(np.ascontiguousarray(x.T)).T
        return OwnArray.empty(x.shape, x.dtype, self.device).write(x)

    def empty(self, shape, dtype):
        return OwnArray.empty(shape, dtype, self.device)

    def fill(self, y, value):
        return y.write(value)

    def synchronize(self):
        if self.device[0] == "cuda":
            _core.synchronize(0, self.device[1])


def get(y) -> np.ndarray:
    """Any device (or host) array as a NumPy array of its values; bfloat16 as ml_dtypes' bfloat16."""
    if isinstance(y, OwnArray):
        return y.numpy()
    if isinstance(y, np.ndarray):
        return y
    mod = type(y).__module__.split(".")[0]
    if mod == "torch":
        import torch

        y = y.detach()
        if y.dtype == torch.bfloat16:
            return y.to(torch.float32).cpu().numpy().astype(BF16)
        return y.cpu().numpy()
    if mod == "cupy":
        return y.get()
    # ironkernels' own (results for callers without a framework) or any other DLPack producer
    info = ironkernels._interop.describe(y)
    host = np.empty(info["shape"], BF16 if info["dtype"] == "bfloat16" else info["dtype"])
    if host.size == 0:
        return host
    _core.copy_(host.view(np.uint16) if host.dtype == BF16 else host, y)
    _core.synchronize(0, info["device_id"]) if info["device_type"] == _DL_CUDA else None
    return host


def dtype_of(y) -> np.dtype:
    """The NumPy dtype of any array here (ml_dtypes' bfloat16 for bfloat16)."""
    name = str(y.dtype).replace("torch.", "")
    return BF16 if name == "bfloat16" else np.dtype(name)


def pick() -> Arrays:
    """The arrays the GPU suites use here (IRONKERNELS_TEST_ARRAYS, else the first framework that sees a
    GPU, else ironkernels' own); skips the calling test where there is no GPU."""
    choice = os.environ.get("IRONKERNELS_TEST_ARRAYS", "")
    if choice == "own-cpu":
        return OwnArrays(("cpu", 0))
    if not ironkernels.cuda_devices():
        pytest.skip("no GPU")
    if choice in ("", "torch"):
        try:
            import torch

            if torch.cuda.is_available():
                return TorchArrays(torch)
        except ImportError:
            pass
        if choice == "torch":
            pytest.fail("IRONKERNELS_TEST_ARRAYS=torch, but PyTorch with CUDA is not importable")
    if choice in ("", "cupy"):
        try:
            import cupy

            if cupy.cuda.runtime.getDeviceCount() > 0:
                return CupyArrays(cupy)
        except Exception:  # ImportError, or CuPy without a usable driver
            pass
        if choice == "cupy":
            pytest.fail("IRONKERNELS_TEST_ARRAYS=cupy, but CuPy with a GPU is not importable")
    return OwnArrays(("cuda", 0))
