"""lcn: contest-format I/O, validation and exact crossing counts, against an independent brute-force
NumPy implementation on every instance in tests/data/lcn (copied from the steering corpus), the
official sample solutions' k, and hand-made degenerate configurations."""
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import ironkernels
from ironkernels import lcn
from ironkernels.reference import lcn_crossing_counts

DATA = pathlib.Path(__file__).parent.parent / "data" / "lcn"
FILES = sorted(DATA.glob("*/*.json"))


def orient(ax, ay, bx, by, cx, cy):
    return np.sign((bx - ax) * (cy - ay) - (by - ay) * (cx - ax))


def brute_force(d):
    """Per-edge proper-crossing counts (ironkernels.reference, NumPy) and the set of violations, vertex
    by vertex with NumPy: neither uses the library's C++ core."""
    p, q = d.xy[d.edges[:, 0]], d.xy[d.edges[:, 1]]
    s, t = d.edges[:, 0], d.edges[:, 1]
    counts = lcn_crossing_counts(d.xy, d.edges)
    violations = set()
    for v in range(d.n):
        x, y = d.xy[v]
        if x > d.width or y > d.height:
            violations.add(("outside_grid", v))
        same = np.nonzero((d.xy[:, 0] == x) & (d.xy[:, 1] == y))[0]
        if same[0] != v:  # listed with the lowest-numbered vertex at the point
            violations.add(("same_point", int(same[0]), v))
        on_line = orient(p[:, 0], p[:, 1], q[:, 0], q[:, 1], x, y) == 0
        inside = (np.minimum(p[:, 0], q[:, 0]) <= x) & (x <= np.maximum(p[:, 0], q[:, 0])) & \
                 (np.minimum(p[:, 1], q[:, 1]) <= y) & (y <= np.maximum(p[:, 1], q[:, 1]))
        at_end = ((p[:, 0] == x) & (p[:, 1] == y)) | ((q[:, 0] == x) & (q[:, 1] == y))
        for e in np.nonzero(on_line & inside & ~at_end & (s != v) & (t != v))[0]:
            violations.add(("vertex_on_edge", v, int(e)))
    return counts, violations


def as_index_violations(d, ev):
    index = {nid: i for i, nid in enumerate(d.ids)}
    out = set()
    for v in ev.violations:
        if v[0] == "same_point":
            out.add((v[0], index[v[1]], index[v[2]]))
        elif v[0] == "vertex_on_edge":
            ends = (index[v[2][0]], index[v[2][1]])
            edges = [e for e in range(d.m) if tuple(d.edges[e]) == ends]
            out.update((v[0], index[v[1]], e) for e in edges)
        else:
            out.add((v[0], index[v[1]]))
    return out


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.name}" for p in FILES])
def test_corpus_matches_brute_force(path):
    d = lcn.load(path)
    ev = lcn.evaluate(d)
    counts, violations = brute_force(d)
    np.testing.assert_array_equal(ev.edge_crossings, counts)
    assert ev.k == (counts.max() if d.m else 0)
    assert ev.edges_at_k == (np.count_nonzero(counts == counts.max()) if d.m else 0)
    assert ev.total_crossings == counts.sum() // 2
    assert as_index_violations(d, ev) == violations
    assert ev.valid == (not violations)


@pytest.mark.parametrize("path", sorted(DATA.glob("gd2025-examples/sol-*.json")), ids=lambda p: p.name)
def test_official_solutions_have_their_k(path):
    k = int(re.match(r"sol-\d+-nodes-(\d+)-planar", path.stem).group(1))
    if path.stem == "sol-625-nodes-5-planar":
        k = 2  # the file name says 5; the drawing is 2-planar
    ev = lcn.evaluate(lcn.load(path))
    assert ev.valid and ev.k == k


def drawing(points, edges, w=100, h=100):
    return lcn.load({"nodes": [{"id": i, "x": x, "y": y} for i, (x, y) in enumerate(points)],
                     "edges": [{"source": a, "target": b} for a, b in edges], "width": w, "height": h})


