"""lcn on CUDA: the all-pairs crossing kernel against the CPU evaluator on every test instance and on
large random drawings (degenerate and generic)."""
import pathlib

import numpy as np
import pytest

from device_arrays import OwnArray, get
from ironkernels import lcn

pytestmark = pytest.mark.gpu
DATA = pathlib.Path(__file__).parent.parent / "data" / "lcn"


@pytest.mark.parametrize("path", sorted(DATA.glob("*/*.json")), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_gpu_counts_equal_cpu(dev, path):
    d = lcn.load(path)
    xy = dev.put(d.xy)
    got = lcn.count_crossings(xy, dev.put(d.edges))
    if not isinstance(xy, OwnArray):  # a framework's arrays in, the framework's out
        assert type(got) is type(xy)
    np.testing.assert_array_equal(get(got), lcn.evaluate(d).edge_crossings)


@pytest.mark.parametrize("side", [40, 1 << 30])
def test_gpu_counts_on_large_random_drawings(dev, side):
    rng = np.random.default_rng(side % 1000)
    n, m = 3000, 9000
    xy = rng.integers(0, side + 1, (n, 2)).astype(np.int64)
    e = rng.integers(0, n, (m, 2)).astype(np.int64)
    e = e[e[:, 0] != e[:, 1]]
    cpu = lcn.count_crossings(xy, e)
    out = dev.full((len(e),), -1, "int64")  # poisoned
    lcn.count_crossings(dev.put(xy), dev.put(e), out=out)
    np.testing.assert_array_equal(get(out), cpu)


def test_gpu_rejects_mixed_devices(dev):
    with pytest.raises(ValueError, match="one device"):
        lcn.count_crossings(np.zeros((2, 2), np.int64), dev.zeros((1, 2), "int64"))


def _degenerate_candidates(d, rng, v, count):
    """Random points plus the spots where legality and crossings are decided exactly: other vertices,
    v's own point, edge midpoints (on the edge when the midpoint is a lattice point), just outside."""
    pts = np.stack([rng.integers(0, d.width + 1, count), rng.integers(0, d.height + 1, count)], axis=1)
    k = count // 4
    pts[:k] = d.xy[rng.integers(0, d.n, k)]
    if len(d.edges):
        e = d.edges[rng.integers(0, len(d.edges), k)]
        pts[k:2 * k] = (d.xy[e[:, 0]] + d.xy[e[:, 1]]) // 2
    pts[2 * k] = d.xy[v]
    pts[2 * k + 1] = (min(d.width + 1, 1 << 30), 0)  # outside the grid (when it can be)
    return pts.astype(np.int64)


@pytest.mark.parametrize("path", sorted(DATA.glob("*/*.json"))[:12], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_gpu_candidates_and_moves_equal_the_cpu_evaluator(path):
    d = lcn.load(path)
    rng = np.random.default_rng(5)
    cpu, gpu = lcn.Evaluator(d), lcn.Evaluator(d, device="cuda")
    np.testing.assert_array_equal(gpu.edge_crossings, cpu.edge_crossings)
    for v in rng.integers(0, d.n, 6).tolist():
        pts = _degenerate_candidates(d, rng, v, 64)
        want, got = cpu.candidates(v, pts), gpu.candidates(v, pts)
        for key in ("k", "edges_at_k", "total_crossings", "legal"):
            np.testing.assert_array_equal(got[key], want[key], err_msg=f"{key}, vertex {v}")
        x, y = (int(c) for c in pts[rng.integers(len(pts))])
        cpu.move(v, x, y)
        gpu.move(v, x, y)
        np.testing.assert_array_equal(gpu.edge_crossings, cpu.edge_crossings)


@pytest.mark.parametrize("side", [60, 1 << 30])
def test_gpu_candidates_on_a_large_random_drawing(side):
    rng = np.random.default_rng(side % 997)
    n, m = 2000, 6000
    xy = np.unique(rng.integers(0, side + 1, (n, 2)), axis=0).astype(np.int64)
    n = len(xy)
    e = rng.integers(0, n, (m, 2))
    e = np.unique(np.sort(e[e[:, 0] != e[:, 1]], axis=1), axis=0).astype(np.int64)
    d = lcn.Drawing(ids=list(range(n)), xy=xy, edges=e, width=side, height=side)
    cpu, gpu = lcn.Evaluator(d), lcn.Evaluator(d, device=0)
    v = int(np.bincount(e.ravel(), minlength=n).argmax())  # the highest degree
    pts = _degenerate_candidates(d, rng, v, 3000)
    want, got = cpu.candidates(v, pts), gpu.candidates(v, pts)
    for key in ("k", "edges_at_k", "total_crossings", "legal"):
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)


def test_gpu_evaluator_follows_the_current_stream(dev):
    """No stream given: each call waits on the loaded framework's current stream, here a new one."""
    _, current, _ = dev.stream()
    d = lcn.load(DATA / "tum2024" / "ex1.json")
    cpu = lcn.Evaluator(d)
    pts = np.array([[0, 0], [3, 5], [7, 2]], np.int64)
    with current:
        gpu = lcn.Evaluator(d, device="cuda")
        cpu.move(1, 2, 3)
        gpu.move(1, 2, 3)
        want, got = cpu.candidates(0, pts), gpu.candidates(0, pts)
    for key in ("k", "edges_at_k", "total_crossings", "legal"):
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)


