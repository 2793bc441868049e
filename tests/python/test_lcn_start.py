"""Start drawings, legalisation and lower bounds on k: every method on every corpus graph up to 2000
vertices gives a valid drawing (lcn.evaluate), legalise on adversarial inputs, determinism, and the
bounds never above a k that a drawing reaches (the corpus's sample solutions, index.json's reference
k, and every start drawing made here). The corpus is the shared one (IRONKERNELS_LCN_CORPUS, or
shared/lcn-corpus beside the repository) where present, else the copy in tests/data/lcn."""
import dataclasses
import json
import os
import pathlib
import time

import numpy as np
import pytest

from ironkernels import _core, lcn
from ironkernels.lcn.bounds import LowerBound, lower_bound
from ironkernels.lcn.start import _ogdf, available_methods, legalise, start_drawing

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _corpus() -> pathlib.Path:
    for candidate in (os.environ.get("IRONKERNELS_LCN_CORPUS"), ROOT.parent / "shared" / "lcn-corpus",
                      ROOT / "shared" / "lcn-corpus"):
        if candidate and (pathlib.Path(candidate) / "index.json").is_file():
            return pathlib.Path(candidate)
    return ROOT / "tests" / "data" / "lcn"


CORPUS = _corpus()
FILES = sorted(p for p in CORPUS.glob("**/*.json") if p.name != "index.json")
SMALL = [p for p in FILES if len(json.loads(p.read_text())["nodes"]) <= 2000]


def _load(path):
    return lcn.load(path, self_loops="drop")


def _with(d, xy):
    return dataclasses.replace(d, xy=np.asarray(xy))


@pytest.mark.parametrize("path", SMALL, ids=lambda p: str(p.relative_to(CORPUS)))
def test_every_method_valid_on_corpus(path):
    d = _load(path)
    bound = lower_bound(d.n, d.edges)
    for method in available_methods():
        if method in ("planar", "ogdf-planar") and not _core.lcn_is_planar(d.edges, d.n):
            with pytest.raises(ValueError, match="planar"):
                start_drawing(d, method, seed=1)
            continue
        xy = start_drawing(d, method, seed=1)
        assert xy.dtype == np.int64 and xy.shape == (d.n, 2)
        ev = lcn.evaluate(_with(d, xy))
        assert ev.valid, (method, ev.violations[:3])
        assert bound.k <= ev.k, (method, bound, ev.k)


def test_keep_changes_only_what_is_invalid():
    # The 100/225/625 examples start with vertices on edges: "keep" repairs them, moving few.
    for name in ("100-nodes.json", "225-nodes.json", "625-nodes.json"):
        d = _load(ROOT / "tests" / "data" / "lcn" / "gd2025-examples" / name)
        before = lcn.evaluate(d)
        assert not before.valid
        xy = start_drawing(d, "keep", seed=0)
        assert lcn.evaluate(_with(d, xy)).valid
        moved = int(np.any(xy != d.xy, axis=1).sum())
        offenders = len({v[1] for v in before.violations})
        assert 0 < moved <= offenders, (name, moved, offenders)
    valid = _load(ROOT / "tests" / "data" / "lcn" / "gd2025-examples" / "sol-70-nodes-16-planar.json")
    assert np.array_equal(start_drawing(valid, "keep"), valid.xy)


def _random_graph(rng, n, m):
    e = rng.integers(0, n, size=(3 * m, 2))
    e = e[e[:, 0] != e[:, 1]][:m]
    return np.ascontiguousarray(e, dtype=np.int64)


