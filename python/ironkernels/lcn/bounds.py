"""Lower bounds on k, the largest number of crossings on one edge, shown beside a solver's result
("k >= 183 (crossing lemma)"). They hold for every drawing of the graph (straight-line or not, on
any grid), so a reached k below one is a bug. The arguments and their sources are listed in
cpp/src/lcn/bounds.cpp: the edge densities of k-planar graphs (Pach & Tóth; Pach, Radoičić,
Tardos & Tóth; Ackerman), Euler's formula, and crossing-number bounds (Büngener & Kaufmann's
crossing lemma with c = 1/27.61), each crossing lying on two edges (k >= 2 cr / m).
"""
from __future__ import annotations

from typing import Any, NamedTuple, Optional

import numpy as np

from .. import _core
from ._checks import _check_edge_ends, _int_arg, _int_pairs, _is_int, _show
from .model import Drawing


class LowerBound(NamedTuple):
    k: int        # k >= this in every drawing
    reason: str   # the argument that gave it: "crossing lemma", "k-planar density", ... ("none" for 0)


_COUNT_MAX = 1 << 36


def lower_bound(n: Any, m: Any = None, planar: Optional[bool] = None) -> LowerBound:
    """A lower bound on k for a drawing's graph: ``lower_bound(drawing)``, as every lcn call takes a
    drawing, or from the graph alone, ``lower_bound(n, m)``: ``m`` either the number of edges of a
    simple graph whose ``n`` vertices all have an edge, or the (m, 2) edge array of the graph on
    vertices 0 … n-1 (then duplicate edges and isolated vertices are left out, bipartite graphs get
    their stronger bounds, and the bounds are also taken over components and dense subgraphs).
    ``planar``: the planarity test's answer when known (False adds k >= 1; None: unknown)."""
    fn = "lcn.lower_bound"
    if isinstance(n, Drawing):
        if m is not None:
            raise TypeError(f"{fn}: m = {_show(m)} beside a Drawing; accepted: lower_bound(drawing) or "
                            "lower_bound(n, m)")
        n, m = n.n, n.edges
    elif m is None:
        raise TypeError(f"{fn}: n is a {type(n).__name__} and m is missing; accepted: lower_bound(drawing) or "
                        "lower_bound(n, m)")
    n = _int_arg(n, "n", fn, 0, _COUNT_MAX)
    if planar is not None and not isinstance(planar, (bool, np.bool_)):
        raise TypeError(f"{fn}: planar = {planar!r}; accepted: True, False or None")
    planar = None if planar is None else bool(planar)
    if _is_int(m):
        m = _int_arg(m, "m", fn, 0, _COUNT_MAX)
        k, reason = _core.lcn_lower_bound(n, m, planar)
    else:
        edges = _int_pairs(m, "m", fn, "(m, 2)")
        _check_edge_ends(edges, n, "m", fn)
        k, reason = _core.lcn_lower_bound(n, edges, planar)
    return LowerBound(int(k), str(reason))


__all__ = ["LowerBound", "lower_bound"]
