"""The data model: a drawing (vertices on an integer grid, straight-line edges) and its evaluation."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._checks import MAX_COORDINATE, _check_coordinates, _check_edge_ends, _int_arg, _int_pairs


@dataclass
class Drawing:
    """A drawing: node ids (file order), (n, 2) int64 positions, (m, 2) int64 vertex indices."""

    ids: list
    xy: np.ndarray
    edges: np.ndarray
    width: int
    height: int
    duplicate_edges: list = field(default_factory=list)  # (edge index, index of its first copy)
    dropped_self_loops: list = field(default_factory=list)  # file positions of self-loops left out

    @property
    def n(self) -> int:
        return len(self.ids)

    @property
    def m(self) -> int:
        return int(self.edges.shape[0])


@dataclass
class Evaluation:
    edge_crossings: np.ndarray  # per edge, in file order
    k: int
    edges_at_k: int
    total_crossings: int
    # ("same_point", first id at the point, id) | ("vertex_on_edge", id, (source id, target id)) | ("outside_grid", id)
    violations: list

    @property
    def valid(self) -> bool:
        return not self.violations


def _check_drawing(drawing: Any, fn: str) -> tuple:
    """(xy, edges, width, height) of a Drawing, checked: integer (n, 2) and (m, 2) arrays (never
    truncated floats), coordinates in [0, 2^30], edges joining distinct existing vertices, one id per
    vertex, integer width and height in [0, 2^30]."""
    if not isinstance(drawing, Drawing):
        raise TypeError(f"{fn}: drawing is a {type(drawing).__name__}; accepted: an lcn.Drawing (lcn.load makes one)")
    xy = _int_pairs(drawing.xy, "drawing.xy", fn, "(n, 2)")
    edges = _int_pairs(drawing.edges, "drawing.edges", fn, "(m, 2)")
    try:
        n_ids = len(drawing.ids)
    except TypeError:
        raise TypeError(f"{fn}: drawing.ids is a {type(drawing.ids).__name__}; accepted: a list of node ids") from None
    if n_ids != len(xy):
        raise ValueError(f"{fn}: drawing.ids has {n_ids} entries for {len(xy)} vertices (rows of drawing.xy); "
                         "accepted: one id per vertex")
    width = _int_arg(drawing.width, "drawing.width", fn, 0, MAX_COORDINATE)
    height = _int_arg(drawing.height, "drawing.height", fn, 0, MAX_COORDINATE)
    _check_coordinates(xy, "drawing.xy", fn)
    _check_edge_ends(edges, len(xy), "drawing.edges", fn)
    return xy, edges, width, height
