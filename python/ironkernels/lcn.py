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

import errno
import html
import json
import os
import stat
import tempfile
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


def _num(value: int) -> str:
    """An integer for a message (one too long for str(): its size)."""
    try:
        return str(value)
    except ValueError:
        return f"<an integer of {value.bit_length()} bits>"


def _show(value: Any, limit: int = 60) -> str:
    """A value as a message shows it: JSON where it is JSON, else its repr; long ones cut."""
    if isinstance(value, int) and not isinstance(value, bool):
        text = _num(value)
    else:
        try:
            text = json.dumps(value)
        except (TypeError, ValueError):
            try:
                text = repr(value)
            except Exception:
                text = f"<a {type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _int(value: Any, where: str, lo: int = 0, hi: int = MAX_COORDINATE) -> int:
    """An integer field of a contest file (ValueError: the file is the bad value)."""
    if not _is_int(value):
        raise ValueError(f"{where} must be an integer, got {_show(value)}")
    value = int(value)
    if not lo <= value <= hi:
        raise ValueError(f"{where} = {_show(value)} is outside [{lo}, {hi}]")
    return value


def _int_arg(value: Any, name: str, fn: str, lo: int, hi: int) -> int:
    """An integer argument: TypeError for another type, ValueError outside [lo, hi]."""
    if not _is_int(value):
        raise TypeError(f"{fn}: {name} = {_show(value)} ({type(value).__name__}); accepted: an integer in [{lo}, {hi}]")
    value = int(value)
    if not lo <= value <= hi:
        raise ValueError(f"{fn}: {name} = {_show(value)} is outside [{lo}, {hi}]; accepted: an integer in [{lo}, {hi}]")
    return value


_INT64_MAX = np.iinfo(np.int64).max


def _int_pairs(value: Any, name: str, fn: str, what: str = "(count, 2)") -> np.ndarray:
    """An (count, 2) array of integers as C-contiguous int64 (a copy: later changes to `value` do not
    reach it). TypeError for a float, bool, string or object entry; ValueError for another shape or a
    value beyond int64."""
    try:
        a = np.asarray(value)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{fn}: {name} is not a rectangular array ({e}); accepted: integers of shape {what}") from None
    if a.size == 0 and a.dtype.kind in "iufO" and (a.ndim < 2 or a.shape[-1] in (0, 2)):
        return np.zeros((0, 2), dtype=np.int64)
    if a.dtype == object:
        for index, item in np.ndenumerate(a):
            if not _is_int(item):
                raise TypeError(f"{fn}: {name}[{', '.join(map(str, index))}] = {_show(item)} ({type(item).__name__}); "
                                "accepted: integers")
        try:
            a = np.array(a.tolist(), dtype=np.int64)
        except OverflowError:
            raise ValueError(f"{fn}: {name} holds a value beyond int64; accepted: integers in [0, 2^30]") from None
    elif a.dtype.kind not in "iu":
        raise TypeError(f"{fn}: {name} has dtype {a.dtype}; accepted: integers (int64), not truncated floats")
    if a.ndim != 2 or a.shape[1] != 2:
        raise ValueError(f"{fn}: {name} has shape {a.shape}; accepted: {what}")
    if a.dtype.kind == "u" and a.size and int(a.max()) > _INT64_MAX:
        raise ValueError(f"{fn}: {name} holds {int(a.max())}, beyond int64; accepted: integers in [0, 2^30]")
    return np.array(a, dtype=np.int64, order="C", copy=True)


def _check_coordinates(xy: np.ndarray, name: str, fn: str) -> None:
    bad = np.nonzero(((xy < 0) | (xy > MAX_COORDINATE)).any(axis=1))[0]
    if bad.size:
        v = int(bad[0])
        raise ValueError(f"{fn}: {name}[{v}] = ({xy[v, 0]}, {xy[v, 1]}) has a coordinate outside [0, 2^30]; "
                         f"accepted: integers in [0, {MAX_COORDINATE}]")


