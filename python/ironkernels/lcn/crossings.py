"""Crossing counts: evaluate (CPU, with validity), Evaluator (exact incremental moves and batched
candidates, CPU or GPU) and count_crossings (host or CUDA arrays)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import _core
from ._checks import (MAX_COORDINATE, _array_arg, _check_coordinates, _check_edge_ends, _check_progress, _int_arg,
                      _int_pairs, _is_int, _parse_device, _show, _stream_handle)
from .model import Drawing, Evaluation, _check_drawing


def evaluate(drawing: Drawing, *, progress: Any = None) -> Evaluation:
    """Exact per-edge crossing counts, k, edges at k, total crossings and every violation (by id).

    The drawing is checked first: integer arrays only (TypeError for float coordinates or edges,
    which would otherwise be truncated), shapes (n, 2) and (m, 2), one id per vertex, coordinates,
    width and height in [0, 2^30], edges joining distinct vertices (ValueError). Long evaluations
    answer Ctrl-C (KeyboardInterrupt within a fraction of a second) and call `progress(done, total)`
    (work items; done = 0 first, total last, non-decreasing, at most every 50 ms in between) on the
    calling thread; an exception it raises stops the evaluation and propagates."""
    xy, edges, width, height = _check_drawing(drawing, "lcn.evaluate")
    _check_progress(progress, "lcn.evaluate")
    r = _core.lcn_evaluate(xy, edges, width, height, progress)
    ids = drawing.ids
    violations = []
    for kind, a, b in r["violations"]:
        if kind == "same_point":
            violations.append((kind, ids[a], ids[b]))
        elif kind == "vertex_on_edge":
            s, t = edges[b]
            violations.append((kind, ids[a], (ids[s], ids[t])))
        else:
            violations.append((kind, ids[a]))
    return Evaluation(edge_crossings=np.asarray(r["edge_crossings"]), k=int(r["k"]), edges_at_k=int(r["edges_at_k"]),
                      total_crossings=int(r["total_crossings"]), violations=violations)


# ------------------------------------------------------------------------------------- incremental moves
class Evaluator:
    """A drawing's per-edge crossing counts, kept exact as vertices move (a move recounts only the
    moving vertex's edges: O(degree · m) instead of O(m²)), and batched evaluation of candidate
    positions for one vertex: the solver's inner loop.

    ``device=None`` keeps the drawing on the host (candidates across all CPU cores);
    ``device="cuda"`` or ``"cuda:1"`` or an int keeps it in that GPU's memory (one launch per batch
    of candidates, calls wait for ``stream``; by default, at each call, the current stream of the
    framework the process has loaded, torch's or else CuPy's, or the default stream without one).
    The figures are the same either way. The drawing is checked like evaluate()'s; ``progress`` (host only) is called
    during the first full count, as in evaluate(), which also answers Ctrl-C."""

    def __init__(self, drawing: Drawing, *, device: Any = None, stream: Any = None, progress: Any = None):
        xy, edges, width, height = _check_drawing(drawing, "lcn.Evaluator")
        _check_progress(progress, "lcn.Evaluator")
        self.device = _parse_device(device)
        if stream is not None:
            _stream_handle(stream, 0)  # refuses a bad stream before any work
        self._stream = stream
        self.drawing = drawing
        self.xy = xy
        if self.device is None:
            self._core = _core.LcnEvaluator(xy, edges, width, height, progress)
        else:
            self._core = _core.LcnGpuEvaluator(xy, edges, width, height, self.device,
                                                 stream=_stream_handle(stream, self.device))

    def _args(self) -> dict:
        return {} if self.device is None else {"stream": _stream_handle(self._stream, self.device)}

    def _vertex(self, v: Any, fn: str) -> int:
        n = len(self.xy)
        if n == 0:
            if not _is_int(v):
                raise TypeError(f"{fn}: v = {_show(v)} ({type(v).__name__}); accepted: a vertex index (the drawing has none)")
            raise ValueError(f"{fn}: v = {_show(v)}; the drawing has no vertices")
        if _is_int(v) and not 0 <= int(v) < n:
            v = _show(int(v))
            raise ValueError(f"{fn}: v = {v}: vertex {v} does not exist; accepted: a vertex index in [0, {n - 1}]")
        return _int_arg(v, "v", fn, 0, n - 1)

    @property
    def edge_crossings(self) -> np.ndarray:
        return np.asarray(self._core.edge_crossings(**self._args()))

    def move(self, v: int, x: int, y: int) -> None:
        """Move vertex v (index in [0, n)) to (x, y), integers in [0, 2^30] (legality is the caller's
        choice); the counts follow exactly. TypeError/ValueError naming the argument, nothing moved."""
        fn = "lcn.Evaluator.move"
        v = self._vertex(v, fn)
        x = _int_arg(x, "x", fn, 0, MAX_COORDINATE)
        y = _int_arg(y, "y", fn, 0, MAX_COORDINATE)
        self._core.move(v, x, y, **self._args())
        self.xy[v] = (x, y)

    def candidates(self, v: int, xy) -> dict:
        """For each (x, y) row of `xy` (integers in [0, 2^30], shape (count, 2)): the k, edges at k and
        total crossings the drawing would have with v there, and whether that position is legal for v
        (inside the grid, on no other vertex, on no non-incident edge, no other vertex on v's edges).
        Nothing moves."""
        fn = "lcn.Evaluator.candidates"
        v = self._vertex(v, fn)
        pts = _int_pairs(xy, "xy", fn, "(count, 2)")
        _check_coordinates(pts, "xy", fn)
        r = self._core.candidates(v, pts, **self._args())
        return {"k": np.asarray(r["k"]), "edges_at_k": np.asarray(r["edges_at_k"]),
                "total_crossings": np.asarray(r["total_crossings"]), "legal": np.asarray(r["legal"]).astype(bool)}


def count_crossings(xy: Any, edges: Any, *, out: Any = None, stream: Any = None, progress: Any = None) -> Any:
    """Per-edge crossing counts of the drawing given as arrays: xy (n, 2) and edges (m, 2) int64,
    C-contiguous, on the host (the CPU evaluator) or a CUDA device (an all-pairs kernel), any DLPack
    framework. Returns an (m,) int64 array of the same framework (or fills `out`, writable, (m,) int64).
    Coordinates must lie in [0, 2^30] and edges join distinct existing vertices (checked on the arrays'
    device; TypeError/ValueError naming the argument before `out` is written). On the host it answers
    Ctrl-C and calls `progress(done, total)` as evaluate() does (an interrupted call leaves `out` as it was)."""
    from .._interop import device_of, empty_like, resolve_stream, shape_of

    fn = "lcn.count_crossings"
    host_xy = _array_arg(xy, "xy", fn, "(n, 2)")
    host_edges = _array_arg(edges, "edges", fn, "(m, 2)")
    if out is not None:
        host_out = _array_arg(out, "out", fn, "(m,)", writable=True)
        if host_out and host_edges and out.shape[0] != edges.shape[0]:
            raise ValueError(f"{fn}: out has {out.shape[0]} entries for {edges.shape[0]} edges; accepted: shape (m,) = "
                             f"({edges.shape[0]},)")
    _check_progress(progress, fn)
    if host_xy:
        _check_coordinates(xy, "xy", fn)
    if host_xy and host_edges:
        _check_edge_ends(edges, len(xy), "edges", fn)
    if out is None:
        m = (shape_of(edges, f"{fn}: edges") or (0,))[0]  # (a wrong rank is the core's to name)
        out = np.empty(m, dtype=np.int64) if device_of(edges)[0] == "cpu" else empty_like(edges, shape=(m,))
    if host_xy and host_edges and len(edges) == 0:
        return out  # nothing to count (and NumPy's empty arrays may not look C-contiguous through DLPack)
    try:
        _core.lcn_count_crossings(xy, edges, out, stream=resolve_stream(stream, edges), progress=progress)
    except TypeError as e:
        if "incompatible function arguments" not in str(e):
            raise
        # Not a readable DLPack array, or a read-only `out` (a JAX array, say): named, not nanobind's text.
        raise TypeError(f"{fn}: xy and edges must be int64 DLPack arrays and out a writable one; got "
                        f"xy: {type(xy).__name__}, edges: {type(edges).__name__}, out: {type(out).__name__}") from None
    return out
