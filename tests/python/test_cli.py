"""The `ironkernels` command: info (text and JSON), the demo on the CPU and on a GPU."""
import json
import subprocess
import sys

import pytest

import ironkernels


def run(*args):
    return subprocess.run([sys.executable, "-m", "ironkernels", *args], capture_output=True, text=True, timeout=600)


def test_info_text_names_version_and_build():
    out = run("info")
    assert out.returncode == 0, out.stderr
    assert ironkernels.__version__ in out.stdout
    assert "CUDA backend" in out.stdout and "CPU kernels" in out.stdout


def test_info_json_matches_the_module():
    out = run("info", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["build"]["version"] == ironkernels.__version__
    assert doc["build"]["cuda"] == ironkernels.build_info()["cuda"]
    assert len(doc["cuda_devices"]) == len(ironkernels.cuda_devices())


def test_demo_on_the_cpu_checks_every_dtype():
    out = run("demo", "--cpu")
    assert out.returncode == 0, out.stdout + out.stderr
    for dtype in ("float32", "float16", "bfloat16", "float64"):
        assert f"fwt  {dtype}" in out.stdout
    assert " NO" not in out.stdout


def test_unknown_command_is_an_error():
    out = run("frobnicate")
    assert out.returncode != 0
    assert "invalid choice" in out.stderr


def test_torch_imports_after_ironkernels():
    """Our shared objects keep the symbols of static archives (libstdc++ where the toolchain links it
    statically) private; exported, they broke PyTorch imported afterwards."""
    pytest.importorskip("torch")
    code = "import ironkernels, ironkernels._core; import torch; print(torch.ones(2).sum().item())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "2.0"


@pytest.mark.gpu
def test_demo_on_the_gpu_passes():
    """The README's main job on a GPU machine: every row checked, exit status 0 (a crash fails here)."""
    out = run("demo")
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert "cuda:" in out.stdout and "gemm" in out.stdout
