"""lcn.solve: from a contest instance to a valid drawing on its grid with the smallest k found.

A start drawing (``init``), then simulated annealing on (k, edges at k, total crossings) on the GPU
(every chain resident in device memory, whole rounds of moves per launch) or on all CPU cores, with the
same chains on both. The result is checked by the exact evaluator before it is returned, and comes
with a lower bound on k for the graph (``lower_bound``), so users see how far k may still fall.
"""
from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple, Optional

import numpy as np

from .. import _core
from . import start
from ._checks import _int_arg, _parse_device, _show
from .bounds import lower_bound
from .model import Drawing, Evaluation, _check_drawing

_SEED_LIMIT = 1 << 64
_CUDA_MAX_DEGREE = 10240  # solve_cuda's limit (anneal_cuda.cu: 20 bytes of shared memory per neighbour)


class Progress(NamedTuple):
    """What a solve callback receives: the best so far and the work done."""

    seconds: float
    k: int
    edges_at_k: int
    total_crossings: int
    moves: int
    time_left: Optional[float]  # None without a time limit


@dataclass
class Result:
    drawing: Any                # lcn.Drawing: the input's ids, edges and grid, the best positions found
    evaluation: Any             # lcn.Evaluation of it (valid)
    history: list               # (seconds, k, edges_at_k, total_crossings), the start first, then each improvement
    lower_bound: int            # no drawing of this graph has a smaller k
    lower_bound_reason: str     # which bound gave it
    init: str                   # the start layout used
    device: str                 # "cpu" or "cuda:N"
    seconds: float              # the whole call, start layout included
    moves: int                  # proposals evaluated, all chains
    chains: int
    busy_fraction: float        # share of the search's wall time the GPU ran search kernels (0 on the CPU)
    stopped: str                # "time", "moves", "k=0", "callback" or "interrupted"
    start_evaluation: Any = field(default=None, repr=False)  # lcn.Evaluation of the start drawing

    @property
    def k(self) -> int:
        return self.evaluation.k

    @property
    def moves_per_second(self) -> float:
        return self.moves / self.seconds if self.seconds > 0 else 0.0


def _fail(kind, fn: str, message: str):
    raise kind(f"{fn}: {message}")


def _device(device: Any, fn: str) -> Optional[int]:
    """None for the CPU, else a CUDA device id; 'auto' is the first GPU when the build has CUDA and one is visible."""

    if isinstance(device, str) and device == "auto":
        return 0 if _core.build_info().get("cuda") and _core.cuda_devices() else None
    accepted = "'auto', 'cpu', 'cuda', 'cuda:N' or an int"
    if isinstance(device, bool) or not isinstance(device, (int, str, type(None))) and type(device).__name__ != "device":
        _fail(TypeError, fn, f"device = {_show(device)} ({type(device).__name__}); accepted: {accepted}")
    index = _parse_device(device, fn, accepted)
    if index is None:
        return None
    if not _core.build_info().get("cuda"):
        _fail(ValueError, fn, f"device = {device!r}, but this build of ironkernels has no CUDA backend; accepted: "
              "'cpu' or 'auto'")
    count = len(_core.cuda_devices())
    if index >= count:
        _fail(ValueError, fn, f"device = {device!r}, but {count} CUDA device(s) are visible; accepted: 'cpu', 'auto'"
              + (f" or a device id below {count}" if count else ""))
    return index


def _number(value: Any, name: str, fn: str, *, lo: float, allow_none: bool) -> Optional[float]:

    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        _fail(TypeError, fn, f"{name} = {_show(value)} ({type(value).__name__}); accepted: a number of seconds >= {lo}"
              + (" or None" if allow_none else ""))
    value = float(value)
    if not math.isfinite(value) or value < lo:
        _fail(ValueError, fn, f"{name} = {_show(value)}; accepted: a finite number of seconds >= {lo}")
    return value


def _count(value: Any, name: str, fn: str, lo: int, hi: int) -> Optional[int]:

    return None if value is None else _int_arg(value, name, fn, lo, hi)


