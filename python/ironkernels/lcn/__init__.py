"""Straight-line grid drawings (GD Contest 2025 "k-plane drawings"): load, check, count crossings.

Semantics (the contest's): two edges cross iff they share no endpoint and their segments cross
properly; a drawing is valid iff vertices lie at distinct grid points inside [0, width] × [0, height]
and no vertex lies on an edge it is not an endpoint of; k is the largest number of crossings on one
edge. Exact integer arithmetic throughout (ironkernels' C++ core).

Input policy: files are UTF-8 JSON (a byte-order mark is allowed); node ids are integers or strings
(never floats or booleans; mapped to 0 … n-1 in file order and written back as given), and an edge's
source and target must be ids of the same type and value; unknown keys are ignored; duplicate node ids and edges to unknown ids are errors; so are
self-loops, unless ``load(..., self_loops="drop")`` (some published benchmark graphs have them; a
straight-line self-loop is a point, which crosses nothing): then they are left out and listed in
``Drawing.dropped_self_loops`` (edge positions in the file). Coordinates must be integers in
[0, 2^30] and width and height integers in [0, 2^30].
Duplicate edges (the same unordered pair again, as in some published instances) are kept as separate
edges, as the file gives them: each copy is counted, and copies never cross each other (they share
their endpoints). ``Drawing.duplicate_edges`` lists them as (edge, first edge with that pair).

Evaluators: ``evaluate`` (CPU, with validity), ``count_crossings`` (host or CUDA arrays), and
``Evaluator`` (exact incremental moves and batched candidate positions, on the CPU or a GPU). Every
function checks its arguments before it writes anything and names the bad one (TypeError/ValueError);
long CPU work answers Ctrl-C and reports progress (``progress=``). Pictures: ``draw`` (.svg, .png).
"""
from __future__ import annotations

from . import start as _start
from ._checks import MAX_COORDINATE
from .bounds import LowerBound, lower_bound
from .draw import DRAW_FORMATS, draw
from .crossings import Evaluator, count_crossings, evaluate
from .io import load, save, to_dict
from .model import Drawing, Evaluation
from .solve import Progress, Result, solve

start_methods = _start.available_methods
legalise = _start.legalise
start_drawing = _start.start_drawing

__all__ = ["MAX_COORDINATE", "DRAW_FORMATS", "Drawing", "Evaluation", "Evaluator", "LowerBound", "Progress", "Result",
           "count_crossings", "draw", "evaluate", "legalise", "load", "lower_bound", "save", "solve", "start_drawing",
           "start_methods", "to_dict"]
