"""The randomised Hadamard's signs (rademacher_signs, and the signs= argument of fwt and fwt_quantize) and a
caller's base matrix (their hadamard= argument), resolved to the int8 host arrays the core takes."""
from __future__ import annotations

import numbers
from typing import Any, Optional

import numpy as np

from ._interop import device_of, framework_of


def rademacher_signs(n: int, seed: int) -> np.ndarray:
    """n values ±1 (int8) from `seed`: s_j = -1 where splitmix64(seed + j) is odd, else +1. The same on
    every machine and device: the randomised Hadamard's D for `fwt(..., signs=seed)` and
    `fwt_quantize(..., signs=seed)`."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"signs seed must be an int, got {type(seed).__name__}")
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise ValueError(f"rademacher_signs: n = {n!r}; accepted: an int >= 0")
    with np.errstate(over="ignore"):
        z = (np.uint64(seed % 2**64) + np.arange(n, dtype=np.uint64)) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
    return np.where(z & np.uint64(1), -1, 1).astype(np.int8)


def _host_values(a: Any, name: str, op: str) -> np.ndarray:
    """A host array (NumPy, a framework's host tensor, a list) as NumPy; device arrays are refused."""
    if hasattr(a, "__dlpack__") and not isinstance(a, np.ndarray):
        framework_of(a, f"{op}: {name}")
        if device_of(a)[0] != "cpu":
            raise ValueError(f"{op}: {name} is on {device_of(a)[0]}:{device_of(a)[1]}; accepted: host values "
                             "(NumPy, a CPU tensor or a list)")
        try:
            return np.from_dlpack(a)
        except (TypeError, BufferError, RuntimeError) as e:
            raise TypeError(f"{op}: {name} could not be read ({e}); accepted: an array of ±1") from None
    try:
        return np.asarray(a)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{op}: {name} could not be read as an array ({e}); accepted: an array of ±1") from None


def _plus_minus_one(values: np.ndarray, name: str, op: str, accepted: str) -> np.ndarray:
    if values.dtype.kind not in "iuf" or values.size and not np.isin(values, (-1, 1)).all():
        raise ValueError(f"{op}: {name} has dtype {values.dtype} or values other than ±1; accepted: {accepted}")
    return np.ascontiguousarray(values, dtype=np.int8)


def signs_of(signs: Any, n: int, op: str) -> Optional[np.ndarray]:
    """signs= resolved: None, an int seed (rademacher_signs(n, seed)) or n values ±1, as int8."""
    if signs is None:
        return None
    if isinstance(signs, numbers.Integral) and not isinstance(signs, bool):
        return rademacher_signs(n, int(signs))
    if isinstance(signs, (bool, float, str)):
        raise TypeError(f"{op}: signs must be an int seed or an array of ±1, got {type(signs).__name__}")
    values = _host_values(signs, "signs", op)
    accepted = f"an int seed, or N = {n} values ±1"
    if values.shape != (n,):
        raise ValueError(f"{op}: signs has shape {values.shape}; accepted: {accepted}")
    return _plus_minus_one(values, "signs", op, accepted)


def hadamard_matrix_of(hadamard: Any, op: str) -> Optional[np.ndarray]:
    """hadamard= resolved: None, or a square matrix of ±1 as int8 (the core checks H·Hᵀ = m·I)."""
    if hadamard is None:
        return None
    if isinstance(hadamard, (bool, numbers.Number, str)):
        raise TypeError(f"{op}: hadamard must be an m × m array of ±1, got {type(hadamard).__name__}")
    values = _host_values(hadamard, "hadamard", op)
    accepted = "an m × m array of ±1 with H·Hᵀ = m·I"
    if values.ndim != 2 or values.shape[0] != values.shape[1] or values.shape[0] < 1:
        raise ValueError(f"{op}: hadamard has shape {values.shape}; accepted: {accepted}")
    return _plus_minus_one(values, "hadamard", op, accepted)


def rotation_length_ok(length: int, hadamard: Optional[np.ndarray]) -> bool:
    """Whether a rotation of `length` exists: 2^k or m·2^k (m = 12, 20, 28, or the order of `hadamard`)."""
    if length < 1:
        return False
    if hadamard is not None:
        m = hadamard.shape[0]
        return length % m == 0 and (length // m) & (length // m - 1) == 0
    odd = length // (length & -length)
    return odd == 1 or (odd in (3, 5, 7) and length >= 4 * odd)
