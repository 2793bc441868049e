"""Refused calls of the lcn module and the `ironkernels lcn` command, table by table: each bad input
raises a TypeError/ValueError (or the OSError of a missing file, a directory) whose message names the
argument, field or file, what was given and what is accepted, and leaves every array and file it was
given byte for byte as it was (a refused save or draw creates nothing, not even a temporary file)."""
from __future__ import annotations

import contextlib
import io
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from ironkernels import cli, lcn
from refusal_helpers import Refusal, assert_refused, table

DATA = pathlib.Path(__file__).parent.parent / "data" / "lcn"
SMALL = DATA / "tum2024" / "ex1.json"  # n = 5, m = 5

# Files with one defect each, written once into a folder that lives as long as the test session.
_TMP = tempfile.TemporaryDirectory(prefix="ik-lcn-refusals-")
TMP = pathlib.Path(_TMP.name)


def _doc(**over):
    doc = {"nodes": [{"id": 0, "x": 0, "y": 0}, {"id": 1, "x": 4, "y": 4}, {"id": "c", "x": 0, "y": 4}],
           "edges": [{"source": 0, "target": 1}, {"source": 1, "target": "c"}], "width": 9, "height": 9}
    doc.update(over)
    return doc


def _file(name: str, content) -> str:
    path = TMP / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_text(json.dumps(content), encoding="utf-8")
    return str(path)


def _edge(source, target):
    return _doc(edges=[{"source": source, "target": target}])


def _node0(**fields):
    node = {"id": 0, "x": 0, "y": 0}
    node.update(fields)
    return _doc(nodes=[node, {"id": 1, "x": 4, "y": 4}, {"id": "c", "x": 0, "y": 4}])


F = {
    "endpoint_list": _file("endpoint_list.json", _edge([0], 1)),
    "endpoint_dict": _file("endpoint_dict.json", _edge(0, {"id": 1})),
    "endpoint_float": _file("endpoint_float.json", _edge(0.0, 1)),
    "endpoint_true": _file("endpoint_true.json", _edge(True, 0)),
    "id_float": _file("id_float.json", _node0(id=0.0)),
    "id_true": _file("id_true.json", _node0(id=True)),
    "id_list": _file("id_list.json", _node0(id=[0])),
    "x_string": _file("x_string.json", _node0(x="3")),
    "y_null": _file("y_null.json", _node0(y=None)),
    "width_float": _file("width_float.json", _doc(width=9.5)),
    "height_string": _file("height_string.json", _doc(height="9")),
    "nodes_dict": _file("nodes_dict.json", _doc(nodes={"0": {"x": 0, "y": 0}})),
    "edges_null": _file("edges_null.json", _doc(edges=None)),
    "node_list": _file("node_list.json", _doc(nodes=[[0, 0, 0]])),
    "edge_list": _file("edge_list.json", _doc(edges=[[0, 1]])),
    "top_list": _file("top_list.json", [1, 2]),
    "deep": _file("deep.json", "[" * 100000 + "]" * 100000),
    "latin1": _file("latin1.json", '{"nodes": [], "edges": [], "width": 1, "height": 1, "name": "Gr\xfcn"}'.encode("latin-1")),
    "digits": _file("digits.json", '{"nodes": [], "edges": [], "width": ' + "9" * 5000 + ', "height": 1}'),
    "truncated": _file("truncated.json", '{"nodes": [], "edges": ['),
    "self_loop": _file("self_loop.json", _edge(1, 1)),
    "good": _file("good.json", _doc()),
}
DIR = TMP / "a-folder"
DIR.mkdir()
MISSING = str(TMP / "no-such-file.json")


def _load_case(key: str, error=ValueError, names=()):
    path = F[key]
    return Refusal(f"load_{key}", lambda: lcn.load(path), error, [os.path.basename(path), *names], files=[path])


def drawing(**over) -> lcn.Drawing:
    d = lcn.load(SMALL)
    for k, v in over.items():
        setattr(d, k, v)
    return d