def solve(drawing, *, time_limit: Optional[float], max_moves: Optional[int] = None, seed: int = 0,
          device: Any = "auto", init: str = "auto", callback: Optional[Callable] = None,
          chains: Optional[int] = None) -> Result:
    """The drawing of `drawing`'s graph on its grid with the smallest k found (lexicographically
    (k, edges at k, total crossings)), starting from `init`:

    - ``"auto"``: the best (by the same order) of the available start layouts (``lcn.start_methods()``)
      that fit in a quarter of the time limit, a planar straight-line drawing first for a planar graph
      whose grid allows one (then k = 0);
    - ``"keep"``: the input coordinates (an invalid input drawing is repaired first);
    - any other name of ``lcn.start_methods()``.

    time_limit: seconds for the whole call (start layout included), or None with max_moves.
    max_moves: a budget of proposals (all chains); the search then follows the same path for the same
    seed, device kind and chains on any machine (without it, a wall-clock limit may stop at another move;
    with both, whichever comes first). seed: an integer in [0, 2^64). device: "auto" (the first GPU if
    this build has CUDA and one is visible and no vertex has over 10 240 neighbours, else the CPU),
    "cpu", "cuda", "cuda:N" or an int. chains: chains run at once (default: all cores on the CPU, a few per SM on a GPU); the CPU and the GPU
    search give the same drawing for the same seed, chains and max_moves.
    callback(progress: lcn.Progress) is called about every 0.2 s; returning False stops the search
    (the best drawing so far is returned). Ctrl-C stops it within a second too; the result then has
    ``stopped == "interrupted"`` (while the start layouts are computed: the best start so far; before
    the first: KeyboardInterrupt). Every argument is checked before any work (TypeError/ValueError
    naming it)."""

    fn = "lcn.solve"
    t_start = time.perf_counter()
    xy_in, edges, width, height = _check_drawing(drawing, fn)
    time_limit = _number(time_limit, "time_limit", fn, lo=0.0, allow_none=True)
    max_moves = _count(max_moves, "max_moves", fn, 1, (1 << 62))
    if time_limit is None and max_moves is None:
        _fail(ValueError, fn, "time_limit = None and max_moves = None; accepted: a time limit in seconds, a move "
              "budget, or both")
    seed = _count(seed, "seed", fn, 0, _SEED_LIMIT - 1)
    chains = _count(chains, "chains", fn, 1, 1 << 20)
    dev = _device(device, fn)
    if isinstance(device, str) and device == "auto" and dev is not None and len(edges) and \
            np.bincount(edges.ravel(), minlength=len(xy_in)).max() > _CUDA_MAX_DEGREE:
        dev = None  # the CUDA chains keep a vertex's neighbours in shared memory
    methods = start.available_methods()
    if not isinstance(init, str):
        _fail(TypeError, fn, f"init is a {type(init).__name__}; accepted: 'auto' or one of {methods}")
    if init != "auto" and init not in methods:
        _fail(ValueError, fn, f"init = {init!r}; accepted: 'auto' or one of {methods}")
    if callback is not None and not callable(callback):
        _fail(TypeError, fn, f"callback is a {type(callback).__name__}; accepted: None or a callable "
              "callback(progress)")
    if (width + 1) * (height + 1) < len(xy_in):
        _fail(ValueError, fn, f"the grid [0, {width}] x [0, {height}] has {(width + 1) * (height + 1)} points for "
              f"{len(xy_in)} vertices; no valid drawing exists")

    planar = bool(_core.lcn_is_planar(edges, len(xy_in)))
    bound, reason = lower_bound(len(xy_in), edges, planar=planar)

    best, interrupted = _start(drawing, edges, width, height, init, methods, planar, xy_in, seed,
                               None if time_limit is None else time_limit / 4, t_start)
    _, method, xy, ev0 = best
    start_ev = Evaluation(edge_crossings=np.asarray(ev0["edge_crossings"]), k=int(ev0["k"]),
                          edges_at_k=int(ev0["edges_at_k"]), total_crossings=int(ev0["total_crossings"]),
                          violations=[])

    left = None if time_limit is None else max(0.0, time_limit - (time.perf_counter() - t_start))
    wrapped = None
    if callback is not None:
        def wrapped(s: dict) -> bool:
            tl = None if left is None else max(0.0, left - s["seconds"])
            return callback(Progress(s["seconds"], s["k"], s["edges_at_k"], s["total_crossings"], s["moves"], tl)) \
                is not False
    if interrupted:  # no search: a budget of zero moves still checks the start exactly
        left, max_moves_core = 1e-9, 0
    else:
        max_moves_core = max_moves or 0
    r = _core.lcn_solve(xy, edges, width, height, "cpu" if dev is None else "cuda", 0 if dev is None else dev,
                        0.0 if left is None else max(left, 1e-9), max_moves_core, seed, chains or 0, wrapped)
    r["interrupted"] = r["interrupted"] or interrupted
    best_xy = np.ascontiguousarray(r["xy"], dtype=np.int64)
    result_drawing = Drawing(list(drawing.ids), best_xy, edges.copy(), width, height,
                             list(drawing.duplicate_edges), list(drawing.dropped_self_loops))
    # The core has checked the drawing with the exact evaluator (valid, and the figures the search reported).
    ev = Evaluation(edge_crossings=np.asarray(r["edge_crossings"]), k=int(r["k"]), edges_at_k=int(r["edges_at_k"]),
                    total_crossings=int(r["total_crossings"]), violations=[])
    offset = time.perf_counter() - t_start - r["seconds"]
    history = [(0.0, start_ev.k, start_ev.edges_at_k, start_ev.total_crossings)]
    for h in r["history"][1:]:
        point = (offset + h["seconds"], h["k"], h["edges_at_k"], h["total_crossings"])
        if point[1:] != history[-1][1:]:
            history.append(point)
    seconds = time.perf_counter() - t_start
    if history[-1][0] < seconds:
        history.append((seconds,) + history[-1][1:])
    stopped = ("interrupted" if r["interrupted"] else "callback" if r["stopped_by_callback"] else "k=0" if ev.k == 0
               else "moves" if max_moves is not None and r["moves"] >= max_moves else "time")
    return Result(drawing=result_drawing, evaluation=ev, history=history, lower_bound=bound, lower_bound_reason=reason,
                  init=method, device="cpu" if dev is None else f"cuda:{dev}", seconds=seconds, moves=int(r["moves"]),
                  chains=int(r["chains"]), busy_fraction=float(r["busy_fraction"]), stopped=stopped,
                  start_evaluation=start_ev)


