"""Straight-line grid drawings (GD Contest 2025 "k-plane drawings"): load, check, count crossings.

Semantics (the contest's): two edges cross iff they share no endpoint and their segments cross
properly; a drawing is valid iff vertices lie at distinct grid points inside [0, width] × [0, height]
and no vertex lies on an edge it is not an endpoint of; k is the largest number of crossings on one
edge. Exact integer arithmetic throughout (ironkernels' C++ core).

Input policy: node ids may be any integers (mapped to 0 … n-1 in file order and written back as
given); unknown keys are ignored; duplicate node ids and edges to unknown ids are errors; so are
self-loops, unless ``load(..., self_loops="drop")`` (some published benchmark graphs have them; a
straight-line self-loop is a point, which crosses nothing): then they are left out and listed in
``Drawing.dropped_self_loops`` (edge positions in the file). Coordinates must be integers in
[0, 2^30] and width and height integers in [0, 2^30].
Duplicate edges (the same unordered pair again, as in some published instances) are kept as separate
edges, as the file gives them: each copy is counted, and copies never cross each other (they share
their endpoints). ``Drawing.duplicate_edges`` lists them as (edge, first edge with that pair).

Evaluators: ``evaluate`` (CPU, with validity), ``count_crossings`` (host or CUDA arrays), and
``Evaluator`` (exact incremental moves and batched candidate positions, on the CPU or a GPU).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Union

import numpy as np

from . import _core

MAX_COORDINATE = 1 << 30


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


def _int(value: Any, where: str, lo: int = 0, hi: int = MAX_COORDINATE) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{where} must be an integer, got {json.dumps(value)}")
    if not lo <= value <= hi:
        raise ValueError(f"{where} = {value} is outside [{lo}, {hi}]")
    return value


def load(source: Union[str, os.PathLike, dict], *, self_loops: str = "reject") -> Drawing:
    """Parse a contest JSON file (or an already-decoded dict); raises ValueError naming the field.
    self_loops: "reject" (the contest's format has none) or "drop" (left out, listed)."""
    if self_loops not in ("reject", "drop"):
        raise ValueError(f"load: self_loops = {self_loops!r}; accepted: 'reject', 'drop'")
    where = "drawing"
    if isinstance(source, dict):
        doc = source
    else:
        where = os.fspath(source)
        with open(source, encoding="utf-8") as f:
            text = f.read()
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"{where}: not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{where}: the top level must be an object with nodes, edges, width, height")
    for key in ("nodes", "edges", "width", "height"):
        if key not in doc:
            raise ValueError(f"{where}: missing key '{key}'")
    width = _int(doc["width"], f"{where}: width")
    height = _int(doc["height"], f"{where}: height")
    if not isinstance(doc["nodes"], list) or not isinstance(doc["edges"], list):
        raise ValueError(f"{where}: 'nodes' and 'edges' must be lists")
    ids, index, xy = [], {}, []
    for i, node in enumerate(doc["nodes"]):
        if not isinstance(node, dict):
            raise ValueError(f"{where}: nodes[{i}] must be an object with id, x, y")
        for key in ("id", "x", "y"):
            if key not in node:
                raise ValueError(f"{where}: nodes[{i}] is missing '{key}'")
        nid = node["id"]
        if isinstance(nid, bool) or not isinstance(nid, (int, str)):
            raise ValueError(f"{where}: nodes[{i}].id must be an integer or a string, got {json.dumps(nid)}")
        if nid in index:
            raise ValueError(f"{where}: nodes[{i}].id = {json.dumps(nid)} repeats nodes[{index[nid]}].id")
        index[nid] = i
        ids.append(nid)
        xy.append((_int(node["x"], f"{where}: nodes[{i}].x"), _int(node["y"], f"{where}: nodes[{i}].y")))
    edges, seen, duplicates, dropped = [], {}, [], []
    for e, edge in enumerate(doc["edges"]):
        if not isinstance(edge, dict) or "source" not in edge or "target" not in edge:
            raise ValueError(f"{where}: edges[{e}] must be an object with source and target")
        ends = []
        for key in ("source", "target"):
            if edge[key] not in index or isinstance(edge[key], bool):
                raise ValueError(f"{where}: edges[{e}].{key} = {json.dumps(edge[key])} is not a node id")
            ends.append(index[edge[key]])
        if ends[0] == ends[1]:
            if self_loops == "drop":
                dropped.append(e)
                continue
            raise ValueError(f"{where}: edges[{e}] is a self-loop at node {json.dumps(edge['source'])} "
                             "(load(..., self_loops='drop') leaves self-loops out)")
        pair = (min(ends), max(ends))
        if pair in seen:
            duplicates.append((len(edges), seen[pair]))
        else:
            seen[pair] = len(edges)
        edges.append(ends)
    return Drawing(ids=ids, xy=np.array(xy, dtype=np.int64).reshape(-1, 2),
                   edges=np.array(edges, dtype=np.int64).reshape(-1, 2), width=width, height=height,
                   duplicate_edges=duplicates, dropped_self_loops=dropped)


