"""lcn.solve on the CPU: valid results checked by the exact evaluator, the objective never worse than
the start, reproducible move budgets, the stop rules (time, moves, callback, k = 0), lower bounds
that never exceed a reached k, the refusals, and the `ironkernels lcn solve` command."""
import json
import pathlib
import subprocess
import sys
import time

import numpy as np
import pytest

from ironkernels import lcn
from ironkernels.reference import lcn_crossing_counts

DATA = pathlib.Path(__file__).parent.parent / "data" / "lcn"
EXAMPLE_15 = DATA / "gd2025-examples" / "15-nodes.json"


def _graph(n, edges, width, height, xy=None):
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    xy = np.zeros((n, 2), np.int64) if xy is None else np.asarray(xy, dtype=np.int64)
    return lcn.Drawing(ids=list(range(n)), xy=xy, edges=edges, width=width, height=height)


def _complete(n, side):
    return _graph(n, [(i, j) for i in range(n) for j in range(i + 1, n)], side, side)


def _key(ev):
    return (ev.k, ev.edges_at_k, ev.total_crossings)


def _check(result, drawing):
    """The result: valid, independently recounted, no worse than its start, bounded below."""
    ev = result.evaluation
    assert ev.valid
    np.testing.assert_array_equal(lcn_crossing_counts(result.drawing.xy, result.drawing.edges), ev.edge_crossings)
    assert result.drawing.ids == list(drawing.ids)
    np.testing.assert_array_equal(result.drawing.edges, drawing.edges)
    xy = result.drawing.xy
    assert ((xy >= 0) & (xy <= [drawing.width, drawing.height])).all()
    assert _key(ev) <= _key(result.start_evaluation)
    assert 0 <= result.lower_bound <= ev.k
    keys = [h[1:] for h in result.history]
    assert keys == sorted(keys, reverse=True) and keys[-1] == _key(ev)
    assert [h[0] for h in result.history] == sorted(h[0] for h in result.history)


@pytest.mark.parametrize("path", sorted(DATA.glob("*/*.json"))[:8], ids=lambda p: p.name)
def test_solve_gives_valid_drawings_no_worse_than_the_start(path):
    d = lcn.load(path)
    r = lcn.solve(d, time_limit=None, max_moves=4000, device="cpu", chains=2)
    _check(r, d)
    assert r.device == "cpu" and r.chains == 2 and r.moves >= 4000


def test_solve_repairs_an_invalid_input_and_lowers_k():
    d = lcn.load(EXAMPLE_15)
    d.xy[:] = 0  # every vertex on one point
    r = lcn.solve(d, time_limit=None, max_moves=30000, device="cpu", init="keep", chains=2)
    _check(r, d)
    assert not lcn.evaluate(d).valid and r.init == "keep"
    assert r.k < r.start_evaluation.k


def test_move_budget_is_reproducible_and_seed_matters():
    d = lcn.load(EXAMPLE_15)
    runs = [lcn.solve(d, time_limit=None, max_moves=6000, seed=s, device="cpu", chains=3, init="keep") for s in (7, 7, 8)]
    np.testing.assert_array_equal(runs[0].drawing.xy, runs[1].drawing.xy)
    assert runs[0].moves == runs[1].moves
    assert not np.array_equal(runs[0].drawing.xy, runs[2].drawing.xy)


def test_time_limit_is_kept():
    d = _complete(12, 60)
    t0 = time.perf_counter()
    r = lcn.solve(d, time_limit=1.0, device="cpu")
    assert time.perf_counter() - t0 < 2.0
    assert r.stopped == "time" and r.seconds < 2.0
    _check(r, d)


def test_callback_sees_progress_and_can_stop():
    d = _complete(12, 60)
    seen = []

    def cb(p):
        seen.append(p)
        return len(seen) < 2

    r = lcn.solve(d, time_limit=20.0, device="cpu", callback=cb)
    assert r.stopped == "callback" and r.seconds < 5.0
    assert len(seen) >= 2 and all(isinstance(p, lcn.Progress) for p in seen)
    assert seen[0].time_left is not None and seen[0].time_left <= 20.0
    assert seen[-1].k >= r.k
    _check(r, d)


def test_callback_exception_propagates():
    d = _complete(10, 40)

    def cb(p):
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        lcn.solve(d, time_limit=10.0, device="cpu", callback=cb)


def test_trivial_graphs():
    for d in (_graph(0, [], 5, 5), _graph(1, [], 0, 0), _graph(3, [], 2, 0, [[0, 0], [1, 0], [2, 0]]),
              _graph(2, [(0, 1)], 1, 0, [[0, 0], [1, 0]])):
        r = lcn.solve(d, time_limit=1.0, device="cpu")
        _check(r, d)
        assert r.k == 0 and r.stopped == "k=0"


def test_k_zero_stops_early():
    d = _graph(6, [(i, (i + 1) % 6) for i in range(6)], 20, 20)  # a cycle: drawn without crossings
    r = lcn.solve(d, time_limit=30.0, device="cpu")
    _check(r, d)
    assert r.k == 0 and r.seconds < 10


@pytest.mark.parametrize("n", [5, 6, 7])
def test_complete_graphs_reach_known_small_k(n):
    # lcr(K5) = 1, lcr(K6) = 1, lcr(K7) = 2 (Ouyang, Wang, Huang 2019): k >= these, and a search this long finds them.
    known = {5: 1, 6: 1, 7: 2}[n]
    r = lcn.solve(_complete(n, 30), time_limit=None, max_moves=200000, device="cpu", chains=2)
    _check(r, _complete(n, 30))
    assert r.k == known and r.lower_bound <= known


def test_grid_too_small_is_refused():
    with pytest.raises(ValueError, match="points for 5 vertices"):
        lcn.solve(_graph(5, [(0, 1)], 1, 0), time_limit=1.0, device="cpu")