D = drawing()
FLOAT_XY = drawing(xy=D.xy.astype(np.float64) + 0.7)
FLOAT_EDGES = drawing(edges=D.edges.astype(np.float32))
PY_FLOATS = drawing(xy=[[0.5, 0], [1, 1], [2, 0], [0, 2], [2, 2]])


# ------------------------------------------------------------------------------------------------ load
LOAD = [
    _load_case("endpoint_list", names=["edges[0].source", "[0]", "integers or strings"]),
    _load_case("endpoint_dict", names=["edges[0].target", "integers or strings"]),
    _load_case("endpoint_float", names=["edges[0].source", "0.0"]),
    _load_case("endpoint_true", names=["edges[0].source", "true"]),
    _load_case("id_float", names=["nodes[0].id", "0.0", "integer or a string"]),
    _load_case("id_true", names=["nodes[0].id", "true"]),
    _load_case("id_list", names=["nodes[0].id"]),
    _load_case("x_string", names=["nodes[0].x", "integer", '"3"']),
    _load_case("y_null", names=["nodes[0].y", "null"]),
    _load_case("width_float", names=["width", "9.5"]),
    _load_case("height_string", names=["height", '"9"']),
    _load_case("nodes_dict", names=["'nodes'", "list"]),
    _load_case("edges_null", names=["'edges'", "list"]),
    _load_case("node_list", names=["nodes[0]", "object"]),
    _load_case("edge_list", names=["edges[0]", "source and target"]),
    _load_case("top_list", names=["top level", "object"]),
    _load_case("deep", names=["nested too deeply"]),
    _load_case("latin1", names=["UTF-8", "0xfc"]),
    _load_case("digits", names=["not valid JSON"]),
    _load_case("truncated", names=["not valid JSON", "line 1"]),
    _load_case("self_loop", names=["edges[0]", "self-loop", "self_loops='drop'"]),
    Refusal("load_directory", lambda: lcn.load(DIR), IsADirectoryError, [DIR.name, "directory"], files=[DIR]),
    Refusal("load_missing", lambda: lcn.load(MISSING), FileNotFoundError, ["no-such-file.json"], files=[MISSING]),
    Refusal("load_source_int", lambda: lcn.load(3), TypeError, ["source", "3", "path"]),
    Refusal("load_source_none", lambda: lcn.load(None), TypeError, ["source", "None"]),
    Refusal("load_self_loops_value", lambda: lcn.load(F["good"], self_loops="keep"), ValueError,
            ["self_loops", "'keep'", "'drop'"], files=[F["good"]]),
    Refusal("load_dict_float_id", lambda: lcn.load(_node0(id=1.0)), ValueError, ["nodes[0].id", "1.0"]),
]


# ------------------------------------------------------------------------------------------ save, draw
EXISTING = _file("existing.json", "{}")
SAVE_DIR = TMP / "save-into"
SAVE_DIR.mkdir()
SVG_DIR = TMP / "looks-like.svg"  # a folder with a picture's name
SVG_DIR.mkdir()
NO_FOLDER = str(TMP / "missing-folder" / "out.json")
PIC = str(TMP / "picture.svg")
JPG = str(TMP / "picture.jpg")
PNG = str(TMP / "picture.png")


@contextlib.contextmanager
def _no_matplotlib():
    saved = {k: v for k, v in sys.modules.items() if k == "matplotlib" or k.startswith("matplotlib.")}
    for k in saved:
        del sys.modules[k]
    sys.modules["matplotlib"] = None  # import matplotlib -> ModuleNotFoundError
    try:
        yield
    finally:
        del sys.modules["matplotlib"]
        sys.modules.update(saved)


def _draw_png_without_matplotlib():
    with _no_matplotlib():
        lcn.draw(D, PNG)