def _check_edge_ends(edges: np.ndarray, n: int, name: str, fn: str) -> None:
    bad = np.nonzero(((edges < 0) | (edges >= n)).any(axis=1))[0]
    if bad.size:
        e = int(bad[0])
        raise ValueError(f"{fn}: {name}[{e}] = ({edges[e, 0]}, {edges[e, 1]}) names a vertex outside [0, {n}); "
                         f"accepted: vertex indices 0 … {n - 1}")
    loops = np.nonzero(edges[:, 0] == edges[:, 1])[0]
    if loops.size:
        e = int(loops[0])
        raise ValueError(f"{fn}: {name}[{e}] = ({edges[e, 0]}, {edges[e, 1]}) is a self-loop; accepted: edges "
                         "joining two distinct vertices (load(..., self_loops='drop') leaves them out)")


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


def _check_ids(ids: Any, fn: str) -> None:
    """Ids that make a contest file load() reads back: integers or strings, each once."""
    seen = {}
    for i, nid in enumerate(ids):
        if not (_is_int(nid) or isinstance(nid, str)):
            raise TypeError(f"{fn}: drawing.ids[{i}] = {_show(nid)} ({type(nid).__name__}); accepted: integers or strings")
        key = int(nid) if _is_int(nid) else nid
        if key in seen:
            raise ValueError(f"{fn}: drawing.ids[{i}] = {_show(key)} repeats drawing.ids[{seen[key]}]; accepted: distinct ids")
        seen[key] = i


def _check_progress(progress: Any, fn: str) -> None:
    if progress is not None and not callable(progress):
        raise TypeError(f"{fn}: progress = {_show(progress)} ({type(progress).__name__}); accepted: None or a "
                        "callable progress(done, total)")


def _path_arg(path: Any, fn: str, name: str = "path") -> str:
    if isinstance(path, (str, os.PathLike)):
        p = os.fspath(path)
        if isinstance(p, str) and p:
            return p
    raise TypeError(f"{fn}: {name} = {_show(path)} ({type(path).__name__}); accepted: a non-empty file path (str or os.PathLike)")


