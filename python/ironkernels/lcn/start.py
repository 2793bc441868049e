"""Start drawings for the local-crossing-number solver: valid grid drawings to improve on.

``start_drawing(drawing, method, seed)`` returns an (n, 2) int64 array of grid points, always a
valid drawing of ``drawing``'s graph in its box (``lcn.evaluate(...).valid``):

- ``"keep"``: the drawing's own coordinates, legalised (an invalid input is repaired with few moves);
- ``"circle"``, ``"stress"``, ``"pivotmds"``, ``"random"``: the library's own layouts (C++, no
  dependencies; ``"pivotmds"`` is the start of ``"stress"`` alone, in linear time);
- ``"planar"``: the library's planar straight-line drawing, where this build has one;
- ``"ogdf-stress"``, ``"ogdf-fmmm"``, ``"ogdf-pivotmds"``, ``"ogdf-planar"`` (planar graphs only):
  OGDF's StressMinimization, FMMMLayout, PivotMDS and PlanarStraightLayout, when the optional
  ``ogdf-py`` package is installed (``pip install ironkernels[ogdf]``). OGDF is GPL: it is imported
  only when one of these is asked for, and never required.

A real-valued layout is mapped onto the box by an affine map per axis (crossings and collinearities
are kept), rounded to grid points and legalised. ``available_methods()`` lists what works here.
Everything is deterministic for a given seed (OGDF's results also depend on its build).
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .. import _core
from ._checks import _int_arg, _int_pairs
from .model import Drawing, _check_drawing

_OWN = ("circle", "stress", "pivotmds", "random")
_OGDF = ("ogdf-stress", "ogdf-fmmm", "ogdf-pivotmds", "ogdf-planar")
_SEED_MAX = (1 << 64) - 1


def _ogdf() -> Optional[Any]:
    """The ogdf module, or None when it is not installed (imported lazily: OGDF is GPL)."""
    try:
        import ogdf  # noqa: PLC0415
    except ImportError:
        return None
    return ogdf


def _has_planar_hook() -> bool:
    return hasattr(_core, "lcn_planar_drawing")


def available_methods() -> list:
    """The methods ``start_drawing`` accepts in this installation."""
    methods = ["keep", *_OWN]
    if _has_planar_hook():
        methods.append("planar")
    if _ogdf() is not None:
        methods.extend(_OGDF)
    return methods


def legalise(xy: Any, edges: Any, width: int, height: int, seed: int = 0) -> np.ndarray:
    """A valid drawing near ``xy`` ((n, 2) integers, any values: clamped into the box first) for the
    graph ``edges`` ((m, 2) vertex indices) in [0, width] x [0, height]. Vertices that are legal
    keep their points; the others move to the nearest legal grid point. ValueError when the grid has
    fewer points than vertices, or is too small for the graph (no valid drawing was found)."""
    fn = "lcn.legalise"
    xy = _int_pairs(xy, "xy", fn, "(n, 2)")
    edges = _int_pairs(edges, "edges", fn, "(m, 2)")
    width = _int_arg(width, "width", fn, 0, 1 << 30)
    height = _int_arg(height, "height", fn, 0, 1 << 30)
    seed = _int_arg(seed, "seed", fn, 0, _SEED_MAX)
    if len(xy) == 0:
        return np.zeros((0, 2), dtype=np.int64)
    return _core.lcn_legalise(xy, edges, width, height, seed).reshape(-1, 2)


def _components(n: int, edges: np.ndarray) -> list:
    """Vertex lists of the connected components, in order of their lowest vertex."""
    parent = np.arange(n)

    def find(v: int) -> int:
        root = v
        while parent[root] != root:
            root = parent[root]
        while parent[v] != root:
            parent[v], v = root, parent[v]
        return root

    for s, t in edges.tolist():
        a, b = find(s), find(t)
        if a != b:
            parent[max(a, b)] = min(a, b)
    roots = np.array([find(v) for v in range(n)], dtype=np.int64)
    order = np.argsort(roots, kind="stable")
    _, starts = np.unique(roots[order], return_index=True)
    return [order[a:b] for a, b in zip(starts, list(starts[1:]) + [n])]


def _pack(parts: list, n: int, width: int, height: int) -> np.ndarray:
    """Component layouts (vertex indices, (k, 2) float positions at about one unit per edge) placed
    side by side in shelves, tallest first, in rows about as wide as the box's aspect asks."""
    xy = np.zeros((n, 2))
    boxes = []
    for vertices, pos in parts:
        lo = pos.min(axis=0)
        boxes.append((vertices, pos - lo, pos.max(axis=0) - lo + 2.0))  # a unit of margin on each side
    area = sum(float(size[0] * size[1]) for _, _, size in boxes)
    widest = max(float(size[0]) for _, _, size in boxes)
    row_width = max(widest, (area * max(width, 1) / max(height, 1)) ** 0.5)
    x = y = row_height = 0.0
    for vertices, pos, size in sorted(boxes, key=lambda b: -b[2][1]):
        if x > 0 and x + size[0] > row_width:
            x, y, row_height = 0.0, y + row_height, 0.0
        xy[vertices] = pos + (x + 1.0, y + 1.0)
        x += size[0]
        row_height = max(row_height, size[1])
    return xy


