"""Array and stream interop: which framework an array belongs to, where it lives, how to allocate
a result of the same kind, and which CUDA stream to use. No data is ever copied here."""
from __future__ import annotations

import numbers
import operator
import sys
from typing import Any, Optional, Sequence

from . import _core

_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 13


_FRAMEWORK_OF_TYPE: dict = {}  # asked several times per call: one lookup per array type


def framework_of(a: Any, what: str = "argument") -> str:
    """'numpy', 'torch', 'cupy', 'jax' or 'dlpack' (any other object with __dlpack__). `what` names the
    argument in the TypeError for a non-array ("fwt: x")."""
    fw = _FRAMEWORK_OF_TYPE.get(type(a))
    if fw is not None:
        return fw
    mod = type(a).__module__.split(".")[0]
    if mod in ("numpy", "torch", "cupy", "jax", "jaxlib"):
        fw = "jax" if mod == "jaxlib" else mod
    elif hasattr(a, "__dlpack__"):
        fw = "dlpack"
    else:
        raise TypeError(
            f"{what} must be an array (NumPy, PyTorch, CuPy, JAX or any object with __dlpack__), "
            f"got {type(a).__name__}"
        )
    _FRAMEWORK_OF_TYPE[type(a)] = fw
    return fw


def describe(a: Any, what: str = "argument") -> dict:
    """shape, strides (in elements), dtype name, DLPack device and writability of any DLPack array,
    read through the extension (for producers without .shape/.dtype, such as ironkernels.empty's)."""
    info = _core.describe(a)
    if info is None:
        raise TypeError(f"{what} ({type(a).__name__}) cannot be read as an array through DLPack")
    return info


def shape_of(a: Any, what: str = "argument") -> tuple:
    if framework_of(a, what) == "dlpack":
        return tuple(describe(a, what)["shape"])
    return tuple(int(s) for s in a.shape)


def device_of(a: Any) -> tuple[str, int]:
    """('cpu', 0) or ('cuda', device_id), from the DLPack device of the array."""
    if _FRAMEWORK_OF_TYPE.get(type(a)) == "torch":
        # Tensor.__dlpack_device__ is a Python method (~2.5 us); these are attribute reads.
        if a.is_cuda:
            return "cuda", a.get_device()
        if a.is_cpu:
            return "cpu", 0
        raise TypeError(f"tensor is on torch device '{a.device}'; accepted: CPU or CUDA memory")
    if hasattr(a, "__dlpack_device__"):
        kind, dev = a.__dlpack_device__()
        kind = int(kind)
        if kind in (_DL_CPU, _DL_CUDA_HOST):
            return "cpu", 0
        if kind in (_DL_CUDA, _DL_CUDA_MANAGED):
            return "cuda", int(dev)
        raise TypeError(f"array lives on DLPack device type {kind}; accepted: CPU or CUDA memory")
    return "cpu", 0  # buffer-protocol objects


def is_numpy_bfloat16(a: Any) -> bool:
    # ml_dtypes' bfloat16 is a 2-byte void-kind dtype; dtype.name is slow (microseconds), so it is
    # read only for those.
    if framework_of(a) != "numpy":
        return False
    dt = a.dtype
    return dt.kind == "V" and dt.itemsize == 2 and dt.name == "bfloat16"


def core_view(a: Any) -> Any:
    """What to hand to the extension: NumPy has no DLPack bfloat16, so ml_dtypes arrays go as uint16;
    a torch tensor goes as its DLPack capsule from torch's C exporter, which costs a fraction of
    Tensor.__dlpack__ (a Python method: 3-5 us per array, the largest part of a small call).
    Tensors that require grad keep the Tensor.__dlpack__ path, so torch's own rules for them apply."""
    fw = framework_of(a)
    if fw == "torch" and not a.requires_grad:
        import torch  # (importing torch loads torch.utils.dlpack)

        return torch.utils.dlpack.to_dlpack(a)
    if fw == "numpy" and is_numpy_bfloat16(a):
        import numpy as np

        return a.view(np.uint16)
    return a