def load(source: Union[str, os.PathLike, dict], *, self_loops: str = "reject") -> Drawing:
    """Parse a contest JSON file (UTF-8, a byte-order mark allowed) or an already-decoded dict.

    Raises ValueError naming the file and the field (a file that is not UTF-8 or not JSON, a field of
    the wrong type or range, an unknown or repeated id), TypeError for a `source` that is neither a path
    nor a dict, and the OSError of open() (FileNotFoundError, IsADirectoryError, …, naming the path).
    self_loops: "reject" (the contest's format has none) or "drop" (left out, listed)."""
    if not isinstance(self_loops, str) or self_loops not in ("reject", "drop"):
        raise ValueError(f"lcn.load: self_loops = {self_loops!r}; accepted: 'reject', 'drop'")
    where = "drawing"
    if isinstance(source, dict):
        doc = source
    else:
        where = _path_arg(source, "lcn.load", "source")
        if os.path.isdir(where):
            raise IsADirectoryError(errno.EISDIR, "lcn.load: source is a directory; accepted: a contest JSON file", where)
        with open(where, "rb") as f:
            raw = f.read()
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise ValueError(f"{where}: not UTF-8 text (byte 0x{raw[e.start]:02x} at offset {e.start}); "
                             "accepted: a UTF-8 contest JSON file") from None
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"{where}: not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}") from None
        except RecursionError:
            raise ValueError(f"{where}: JSON nested too deeply; accepted: a contest JSON object "
                             "(nodes, edges, width, height)") from None
        except ValueError as e:  # e.g. an integer with more digits than Python converts
            raise ValueError(f"{where}: not valid JSON: {e}") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{where}: the top level is a {type(doc).__name__}; accepted: an object with nodes, edges, width, height")
    for key in ("nodes", "edges", "width", "height"):
        if key not in doc:
            raise ValueError(f"{where}: missing key '{key}'")
    width = _int(doc["width"], f"{where}: width")
    height = _int(doc["height"], f"{where}: height")
    for key in ("nodes", "edges"):
        if not isinstance(doc[key], list):
            raise ValueError(f"{where}: '{key}' must be a list, got {_show(doc[key])}")
    ids, index, xy = [], {}, []
    for i, node in enumerate(doc["nodes"]):
        if not isinstance(node, dict):
            raise ValueError(f"{where}: nodes[{i}] must be an object with id, x, y, got {_show(node)}")
        for key in ("id", "x", "y"):
            if key not in node:
                raise ValueError(f"{where}: nodes[{i}] is missing '{key}'")
        nid = node["id"]
        if not (_is_int(nid) or isinstance(nid, str)):
            raise ValueError(f"{where}: nodes[{i}].id must be an integer or a string, got {_show(nid)}")
        nid = int(nid) if _is_int(nid) else nid
        if nid in index:
            raise ValueError(f"{where}: nodes[{i}].id = {_show(nid)} repeats nodes[{index[nid]}].id")
        index[nid] = i
        ids.append(nid)
        xy.append((_int(node["x"], f"{where}: nodes[{i}].x"), _int(node["y"], f"{where}: nodes[{i}].y")))
    edges, seen, duplicates, dropped = [], {}, [], []
    for e, edge in enumerate(doc["edges"]):
        if not isinstance(edge, dict) or "source" not in edge or "target" not in edge:
            raise ValueError(f"{where}: edges[{e}] must be an object with source and target, got {_show(edge)}")
        ends = []
        for key in ("source", "target"):
            end = edge[key]
            # The type first: 0.0 == 0 and True == 1 would find integer ids; a list cannot be looked up.
            if not (_is_int(end) or isinstance(end, str)):
                raise ValueError(f"{where}: edges[{e}].{key} = {_show(end)} is not a node id "
                                 "(ids are integers or strings)")
            end = int(end) if _is_int(end) else end
            if end not in index:
                raise ValueError(f"{where}: edges[{e}].{key} = {_show(end)} is not a node id")
            ends.append(index[end])
        if ends[0] == ends[1]:
            if self_loops == "drop":
                dropped.append(e)
                continue
            raise ValueError(f"{where}: edges[{e}] is a self-loop at node {_show(edge['source'])} "
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


def _contest_dict(ids: list, xy: np.ndarray, edges: np.ndarray, width: int, height: int) -> dict:
    ids = [int(i) if _is_int(i) else i for i in ids]
    return {
        "nodes": [{"id": nid, "x": x, "y": y} for nid, (x, y) in zip(ids, xy.tolist())],
        "edges": [{"source": ids[s], "target": ids[t]} for s, t in edges.tolist()],
        "width": width,
        "height": height,
    }


def to_dict(drawing: Drawing) -> dict:
    """The contest JSON object of a drawing, ids as given (checked like save())."""
    xy, edges, width, height = _check_drawing(drawing, "lcn.to_dict")
    _check_ids(drawing.ids, "lcn.to_dict")
    return _contest_dict(list(drawing.ids), xy, edges, width, height)


def _check_output(path: str, fn: str) -> str:
    """The file to write for `path` (a symlink's target): an error naming `path` if it is a directory
    or its folder does not exist, raised before anything is computed or written."""
    target = os.path.realpath(path) if os.path.islink(path) else path
    if os.path.isdir(target):
        raise IsADirectoryError(errno.EISDIR, f"{fn}: the output path is a directory; accepted: a file path", path)
    folder = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(folder):
        raise FileNotFoundError(errno.ENOENT, f"{fn}: the output's folder {folder!r} does not exist", path)
    return target


def _new_file_mode(target: str) -> int:
    try:
        return stat.S_IMODE(os.stat(target).st_mode)  # an existing file keeps its permissions
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _write_bytes(path: str, data: bytes, fn: str) -> None:
    """Written to a hidden temporary file in the same folder, then renamed into place: an existing file
    is never left half-written, and the temporary file is removed on any failure. Errors name `path`."""
    target = _check_output(path, fn)
    folder = os.path.dirname(os.path.abspath(target))
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=folder)
    except OSError as e:
        raise OSError(e.errno, f"{fn}: cannot write: {e.strerror}", path) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, _new_file_mode(target))
        os.replace(tmp, target)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise OSError(e.errno, f"{fn}: cannot write: {e.strerror}", path) from None
        raise