@pytest.mark.parametrize(
    "points, edges, crossings, violations",
    [
        ([(0, 0), (10, 10), (0, 10), (10, 0)], [(0, 1), (2, 3)], [1, 1], []),  # an X
        ([(0, 5), (10, 5), (5, 0), (5, 10)], [(0, 1), (2, 3)], [1, 1], []),  # horizontal × vertical
        ([(0, 0), (10, 0), (5, 0), (5, 10)], [(0, 1), (2, 3)], [0, 0], [("vertex_on_edge", 2, (0, 1))]),  # T on a horizontal edge
        ([(0, 0), (0, 10), (0, 5), (7, 5)], [(0, 1), (2, 3)], [0, 0], [("vertex_on_edge", 2, (0, 1))]),  # T on a vertical edge
        ([(0, 0), (10, 0), (4, 0), (20, 0)], [(0, 1), (2, 3)], [0, 0], [("vertex_on_edge", 1, (2, 3)), ("vertex_on_edge", 2, (0, 1))]),  # collinear overlap
        ([(0, 0), (10, 0), (20, 0), (30, 0)], [(0, 1), (2, 3)], [0, 0], []),  # collinear, disjoint
        ([(0, 0), (10, 10), (10, 0)], [(0, 1), (1, 2), (0, 2)], [0, 0, 0], []),  # shared endpoints never cross
        ([(0, 0), (10, 10), (0, 10), (10, 0), (5, 5)], [(0, 1), (2, 3)], [1, 1], [("vertex_on_edge", 4, (0, 1)), ("vertex_on_edge", 4, (2, 3))]),
        ([(3, 3), (3, 3), (9, 9)], [(0, 2)], [0], [("same_point", 0, 1)]),
        ([(0, 0), (200, 5)], [(0, 1)], [0], [("outside_grid", 1)]),
    ],
)
def test_hand_made_configurations(points, edges, crossings, violations):
    ev = lcn.evaluate(drawing(points, edges))
    assert ev.edge_crossings.tolist() == crossings
    assert ev.violations == violations


def test_counts_do_not_depend_on_threads():
    d = lcn.load(DATA / "gd2025-examples" / "150-nodes.json")
    saved = ironkernels._core.cpu_threads()
    try:
        ironkernels._core.set_cpu_threads(1)
        one = lcn.evaluate(d).edge_crossings
        ironkernels._core.set_cpu_threads(3)
        three = lcn.evaluate(d).edge_crossings
    finally:
        ironkernels._core.set_cpu_threads(saved)
    np.testing.assert_array_equal(one, three)


def test_save_and_load_round_trip_keeps_ids(tmp_path):
    d = lcn.load({"nodes": [{"id": "a", "x": 1, "y": 2}, {"id": 7, "x": 3, "y": 4}],
                  "edges": [{"source": 7, "target": "a"}], "width": 5, "height": 5})
    lcn.save(d, tmp_path / "out.json")
    back = json.loads((tmp_path / "out.json").read_text())
    assert back == {"nodes": [{"id": "a", "x": 1, "y": 2}, {"id": 7, "x": 3, "y": 4}],
                    "edges": [{"source": 7, "target": "a"}], "width": 5, "height": 5}


def test_duplicate_edges_are_kept_and_listed():
    d = drawing([(0, 0), (10, 10), (0, 10), (10, 0)], [(0, 1), (1, 0), (2, 3)])
    assert d.duplicate_edges == [(1, 0)]
    assert lcn.evaluate(d).edge_crossings.tolist() == [1, 1, 2]


@pytest.mark.parametrize(
    "doc, match",
    [
        ('{"nodes": [], "edges": []', "not valid JSON: .* line 1"),
        ({"nodes": [], "edges": [], "width": 1}, "missing key 'height'"),
        ({"nodes": [{"id": 0, "x": 1}], "edges": [], "width": 1, "height": 1}, r"nodes\[0\] is missing 'y'"),
        ({"nodes": [{"id": 0, "x": 1, "y": 1}, {"id": 0, "x": 2, "y": 1}], "edges": [], "width": 9, "height": 9}, r"nodes\[1\].id = 0 repeats nodes\[0\]"),
        ({"nodes": [{"id": 0, "x": 1, "y": 1}], "edges": [{"source": 0, "target": 5}], "width": 9, "height": 9}, r"edges\[0\].target = 5 is not a node id"),
        ({"nodes": [{"id": 0, "x": 1, "y": 1}], "edges": [{"source": 0, "target": 0}], "width": 9, "height": 9}, "self-loop"),
        ({"nodes": [{"id": 0, "x": 1.5, "y": 1}], "edges": [], "width": 9, "height": 9}, r"nodes\[0\].x must be an integer"),
        ({"nodes": [{"id": 0, "x": -1, "y": 1}], "edges": [], "width": 9, "height": 9}, r"nodes\[0\].x = -1 is outside"),
        ({"nodes": [], "edges": [], "width": 2**31, "height": 9}, "width = 2147483648 is outside"),
    ],
)
def test_malformed_input_is_named(tmp_path, doc, match):
    if isinstance(doc, str):
        path = tmp_path / "bad.json"
        path.write_text(doc)
        doc = path
    with pytest.raises(ValueError, match=match):
        lcn.load(doc)


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "ironkernels", "lcn", *args], capture_output=True, text=True, timeout=120)


