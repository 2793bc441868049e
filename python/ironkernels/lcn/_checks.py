"""Argument checks every lcn function shares: each raises TypeError/ValueError naming the function,
the argument, what was given and what is accepted."""
from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

MAX_COORDINATE = 1 << 30


def _num(value: int) -> str:
    """An integer for a message (one too long for str(): its size)."""
    try:
        return str(value)
    except ValueError:
        return f"<an integer of {value.bit_length()} bits>"


def _show(value: Any, limit: int = 60) -> str:
    """A value as a message shows it: JSON where it is JSON, else its repr; long ones cut."""
    if isinstance(value, int) and not isinstance(value, bool):
        text = _num(value)
    else:
        try:
            text = json.dumps(value)
        except (TypeError, ValueError):
            try:
                text = repr(value)
            except Exception:
                text = f"<a {type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _int(value: Any, where: str, lo: int = 0, hi: int = MAX_COORDINATE) -> int:
    """An integer field of a contest file (ValueError: the file is the bad value)."""
    if not _is_int(value):
        raise ValueError(f"{where} must be an integer, got {_show(value)}")
    value = int(value)
    if not lo <= value <= hi:
        raise ValueError(f"{where} = {_show(value)} is outside [{lo}, {hi}]")
    return value


def _int_arg(value: Any, name: str, fn: str, lo: int, hi: int) -> int:
    """An integer argument: TypeError for another type, ValueError outside [lo, hi]."""
    if not _is_int(value):
        raise TypeError(f"{fn}: {name} = {_show(value)} ({type(value).__name__}); accepted: an integer in [{lo}, {hi}]")
    value = int(value)
    if not lo <= value <= hi:
        raise ValueError(f"{fn}: {name} = {_show(value)} is outside [{lo}, {hi}]; accepted: an integer in [{lo}, {hi}]")
    return value


_INT64_MAX = np.iinfo(np.int64).max


def _int_pairs(value: Any, name: str, fn: str, what: str = "(count, 2)") -> np.ndarray:
    """An (count, 2) array of integers as C-contiguous int64 (a copy: later changes to `value` do not
    reach it). TypeError for a float, bool, string or object entry; ValueError for another shape or a
    value beyond int64."""
    try:
        a = np.asarray(value)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{fn}: {name} is not a rectangular array ({e}); accepted: integers of shape {what}") from None
    if a.size == 0 and a.dtype.kind in "iufO" and (a.ndim < 2 or a.shape[-1] in (0, 2)):
        return np.zeros((0, 2), dtype=np.int64)
    if a.dtype == object:
        for index, item in np.ndenumerate(a):
            if not _is_int(item):
                raise TypeError(f"{fn}: {name}[{', '.join(map(str, index))}] = {_show(item)} ({type(item).__name__}); "
                                "accepted: integers")
        try:
            a = np.array(a.tolist(), dtype=np.int64)
        except OverflowError:
            raise ValueError(f"{fn}: {name} holds a value beyond int64; accepted: integers in [0, 2^30]") from None
    elif a.dtype.kind not in "iu":
        raise TypeError(f"{fn}: {name} has dtype {a.dtype}; accepted: integers (int64), not truncated floats")
    if a.ndim != 2 or a.shape[1] != 2:
        raise ValueError(f"{fn}: {name} has shape {a.shape}; accepted: {what}")
    if a.dtype.kind == "u" and a.size and int(a.max()) > _INT64_MAX:
        raise ValueError(f"{fn}: {name} holds {int(a.max())}, beyond int64; accepted: integers in [0, 2^30]")
    return np.array(a, dtype=np.int64, order="C", copy=True)


def _check_coordinates(xy: np.ndarray, name: str, fn: str) -> None:
    bad = np.nonzero(((xy < 0) | (xy > MAX_COORDINATE)).any(axis=1))[0]
    if bad.size:
        v = int(bad[0])
        raise ValueError(f"{fn}: {name}[{v}] = ({xy[v, 0]}, {xy[v, 1]}) has a coordinate outside [0, 2^30]; "
                         f"accepted: integers in [0, {MAX_COORDINATE}]")