def save(drawing: Drawing, path: Union[str, os.PathLike]) -> None:
    """Write the drawing as contest JSON (UTF-8). The drawing is checked first (TypeError/ValueError
    naming the field, nothing created); the file is replaced atomically (a temporary file in its folder,
    renamed into place; removed on failure); errors name `path`."""
    p = _path_arg(path, "lcn.save")
    xy, edges, width, height = _check_drawing(drawing, "lcn.save")
    _check_ids(drawing.ids, "lcn.save")
    _check_output(p, "lcn.save")
    text = json.dumps(_contest_dict(list(drawing.ids), xy, edges, width, height))
    _write_bytes(p, text.encode("utf-8"), "lcn.save")


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


# ---------------------------------------------------------------------------------------------- drawing
_RAMP = [(0x31, 0x36, 0x95), (0x45, 0x75, 0xB4), (0x74, 0xAD, 0xD1), (0xAB, 0xD9, 0xE9), (0xFE, 0xE0, 0x90),
         (0xFD, 0xAE, 0x61), (0xF4, 0x6D, 0x43)]  # blue (few crossings) to orange (many)
_AT_K = "#d7191c"
_VIOLATION = "#e7298a"  # rings around the vertices of violations
DRAW_FORMATS = (".svg", ".png")
MIN_SIZE, MAX_SIZE = 64, 16384


def _color(c: int, k: int) -> str:
    if k <= 0:
        return "#%02x%02x%02x" % _RAMP[0]
    f = (len(_RAMP) - 1) * min(c, k) / k
    i = min(int(f), len(_RAMP) - 2)
    t = f - i
    rgb = [round(a + (b - a) * t) for a, b in zip(_RAMP[i], _RAMP[i + 1])]
    return "#%02x%02x%02x" % tuple(rgb)


def _format_of(path: str, fn: str = "lcn.draw") -> str:
    ext = os.path.splitext(path)[1].lower()
    if ext not in DRAW_FORMATS:
        raise ValueError(f"{fn}: path {path!r} has extension {ext or '(none)'!r}; accepted: "
                         + ", ".join(DRAW_FORMATS) + " (PNG needs matplotlib)")
    return ext[1:]


def _matplotlib():
    try:
        import matplotlib
    except ImportError:
        raise ModuleNotFoundError("lcn.draw: PNG output needs matplotlib: pip install 'ironkernels[plot]' "
                                  "(or write .svg)", name="matplotlib") from None
    return matplotlib


def _legend(k: int, edges_at_k: int, m: int) -> list:
    """(colour, label) of the legend: a few counts of the ramp, then the red edges at k."""
    if m == 0:
        return []
    if k == 0:
        return [(_AT_K, f"0 = k ({edges_at_k} edges)")]
    steps = min(k, 6)
    counts = sorted({round(i * (k - 1) / max(steps - 1, 1)) for i in range(steps)})
    return [(_color(c, k), str(c)) for c in counts] + [(_AT_K, f"{k} = k ({edges_at_k} edges)")]


