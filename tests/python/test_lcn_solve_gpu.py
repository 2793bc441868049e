"""lcn.solve on CUDA: the device chains follow the CPU chains' path exactly (the same drawing for the
same seed, chains and move budget), results are valid and recounted independently, and the time limit
holds with the whole search on the device."""
import pathlib
import time

import numpy as np
import pytest

from ironkernels import lcn
from ironkernels.reference import lcn_crossing_counts

pytestmark = pytest.mark.gpu
DATA = pathlib.Path(__file__).parent.parent / "data" / "lcn"
FILES = sorted(DATA.glob("*/*.json"))


def _random_valid(d, seed):
    """A valid random start, independent of the library's start layouts."""
    rng = np.random.default_rng(seed)
    while True:
        flat = rng.choice((d.width + 1) * (d.height + 1), size=d.n, replace=False)
        xy = np.stack([flat % (d.width + 1), flat // (d.width + 1)], axis=1).astype(np.int64)
        dd = lcn.Drawing(list(d.ids), xy, d.edges, d.width, d.height)
        if lcn.evaluate(dd).valid:
            return dd


@pytest.mark.parametrize("path", FILES[::2], ids=lambda p: f"{p.parent.name}/{p.name}")
@pytest.mark.parametrize("chains", [1, 5])
def test_gpu_chains_follow_the_cpu_chains(path, chains):
    d = lcn.load(path)
    budget = 1500 * chains
    cpu = lcn.solve(d, time_limit=None, max_moves=budget, seed=11, device="cpu", chains=chains, init="keep")
    gpu = lcn.solve(d, time_limit=None, max_moves=budget, seed=11, device="cuda", chains=chains, init="keep")
    np.testing.assert_array_equal(gpu.drawing.xy, cpu.drawing.xy)
    assert gpu.moves == cpu.moves and gpu.device == "cuda:0"
    assert gpu.evaluation.valid


@pytest.mark.parametrize("seed", [0, 1])
def test_gpu_chains_follow_the_cpu_chains_from_random_starts(seed):
    d = _random_valid(lcn.load(DATA / "gd2025-examples" / "70-nodes.json"), seed)
    cpu = lcn.solve(d, time_limit=None, max_moves=20000, seed=seed, device="cpu", chains=4, init="keep")
    gpu = lcn.solve(d, time_limit=None, max_moves=20000, seed=seed, device="cuda", chains=4, init="keep")
    np.testing.assert_array_equal(gpu.drawing.xy, cpu.drawing.xy)
    assert cpu.k < cpu.start_evaluation.k


def test_gpu_solve_within_its_time_limit():
    d = lcn.load(DATA / "gd2025-examples" / "150-nodes.json")
    t0 = time.perf_counter()
    r = lcn.solve(d, time_limit=2.0, device="cuda")
    assert time.perf_counter() - t0 < 3.0
    ev = r.evaluation
    assert ev.valid and ev.k <= r.start_evaluation.k
    np.testing.assert_array_equal(lcn_crossing_counts(r.drawing.xy, r.drawing.edges), ev.edge_crossings)
    assert r.chains > 100 and r.busy_fraction > 0.5 and r.moves > 0