SAVE_DRAW = [
    Refusal("save_float_xy", lambda: lcn.save(FLOAT_XY, EXISTING), TypeError, ["lcn.save", "drawing.xy", "float64", "int64"],
            arrays=[FLOAT_XY.xy], files=[EXISTING]),
    Refusal("save_float_edges", lambda: lcn.save(FLOAT_EDGES, EXISTING), TypeError, ["drawing.edges", "float32"],
            files=[EXISTING]),
    Refusal("save_into_directory", lambda: lcn.save(D, SAVE_DIR), IsADirectoryError, ["lcn.save", SAVE_DIR.name, "directory"],
            files=[SAVE_DIR]),
    Refusal("save_missing_folder", lambda: lcn.save(D, NO_FOLDER), FileNotFoundError, ["out.json", "folder"],
            files=[NO_FOLDER, TMP]),
    Refusal("save_float_id", lambda: lcn.save(drawing(ids=[0.5, 1, 2, 3, 4]), EXISTING), TypeError, ["drawing.ids[0]", "0.5"],
            files=[EXISTING]),
    Refusal("save_repeated_id", lambda: lcn.save(drawing(ids=[1, 1, 2, 3, 4]), EXISTING), ValueError,
            ["drawing.ids[1]", "repeats"], files=[EXISTING]),
    Refusal("save_not_a_drawing", lambda: lcn.save({"nodes": []}, EXISTING), TypeError, ["drawing", "dict", "lcn.Drawing"],
            files=[EXISTING]),
    Refusal("save_path_int", lambda: lcn.save(D, 7), TypeError, ["path", "7"]),
    Refusal("draw_jpg", lambda: lcn.draw(D, JPG), ValueError, ["'.jpg'", ".svg", ".png"], files=[JPG, TMP]),
    Refusal("draw_no_extension", lambda: lcn.draw(D, str(TMP / "picture")), ValueError, ["(none)", ".svg"], files=[TMP]),
    Refusal("draw_size_float", lambda: lcn.draw(D, PIC, size=500.0), TypeError, ["size", "500.0", "integer"], files=[PIC]),
    Refusal("draw_size_small", lambda: lcn.draw(D, PIC, size=10), ValueError, ["size = 10", "64"], files=[PIC]),
    Refusal("draw_into_directory", lambda: lcn.draw(D, SVG_DIR), IsADirectoryError,
            ["lcn.draw", "looks-like.svg", "directory"], files=[SVG_DIR]),
    Refusal("draw_missing_folder", lambda: lcn.draw(D, str(TMP / "missing-folder" / "p.svg")), FileNotFoundError,
            ["lcn.draw", "p.svg", "folder"], files=[TMP]),
    Refusal("draw_path_none", lambda: lcn.draw(D, None), TypeError, ["lcn.draw", "path", "None"]),
    Refusal("draw_float_edges", lambda: lcn.draw(FLOAT_EDGES, PIC), TypeError, ["lcn.draw", "drawing.edges"], files=[PIC]),
    Refusal("draw_bad_evaluation", lambda: lcn.draw(D, PIC, evaluation={"k": 1}), TypeError, ["evaluation", "lcn.Evaluation"],
            files=[PIC]),
    Refusal("draw_foreign_evaluation", lambda: lcn.draw(D, PIC, evaluation=lcn.evaluate(lcn.load(F["good"]))), ValueError,
            ["evaluation", "2 edge counts for 5 edges"], files=[PIC]),
    Refusal("draw_png_without_matplotlib", _draw_png_without_matplotlib, ModuleNotFoundError,
            ["PNG output needs matplotlib", "ironkernels[plot]", ".svg"], files=[PNG, TMP]),
]


