import gc
import os

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
    if HAS_CUDA or os.environ.get("IRONKERNELS_TEST_ARRAYS") == "own-cpu":
        return
    skip = pytest.mark.skip(reason="no GPU")
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


@pytest.fixture(scope="module")
def dev():
    """Device arrays for the GPU suites (device_arrays.pick): skips where there is no GPU."""
    import device_arrays

    return device_arrays.pick()
