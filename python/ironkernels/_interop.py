"""Array and stream interop: which framework an array belongs to, where it lives, how to allocate
a result of the same kind, and which CUDA stream to use. No data is ever copied here."""
from __future__ import annotations

from typing import Any, Optional, Sequence

from . import _core

_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 13


_FRAMEWORK_OF_TYPE: dict = {}  # asked several times per call: one lookup per array type


def framework_of(a: Any) -> str:
    """'numpy', 'torch', 'cupy', 'jax' or 'dlpack' (any other object with __dlpack__)."""
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
            f"expected an array (NumPy, PyTorch, CuPy, JAX or any object with __dlpack__), got {type(a).__name__}"
        )
    _FRAMEWORK_OF_TYPE[type(a)] = fw
    return fw


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
    return str(a.dtype).replace("torch.", "")


def empty_like(a: Any, shape: Optional[Sequence[int]] = None) -> Any:
    """A new C-contiguous array with a's shape (or `shape`), dtype and device, of a's framework."""
    fw = framework_of(a)
    if fw == "torch" and shape is None:
        import torch

        return torch.empty_like(a, memory_format=torch.contiguous_format)  # one call: the cheapest on the host
    shape = tuple(a.shape) if shape is None else tuple(shape)
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
    raw = _core.empty(list(shape), dtype_name(a), kind, dev)
    if fw == "jax":
        import jax.dlpack

        return jax.dlpack.from_dlpack(raw)
    return raw


def empty(shape: Sequence[int], dtype: str = "float32", device: str = "cpu", device_id: int = 0) -> Any:
    """An uninitialised array owned by ironkernels (exports DLPack), for callers with no GPU framework."""
    return _core.empty([int(s) for s in shape], dtype, device, device_id)


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
            import torch

            # The raw handle without building a torch.cuda.Stream object (a few microseconds per call,
            # which is the whole kernel for a small tensor); the public call where torch lacks it.
            raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
            if raw is not None:
                return int(raw(device[1]))
            return int(torch.cuda.current_stream(a.device).cuda_stream)
        if fw == "cupy":
            import cupy

            with a.device:
                return int(cupy.cuda.get_current_stream().ptr)
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