def dtype_name(a: Any) -> str:
    """The NumPy-style dtype name: 'float32', 'bfloat16', 'bool', 'complex64', 'object', ..."""
    fw = framework_of(a)
    if fw == "dlpack":
        return describe(a)["dtype"]
    dt = a.dtype
    if fw == "numpy":
        return "object" if dt.kind == "O" else dt.name
    return str(dt).replace("torch.", "")


def _not_viewable(what: str, a: Any, accepted: str, writable: bool):
    """The TypeError/ValueError for an array the extension could not view: why, and what is accepted."""
    if framework_of(a, what) == "numpy":
        dt = a.dtype
        if dt.kind == "O" or dt.kind in "USMmV" and not is_numpy_bfloat16(a):
            return TypeError(f"{what} has dtype {dt.name if dt.kind != 'O' else 'object'}; accepted: {accepted}")
        if not dt.isnative:
            return TypeError(f"{what} has non-native byte order (dtype {dt.str!r}); accepted: native byte order, "
                             f"e.g. {what.split(': ')[-1]}.astype({dt.newbyteorder('=').str!r})")
        if writable and not a.flags.writeable:
            return ValueError(f"{what} is read-only; accepted: a writable array")
    info = _core.describe(a)
    if info is None:
        if framework_of(a, what) == "numpy":  # a dtype DLPack cannot carry (float128, ...)
            return TypeError(f"{what} has dtype {a.dtype.name}; accepted: {accepted}")
        return TypeError(f"{what} ({type(a).__name__}) cannot be read as an array through DLPack "
                         f"(dtype {getattr(a, 'dtype', '?')}); accepted: arrays of {accepted}")
    if writable and not info["writable"]:
        return ValueError(f"{what} is read-only; accepted: a writable array")
    return None


def raise_unviewable(op: str, error: TypeError, arrays: dict, accepted: str, writable: Sequence[str] = ("out",)):
    """Re-raises nanobind's "incompatible function arguments" for one of `arrays` ({name: array}) as
    an error saying which, why and what is accepted; any other TypeError as it was. Nothing has run
    at that point: argument conversion precedes the call."""
    if "incompatible function arguments" not in str(error):
        raise error
    for name, a in arrays.items():
        err = _not_viewable(f"{op}: {name}", a, accepted, name in writable)
        if err is not None:
            raise err from None
    raise TypeError(f"{op}: the arguments could not be passed to the extension ("
                    + ", ".join(f"{n}: {type(a).__name__}" for n, a in arrays.items())
                    + f"); accepted: arrays of {accepted}") from None


def call_core(op: str, call, arrays: dict, accepted: str, writable: Sequence[str] = ("out",)):
    """call(), with raise_unviewable's errors."""
    try:
        return call()
    except TypeError as e:
        raise_unviewable(op, e, arrays, accepted, writable)


def empty_like(a: Any, shape: Optional[Sequence[int]] = None, dtype: Optional[str] = None) -> Any:
    """A new C-contiguous array with a's shape (or `shape`), dtype (or the one named: 'uint8', 'int8',
    'float32', …) and device, of a's framework; of an array of no framework, in a's Fortran order
    where a has it (so that copying a into it is one span, which the package's own copy needs)."""
    fw = framework_of(a)
    if dtype is not None:
        return _empty_of(a, fw, tuple(shape_of(a) if shape is None else shape), dtype)
    if fw == "torch" and shape is None:
        import torch

        return torch.empty_like(a, memory_format=torch.contiguous_format)  # one call: the cheapest on the host
    shape = shape_of(a) if shape is None else tuple(shape)
    if fw == "numpy":
        import numpy as np

        return np.empty(shape, dtype=a.dtype)
    if fw == "torch":
        import torch

        return torch.empty(shape, dtype=a.dtype, device=a.device)
    if fw == "cupy":
        import cupy

        with a.device:
            return cupy.empty(shape, dtype=a.dtype)
    kind, dev = device_of(a)
    name = "bfloat16" if is_numpy_bfloat16(a) else dtype_name(a)
    order = "F" if fw == "dlpack" and shape == shape_of(a) and _is_fortran(describe(a)) else "C"
    raw = _core.empty(list(shape), name, kind, dev, order)
    if fw == "jax":
        import jax.dlpack

        return jax.dlpack.from_dlpack(raw)
    return raw