def test_cli_check_prints_the_figures_and_fails_on_invalid():
    good = DATA / "gd2025-examples" / "sol-15-nodes-5-planar.json"
    out = run_cli("check", str(good))
    assert out.returncode == 0, out.stderr
    assert "k=5" in out.stdout and "valid" in out.stdout
    bad = DATA / "gd2025-examples" / "100-nodes.json"
    out = run_cli("check", str(good), str(bad))
    assert out.returncode == 1
    assert "INVALID" in out.stdout and "vertex_on_edge" in out.stdout


def test_draw_svg_has_every_edge_and_vertex(tmp_path):
    d = lcn.load(DATA / "gd2025-examples" / "sol-15-nodes-5-planar.json")
    out = tmp_path / "d.svg"
    lcn.draw(d, out)
    text = out.read_text()
    assert text.count("<line ") == d.m and text.count("<circle ") == d.n
    assert text.count('stroke="#d7191c"') == lcn.evaluate(d).edges_at_k  # edges at k highlighted
    assert "k=5" in text


def test_draw_png_and_cli(tmp_path):
    pytest.importorskip("matplotlib")
    src = DATA / "tum2024" / "ex4.json"
    out = run_cli("draw", str(src), str(tmp_path / "d.png"))
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "d.png").read_bytes()[:4] == b"\x89PNG"


def _moved(d, v, x, y):
    xy = d.xy.copy()
    xy[v] = (x, y)
    return lcn.Drawing(ids=d.ids, xy=xy, edges=d.edges, width=d.width, height=d.height)


def _involves(violation, vid, incident_pairs):
    kind = violation[0]
    if kind == "same_point":
        return vid in violation[1:]
    if kind == "vertex_on_edge":
        return violation[1] == vid or tuple(violation[2]) in incident_pairs
    return violation[1] == vid


@pytest.mark.parametrize("name", ["tum2024/ex2.json", "tum2024/ex6.json", "tum2024/ex8.json", "gd2025-examples/sol-15-nodes-5-planar.json"])
def test_incremental_moves_equal_a_full_recount(name):
    d = lcn.load(DATA / name)
    rng = np.random.default_rng(11)
    ev = lcn.Evaluator(d)
    cur = d
    for step in range(60):
        v = int(rng.integers(d.n))
        if step % 3 == 0:  # a degenerate spot: another vertex's point or the middle of an edge's box
            u = int(rng.integers(d.n))
            x, y = (int(c) for c in cur.xy[u])
        else:
            x, y = int(rng.integers(0, d.width + 1)), int(rng.integers(0, d.height + 1))
        ev.move(v, x, y)
        cur = _moved(cur, v, x, y)
        np.testing.assert_array_equal(ev.edge_crossings, lcn.evaluate(cur).edge_crossings)


@pytest.mark.parametrize("name", ["tum2024/ex4.json", "gd2025-examples/sol-15-nodes-5-planar.json"])
def test_candidates_equal_full_evaluations(name):
    d = lcn.load(DATA / name)
    rng = np.random.default_rng(12)
    ev = lcn.Evaluator(d)
    for v in range(0, d.n, 3):
        pts = np.stack([rng.integers(0, d.width + 1, 40), rng.integers(0, d.height + 1, 40)], axis=1)
        pts[:5] = d.xy[rng.integers(0, d.n, 5)]  # some on other vertices
        got = ev.candidates(v, pts)
        incident = {(d.ids[s], d.ids[t]) for s, t in d.edges.tolist() if v in (s, t)}
        for i, (x, y) in enumerate(pts.tolist()):
            full = lcn.evaluate(_moved(d, v, x, y))
            assert (got["k"][i], got["edges_at_k"][i], got["total_crossings"][i]) == (full.k, full.edges_at_k, full.total_crossings)
            legal = not any(_involves(w, d.ids[v], incident) for w in full.violations)
            assert got["legal"][i] == legal, (v, x, y, full.violations)
    np.testing.assert_array_equal(ev.edge_crossings, lcn.evaluate(d).edge_crossings)  # nothing moved