def _violation_vertices(drawing: Drawing, ev: Evaluation) -> list:
    """Indices of the vertices named by the violations (the vertex on an edge, both of a shared point,
    the one outside the grid), in order."""
    try:
        index = {nid: i for i, nid in enumerate(drawing.ids)}
    except TypeError:
        return []
    out = []
    for v in ev.violations:
        for nid in (v[1], v[2]) if v[0] == "same_point" else (v[1],):
            if nid in index and index[nid] not in out:
                out.append(index[nid])
    return out


def _titles(drawing: Drawing, ev: Evaluation, marked: list) -> list:
    lines = [f"n={drawing.n} m={drawing.m} k={ev.k} edges at k={ev.edges_at_k} total={ev.total_crossings}"]
    if not ev.valid:
        kinds = {}
        for v in ev.violations:
            kinds[v[0]] = kinds.get(v[0], 0) + 1
        shown = ", ".join(str(drawing.ids[i]) for i in marked[:6]) + (" …" if len(marked) > 6 else "")
        lines.append(f"INVALID ({len(ev.violations)} violations: "
                     + ", ".join(f"{c} {k}" for k, c in kinds.items()) + f"); circled: {shown}")
    return lines


def draw(drawing: Drawing, path: Union[str, os.PathLike], evaluation: Evaluation = None, size: int = 900, *,
         progress: Any = None) -> None:
    """Picture of a drawing, `size` × `size` pixels (the grid box [0, W]×[0, H] fitted inside, aspect
    kept): edges coloured by their crossing count (blue few … orange many), the edges at k on top in red
    and thicker, vertices as small dots, y growing upwards; a title with n, m, k, edges at k and the total;
    a legend of the colours with their counts; for an invalid drawing the vertices of the violations
    circled in magenta and listed in the title.

    The format follows the extension: .svg, or .png (needs matplotlib: pip install 'ironkernels[plot]');
    others are a ValueError. Everything is checked before anything is computed or written (the drawing,
    `evaluation` if given, size in [64, 16384], the path); the file is replaced atomically."""
    p = _path_arg(path, "lcn.draw")
    fmt = _format_of(p)
    size = _int_arg(size, "size", "lcn.draw", MIN_SIZE, MAX_SIZE)
    xy, edges, width, height = _check_drawing(drawing, "lcn.draw")
    if evaluation is not None:
        if not isinstance(evaluation, Evaluation):
            raise TypeError(f"lcn.draw: evaluation is a {type(evaluation).__name__}; accepted: None or the "
                            "lcn.Evaluation of the drawing")
        if np.shape(evaluation.edge_crossings) != (len(edges),):
            raise ValueError(f"lcn.draw: evaluation has {np.size(evaluation.edge_crossings)} edge counts for "
                             f"{len(edges)} edges; accepted: the lcn.Evaluation of this drawing")
    _check_progress(progress, "lcn.draw")
    if fmt == "png":
        _matplotlib()
    _check_output(p, "lcn.draw")
    ev = evaluate(drawing, progress=progress) if evaluation is None else evaluation
    pic = _Picture(drawing, xy, edges, width, height, ev, size)
    _write_bytes(p, pic.png() if fmt == "png" else pic.svg().encode("utf-8"), "lcn.draw")