# ------------------------------------------------------------------------------------------- evaluate
EVALUATE = [
    Refusal("evaluate_float_xy", lambda: lcn.evaluate(FLOAT_XY), TypeError, ["lcn.evaluate", "drawing.xy", "float64"],
            arrays=[FLOAT_XY.xy]),
    Refusal("evaluate_float_edges", lambda: lcn.evaluate(FLOAT_EDGES), TypeError, ["drawing.edges", "float32"]),
    Refusal("evaluate_python_floats", lambda: lcn.evaluate(PY_FLOATS), TypeError, ["drawing.xy", "float64"]),
    Refusal("evaluate_object_entry", lambda: lcn.evaluate(drawing(xy=np.array([[0, 0], [1, "a"], [2, 0], [0, 2], [2, 2]],
                                                                                   dtype=object))),
            TypeError, ["drawing.xy[1, 1]", '"a"', "integers"]),
    Refusal("evaluate_bool_xy", lambda: lcn.evaluate(drawing(xy=D.xy > 0)), TypeError, ["drawing.xy", "bool"]),
    Refusal("evaluate_xy_shape", lambda: lcn.evaluate(drawing(xy=np.zeros((5, 3), np.int64))), ValueError,
            ["drawing.xy", "(5, 3)", "(n, 2)"]),
    Refusal("evaluate_edges_shape", lambda: lcn.evaluate(drawing(edges=D.edges.ravel())), ValueError,
            ["drawing.edges", "(10,)", "(m, 2)"]),
    Refusal("evaluate_ragged_xy", lambda: lcn.evaluate(drawing(xy=[[0, 0], [1]])), ValueError, ["drawing.xy", "rectangular"]),
    Refusal("evaluate_ids_length", lambda: lcn.evaluate(drawing(ids=[0, 1])), ValueError, ["drawing.ids", "2 entries", "5 vertices"]),
    Refusal("evaluate_width_float", lambda: lcn.evaluate(drawing(width=2.0)), TypeError, ["drawing.width", "2.0", "integer"]),
    Refusal("evaluate_height_bool", lambda: lcn.evaluate(drawing(height=True)), TypeError, ["drawing.height", "true"]),
    Refusal("evaluate_height_range", lambda: lcn.evaluate(drawing(height=-1)), ValueError, ["drawing.height = -1", "[0, 1073741824]"]),
    Refusal("evaluate_edge_end", lambda: lcn.evaluate(drawing(edges=np.array([[0, 1], [2, 7]], np.int64))), ValueError,
            ["drawing.edges[1]", "(2, 7)", "[0, 5)"]),
    Refusal("evaluate_self_loop", lambda: lcn.evaluate(drawing(edges=np.array([[3, 3]], np.int64))), ValueError,
            ["drawing.edges[0]", "self-loop"]),
    Refusal("evaluate_coordinate", lambda: lcn.evaluate(drawing(xy=np.array([[0, 0], [1, 2**31], [2, 0], [0, 2], [2, 2]]))),
            ValueError, ["drawing.xy[1]", "2147483648", "2^30"]),
    Refusal("evaluate_beyond_int64", lambda: lcn.evaluate(drawing(xy=[[0, 0], [2**70, 1], [2, 0], [0, 2], [2, 2]])),
            ValueError, ["drawing.xy", "int64"]),
    Refusal("evaluate_not_a_drawing", lambda: lcn.evaluate({"nodes": []}), TypeError, ["drawing", "dict", "lcn.Drawing"]),
    Refusal("evaluate_progress", lambda: lcn.evaluate(D, progress=5), TypeError, ["progress", "5", "callable"]),
]


# ------------------------------------------------------------------------------------ count_crossings
XY, EDGES = D.xy.copy(), D.edges.copy()
OUT = np.full(D.m, -7, np.int64)
RO_OUT = np.full(D.m, -7, np.int64)
RO_OUT.flags.writeable = False


def cc(xy=XY, edges=EDGES, **kw):
    return lambda: lcn.count_crossings(xy, edges, **kw)


