"""Shared checks for refused calls: the exception type, a message that names the argument and says
what was accepted, and every array and file handed in left byte for byte as it was. Also NoShape,
an array with nothing but the DLPack protocol."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import pytest

RAW_BINDING_ERRORS = ("incompatible function arguments", "Invoked with types", "nanobind", "_core.")


class NoShape:
    """A DLPack producer with no .shape or .dtype (like ironkernels.empty's arrays)."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, *args, **kwargs):
        return self._a.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def host_bytes(a: Any) -> bytes:
    """The bytes an array's elements occupy, read back to the host (NumPy, torch, CuPy, DLPack)."""
    mod = type(a).__module__.split(".")[0]
    if mod == "torch":
        return a.detach().cpu().contiguous().view(-1).view(__import__("torch").uint8).numpy().tobytes()
    if mod == "cupy":
        return a.get().tobytes()
    if isinstance(a, np.ndarray):
        return np.ascontiguousarray(a).tobytes() if a.dtype != object else repr(a.tolist()).encode()
    if hasattr(a, "__dlpack__"):
        return np.from_dlpack(a).tobytes()
    return repr(a).encode()


def file_state(path: str | os.PathLike) -> Any:
    """A file's bytes, 'dir' for a directory, None if absent."""
    p = os.fspath(path)
    if os.path.isdir(p):
        return ("dir", sorted(os.listdir(p)))
    if not os.path.exists(p):
        return None
    with open(p, "rb") as f:
        return f.read()


@dataclass
class Refusal:
    """One bad call: `call()` must raise `error` with every string of `names` in its message."""

    id: str
    call: Callable[[], Any]
    error: type
    names: Sequence[str]
    arrays: Sequence[Any] = field(default_factory=tuple)
    files: Sequence[Any] = field(default_factory=tuple)


def assert_refused(case: Refusal) -> str:
    """Runs the case; returns the message."""
    arrays_before = [host_bytes(a) for a in case.arrays]
    files_before = [file_state(p) for p in case.files]
    with pytest.raises(Exception) as info:
        case.call()
    err = info.value
    assert isinstance(err, case.error), f"{case.id}: raised {type(err).__name__}: {err}; expected {case.error.__name__}"
    msg = str(err)
    for raw in RAW_BINDING_ERRORS:
        assert raw not in msg, f"{case.id}: a raw binding error reached the user: {msg}"
    for name in case.names:
        assert re.search(re.escape(name), msg), f"{case.id}: the message does not name {name!r}: {msg}"
    for i, (a, before) in enumerate(zip(case.arrays, arrays_before)):
        assert host_bytes(a) == before, f"{case.id}: array {i} was written by a refused call"
    for p, before in zip(case.files, files_before):
        assert file_state(p) == before, f"{case.id}: {p} was changed by a refused call"
    return msg


def table(cases: Sequence[Refusal]):
    """pytest.mark.parametrize over the cases, ids from their names (duplicates refused)."""
    ids = [c.id for c in cases]
    dup = {i for i in ids if ids.count(i) > 1}
    assert not dup, f"duplicate case ids: {sorted(dup)}"
    return pytest.mark.parametrize("case", cases, ids=ids)