def test_evaluator_rejects_bad_moves():
    ev = lcn.Evaluator(lcn.load(DATA / "tum2024" / "ex1.json"))
    with pytest.raises(ValueError, match="vertex 99"):
        ev.move(99, 0, 0)
    with pytest.raises(ValueError, match="2\\^30"):
        ev.candidates(0, [[-1, 0]])


@pytest.mark.parametrize("seed, grid_side", [(1, 60), (2, 2000)])
def test_large_random_drawings_match_brute_force(seed, grid_side):
    # >= 1024 edges: the evaluator picks its strips by a cost estimate (long random edges make it
    # choose one strip). A small grid side makes many collinear and coincident configurations; a large
    # one makes mostly generic ones.
    rng = np.random.default_rng(seed)
    n, m = 700, 2600
    pairs = set()
    while len(pairs) < m:
        a, b = (int(v) for v in rng.integers(0, n, 2))
        if a != b:
            pairs.add((min(a, b), max(a, b)))
    d = lcn.Drawing(ids=list(range(n)), xy=rng.integers(0, grid_side + 1, (n, 2)).astype(np.int64),
                    edges=np.array(sorted(pairs), dtype=np.int64), width=grid_side, height=grid_side)
    ev = lcn.evaluate(d)
    counts, violations = brute_force(d)
    np.testing.assert_array_equal(ev.edge_crossings, counts)
    assert as_index_violations(d, ev) == violations


def test_short_edges_take_the_grid_path_and_match_brute_force():
    # A lattice with neighbour edges, edges skipping over a vertex (vertex on edge, collinear overlaps)
    # and short diagonals that cross: short edges, so the grid tests far fewer pairs than all pairs.
    rng = np.random.default_rng(7)
    side = 40
    idx = np.arange(side * side).reshape(side, side)
    xy = np.stack([np.tile(np.arange(side), side), np.repeat(np.arange(side), side)], axis=1) * 2
    edges = [np.stack([idx[:, :-1].ravel(), idx[:, 1:].ravel()], 1), np.stack([idx[:-1].ravel(), idx[1:].ravel()], 1)]
    a = rng.integers(0, side - 2, 300) * side + rng.integers(0, side - 2, 300)
    edges.append(np.stack([a, a + 2], 1))  # over the vertex a + 1
    b = rng.integers(0, side - 1, 400) * side + rng.integers(0, side - 1, 400)
    edges.append(np.stack([b, b + side + 1], 1))
    edges.append(np.stack([b + 1, b + side], 1))  # the other diagonal of the same cell: they cross
    e = np.unique(np.sort(np.concatenate(edges), axis=1), axis=0)
    d = lcn.Drawing(ids=list(range(side * side)), xy=xy.astype(np.int64), edges=e.astype(np.int64),
                    width=2 * side, height=2 * side)
    assert d.m >= 2048
    ev = lcn.evaluate(d)
    counts, violations = brute_force(d)
    np.testing.assert_array_equal(ev.edge_crossings, counts)
    assert counts.max() > 0 and any(v[0] == "vertex_on_edge" for v in violations)
    assert as_index_violations(d, ev) == violations


def test_count_crossings_on_host_arrays_equals_evaluate():
    d = lcn.load(DATA / "gd2025-examples" / "150-nodes.json")
    np.testing.assert_array_equal(lcn.count_crossings(d.xy, d.edges), lcn.evaluate(d).edge_crossings)
    out = np.full(d.m, -1, dtype=np.int64)
    assert lcn.count_crossings(d.xy, d.edges, out=out) is out
    assert (out >= 0).all()
    with pytest.raises(TypeError, match="int64"):
        lcn.count_crossings(d.xy.astype(np.float64), d.edges)
    with pytest.raises(ValueError, match="shape"):
        lcn.count_crossings(d.xy[:, :1].copy(), d.edges)


def test_self_loops_are_rejected_or_dropped_on_request():
    doc = {"width": 9, "height": 9, "nodes": [{"id": 1, "x": 0, "y": 0}, {"id": 2, "x": 5, "y": 5}, {"id": 3, "x": 0, "y": 5}],
           "edges": [{"source": 1, "target": 2}, {"source": 3, "target": 3}, {"source": 2, "target": 3}]}
    with pytest.raises(ValueError, match=r"edges\[1\] is a self-loop at node 3"):
        lcn.load(doc)
    d = lcn.load(doc, self_loops="drop")
    assert d.m == 2 and d.dropped_self_loops == [1] and d.edges.tolist() == [[0, 1], [1, 2]]
    with pytest.raises(ValueError, match="self_loops"):
        lcn.load(doc, self_loops="keep")