def to_dict(drawing: Drawing) -> dict:
    """The contest JSON object of a drawing, ids as given."""
    return {
        "nodes": [{"id": nid, "x": int(x), "y": int(y)} for nid, (x, y) in zip(drawing.ids, drawing.xy.tolist())],
        "edges": [{"source": drawing.ids[s], "target": drawing.ids[t]} for s, t in drawing.edges.tolist()],
        "width": int(drawing.width),
        "height": int(drawing.height),
    }


def _write_text(path: Union[str, os.PathLike], text: str) -> None:
    """Written to a temporary file, then renamed into place: an existing file is never left half-written."""
    tmp = f"{os.fspath(path)}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def save(drawing: Drawing, path: Union[str, os.PathLike]) -> None:
    """Write the drawing as contest JSON."""
    _write_text(path, json.dumps(to_dict(drawing)))


def evaluate(drawing: Drawing) -> Evaluation:
    """Exact per-edge crossing counts, k, edges at k, total crossings and every violation (by id)."""
    xy = np.ascontiguousarray(drawing.xy, dtype=np.int64).reshape(-1, 2)
    edges = np.ascontiguousarray(drawing.edges, dtype=np.int64).reshape(-1, 2)
    r = _core.lcn_evaluate(xy, edges, int(drawing.width), int(drawing.height))
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


# ---------------------------------------------------------------------------------------------- drawing
_RAMP = [(0x31, 0x36, 0x95), (0x45, 0x75, 0xB4), (0x74, 0xAD, 0xD1), (0xAB, 0xD9, 0xE9), (0xFE, 0xE0, 0x90),
         (0xFD, 0xAE, 0x61), (0xF4, 0x6D, 0x43)]  # blue (few crossings) to orange (many)
_AT_K = "#d7191c"


def _color(c: int, k: int) -> str:
    if k <= 0:
        return "#%02x%02x%02x" % _RAMP[0]
    f = (len(_RAMP) - 1) * min(c, k) / k
    i = min(int(f), len(_RAMP) - 2)
    t = f - i
    rgb = [round(a + (b - a) * t) for a, b in zip(_RAMP[i], _RAMP[i + 1])]
    return "#%02x%02x%02x" % tuple(rgb)


def draw(drawing: Drawing, path: Union[str, os.PathLike], evaluation: Evaluation = None, size: int = 900) -> None:
    """Picture of a drawing: edges coloured by their crossing count (blue few … orange many), the
    edges at k on top in red and thicker, vertices as small dots, the grid box [0, W]×[0, H] outlined;
    y grows upwards. SVG, or PNG when the path ends in .png (needs matplotlib)."""
    ev = evaluate(drawing) if evaluation is None else evaluation
    w, h = max(drawing.width, 1), max(drawing.height, 1)
    margin, scale = 20, (size - 40) / max(w, h)
    px = lambda x: margin + x * scale  # noqa: E731
    py = lambda y: margin + (h - y) * scale  # noqa: E731
    order = np.argsort(ev.edge_crossings, kind="stable")  # most crossed last, on top
    at_k = ev.edge_crossings == ev.k if drawing.m else np.zeros(0, bool)
    color = lambda e: _AT_K if at_k[e] else _color(int(ev.edge_crossings[e]), ev.k)  # noqa: E731
    width_px, height_px = int(2 * margin + w * scale), int(2 * margin + h * scale)
    title = (f"n={drawing.n} m={drawing.m} k={ev.k} edges at k={ev.edges_at_k} total={ev.total_crossings}"
             + ("" if ev.valid else f" INVALID ({len(ev.violations)} violations)"))
    if os.fspath(path).lower().endswith(".png"):
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.collections import LineCollection

        fig, ax = plt.subplots(figsize=(size / 100, size / 100), dpi=100)
        segs = [[tuple(drawing.xy[s]), tuple(drawing.xy[t])] for s, t in drawing.edges[order]]
        cols = [color(e) for e in order]
        widths = [1.8 if at_k[e] else 0.6 for e in order]
        ax.add_collection(LineCollection(segs, colors=cols, linewidths=widths))
        ax.scatter(drawing.xy[:, 0], drawing.xy[:, 1], s=4, c="black", zorder=3)
        ax.add_patch(plt.Rectangle((0, 0), w, h, fill=False, ec="#888888", lw=0.8))
        ax.set_xlim(-0.02 * w, 1.02 * w)
        ax.set_ylim(-0.02 * h, 1.02 * h)
        ax.set_aspect("equal")
        ax.axis("off")
        ax.set_title(title, fontsize=9)
        fig.savefig(path, bbox_inches="tight")
        plt.close(fig)
        return
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width_px}" height="{height_px + 24}" '
           f'viewBox="0 -24 {width_px} {height_px + 24}">',
           f'<text x="{margin}" y="-8" font-family="sans-serif" font-size="13">{title}</text>',
           f'<rect x="{px(0):.2f}" y="{py(h):.2f}" width="{w * scale:.2f}" height="{h * scale:.2f}" '
           'fill="none" stroke="#888" stroke-width="1"/>']
    for e in order:
        (x0, y0), (x1, y1) = drawing.xy[drawing.edges[e, 0]], drawing.xy[drawing.edges[e, 1]]
        out.append(f'<line x1="{px(x0):.2f}" y1="{py(y0):.2f}" x2="{px(x1):.2f}" y2="{py(y1):.2f}" '
                   f'stroke="{color(e)}" stroke-width="{1.8 if at_k[e] else 0.7}"/>')
    r = max(1.2, min(3.0, 300 / max(drawing.n, 1)))
    out.extend(f'<circle cx="{px(x):.2f}" cy="{py(y):.2f}" r="{r:.2f}" fill="black"/>' for x, y in drawing.xy.tolist())
    out.append("</svg>")
    _write_text(path, "\n".join(out))