# Every dtype an op returns (fwt's), and bytes for workspaces.
def _empty_of(a: Any, fw: str, shape: tuple, dtype: str) -> Any:
    """A C-contiguous array of `dtype` on a's device, of a's framework."""
    if fw == "numpy":
        import numpy as np

        return np.empty(shape, dtype=dtype)
    if fw == "torch":
        import torch

        return torch.empty(shape, dtype=getattr(torch, dtype), device=a.device)
    if fw == "cupy":
        import cupy

        with a.device:
            return cupy.empty(shape, dtype=dtype)
    kind, dev = device_of(a)
    raw = _core.empty(list(shape), dtype, kind, dev)
    if fw == "jax":
        import jax.dlpack

        return jax.dlpack.from_dlpack(raw)
    return raw


def _is_fortran(info: dict) -> bool:
    """Whether describe()'s shape and strides are Fortran-contiguous and not also C-contiguous."""
    step, shape, strides = 1, info["shape"], info["strides"]
    for n, s in zip(shape, strides):
        if n > 1 and s != step:
            return False
        step *= n
    return sum(n > 1 for n in shape) > 1


_EMPTY_DTYPES = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128", "int32", "int64", "int8",
                 "uint8")


def _dtype_text(dtype: Any) -> str:
    """A dtype's name from NumPy dtypes and scalar types (np.float32, ml_dtypes' bfloat16), PyTorch
    dtypes (torch.float32) or anything with a string `name`."""
    try:
        import numpy as np

        return np.dtype(dtype).name
    except (ImportError, TypeError):
        pass
    name = getattr(dtype, "name", None)
    return name if isinstance(name, str) else str(dtype).replace("torch.", "")


def empty(shape: Sequence[int], dtype: str = "float32", device: str = "cpu", device_id: int = 0) -> Any:
    """An uninitialised C-contiguous array owned by ironkernels (exports DLPack), for callers with no
    GPU framework: ``empty((4096, 1024), "bfloat16", "cuda")``."""
    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        dims = [operator.index(s) for s in shape]
    except TypeError:
        raise TypeError(f"empty: shape must be a sequence of ints, got {shape!r}") from None
    if any(d < 0 for d in dims):
        raise ValueError(f"empty: shape {tuple(dims)} has a negative extent; accepted: extents >= 0")
    if not isinstance(dtype, str):
        dtype = _dtype_text(dtype)
    if dtype not in _EMPTY_DTYPES:
        raise TypeError(f"empty: dtype {dtype!r} is not accepted; accepted: {', '.join(_EMPTY_DTYPES)}")
    if device not in ("cpu", "cuda"):
        raise ValueError(f"empty: device {device!r}; accepted: 'cpu', 'cuda'")
    if device == "cuda" and not _core.build_info()["cuda"]:
        raise ValueError("empty: device='cuda' but this copy of ironkernels was built without CUDA; accepted: 'cpu'")
    if isinstance(device_id, bool) or not isinstance(device_id, numbers.Integral) or device_id < 0:
        raise ValueError(f"empty: device_id {device_id!r}; accepted: an int >= 0")
    return _core.empty(dims, dtype, device, int(device_id))