@pytest.mark.parametrize("case", ["one point", "one line", "diagonal", "on edges", "outside the box"])
def test_legalise_adversarial(case, rng):
    n, w, h = 500, 400, 300
    edges = _random_graph(rng, n, 1200)
    if case == "one point":
        xy = np.full((n, 2), 123)
    elif case == "one line":
        xy = np.stack([np.arange(n) % (w + 1), np.full(n, 5)], axis=1)
    elif case == "diagonal":
        xy = np.stack([np.arange(n) % 301, np.arange(n) % 301], axis=1)
    elif case == "on edges":  # every other vertex at the midpoint of an edge
        xy = rng.integers(0, 150, size=(n, 2)) * 2
        for v in range(1, n, 2):
            s, t = edges[v % len(edges)]
            xy[v] = (xy[s] + xy[t]) // 2
    else:
        xy = rng.integers(-10**6, 10**6, size=(n, 2))
    out = legalise(xy, edges, w, h, seed=3)
    d = lcn.Drawing(ids=list(range(n)), xy=out, edges=edges, width=w, height=h)
    assert lcn.evaluate(d).valid
    assert np.array_equal(out, legalise(xy, edges, w, h, seed=3))


@pytest.mark.parametrize("side", [10, 20, 50])
def test_legalise_tight_grids(side, rng):
    # (W+1)(H+1) = n: every grid point holds a vertex, so every edge must join points whose offset
    # is primitive (gcd 1); and W = H = sqrt(n), a few free points.
    for n, w in ((side * side, side - 1), (side * side, side)):
        for edges in (_random_graph(rng, n, 3 * n // 2),
                      np.array([(i, (i + 1) % n) for i in range(n)], dtype=np.int64)):
            out = legalise(np.zeros((n, 2), dtype=np.int64), edges, w, w, seed=1)
            d = lcn.Drawing(ids=list(range(n)), xy=out, edges=edges, width=w, height=w)
            assert lcn.evaluate(d).valid


def test_legalise_refusals():
    with pytest.raises(ValueError, match="distinct points"):
        legalise(np.zeros((10, 2), dtype=np.int64), np.zeros((0, 2), dtype=np.int64), 2, 2)
    k9 = np.array([(i, j) for i in range(9) for j in range(i + 1, 9)], dtype=np.int64)
    with pytest.raises(ValueError, match="too small"):  # no three of 9 points on 3 x 3 may be collinear
        legalise(np.ones((9, 2), dtype=np.int64), k9, 2, 2)
    with pytest.raises(TypeError):
        legalise(np.zeros((3, 2)), np.zeros((0, 2), dtype=np.int64), 5, 5)  # float coordinates
    with pytest.raises(ValueError, match="self-loop"):
        legalise(np.zeros((3, 2), dtype=np.int64), np.array([[1, 1]]), 5, 5)


def test_start_drawing_deterministic_and_seeded():
    d = _load(ROOT / "tests" / "data" / "lcn" / "tum2024" / "graph6.json")
    for method in available_methods():
        a, b = start_drawing(d, method, seed=11), start_drawing(d, method, seed=11)
        assert np.array_equal(a, b), method
    assert not np.array_equal(start_drawing(d, "stress", seed=1), start_drawing(d, "stress", seed=2))
    with pytest.raises(ValueError, match="not available"):
        start_drawing(d, "spring")
    with pytest.raises(TypeError):
        start_drawing(d.xy, "stress")


def test_ogdf_is_optional(monkeypatch):
    import ironkernels.lcn.start as start

    monkeypatch.setattr(start, "_ogdf", lambda: None)
    assert not any(m.startswith("ogdf") for m in start.available_methods())
    d = _load(ROOT / "tests" / "data" / "lcn" / "tum2024" / "ex1.json")
    with pytest.raises(ValueError, match="ogdf-py"):
        start.start_drawing(d, "ogdf-fmmm")


def test_planar_hook(monkeypatch):
    import ironkernels.lcn.start as start

    calls = []
    _real = start._core

    def planar_drawing(edges, n):
        calls.append(n)
        return np.stack([np.arange(n), (np.arange(n) ** 2) % 7], axis=1)

    fake = type("FakeCore", (), {"lcn_planar_drawing": staticmethod(planar_drawing),
                                 "lcn_legalise": staticmethod(_real.lcn_legalise),
                                 "lcn_start_layout": staticmethod(_real.lcn_start_layout)})
    monkeypatch.setattr(start, "_core", fake)
    assert "planar" in start.available_methods()
    d = _load(ROOT / "tests" / "data" / "lcn" / "tum2024" / "ex3.json")
    xy = start.start_drawing(d, "planar", seed=0)
    assert calls == [d.n] and lcn.evaluate(_with(d, xy)).valid
    monkeypatch.setattr(start, "_core", _real)
    assert ("planar" in start.available_methods()) == hasattr(_real, "lcn_planar_drawing")


def test_bounds_below_reached_k():
    index = CORPUS / "index.json"
    if not index.is_file():
        pytest.skip("the shared corpus (index.json) is not here")
    for entry in json.loads(index.read_text()):
        d = _load(CORPUS / entry["file"])
        b = lower_bound(d.n, d.edges)
        assert b.k <= entry["reference_k"], (entry["file"], b, entry["reference_k"])
    for path in FILES:
        if path.name.startswith("sol-"):
            d = _load(path)
            assert lower_bound(d.n, d.edges).k <= lcn.evaluate(d).k, path


def test_bounds_small_cases():
    def complete(n):
        return np.array([(i, j) for i in range(n) for j in range(i + 1, n)], dtype=np.int64).reshape(-1, 2)

    assert lower_bound(4, complete(4)) == LowerBound(0, "none")
    d = lcn.load({"nodes": [{"id": i, "x": x, "y": y} for i, (x, y) in enumerate([(0, 0), (2, 0), (0, 2), (2, 2)])],
                  "edges": [{"source": s, "target": t} for s, t in complete(4).tolist()], "width": 2, "height": 2})
    assert lower_bound(d) == lower_bound(d.n, d.edges)  # a drawing, as every lcn call takes
    with pytest.raises(TypeError, match="lower_bound\\(drawing\\) or lower_bound\\(n, m\\)"):
        lower_bound(4)
    with pytest.raises(TypeError, match="beside a Drawing"):
        lower_bound(d, 6)
    assert lower_bound(5, complete(5)) == (1, "k-planar density")   # 10 > 3*5-6
    assert lower_bound(6, complete(6)).k == 1                        # K6 is 1-planar
    assert lower_bound(7, complete(7)).k == 2                        # 21 > 4*7-8
    k33 = np.array([(i, 3 + j) for i in range(3) for j in range(3)], dtype=np.int64)
    assert lower_bound(6, k33) == (1, "bipartite density")           # 9 > 2*6-4
    assert lower_bound(6, 9).k == 0 and lower_bound(6, 9, planar=False) == (1, "non-planar")
    k = lower_bound(150, 5000)                                       # K_{100,50}'s counts: crossing lemma
    assert k.reason == "crossing lemma" and k.k == -(-2 * -(-100 * 5000**3 // (2761 * 150**2)) // 5000)
    assert lower_bound(1000, np.zeros((0, 2), dtype=np.int64)) == (0, "none")
    with pytest.raises(ValueError, match="n\\(n-1\\)/2"):
        lower_bound(5, 11)
    with pytest.raises(TypeError):
        lower_bound(5, 3, planar="yes")


def test_timing_10k(capsys):
    rng = np.random.default_rng(7)
    n = 10_000
    edges = _random_graph(rng, n, 2 * n)
    t0 = time.perf_counter()
    out = legalise(np.full((n, 2), n // 2), edges, n, n, seed=1)
    t_point = time.perf_counter() - t0
    d = lcn.Drawing(ids=list(range(n)), xy=out, edges=edges, width=n, height=n)
    assert lcn.evaluate(d).valid
    t0 = time.perf_counter()
    start_drawing(d, "stress", seed=1)
    t_stress = time.perf_counter() - t0
    with capsys.disabled():
        print(f"\nlegalise 10^4 vertices at one point: {t_point:.3f} s; stress start 10^4 vertices: {t_stress:.3f} s")
    assert t_point < 2.0