COUNT = [
    Refusal("cc_list_xy", cc(xy=XY.tolist(), out=OUT), TypeError, ["lcn.count_crossings", "xy is a list", "int64 array"],
            arrays=[OUT]),
    Refusal("cc_list_edges", cc(edges=EDGES.tolist(), out=OUT), TypeError, ["edges is a list", "int64"], arrays=[OUT]),
    Refusal("cc_list_out", cc(out=[0] * D.m), TypeError, ["out is a list", "int64"]),
    Refusal("cc_float_xy", cc(xy=XY.astype(np.float64), out=OUT), TypeError, ["xy", "float64", "int64"], arrays=[OUT]),
    Refusal("cc_int32_edges", cc(edges=EDGES.astype(np.int32), out=OUT), TypeError, ["edges", "int32", "int64"], arrays=[OUT]),
    Refusal("cc_xy_shape", cc(xy=XY[:, :1].copy(), out=OUT), ValueError, ["xy", "(5, 1)", "(n, 2)"], arrays=[OUT]),
    Refusal("cc_edges_3d", cc(edges=EDGES.reshape(5, 1, 2), out=OUT), ValueError, ["edges", "(5, 1, 2)", "(m, 2)"], arrays=[OUT]),
    Refusal("cc_noncontiguous_xy", cc(xy=np.asfortranarray(XY), out=OUT), ValueError, ["xy", "C-contiguous"], arrays=[OUT]),
    Refusal("cc_readonly_out", cc(out=RO_OUT), ValueError, ["out", "read-only", "writable"], arrays=[RO_OUT]),
    Refusal("cc_out_length", cc(out=np.zeros(3, np.int64)), ValueError, ["out", "3 entries for 5 edges"]),
    Refusal("cc_out_dtype", cc(out=np.zeros(D.m, np.float64)), TypeError, ["out", "float64", "int64"]),
    Refusal("cc_out_2d", cc(out=np.zeros((D.m, 1), np.int64)), ValueError, ["out", "(5, 1)", "(m,)"]),
    Refusal("cc_edge_end", cc(edges=np.array([[0, 1], [2, 9]], np.int64), out=OUT[:2]), ValueError,
            ["edges[1]", "(2, 9)", "[0, 5)"], arrays=[OUT]),
    Refusal("cc_coordinate", cc(xy=np.array([[0, -1], [1, 1], [2, 0], [0, 2], [2, 2]], np.int64), out=OUT), ValueError,
            ["xy[0]", "(0, -1)", "2^30"], arrays=[OUT]),
    Refusal("cc_progress", cc(out=OUT, progress="yes"), TypeError, ["progress", "callable"], arrays=[OUT]),
]


# ----------------------------------------------------------------------------------------- Evaluator
EV = lcn.Evaluator(D)
EV_XY = EV.xy


def mv(*args):
    return lambda: EV.move(*args)


def cand(v, xy):
    return lambda: EV.candidates(v, xy)


