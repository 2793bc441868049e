"""Operand reuse: gemm_prepare(b) does op(b)'s own share of gemm once (on CUDA: its lines' scan, the
certificate's facts and lower-bound magnitudes, and its residues at the last count a call used) for
later calls gemm(a, prepared), as iterative methods multiply by one matrix many times. Every call
gives the bits a plain call gives."""
from __future__ import annotations

from typing import Any, Optional

from . import _core
from ._gemm_contract import MAX_K, Contract, _shape2, op_shape
from ._interop import call_core, device_of, dtype_name, framework_of, resolve_stream, shape_of


class PreparedOperand:
    """op(b) prepared by :func:`gemm_prepare`; pass it as gemm's ``b``. It holds ``b`` itself, which must
    not change while the operand is used (calls still read it for the lines they compute natively)."""

    __slots__ = ("b", "trans_b", "contract", "_native")

    def __init__(self, b: Any, trans_b: bool, contract: Contract, native: Any) -> None:
        self.b, self.trans_b, self.contract, self._native = b, trans_b, contract, native

    @property
    def nbytes(self) -> int:
        """Device memory it holds besides ``b`` (0 on the CPU, where the reference recomputes everything)."""
        return self._native.nbytes if self._native is not None else 0

    def __repr__(self) -> str:
        k, n = op_shape(_shape2(self.b, "b"), self.trans_b)
        where = ":".join(map(str, device_of(self.b)))
        return f"PreparedOperand(op(b) {k}x{n} on {where}, contract={self.contract!r}, nbytes={self.nbytes})"


def gemm_prepare(b: Any, *, trans_b: bool = False, contract: Optional[Contract] = None, stream: Any = None
                 ) -> PreparedOperand:
    """op(b)'s share of :func:`gemm`, done once for later calls ``gemm(a, prepared)`` with any a of k
    columns (the call's trans_b and contract are the prepared ones).

    Args:
        b: (k, n) float64 matrix (NumPy, PyTorch, CuPy, ... host or CUDA), any strides. It is held,
            not copied: change it and the prepared operand no longer describes it.
        trans_b: prepare op(b) = bᵀ.
        contract: :class:`Contract` of the calls that will use it; default ``Contract.native()``.
            Not "accurate" scaling, whose bits depend on both operands.
        stream: CUDA stream of the preparation (int handle or ``__cuda_stream__``); default the
            framework's current one. Calls that use the operand wait for its preparation and for each
            other, whatever their streams; make them from one thread at a time.

    On the CPU the prepared operand is ``b`` itself: the reference recomputes everything per call.
    """
    contract = Contract.native() if contract is None else contract
    if not isinstance(contract, Contract):
        raise TypeError(f"gemm_prepare: contract must be an ironkernels.Contract, got {type(contract).__name__}")
    if not contract.certified and contract.scaling == "accurate":
        raise ValueError("gemm_prepare: contract scaling 'accurate' sets op(b)'s bits from both operands; accepted: "
                         "'fast', 'norm' or a certified contract")
    if not isinstance(trans_b, bool):
        raise TypeError(f"gemm_prepare: trans_b must be a bool, got {type(trans_b).__name__}")
    framework_of(b, "gemm_prepare: b")
    if dtype_name(b) != "float64":
        raise TypeError(f"gemm_prepare: b has dtype {dtype_name(b)}; accepted: float64")
    if len(shape_of(b, "gemm_prepare: b")) != 2:
        raise ValueError(f"gemm_prepare: b has shape {tuple(shape_of(b))}; accepted: a 2-D matrix")
    k = op_shape(_shape2(b, "b"), trans_b)[0]
    if k > MAX_K:
        raise ValueError(f"gemm_prepare: k = {k} is above the supported maximum {MAX_K}")
    where = device_of(b)
    native = None
    if where[0] == "cuda":
        handle = resolve_stream(stream, b, where)
        rtol = 0.0 if contract.is_native or not contract.certified else contract.rtol_at(k)
        native = call_core("gemm_prepare", lambda: _core.GemmPrepared(
            b, trans_b, contract.moduli or 0, contract.scaling, contract.is_native, rtol, handle), {"b": b}, "float64")
    return PreparedOperand(b, trans_b, contract, native)


def unwrap_prepared(b: Any, a: Any, trans_b: bool, contract: Optional[Contract]) -> tuple:
    """(b, trans_b, contract, prepared) of a gemm call: those of the prepared operand where b is one
    (ValueError where the call asks for another transpose or contract, or a is no 2-D float64 matrix)."""
    if not isinstance(b, PreparedOperand):
        return b, trans_b, contract, None
    if trans_b and not b.trans_b:
        raise ValueError("gemm: trans_b = True but b is a PreparedOperand of op(b) = b; its transpose is set by "
                         "gemm_prepare(trans_b=...)")
    if contract is not None and contract != b.contract:
        raise ValueError(f"gemm: contract = {contract!r} but b was prepared under {b.contract!r}")
    if isinstance(a, (list, tuple)) or dtype_name(a) != "float64" or len(shape_of(a, "gemm: a")) != 2:
        got = "a list" if isinstance(a, (list, tuple)) else f"{dtype_name(a)} of shape {tuple(shape_of(a))}"
        raise ValueError(f"gemm: b is a PreparedOperand, which serves a 2-D float64 a; got {got}")
    return b.b, b.trans_b, b.contract, b