REFUSALS = [
    ({"time_limit": -1.0}, ValueError, "time_limit"),
    ({"time_limit": float("nan")}, ValueError, "time_limit"),
    ({"time_limit": "4"}, TypeError, "time_limit"),
    ({"time_limit": None}, ValueError, "max_moves"),
    ({"time_limit": 1.0, "max_moves": 0}, ValueError, "max_moves"),
    ({"time_limit": 1.0, "max_moves": 1.5}, TypeError, "max_moves"),
    ({"time_limit": 1.0, "seed": -1}, ValueError, "seed"),
    ({"time_limit": 1.0, "seed": 1 << 64}, ValueError, "seed"),
    ({"time_limit": 1.0, "device": "tpu"}, ValueError, "device"),
    ({"time_limit": 1.0, "device": 1.0}, TypeError, "device"),
    ({"time_limit": 1.0, "init": "magic"}, ValueError, "init"),
    ({"time_limit": 1.0, "init": 3}, TypeError, "init"),
    ({"time_limit": 1.0, "callback": 3}, TypeError, "callback"),
    ({"time_limit": 1.0, "chains": 0}, ValueError, "chains"),
]


@pytest.mark.parametrize("kwargs,kind,name", REFUSALS, ids=lambda v: str(v)[:40])
def test_solve_refusals_name_the_argument(kwargs, kind, name):
    d = lcn.load(EXAMPLE_15)
    before = d.xy.copy()
    with pytest.raises(kind, match=name) as info:
        lcn.solve(d, **kwargs)
    assert "lcn.solve" in str(info.value) and "accepted" in str(info.value)
    np.testing.assert_array_equal(d.xy, before)


def test_solve_refuses_what_is_not_a_drawing():
    with pytest.raises(TypeError, match="drawing"):
        lcn.solve({"nodes": []}, time_limit=1.0)


def test_cuda_device_without_cuda_is_refused_by_name():
    import ironkernels

    if ironkernels.cuda_devices():
        pytest.skip("a GPU is visible")
    with pytest.raises(ValueError, match="device"):
        lcn.solve(lcn.load(EXAMPLE_15), time_limit=1.0, device="cuda")


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "ironkernels", "lcn", "solve", *map(str, args)], capture_output=True,
                          text=True, timeout=120)


def test_cli_solve_writes_a_valid_better_drawing(tmp_path):
    out, pic = tmp_path / "sol.json", tmp_path / "sol.svg"
    p = _cli(EXAMPLE_15, "-o", out, "--time", "2", "--device", "cpu", "--svg", pic)
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""  # quiet when not on a terminal
    sol = lcn.load(out)
    ev = lcn.evaluate(sol)
    assert ev.valid and ev.k <= lcn.evaluate(lcn.load(EXAMPLE_15)).k
    assert f"k={ev.k}" in p.stdout and "lower bound" in p.stdout
    assert pic.read_text().startswith("<svg") or "<svg" in pic.read_text()[:200]
    assert [n["id"] for n in json.loads(out.read_text())["nodes"]] == [n["id"] for n in json.loads(EXAMPLE_15.read_text())["nodes"]]


def test_cli_solve_refuses_to_overwrite_its_input(tmp_path):
    src = tmp_path / "in.json"
    src.write_bytes(EXAMPLE_15.read_bytes())
    p = _cli(src, "-o", src, "--time", "1")
    assert p.returncode == 2 and "is the input" in p.stderr
    assert src.read_bytes() == EXAMPLE_15.read_bytes()


def test_cli_solve_bad_option_writes_nothing(tmp_path):
    out = tmp_path / "sol.json"
    p = _cli(EXAMPLE_15, "-o", out, "--time", "-3")
    assert p.returncode == 2 and "time_limit" in p.stderr
    assert not out.exists()


def test_interrupt_while_choosing_a_start_returns_the_best_start(monkeypatch):
    import ironkernels.lcn.start as start

    real, calls = start.start_drawing, []

    def interrupted_second_time(d, method, seed=0):
        calls.append(method)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(d, method, seed)

    monkeypatch.setattr(start, "start_drawing", interrupted_second_time)
    d = _complete(9, 50)
    r = lcn.solve(d, time_limit=30.0, device="cpu")
    assert r.stopped == "interrupted" and r.moves == 0 and r.init == calls[0]
    _check(r, d)


def test_interrupt_before_any_start_raises(monkeypatch):
    import ironkernels.lcn.start as start

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(start, "start_drawing", interrupted)
    with pytest.raises(KeyboardInterrupt):
        lcn.solve(_complete(6, 20), time_limit=5.0, device="cpu")


def test_cli_solve_chains_and_moves_give_the_same_drawing_whatever_the_cores(tmp_path):
    """--chains with --max-moves: the search's path depends on neither the clock nor the machine's
    cores (IRONKERNELS_NUM_THREADS 1 and 2 here)."""
    import os

    drawings = []
    for threads in ("1", "2"):
        out = tmp_path / f"sol{threads}.json"
        env = dict(os.environ, IRONKERNELS_NUM_THREADS=threads)
        p = subprocess.run([sys.executable, "-m", "ironkernels", "lcn", "solve", str(EXAMPLE_15), "-o", str(out),
                            "--device", "cpu", "--chains", "4", "--max-moves", "20000", "--seed", "3"],
                           capture_output=True, text=True, timeout=120, env=env)
        assert p.returncode == 0, p.stderr
        drawings.append(out.read_text())
    assert drawings[0] == drawings[1]
    p = _cli(EXAMPLE_15, "-o", tmp_path / "x.json", "--chains", "0", "--max-moves", "10")
    assert p.returncode == 2 and "chains" in p.stderr