def test_gpu_evaluator_rejects_bad_input():
    d = lcn.load(DATA / "tum2024" / "ex1.json")
    ev = lcn.Evaluator(d, device="cuda")
    with pytest.raises(ValueError, match="vertex 99"):
        ev.move(99, 0, 0)
    with pytest.raises(ValueError, match="2\\^30"):
        ev.candidates(0, [[-1, 0]])
    with pytest.raises(ValueError, match="device"):
        lcn.Evaluator(d, device="gpu")


def test_gpu_count_crossings_validates_on_the_device(dev):
    xy_host = np.array([[0, 0], [4, 4], [0, 4], [4, 0]], np.int64)
    xy = dev.put(xy_host)
    out = dev.full((2,), -7, "int64")
    with pytest.raises(ValueError, match="edge 1 joins vertices 2 and 9"):
        lcn.count_crossings(xy, dev.put(np.array([[0, 1], [2, 9]], np.int64)), out=out)
    with pytest.raises(ValueError, match="self-loop"):
        lcn.count_crossings(xy, dev.put(np.array([[0, 1], [3, 3]], np.int64)), out=out)
    bad = xy_host.copy()
    bad[2, 1] = (1 << 30) + 1
    bad = dev.put(bad)
    with pytest.raises(ValueError, match="vertex 2 at"):
        lcn.count_crossings(bad, dev.put(np.array([[0, 1], [2, 3]], np.int64)), out=out)
    assert (get(out) == -7).all()
    lcn.count_crossings(xy, dev.put(np.array([[0, 1], [2, 3]], np.int64)), out=out)
    assert get(out).tolist() == [1, 1]


@pytest.mark.parametrize("short", [True, False], ids=["short-edges-grid", "long-edges-fallback"])
def test_gpu_counts_above_the_grid_threshold(dev, short):
    """From 32768 edges the GPU lists edges in a uniform grid (each crossing found in exactly one cell);
    long edges covering too many cells send the drawing back to all pairs. Both equal the CPU."""
    rng = np.random.default_rng(3 if short else 4)
    n, m = 30000, 40000
    xy = rng.integers(0, 4000, (n, 2)).astype(np.int64)
    if short:  # each edge to one of the next vertices in column-strip order: median length ~50 of 4000
        order = np.lexsort((xy[:, 1] // 40, xy[:, 0] // 40))
        rank = np.argsort(order)
        a = order[rng.integers(0, n - 8, m)]
        b = order[np.clip(rank[a] + rng.integers(1, 8, m), 0, n - 1)]
        e = np.stack([a, b], 1)
    else:
        e = rng.integers(0, n, (m, 2))
    e = e[e[:, 0] != e[:, 1]].astype(np.int64)
    assert len(e) >= 32768
    out = dev.full((len(e),), -1, "int64")
    lcn.count_crossings(dev.put(xy), dev.put(e), out=out)
    np.testing.assert_array_equal(get(out), lcn.count_crossings(xy, e))