def _check_edge_ends(edges: np.ndarray, n: int, name: str, fn: str) -> None:
    bad = np.nonzero(((edges < 0) | (edges >= n)).any(axis=1))[0]
    if bad.size:
        e = int(bad[0])
        raise ValueError(f"{fn}: {name}[{e}] = ({edges[e, 0]}, {edges[e, 1]}) names a vertex outside [0, {n}); "
                         f"accepted: vertex indices 0 … {n - 1}")
    loops = np.nonzero(edges[:, 0] == edges[:, 1])[0]
    if loops.size:
        e = int(loops[0])
        raise ValueError(f"{fn}: {name}[{e}] = ({edges[e, 0]}, {edges[e, 1]}) is a self-loop; accepted: edges "
                         "joining two distinct vertices (load(..., self_loops='drop') leaves them out)")


def _check_ids(ids: Any, fn: str) -> None:
    """Ids that make a contest file load() reads back: integers or strings, each once."""
    seen = {}
    for i, nid in enumerate(ids):
        if not (_is_int(nid) or isinstance(nid, str)):
            raise TypeError(f"{fn}: drawing.ids[{i}] = {_show(nid)} ({type(nid).__name__}); accepted: integers or strings")
        key = int(nid) if _is_int(nid) else nid
        if key in seen:
            raise ValueError(f"{fn}: drawing.ids[{i}] = {_show(key)} repeats drawing.ids[{seen[key]}]; accepted: distinct ids")
        seen[key] = i


def _check_progress(progress: Any, fn: str) -> None:
    if progress is not None and not callable(progress):
        raise TypeError(f"{fn}: progress = {_show(progress)} ({type(progress).__name__}); accepted: None or a "
                        "callable progress(done, total)")


def _path_arg(path: Any, fn: str, name: str = "path") -> str:
    if isinstance(path, (str, os.PathLike)):
        p = os.fspath(path)
        if isinstance(p, str) and p:
            return p
    raise TypeError(f"{fn}: {name} = {_show(path)} ({type(path).__name__}); accepted: a non-empty file path (str or os.PathLike)")


def _parse_device(device: Any, fn: str = "lcn.Evaluator", accepted: str = "None, 'cpu', 'cuda', 'cuda:N' or an int"):
    """None (host) or a CUDA device id, from None, 'cpu', 'cuda', 'cuda:N', an int or a torch.device."""
    if device is None:
        return None
    text = str(device)
    if text == "cpu":
        return None
    if isinstance(device, int) and not isinstance(device, bool):
        index = device
    elif text == "cuda":
        index = 0
    elif text.startswith("cuda:") and text[5:].isdigit():
        index = int(text[5:])
    else:
        raise ValueError(f"{fn}: device {device!r}; accepted: {accepted}")
    if index < 0:
        raise ValueError(f"{fn}: device {device!r}; CUDA device ids are >= 0")
    return index


def _stream_handle(stream: Any, device: int) -> int:
    """The stream a call on CUDA device `device` waits for: `stream`, or for None the current stream
    of the framework the process has loaded (as fwt and gemm take their array's)."""
    from .._interop import loaded_framework_stream, resolve_stream

    return loaded_framework_stream(device) if stream is None else resolve_stream(stream, None)


# ------------------------------------------------------------------------------------------- arrays
def _array_arg(a: Any, name: str, fn: str, shape: str, writable: bool = False) -> bool:
    """Checks an array argument of count_crossings; True for a NumPy array (then checked in full:
    dtype, shape, contiguity, writability), False for another DLPack array (the core checks it)."""
    if isinstance(a, np.ndarray):
        if a.dtype != np.int64:
            raise TypeError(f"{fn}: {name} has dtype {a.dtype}; accepted: int64")
        ndim = 2 if shape != "(m,)" else 1
        if a.ndim != ndim or (ndim == 2 and a.shape[1] != 2):
            raise ValueError(f"{fn}: {name} has shape {a.shape}; accepted: {shape}")
        if not a.flags.c_contiguous:
            raise ValueError(f"{fn}: {name} is not C-contiguous; accepted: a C-contiguous array "
                             "(np.ascontiguousarray makes one)")
        if writable and not a.flags.writeable:
            raise ValueError(f"{fn}: {name} is read-only; accepted: a writable int64 array")
        return True
    if hasattr(a, "__dlpack__"):
        return False
    raise TypeError(f"{fn}: {name} is a {type(a).__name__}; accepted: an int64 array of shape {shape} (NumPy or any "
                    "DLPack framework; np.asarray(..., dtype=np.int64) converts a list)")
