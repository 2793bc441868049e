"""lcn on CUDA: the all-pairs crossing kernel against the CPU evaluator on every test instance and on
large random drawings (degenerate and generic)."""
import pathlib

import numpy as np
import pytest

from ironkernels import lcn

pytestmark = pytest.mark.gpu
DATA = pathlib.Path(__file__).parent.parent / "data" / "lcn"


def _cupy():
    return pytest.importorskip("cupy")


@pytest.mark.parametrize("path", sorted(DATA.glob("*/*.json")), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_gpu_counts_equal_cpu(path):
    cp = _cupy()
    d = lcn.load(path)
    got = lcn.count_crossings(cp.asarray(d.xy), cp.asarray(d.edges))
    assert isinstance(got, cp.ndarray)
    np.testing.assert_array_equal(cp.asnumpy(got), lcn.evaluate(d).edge_crossings)


@pytest.mark.parametrize("side", [40, 1 << 30])
def test_gpu_counts_on_large_random_drawings(side):
    cp = _cupy()
    rng = np.random.default_rng(side % 1000)
    n, m = 3000, 9000
    xy = rng.integers(0, side + 1, (n, 2)).astype(np.int64)
    e = rng.integers(0, n, (m, 2)).astype(np.int64)
    e = e[e[:, 0] != e[:, 1]]
    cpu = lcn.count_crossings(xy, e)
    out = cp.full(len(e), -1, dtype=cp.int64)  # poisoned
    lcn.count_crossings(cp.asarray(xy), cp.asarray(e), out=out)
    np.testing.assert_array_equal(cp.asnumpy(out), cpu)


def test_gpu_rejects_mixed_devices():
    cp = _cupy()
    with pytest.raises(ValueError, match="one device"):
        lcn.count_crossings(np.zeros((2, 2), np.int64), cp.zeros((1, 2), cp.int64))
