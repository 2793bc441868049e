"""lcn planarity and planar grid drawings (CPU): every corpus graph's planarity, against the generator's
guarantee where it has one (planar families, complete and bipartite graphs, tori) and against networkx
where it is installed (a test-only oracle, not a dependency); every planar graph's drawing checked by
the exact evaluator: k = 0, valid, inside Schnyder's (n-2) × (n-2) grid, and still so when scaled by
integer factors into the file's own box."""
import json
import os
import pathlib

import numpy as np
import pytest

from ironkernels import _core, lcn

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "lcn"
# The full corpus (with the 125 benchmark graphs) lives beside the repository when it is checked out.
CORPUS = pathlib.Path(os.environ.get("IRONKERNELS_LCN_CORPUS", ROOT.parent / "shared" / "lcn-corpus"))


def _corpus_files():
    files = sorted(DATA.glob("*/*.json"))
    if (CORPUS / "index.json").is_file():
        files += [CORPUS / entry["file"] for entry in json.loads((CORPUS / "index.json").read_text())]
    return files


FILES = _corpus_files()
# Families whose generator decides planarity: a check independent of the code under test and of networkx.
PLANAR_FAMILIES = ("random_planar_connected_graph", "regular_tree_graph", "globe_graph")
NONPLANAR_FAMILIES = ("complete_graph", "complete_bipartite_graph")  # K10, K(a,b) with a, b >= 10


def _expected(path: pathlib.Path):
    family = path.parent.name
    if family in PLANAR_FAMILIES or (family == "grid_graph" and path.stem.endswith("false_false")):
        return True
    if family in NONPLANAR_FAMILIES or (family == "grid_graph" and path.stem.endswith("true_true")):  # tori
        return False
    return None


def _networkx_planar(n, edges):
    nx = pytest.importorskip("networkx")
    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from(edges.tolist())
    return nx.is_planar(g)


def _check_drawing(d, xy):
    box = max(d.n - 2, 1)
    assert xy.shape == (d.n, 2) and xy.dtype == np.int64
    assert xy.min(initial=0) >= 0 and xy.max(initial=0) <= box
    ev = lcn.evaluate(lcn.Drawing(d.ids, xy, d.edges, box, box))
    assert ev.valid and ev.k == 0 and ev.total_crossings == 0, (ev.k, ev.violations[:5])
    if d.n >= 3 and d.width >= box and d.height >= box:  # the caller's scaling into the file's box
        mx, my = max(int(xy[:, 0].max()), 1), max(int(xy[:, 1].max()), 1)
        scaled = xy * np.array([d.width // mx, d.height // my], dtype=np.int64)
        ev = lcn.evaluate(lcn.Drawing(d.ids, scaled, d.edges, d.width, d.height))
        assert ev.valid and ev.k == 0


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(p.parents[1])))
def test_corpus_planarity_and_drawing(path):
    d = lcn.load(path, self_loops="drop")
    planar = _core.lcn_is_planar(d.edges, d.n)
    assert isinstance(planar, bool)
    expected = _expected(path)
    if expected is not None:
        assert planar == expected
    xy = _core.lcn_planar_drawing(d.edges, d.n)
    assert (xy is not None) == planar
    if planar:
        _check_drawing(d, xy)


def test_corpus_has_planar_graphs():
    drawings = [lcn.load(p, self_loops="drop") for p in FILES]
    assert sum(_core.lcn_is_planar(d.edges, d.n) for d in drawings) >= 5  # tum2024 alone holds some


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(p.parents[1])))
def test_corpus_planarity_matches_networkx(path):
    d = lcn.load(path, self_loops="drop")
    if d.m > 5000:
        pytest.skip("networkx takes seconds here; the C++ side is covered by the drawing check")
    assert _core.lcn_is_planar(d.edges, d.n) == _networkx_planar(d.n, d.edges)


def test_random_graphs_match_networkx():
    """Random triangulations thinned and with random edges added: most are non-planar within Euler's
    bound, so the LR test itself decides; relabelled at random so that DFS orders vary."""
    pytest.importorskip("networkx")
    rng = np.random.default_rng(2024)
    planar_seen = nonplanar_seen = 0
    for _ in range(400):
        n = int(rng.integers(5, 60))
        faces, edges = [(0, 1, 2), (0, 2, 1)], {(0, 1), (1, 2), (0, 2)}
        for v in range(3, n):
            f = int(rng.integers(len(faces)))
            a, b, c = faces[f]
            faces[f] = (a, b, v)
            faces += [(b, c, v), (c, a, v)]
            edges |= {(a, v), (b, v), (c, v)}
        edges = sorted(edges)
        keep = rng.permutation(len(edges))[int(rng.integers(0, len(edges) // 3 + 1)):]
        e = [edges[i] for i in keep]
        for _ in range(int(rng.integers(0, 4))):
            a, b = (int(x) for x in rng.integers(0, n, 2))
            if a != b:
                e.append((a, b))
        e = rng.permutation(n)[np.array(e, dtype=np.int64).reshape(-1, 2)].astype(np.int64)
        planar = _core.lcn_is_planar(e, n)
        assert planar == _networkx_planar(n, e)
        xy = _core.lcn_planar_drawing(e, n)
        assert (xy is not None) == planar
        if planar:
            planar_seen += 1
            box = max(n - 2, 1)
            ev = lcn.evaluate(lcn.Drawing(list(range(n)), xy, e, box, box))
            assert ev.valid and ev.k == 0
        else:
            nonplanar_seen += 1
    assert planar_seen > 50 and nonplanar_seen > 50


def test_small_and_degenerate():
    empty = np.zeros((0, 2), dtype=np.int64)
    assert _core.lcn_planar_drawing(empty, 0).shape == (0, 2)
    assert _core.lcn_planar_drawing(empty, 1).tolist() == [[0, 0]]
    assert _core.lcn_planar_drawing(np.array([[1, 0], [0, 1]], dtype=np.int64), 2).tolist() == [[0, 0], [1, 0]]
    k5 = np.array([(a, b) for a in range(5) for b in range(a + 1, 5)], dtype=np.int64)
    assert not _core.lcn_is_planar(k5, 5) and _core.lcn_planar_drawing(k5, 5) is None
    assert _core.lcn_is_planar(k5[1:], 5)  # K5 minus an edge
    xy = _core.lcn_planar_drawing(k5[1:], 5)
    ev = lcn.evaluate(lcn.Drawing(list(range(5)), xy, k5[1:], 3, 3))
    assert ev.valid and ev.k == 0


def test_refusals():
    with pytest.raises(ValueError, match=r"edge 1 = \(2, 2\) is a self-loop"):
        _core.lcn_planar_drawing(np.array([[0, 1], [2, 2]], dtype=np.int64), 3)
    with pytest.raises(ValueError, match="outside"):
        _core.lcn_is_planar(np.array([[0, 3]], dtype=np.int64), 3)
    with pytest.raises(ValueError, match="negative"):
        _core.lcn_planar_drawing(np.zeros((0, 2), dtype=np.int64), -1)
    with pytest.raises(TypeError):
        _core.lcn_is_planar(np.array([[0, 1]], dtype=np.int32), 2)