EVALUATOR = [
    Refusal("evaluator_float_xy", lambda: lcn.Evaluator(FLOAT_XY), TypeError, ["lcn.Evaluator", "drawing.xy", "float64"],
            arrays=[FLOAT_XY.xy]),
    Refusal("evaluator_ids_length", lambda: lcn.Evaluator(drawing(ids=[1])), ValueError, ["drawing.ids", "1 entries"]),
    Refusal("evaluator_device", lambda: lcn.Evaluator(D, device="gpu"), ValueError, ["device", "'gpu'", "'cuda:N'"]),
    Refusal("evaluator_stream_bool", lambda: lcn.Evaluator(D, stream=True), TypeError, ["stream", "bool"]),
    Refusal("evaluator_stream_negative", lambda: lcn.Evaluator(D, stream=-3), ValueError, ["stream", "-3"]),
    Refusal("move_v_outside", mv(5, 0, 0), ValueError, ["move", "v = 5", "[0, 4]"], arrays=[EV_XY]),
    Refusal("move_v_negative", mv(-1, 0, 0), ValueError, ["v = -1", "[0, 4]"], arrays=[EV_XY]),
    Refusal("move_v_float", mv(1.0, 0, 0), TypeError, ["v = 1.0", "float", "integer"], arrays=[EV_XY]),
    Refusal("move_v_bool", mv(True, 0, 0), TypeError, ["v = true", "bool"], arrays=[EV_XY]),
    Refusal("move_x_float", mv(0, 1.5, 0), TypeError, ["x = 1.5", "integer"], arrays=[EV_XY]),
    Refusal("move_y_string", mv(0, 1, "2"), TypeError, ['y = "2"', "str"], arrays=[EV_XY]),
    Refusal("move_y_above", mv(0, 1, 2**30 + 1), ValueError, ["y = 1073741825", "[0, 1073741824]"], arrays=[EV_XY]),
    Refusal("move_x_negative", mv(0, -2, 1), ValueError, ["x = -2", "[0, 1073741824]"], arrays=[EV_XY]),
    Refusal("move_x_beyond_int64", mv(0, 2**70, 1), ValueError, ["x = 1180591620717411303424", "[0, 1073741824]"],
            arrays=[EV_XY]),
    Refusal("move_v_beyond_int64", mv(2**64, 0, 0), ValueError, ["v = 18446744073709551616"], arrays=[EV_XY]),
    Refusal("move_x_too_long_to_print", mv(0, 10**5000, 1), ValueError, ["x = <an integer of 16610 bits>"], arrays=[EV_XY]),
    Refusal("candidates_v_outside", cand(9, [[0, 0]]), ValueError, ["candidates", "v = 9"], arrays=[EV_XY]),
    Refusal("candidates_v_float", cand(0.0, [[0, 0]]), TypeError, ["v = 0.0"], arrays=[EV_XY]),
    Refusal("candidates_float_xy", cand(0, [[0.5, 0]]), TypeError, ["xy", "float64", "int64"], arrays=[EV_XY]),
    Refusal("candidates_xy_shape", cand(0, [[0, 0, 0]]), ValueError, ["xy", "(1, 3)", "(count, 2)"], arrays=[EV_XY]),
    Refusal("candidates_xy_range", cand(0, [[0, 0], [1, 2**30 + 5]]), ValueError, ["xy[1]", "1073741829", "2^30"],
            arrays=[EV_XY]),
    Refusal("candidates_beyond_int64", cand(0, [[2**65, 0]]), ValueError, ["xy", "beyond int64"], arrays=[EV_XY]),
]


# ----------------------------------------------------------------------------------------------- CLI
class CliRefused(Exception):
    """A command that exited with a non-zero status: the message is its stderr and the status."""


def run_cli(*args):
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            rc = cli.main(["lcn", *map(str, args)])
        except SystemExit as e:  # argparse's usage errors
            rc = e.code
    if rc:
        raise CliRefused(f"{err.getvalue()} (exit {rc})")
    return out.getvalue()


INPUT = _file("input.json", json.dumps(lcn.to_dict(D)))
LINK = TMP / "link.json"
LINK.symlink_to(INPUT)
CLI_PIC = str(TMP / "cli.svg")
REL_INPUT = os.path.relpath(INPUT)


def _same_via_relative():
    run_cli("draw", INPUT, os.path.join(os.path.dirname(REL_INPUT), ".", os.path.basename(REL_INPUT)))