def _unit_edges(pos: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """pos scaled to a median edge length of 1 (components of different layouts pack evenly)."""
    if len(edges):
        lengths = np.hypot(*(pos[edges[:, 0]] - pos[edges[:, 1]]).T)
        median = float(np.median(lengths))
        if median > 0 and np.isfinite(median):
            return pos / median
    return pos


def _to_grid(pos: np.ndarray, width: int, height: int) -> np.ndarray:
    """Each axis stretched onto [0, width] / [0, height] (an affine map keeps every crossing) and
    rounded to grid points."""
    out = np.empty(pos.shape, dtype=np.int64)
    for axis, extent in ((0, width), (1, height)):
        lo, hi = float(pos[:, axis].min()), float(pos[:, axis].max())
        t = (pos[:, axis] - lo) / (hi - lo) if hi > lo else np.full(len(pos), 0.5)
        out[:, axis] = np.clip(np.rint(t * extent), 0, extent).astype(np.int64)
    return out


def _simple_edges(edges: np.ndarray) -> np.ndarray:
    if len(edges) == 0:
        return edges
    return np.unique(np.sort(edges, axis=1), axis=0)


def _ogdf_layout(method: str, n: int, edges: np.ndarray, seed: int) -> list:
    """An OGDF layout, component by component (PivotMDS and the planar layouts need connected
    graphs), each scaled to unit edges; packed by the caller."""
    ogdf = _ogdf()
    simple = _simple_edges(edges)
    if method == "ogdf-planar":
        graph, _ = ogdf.from_edges(simple.tolist(), nodes=range(n))
        if not ogdf.is_planar(graph):
            raise ValueError("lcn.start_drawing: method 'ogdf-planar' needs a planar graph; this one is not "
                             "(use 'ogdf-stress', 'stress' or another method)")
    local = np.empty(n, dtype=np.int64)
    parts = []
    for index, vertices in enumerate(_components(n, simple)):
        k = len(vertices)
        if k <= 2:
            parts.append((vertices, np.array([[0.0, 0.0], [1.0, 0.0]][:k])))
            continue
        local[vertices] = np.arange(k)
        inside = np.isin(simple[:, 0], vertices)
        sub = local[simple[inside]]
        graph, mapping = ogdf.from_edges(sub.tolist(), nodes=range(k))
        attributes = ogdf.GraphAttributes(graph, ogdf.NODE_GRAPHICS | ogdf.EDGE_GRAPHICS)
        ogdf.set_seed((seed + 7919 * index) % (1 << 31))
        if method == "ogdf-stress":
            algorithm = ogdf.StressMinimization()
        elif method == "ogdf-fmmm":
            algorithm = ogdf.FMMMLayout()
            algorithm.set_rand_seed((seed + 7919 * index) % (1 << 31))
        elif method == "ogdf-pivotmds":
            algorithm = ogdf.PivotMDS()
        else:
            algorithm = ogdf.PlanarStraightLayout()
        algorithm.call(attributes)
        pos = np.array([[attributes.x(mapping[v]), attributes.y(mapping[v])] for v in range(k)], dtype=float)
        if not np.isfinite(pos).all():
            raise RuntimeError(f"lcn.start_drawing: OGDF's {type(algorithm).__name__} returned non-finite coordinates")
        parts.append((vertices, _unit_edges(pos, sub)))
    return parts


def start_drawing(drawing: Drawing, method: str = "stress", seed: int = 0) -> np.ndarray:
    """A valid start drawing of ``drawing``'s graph in its box, as an (n, 2) int64 array (see the
    module's text for the methods; ``available_methods()`` lists them). ValueError for a method not
    available here, a non-planar graph with ``"ogdf-planar"``, or a grid too small for the graph."""
    fn = "lcn.start_drawing"
    xy, edges, width, height = _check_drawing(drawing, fn)
    if not isinstance(method, str):
        raise TypeError(f"{fn}: method is a {type(method).__name__}; accepted: one of {available_methods()}")
    seed = _int_arg(seed, "seed", fn, 0, _SEED_MAX)
    methods = available_methods()
    if method not in methods:
        missing = " (needs the optional ogdf-py package: pip install ironkernels[ogdf])" if method in _OGDF else ""
        raise ValueError(f"{fn}: method {method!r} is not available{missing}; accepted: {methods}")
    n = len(xy)
    if n == 0:
        return np.zeros((0, 2), dtype=np.int64)
    if method == "keep":
        return _core.lcn_legalise(xy, edges, width, height, seed).reshape(-1, 2)
    if method in _OWN:
        return _core.lcn_start_layout(method, n, edges, width, height, seed).reshape(-1, 2)
    if method == "planar":
        grid = _core.lcn_planar_drawing(edges, n)
        if grid is None:
            raise ValueError(f"{fn}: method 'planar' needs a planar graph; this one is not (use 'stress' or another method)")
        grid = np.asarray(grid, dtype=np.int64).reshape(n, 2)
        top = np.maximum(grid.max(axis=0), 1)
        if top[0] <= width and top[1] <= height:
            # Integer factors per axis keep the drawing planar and valid exactly (no rounding).
            return np.ascontiguousarray(grid * [width // top[0], height // top[1]], dtype=np.int64)
        pos = grid.astype(float)  # the grid is too small for it: scaled and rounded, then repaired
    else:
        pos = _pack(_ogdf_layout(method, n, edges, seed), n, width, height)
    return _core.lcn_legalise(_to_grid(pos, width, height), edges, width, height, seed).reshape(-1, 2)


__all__ = ["available_methods", "legalise", "start_drawing"]
