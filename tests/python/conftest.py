import gc

import numpy as np
import pytest

import ironkernels


def _has_cuda() -> bool:
    try:
        return len(ironkernels.cuda_devices()) > 0
    except Exception:
        return False


HAS_CUDA = _has_cuda()


def pytest_collection_modifyitems(config, items):
    if HAS_CUDA:
        return
    skip = pytest.mark.skip(reason="no CUDA device visible")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


def pytest_sessionfinish(session, exitstatus):
    # Tracebacks kept by pytest.raises form reference cycles with the test frames that hold library
    # objects; collecting them here frees those objects before nanobind's exit-time leak check.
    gc.collect()