class _Picture:
    """The layout shared by SVG and PNG, in pixels from the top left: a title band, the drawing area,
    a legend band."""

    def __init__(self, drawing, xy, edges, width, height, ev, size):
        self.d, self.xy, self.edges, self.ev, self.size = drawing, xy, edges, ev, size
        # The picture spans the grid box and every vertex (one outside the grid is shown where it is).
        self.gw, self.gh = width, height
        self.w = max(width, int(xy[:, 0].max()) if len(xy) else 0, 1)
        self.h = max(height, int(xy[:, 1].max()) if len(xy) else 0, 1)
        self.marked = _violation_vertices(drawing, ev)
        self.titles = _titles(drawing, ev, self.marked)
        self.font = max(8.0, min(15.0, size / 60))
        self.top = self.font * (1.6 * len(self.titles) + 0.6)
        self.legend = _legend(ev.k, ev.edges_at_k, len(edges))
        self.bottom = self.font * 3.4
        margin = max(6.0, size * 0.02)
        area_w, area_h = size - 2 * margin, size - self.top - self.bottom - 2 * margin
        self.scale = max(min(area_w / self.w, area_h / self.h), 1e-9)
        self.x0 = margin + (area_w - self.w * self.scale) / 2
        self.y0 = self.top + margin + (area_h - self.h * self.scale) / 2
        counts = np.asarray(ev.edge_crossings)
        self.order = np.argsort(counts, kind="stable")  # most crossed last, on top
        self.at_k = counts == ev.k if len(edges) else np.zeros(0, bool)
        self.counts = counts
        self.radius = max(1.2, min(3.0, 300 / max(len(xy), 1))) * size / 900

    def px(self, x):
        return self.x0 + x * self.scale

    def title_font(self, line: str) -> float:
        """The title's font size in pixels, smaller for a line that would not fit the width."""
        return min(self.font, 0.95 * self.size / (0.56 * max(len(line), 1)))

    def py(self, y):
        return self.y0 + (self.h - y) * self.scale

    def color(self, e):
        return _AT_K if self.at_k[e] else _color(int(self.counts[e]), self.ev.k)

    def svg(self) -> str:
        size, f = self.size, self.font
        out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" viewBox="0 0 {size} {size}">',
               f'<rect width="{size}" height="{size}" fill="white"/>']
        for i, line in enumerate(self.titles):
            out.append(f'<text x="{size / 2:.1f}" y="{f * (1.6 * i + 1.4):.1f}" text-anchor="middle" '
                       f'font-family="sans-serif" font-size="{self.title_font(line):.1f}">{html.escape(line)}</text>')
        out.append(f'<rect x="{self.px(0):.2f}" y="{self.py(self.gh):.2f}" width="{self.gw * self.scale:.2f}" '
                   f'height="{self.gh * self.scale:.2f}" fill="none" stroke="#888" stroke-width="1"/>')
        thin, thick = max(0.5, 0.7 * size / 900), max(1.0, 1.8 * size / 900)
        for e in self.order:
            (x0, y0), (x1, y1) = self.xy[self.edges[e, 0]], self.xy[self.edges[e, 1]]
            out.append(f'<line x1="{self.px(x0):.2f}" y1="{self.py(y0):.2f}" x2="{self.px(x1):.2f}" '
                       f'y2="{self.py(y1):.2f}" stroke="{self.color(e)}" stroke-width="{thick if self.at_k[e] else thin}"/>')
        out.extend(f'<circle cx="{self.px(x):.2f}" cy="{self.py(y):.2f}" r="{self.radius:.2f}" fill="black"/>'
                   for x, y in self.xy.tolist())
        ring = max(4.0, 3 * self.radius)
        out.extend(f'<circle class="violation" cx="{self.px(self.xy[v, 0]):.2f}" cy="{self.py(self.xy[v, 1]):.2f}" '
                   f'r="{ring:.2f}" fill="none" stroke="{_VIOLATION}" stroke-width="{thick:.2f}"/>' for v in self.marked)
        # The legend: "crossings per edge" and a swatch per entry, along the bottom band.
        y = size - self.bottom / 2
        x = size * 0.03
        out.append(f'<g class="legend" font-family="sans-serif" font-size="{f * 0.9:.1f}">')
        if self.legend:
            out.append(f'<text x="{x:.1f}" y="{y + f * 0.3:.1f}">crossings per edge:</text>')
            x += f * 9.5
        for color, label in self.legend:
            out.append(f'<rect x="{x:.1f}" y="{y - f * 0.35:.1f}" width="{f * 1.6:.1f}" height="{f * 0.7:.1f}" fill="{color}"/>')
            out.append(f'<text x="{x + f * 1.9:.1f}" y="{y + f * 0.3:.1f}">{html.escape(label)}</text>')
            x += f * (2.6 + 0.55 * len(label))
        if self.marked:
            out.append(f'<rect x="{x:.1f}" y="{y - f * 0.5:.1f}" width="{f:.1f}" height="{f:.1f}" rx="{f / 2:.1f}" '
                       f'fill="none" stroke="{_VIOLATION}" stroke-width="2"/>')
            out.append(f'<text x="{x + f * 1.3:.1f}" y="{y + f * 0.3:.1f}">violation</text>')
        out.append("</g>")
        out.append("</svg>")
        return "\n".join(out)

    def png(self) -> bytes:
        import io

        _matplotlib().use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.collections import LineCollection
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch, Rectangle

        size = self.size
        pt = 72 / size  # points per pixel at dpi = size on a 1-inch figure: exactly size × size pixels
        fig = plt.figure(figsize=(1, 1), dpi=size)
        try:
            ax = fig.add_axes([self.x0 / size, 1 - (self.y0 + self.h * self.scale) / size,
                               self.w * self.scale / size, self.h * self.scale / size])
            thin, thick = max(0.5, 0.7 * size / 900), max(1.0, 1.8 * size / 900)
            segs = [[tuple(self.xy[s]), tuple(self.xy[t])] for s, t in self.edges[self.order]]
            ax.add_collection(LineCollection(segs, colors=[self.color(e) for e in self.order],
                                             linewidths=[(thick if self.at_k[e] else thin) * pt for e in self.order],
                                             clip_on=False))
            if len(self.xy):
                ax.scatter(self.xy[:, 0], self.xy[:, 1], s=(2 * self.radius * pt) ** 2, c="black", zorder=3, linewidths=0,
                           clip_on=False)
            if self.marked:
                ring = max(4.0, 3 * self.radius)
                ax.scatter(self.xy[self.marked, 0], self.xy[self.marked, 1], s=(2 * ring * pt) ** 2, facecolors="none",
                           edgecolors=_VIOLATION, linewidths=thick * pt, zorder=4, clip_on=False)
            ax.add_patch(Rectangle((0, 0), self.gw, self.gh, fill=False, ec="#888888", lw=pt, clip_on=False, zorder=0))
            ax.set_xlim(0, self.w)
            ax.set_ylim(0, self.h)
            ax.axis("off")
            for i, line in enumerate(self.titles):
                fig.text(0.5, 1 - self.font * (1.6 * i + 1.4) / size, line, ha="center", va="baseline",
                         fontsize=self.title_font(line) * pt)
            handles = [Patch(color=c, label=label) for c, label in self.legend]
            if self.marked:
                handles.append(Line2D([], [], marker="o", ls="", fillstyle="none", markeredgecolor=_VIOLATION,
                                      markersize=self.font * pt, label="violation"))
            if handles:
                fig.legend(handles=handles, loc="lower center", ncol=len(handles), frameon=False,
                           fontsize=self.font * 0.9 * pt, title="crossings per edge" if self.legend else None,
                           title_fontsize=self.font * 0.9 * pt, handlelength=1.4, columnspacing=1.0,
                           borderaxespad=0.2)
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=size)
            return buf.getvalue()
        finally:
            plt.close(fig)