class _Background(threading.Thread):
    """A start layout computed beside the others (the C++ ones release the GIL)."""

    def __init__(self, fn):
        super().__init__(daemon=True)  # a Ctrl-C leaves it to finish on its own
        self._fn, self.result, self.error = fn, None, None
        self.start()

    def run(self):
        try:
            self.result = self._fn()
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread
            self.error = e


def _start(drawing, edges, width, height, init, methods, planar, xy_in, seed, budget, t_start):
    """The best start drawing as (key, method, xy, evaluation), and whether Ctrl-C cut the choice short.

    For init="auto" the candidates are legalised, evaluated exactly, and the best by (k, edges at k,
    total) kept. The planar drawing and the input come first; then our stress layout runs in a thread
    while the others (our pivot MDS, OGDF's layouts, the circle) run in turn, each only if its predicted
    time fits in what is left of `budget` (a quarter of the time limit); the choice stops at k = 0."""

    def candidate(method):
        xy = start.start_drawing(drawing, method, seed)
        ev = _core.lcn_evaluate(xy, edges, width, height, None)
        return (ev["k"], ev["edges_at_k"], ev["total_crossings"]), method, xy, ev

    if init != "auto":
        return candidate(init), False
    # Vertices sharing points (every vertex at one point, say) make the input invalid without a full count.
    input_valid = (len(np.unique(xy_in, axis=0)) == len(xy_in)
                   and not _core.lcn_evaluate(xy_in, edges, width, height, None)["violations"])
    first, later = _auto_methods(methods, planar, input_valid, len(xy_in))
    n, m = len(xy_in), len(edges)
    found, background = [], None
    try:
        for method in first:
            found.append(candidate(method))
            if found[-1][0][0] == 0:
                return found[-1], False
        if "stress" in later:
            later.remove("stress")
            background = _Background(lambda: candidate("stress"))
        for method in later:
            cost = _START_SECONDS.get(method, lambda n, m: 0.0)(n, m)
            if (found or background) and budget is not None and time.perf_counter() - t_start + cost > budget:
                continue
            found.append(candidate(method))
            if found[-1][0][0] == 0:
                return found[-1], False
        if background is not None:
            background.join()
            if background.error is not None:
                raise background.error
            found.append(background.result)
    except KeyboardInterrupt:
        if background is not None:
            if not found:  # nothing else yet: a second for it
                background.join(timeout=1.0)
            if background.result is not None:
                found.append(background.result)
        if not found:  # no drawing yet to return
            raise
        return min(found, key=lambda c: c[0]), True
    return min(found, key=lambda c: c[0]), False


# Predicted seconds of the OGDF start layouts for n vertices and m edges (fits to their times on a 2-core
# x86 machine; faster machines try more within the budget). OGDF's StressMinimization is quadratic in time
# and memory (70 s at 5000 vertices): "auto" leaves it out above _OGDF_STRESS_MAX_N.
_START_SECONDS = {
    "ogdf-pivotmds": lambda n, m: 4.4e-5 * n + 1.3e-5 * m,
    "ogdf-fmmm": lambda n, m: 2.3e-4 * n + 2.3e-6 * m,
    "ogdf-stress": lambda n, m: 2.1e-6 * n * n + 2e-5 * m,
}
_OGDF_STRESS_MAX_N = 1000


def _auto_methods(methods: list, planar: Optional[bool], input_valid: bool, n: int) -> tuple:
    """The start layouts "auto" tries: first the planar drawings of a planar graph and the input when it is
    a valid drawing already; then the layouts, and the input repaired last when it was not valid."""
    first = (["planar", "ogdf-planar"] if planar else []) + (["keep"] if input_valid else [])
    later = ["stress", "pivotmds", "ogdf-pivotmds", "ogdf-fmmm"]
    later += (["ogdf-stress"] if n <= _OGDF_STRESS_MAX_N else []) + ["circle"]
    if not input_valid:
        later.append("keep")
    return [m for m in first if m in methods], [m for m in later if m in methods]