# ------------------------------------------------------------------- pictures, files, progress, Ctrl-C
def _png_size(data: bytes):
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


@pytest.mark.parametrize("name", ["d.svg", "D.SVG"])
def test_draw_picks_svg_by_extension_and_honours_size(tmp_path, name):
    d = lcn.load(DATA / "tum2024" / "ex4.json")
    lcn.draw(d, tmp_path / name, size=321)
    text = (tmp_path / name).read_text()
    assert text.startswith("<svg") and 'width="321" height="321"' in text
    assert os.listdir(tmp_path) == [name]  # no temporary file left


def test_draw_png_is_size_by_size_pixels(tmp_path):
    pytest.importorskip("matplotlib")
    d = lcn.load(DATA / "tum2024" / "ex4.json")
    for size in (300, 777):
        lcn.draw(d, tmp_path / "d.png", size=size)
        assert _png_size((tmp_path / "d.png").read_bytes()) == (size, size)
    assert os.listdir(tmp_path) == ["d.png"]


def test_draw_legend_and_violations(tmp_path):
    d = lcn.load(DATA / "gd2025-examples" / "100-nodes.json")  # invalid: vertices on edges
    ev = lcn.evaluate(d)
    assert not ev.valid
    lcn.draw(d, tmp_path / "d.svg", evaluation=ev)
    text = (tmp_path / "d.svg").read_text()
    assert "crossings per edge" in text and f"{ev.k} = k ({ev.edges_at_k} edges)" in text
    marked = {v[1] for v in ev.violations}
    assert text.count('class="violation"') == len(marked)
    assert "INVALID" in text and "circled:" in text and "violation</text>" in text
    good = lcn.load(DATA / "gd2025-examples" / "sol-15-nodes-5-planar.json")
    lcn.draw(good, tmp_path / "g.svg")
    g = (tmp_path / "g.svg").read_text()
    assert 'class="violation"' not in g and "INVALID" not in g and "crossings per edge" in g
    pytest.importorskip("matplotlib")
    lcn.draw(d, tmp_path / "d.png", evaluation=ev, size=400)
    assert _png_size((tmp_path / "d.png").read_bytes()) == (400, 400)


def test_draw_png_without_matplotlib_touches_nothing(tmp_path, monkeypatch):
    for k in [k for k in sys.modules if k == "matplotlib" or k.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, k)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    d = lcn.load(DATA / "tum2024" / "ex1.json")
    with pytest.raises(ModuleNotFoundError, match=re.escape("pip install 'ironkernels[plot]' (or write .svg)")):
        lcn.draw(d, tmp_path / "d.png")
    assert os.listdir(tmp_path) == []


def test_load_accepts_a_byte_order_mark(tmp_path):
    text = (DATA / "tum2024" / "ex1.json").read_text()
    (tmp_path / "bom.json").write_bytes(b"\xef\xbb\xbf" + text.encode())
    d = lcn.load(tmp_path / "bom.json")
    assert d.n == lcn.load(DATA / "tum2024" / "ex1.json").n


def test_save_replaces_atomically_and_keeps_the_mode(tmp_path):
    d = lcn.load(DATA / "tum2024" / "ex1.json")
    out = tmp_path / "out.json"
    out.write_text("old")
    out.chmod(0o640)
    lcn.save(d, out)
    assert lcn.load(out).n == d.n and (out.stat().st_mode & 0o777) == 0o640
    assert os.listdir(tmp_path) == ["out.json"]
    link = tmp_path / "link.json"
    link.symlink_to(out)
    lcn.save(d, link)  # written through the link: the link stays a link
    assert link.is_symlink() and lcn.load(out).n == d.n


def test_save_failure_names_the_path_and_removes_the_temporary_file(tmp_path, monkeypatch):
    d = lcn.load(DATA / "tum2024" / "ex1.json")

    def fail(src, dst):
        raise PermissionError(13, "Permission denied", src)

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(PermissionError) as info:
        lcn.save(d, tmp_path / "out.json")
    assert "out.json" in str(info.value) and ".tmp" not in str(info.value)
    assert os.listdir(tmp_path) == []