# ------------------------------------------------------------------------------------- incremental moves
class Evaluator:
    """A drawing's per-edge crossing counts, kept exact as vertices move (a move recounts only the
    moving vertex's edges: O(degree · m) instead of O(m²)), and batched evaluation of candidate
    positions for one vertex: the solver's inner loop.

    ``device=None`` keeps the drawing on the host (candidates across all CPU cores);
    ``device="cuda"`` or ``"cuda:1"`` or an int keeps it in that GPU's memory (one launch per batch
    of candidates, calls wait for ``stream``, by default the legacy default stream). The figures are
    the same either way. The drawing is checked like evaluate()'s; ``progress`` (host only) is called
    during the first full count, as in evaluate(), which also answers Ctrl-C."""

    def __init__(self, drawing: Drawing, *, device: Any = None, stream: Any = None, progress: Any = None):
        xy, edges, width, height = _check_drawing(drawing, "lcn.Evaluator")
        _check_progress(progress, "lcn.Evaluator")
        self.device = _parse_device(device)
        self._stream = _stream_handle(stream)
        self.drawing = drawing
        self.xy = xy
        if self.device is None:
            self._core = _core.LcnEvaluator(xy, edges, width, height, progress)
        else:
            self._core = _core.LcnGpuEvaluator(xy, edges, width, height, self.device, stream=self._stream)

    def _args(self) -> dict:
        return {} if self.device is None else {"stream": self._stream}

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