def _torch_current_stream(index: int) -> int:
    import torch

    # The raw handle without building a torch.cuda.Stream object (a few microseconds per call,
    # which is the whole kernel for a small tensor); the public call where torch lacks it.
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return int(raw(index))
    return int(torch.cuda.current_stream(index).cuda_stream)


def torch_stream(handle: int, device: Any) -> Any:
    """A torch.cuda.Stream for a raw handle. Not torch.cuda.ExternalStream: given 0 (the NULL stream,
    the default stream's handle) it returns a fresh pooled stream (pytorch/pytorch#182960), on which
    work would run unordered with the NULL stream's."""
    import torch

    from_external = getattr(torch.cuda, "get_stream_from_external", None)  # torch >= 2.7
    if from_external is not None:
        return from_external(handle, device)
    if handle == 0:
        return torch.cuda.default_stream(device)
    return torch.cuda.ExternalStream(handle, device=device)


def cupy_stream(cupy, handle: int, device_id: int) -> Any:
    """A CuPy stream object for a raw handle (Stream.from_external in CuPy >= 14)."""
    from_external = getattr(cupy.cuda.Stream, "from_external", None)
    if from_external is not None:

        class _Handle:  # the CUDA stream protocol: (version, handle)
            def __cuda_stream__(self):
                return (0, handle)

        return from_external(_Handle())
    return cupy.cuda.ExternalStream(handle, device_id)


def on_stream(stream: Any, a: Any):
    """A context in which the framework of CUDA array `a` enqueues its own operations on `stream` (a
    handle or stream object, as gemm takes it); no context for None (the framework's current stream,
    which the library's calls use too) or host arrays."""
    import contextlib

    if stream is None or device_of(a)[0] != "cuda":
        return contextlib.nullcontext()
    handle, fw = resolve_stream(stream, a), framework_of(a)
    if fw == "torch":
        import torch

        return torch.cuda.stream(torch_stream(handle, a.device))
    if fw == "cupy":
        import cupy

        stack = contextlib.ExitStack()
        stack.enter_context(cupy.cuda.Device(a.device.id))
        stack.enter_context(cupy_stream(cupy, handle, a.device.id))
        return stack
    return contextlib.nullcontext()


def _cupy_current_stream(index: int) -> int:
    import cupy

    with cupy.cuda.Device(index):
        return int(cupy.cuda.get_current_stream().ptr)


def loaded_framework_stream(index: int) -> int:
    """The current stream on CUDA device `index` of the framework the process has loaded (torch,
    else CuPy), for calls without an array to take it from; 0, the default stream, without one."""
    if "torch" in sys.modules:
        return _torch_current_stream(index)
    if "cupy" in sys.modules:
        return _cupy_current_stream(index)
    return 0


def resolve_stream(stream: Any, a: Any, device: Optional[tuple] = None) -> int:
    """The CUDA stream handle to launch on: an int, an object with __cuda_stream__ (or
    .cuda_stream / .ptr), or None for the current stream of a's framework (0, the default
    stream, for frameworks without one). `device`: a's device_of, when the caller has it."""
    if stream is None:
        device = device or device_of(a)
        if device[0] != "cuda":
            return 0
        fw = framework_of(a)
        if fw == "torch":
            return _torch_current_stream(device[1])
        if fw == "cupy":
            return _cupy_current_stream(device[1])
        return 0
    if isinstance(stream, bool):
        raise TypeError("stream must be an int handle or a stream object, got bool")
    if isinstance(stream, int):
        if stream < 0:
            raise ValueError(f"stream handle must be >= 0, got {stream}")
        return stream
    if hasattr(stream, "__cuda_stream__"):
        proto = stream.__cuda_stream__
        val = proto() if callable(proto) else proto
        return int(val[1]) if isinstance(val, tuple) else int(val)
    for attr in ("cuda_stream", "ptr", "handle"):
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    raise TypeError(
        f"stream must be an int handle or an object with __cuda_stream__, got {type(stream).__name__}"
    )