CLI = [
    Refusal("cli_draw_onto_input", lambda: run_cli("draw", INPUT, INPUT), CliRefused, ["input.json", "is the input", "exit 2"],
            files=[INPUT]),
    Refusal("cli_draw_onto_input_via_symlink", lambda: run_cli("draw", LINK, INPUT), CliRefused, ["is the input", "exit 2"],
            files=[INPUT, LINK]),
    Refusal("cli_draw_onto_input_via_relative_path", _same_via_relative, CliRefused, ["is the input", "exit 2"], files=[INPUT]),
    Refusal("cli_draw_jpg", lambda: run_cli("draw", INPUT, JPG), CliRefused, ["'.jpg'", ".svg, .png", "exit 2"],
            files=[INPUT, JPG]),
    Refusal("cli_draw_json_output", lambda: run_cli("draw", INPUT, F["good"]), CliRefused, ["'.json'", "exit 2"],
            files=[INPUT, F["good"]]),
    Refusal("cli_draw_missing_input", lambda: run_cli("draw", MISSING, CLI_PIC), CliRefused, ["no-such-file.json", "exit 2"],
            files=[CLI_PIC]),
    Refusal("cli_draw_bad_input", lambda: run_cli("draw", F["endpoint_float"], CLI_PIC), CliRefused,
            ["endpoint_float.json", "edges[0].source", "exit 2"], files=[CLI_PIC]),
    Refusal("cli_draw_size_small", lambda: run_cli("draw", INPUT, CLI_PIC, "--size", "3"), CliRefused, ["size = 3", "exit 2"],
            files=[CLI_PIC]),
    Refusal("cli_draw_size_not_int", lambda: run_cli("draw", INPUT, CLI_PIC, "--size", "big"), CliRefused,
            ["--size", "'big'", "exit 2"], files=[CLI_PIC]),
    Refusal("cli_draw_self_loops_value", lambda: run_cli("draw", INPUT, CLI_PIC, "--self-loops", "keep"), CliRefused,
            ["--self-loops", "'keep'", "exit 2"], files=[CLI_PIC]),
    Refusal("cli_check_self_loop", lambda: run_cli("check", F["self_loop"]), CliRefused, ["self_loop.json", "self-loop", "exit 2"],
            files=[F["self_loop"]]),
    Refusal("cli_check_not_utf8", lambda: run_cli("check", F["latin1"], F["good"]), CliRefused, ["latin1.json", "UTF-8", "exit 2"],
            files=[F["latin1"]]),
    Refusal("cli_check_directory", lambda: run_cli("check", DIR), CliRefused, ["a-folder", "directory", "exit 2"], files=[DIR]),
    Refusal("cli_check_deep", lambda: run_cli("check", F["deep"]), CliRefused, ["deep.json", "nested", "exit 2"]),
]


@table(LOAD + SAVE_DRAW + EVALUATE + COUNT + EVALUATOR + CLI)
def test_refused(case):
    assert_refused(case)


def test_refused_writes_leave_no_temporary_files():
    before = sorted(os.listdir(TMP))
    for call in (lambda: lcn.save(D, SAVE_DIR), lambda: lcn.draw(D, JPG), lambda: lcn.save(FLOAT_XY, EXISTING)):
        with pytest.raises((OSError, ValueError, TypeError)):
            call()
    assert sorted(os.listdir(TMP)) == before and os.listdir(SAVE_DIR) == []


# ------------------------------------------------------------------------------- IRONKERNELS_NUM_THREADS
_THREADS_PROBE = ("import sys; sys.path.insert(0, sys.argv[1]); from ironkernels import lcn\n"
                  "try:\n    lcn.evaluate(lcn.load(sys.argv[2]))\n"
                  "except Exception as e:\n    print(type(e).__name__ + ': ' + str(e))\nelse:\n    print('OK')\n")
_PKG = str(pathlib.Path(lcn.__file__).parent.parent.parent)


def _with_threads_env(value: str) -> str:
    env = dict(os.environ, IRONKERNELS_NUM_THREADS=value)
    out = subprocess.run([sys.executable, "-c", _THREADS_PROBE, _PKG, str(SMALL)], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def _threads_case(value: str):
    def call():
        kind, _, msg = _with_threads_env(value).partition(": ")
        if kind != "OK":
            raise {"ValueError": ValueError, "TypeError": TypeError}.get(kind, RuntimeError)(msg)
    return Refusal(f"threads_env_{value!r}", call, ValueError, ["IRONKERNELS_NUM_THREADS", f"'{value}'", "integer >= 1"])


@table([_threads_case(v) for v in ("abc", "0", "-3", "4x", "2.5")])
def test_bad_thread_count_env_is_refused(case):
    assert_refused(case)


@pytest.mark.parametrize("value", ["", "1", " 2 "])
def test_thread_count_env_accepted(value):
    assert _with_threads_env(value) == "OK"
