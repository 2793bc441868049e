"""Contest JSON in and out: load (UTF-8, precise errors by file and field), to_dict, save (atomic)."""
from __future__ import annotations

import errno
import json
import os
import stat
import tempfile
from typing import Union

import numpy as np

from ._checks import _check_ids, _int, _is_int, _path_arg, _show
from .model import Drawing, _check_drawing


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