def _parse_device(device: Any, fn: str = "lcn.Evaluator", accepted: str = "None, 'cpu', 'cuda', 'cuda:N' or an int"):
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
        raise ValueError(f"{fn}: device {device!r}; accepted: {accepted}")
    if index < 0:
        raise ValueError(f"{fn}: device {device!r}; CUDA device ids are >= 0")
    return index


def _stream_handle(stream: Any) -> int:
    if stream is None:
        return 0
    from ._interop import resolve_stream

    return resolve_stream(stream, None)


# ------------------------------------------------------------------------------------------- arrays
def _array_arg(a: Any, name: str, fn: str, shape: str, writable: bool = False) -> bool:
    """Checks an array argument of count_crossings; True for a NumPy array (then checked in full:
    dtype, shape, contiguity, writability), False for another DLPack array (the core checks it)."""
    if isinstance(a, np.ndarray):
        if a.dtype != np.int64:
            raise TypeError(f"{fn}: {name} has dtype {a.dtype}; accepted: int64")
        ndim = 2 if shape != "(m,)" else 1
        if a.ndim != ndim or (ndim == 2 and a.shape[1] != 2):
            raise ValueError(f"{fn}: {name} has shape {a.shape}; accepted: {shape}")
        if not a.flags.c_contiguous:
            raise ValueError(f"{fn}: {name} is not C-contiguous; accepted: a C-contiguous array "
                             "(np.ascontiguousarray makes one)")
        if writable and not a.flags.writeable:
            raise ValueError(f"{fn}: {name} is read-only; accepted: a writable int64 array")
        return True
    if hasattr(a, "__dlpack__"):
        return False
    raise TypeError(f"{fn}: {name} is a {type(a).__name__}; accepted: an int64 array of shape {shape} (NumPy or any "
                    "DLPack framework; np.asarray(..., dtype=np.int64) converts a list)")


def count_crossings(xy: Any, edges: Any, *, out: Any = None, stream: Any = None, progress: Any = None) -> Any:
    """Per-edge crossing counts of the drawing given as arrays: xy (n, 2) and edges (m, 2) int64,
    C-contiguous, on the host (the CPU evaluator) or a CUDA device (an all-pairs kernel), any DLPack
    framework. Returns an (m,) int64 array of the same framework (or fills `out`, writable, (m,) int64).
    Coordinates must lie in [0, 2^30] and edges join distinct existing vertices (checked on the arrays'
    device; TypeError/ValueError naming the argument before `out` is written). On the host it answers
    Ctrl-C and calls `progress(done, total)` as evaluate() does (an interrupted call leaves `out` as it was)."""
    from ._interop import device_of, empty_like, resolve_stream

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
        kind, dev = device_of(edges)
        if kind == "cpu":
            out = np.empty(len(edges), dtype=np.int64)
        else:
            out = empty_like(edges[:, 0])
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


from ._lcn_solve import Progress, Result, solve  # noqa: E402  (uses this module's checks)
from ._lcn_bounds import LowerBound, lower_bound  # noqa: E402
from ._lcn_start import available_methods as start_methods, legalise, start_drawing  # noqa: E402