def random_drawing(n, m, side, seed=0):
    rng = np.random.default_rng(seed)
    e = rng.integers(0, n, (m, 2))
    e = e[e[:, 0] != e[:, 1]].astype(np.int64)
    return lcn.Drawing(ids=list(range(n)), xy=rng.integers(0, side + 1, (n, 2)).astype(np.int64), edges=e,
                       width=side, height=side)


def test_progress_is_monotone_and_reaches_total():
    for d in (random_drawing(3000, 6000, 10**6), lcn.load(DATA / "tum2024" / "ex1.json")):
        calls = []
        ev = lcn.evaluate(d, progress=lambda done, total: calls.append((done, total)))
        assert calls[0][0] == 0 and calls[-1][0] == calls[-1][1] > 0
        assert len({t for _, t in calls}) == 1
        assert all(a[0] <= b[0] for a, b in zip(calls, calls[1:]))
        np.testing.assert_array_equal(ev.edge_crossings, lcn.evaluate(d).edge_crossings)  # the same figures
    calls = []
    d = random_drawing(3000, 6000, 10**6)
    counts = lcn.count_crossings(d.xy, d.edges, progress=lambda done, total: calls.append((done, total)))
    assert calls[-1][0] == calls[-1][1] and (counts == lcn.evaluate(d).edge_crossings).all()


def big_edges() -> int:
    """Edges of a random drawing that takes about 10 s to evaluate whatever the cores (work ~ m² / cores,
    about 0.7 ns per pair and core with the sweep)."""
    return int(240000 * max(1.0, (os.cpu_count() or 2) / 2) ** 0.5)


BIG = random_drawing(big_edges() // 3, big_edges(), 10**6, seed=3)


def test_keyboard_interrupt_from_progress_stops_within_a_second():
    calls = []

    def progress(done, total):
        calls.append(done)
        if len(calls) == 2:
            raise KeyboardInterrupt

    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        lcn.evaluate(BIG, progress=progress)
    assert time.monotonic() - t0 < 1.5 and len(calls) == 2


def test_progress_exception_reaches_the_caller_and_leaves_out_unchanged():
    out = np.full(len(BIG.edges), -5, np.int64)

    def progress(done, total):
        if done:
            raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        lcn.count_crossings(BIG.xy, BIG.edges, out=out, progress=progress)
    assert (out == -5).all()


def test_sigint_interrupts_a_long_evaluate():
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    # Python's own handler, also when pytest runs as a shell's background job (SIGINT ignored there).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    t0 = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            lcn.evaluate(BIG)
            time.sleep(5)  # not reached: evaluate takes far longer than 0.3 s
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - t0 < 1.5


def test_evaluate_after_an_interrupt_is_exact():
    with pytest.raises(KeyboardInterrupt):
        lcn.evaluate(BIG, progress=lambda done, total: (_ for _ in ()).throw(KeyboardInterrupt) if done else None)
    d = random_drawing(700, 2600, 2000, seed=2)
    counts, _ = brute_force(d)
    np.testing.assert_array_equal(lcn.evaluate(d).edge_crossings, counts)


def test_evaluator_takes_progress_and_count_crossings_takes_empty_drawings():
    d = random_drawing(2000, 5000, 10**6, seed=4)
    calls = []
    ev = lcn.Evaluator(d, progress=lambda done, total: calls.append((done, total)))
    assert calls[0][0] == 0 and calls[-1][0] == calls[-1][1]
    np.testing.assert_array_equal(ev.edge_crossings, lcn.evaluate(d).edge_crossings)
    empty = np.zeros((0, 2), np.int64)
    assert lcn.count_crossings(empty, empty).shape == (0,)
    assert lcn.count_crossings(d.xy, empty).shape == (0,)


def test_draw_shows_vertices_outside_the_grid(tmp_path):
    d = drawing([(0, 0), (300, 150)], [(0, 1)])  # vertex 1 outside the 100 × 100 grid
    lcn.draw(d, tmp_path / "d.svg", size=300)
    text = (tmp_path / "d.svg").read_text()
    for value in re.findall(r'(?:cx|cy|x1|x2|y1|y2)="(-?[\d.]+)"', text):
        assert 0 <= float(value) <= 300
    assert text.count('class="violation"') == 1 and "outside_grid" in text


def test_an_empty_thread_count_variable_means_unset():
    code = "from ironkernels import _core; print(_core.cpu_threads())"
    env = dict(os.environ, IRONKERNELS_NUM_THREADS="")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and int(out.stdout) == (os.cpu_count() or 1)