# ------------------------------------------------------------------------------------- incremental moves
class Evaluator:
    """A drawing's per-edge crossing counts, kept exact as vertices move (a move recounts only the
    moving vertex's edges: O(degree · m) instead of O(m²)), and batched evaluation of candidate
    positions for one vertex: the solver's inner loop.

    ``device=None`` keeps the drawing on the host (candidates across all CPU cores);
    ``device="cuda"`` or ``"cuda:1"`` or an int keeps it in that GPU's memory (one launch per batch
    of candidates, calls wait for ``stream``, by default the legacy default stream). The figures are
    the same either way."""

    def __init__(self, drawing: Drawing, *, device: Any = None, stream: Any = None):
        self.drawing = drawing
        self.xy = np.array(drawing.xy, dtype=np.int64).reshape(-1, 2)
        edges = np.ascontiguousarray(drawing.edges, dtype=np.int64).reshape(-1, 2)
        self.device = _parse_device(device)
        self._stream = _stream_handle(stream)
        if self.device is None:
            self._core = _core.LcnEvaluator(self.xy, edges, int(drawing.width), int(drawing.height))
        else:
            self._core = _core.LcnGpuEvaluator(self.xy, edges, int(drawing.width), int(drawing.height),
                                               self.device, stream=self._stream)

    def _args(self) -> dict:
        return {} if self.device is None else {"stream": self._stream}

    @property
    def edge_crossings(self) -> np.ndarray:
        return np.asarray(self._core.edge_crossings(**self._args()))

    def move(self, v: int, x: int, y: int) -> None:
        """Move vertex v (index) to (x, y); the counts follow exactly."""
        self._core.move(int(v), int(x), int(y), **self._args())
        self.xy[v] = (x, y)

    def candidates(self, v: int, xy) -> dict:
        """For each (x, y) row of `xy`: the k, edges at k and total crossings the drawing would have with
        v there, and whether that position is legal for v (inside the grid, on no other vertex, on no
        non-incident edge, no other vertex on v's edges). Nothing moves."""
        pts = np.ascontiguousarray(np.asarray(xy, dtype=np.int64).reshape(-1, 2))
        r = self._core.candidates(int(v), pts, **self._args())
        return {"k": np.asarray(r["k"]), "edges_at_k": np.asarray(r["edges_at_k"]),
                "total_crossings": np.asarray(r["total_crossings"]), "legal": np.asarray(r["legal"]).astype(bool)}


def _parse_device(device: Any):
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
        raise ValueError(f"lcn.Evaluator: device {device!r}; accepted: None, 'cpu', 'cuda', 'cuda:N' or an int")
    if index < 0:
        raise ValueError(f"lcn.Evaluator: device {device!r}; CUDA device ids are >= 0")
    return index


def _stream_handle(stream: Any) -> int:
    if stream is None:
        return 0
    from ._interop import resolve_stream

    return resolve_stream(stream, None)


# ------------------------------------------------------------------------------------------- arrays
def count_crossings(xy: Any, edges: Any, *, out: Any = None, stream: Any = None) -> Any:
    """Per-edge crossing counts of the drawing given as arrays: xy (n, 2) and edges (m, 2) int64,
    C-contiguous, on the host (the CPU evaluator) or a CUDA device (an all-pairs kernel), any DLPack
    framework. Returns an (m,) int64 array of the same framework (or fills `out`). Coordinates must lie
    in [0, 2^30] and edges join distinct existing vertices (checked on the arrays' device; ValueError
    before `out` is written)."""
    from ._interop import device_of, empty_like, resolve_stream

    if out is None:
        kind, dev = device_of(edges)
        if kind == "cpu":
            out = np.empty(len(edges), dtype=np.int64)
        else:
            out = empty_like(edges[:, 0])
    _core.lcn_count_crossings(xy, edges, out, stream=resolve_stream(stream, edges))
    return out
