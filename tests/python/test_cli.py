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
    assert out.stdout.count("gemm (u-.5)") == 2
    assert "lcn  70-node solution" in out.stdout and "random layout" in out.stdout  # every op has its rows
    assert " NO" not in out.stdout


def test_unknown_command_is_an_error():
    out = run("frobnicate")
    assert out.returncode != 0
    assert "invalid choice" in out.stderr


@pytest.mark.parametrize("args", [(), ("lcn",)])
def test_no_command_prints_the_commands_there_are(args):
    out = run(*args)
    assert out.returncode == 2 and "required" not in out.stderr
    assert ("check" if args else "demo") in out.stderr and "usage: ironkernels" in out.stderr


def test_version():
    out = run("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"ironkernels {ironkernels.__version__}"


def test_a_closed_pipe_ends_the_command_quietly():
    """`ironkernels info | head -1`: the reader is gone before the command writes."""
    p = subprocess.Popen([sys.executable, "-m", "ironkernels", "info"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=600) == 141 and err == ""


def test_demo_ctrl_c_exits_130_with_one_line(monkeypatch, capsys):
    from ironkernels import _demo, cli

    def interrupted(**kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(_demo, "run", interrupted)
    assert cli.main(["demo", "--cpu"]) == 130
    assert capsys.readouterr().err.strip() == "ironkernels: interrupted"


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
    assert "lcn  70-node solution" in out.stdout and "cuda:0" in out.stdout.split("lcn  70-node")[1]


# ---------------------------------------------------------------------------------------- lcn command
import contextlib  # noqa: E402
import io  # noqa: E402
import os  # noqa: E402
import pathlib  # noqa: E402
import signal  # noqa: E402
import time  # noqa: E402

from ironkernels import cli, lcn  # noqa: E402

LCN_DATA = pathlib.Path(__file__).parent.parent / "data" / "lcn"
GOOD = str(LCN_DATA / "gd2025-examples" / "sol-15-nodes-5-planar.json")
INVALID = str(LCN_DATA / "gd2025-examples" / "100-nodes.json")


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def lcn_main(*args, stderr=None):
    out, err = io.StringIO(), stderr if stderr is not None else io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli.main(["lcn", *map(str, args)])
    return rc, out.getvalue(), err.getvalue()


def test_lcn_check_reports_each_bad_file_and_goes_on(tmp_path):
    (tmp_path / "latin1.json").write_bytes(b'{"nodes": [], "edges": [], "width": "\xfc", "height": 1}')
    (tmp_path / "bad.json").write_text('{"nodes": []')
    rc, out, err = lcn_main("check", tmp_path / "latin1.json", tmp_path / "missing.json", tmp_path, GOOD,
                            tmp_path / "bad.json", INVALID)
    assert rc == 2
    assert f"{GOOD}: n=15" in out and f"{INVALID}: n=100" in out and "INVALID" in out
    for name in ("latin1.json", "missing.json", "bad.json", str(tmp_path) + ": ERROR"):
        assert name in err
    assert "Traceback" not in err and "[Errno" not in err
    for line in err.splitlines():  # each file named once, before its error
        where, _, text = line.partition(": ERROR ")
        assert text and not text.startswith(where), line
    assert lcn_main("check", GOOD, INVALID)[0] == 1 and lcn_main("check", GOOD)[0] == 0


def test_lcn_draw_errors_name_the_command_once(tmp_path):
    for out in (tmp_path / "p.txt", tmp_path / "missing-folder" / "p.svg", tmp_path):
        rc, _, err = lcn_main("draw", GOOD, out)
        assert rc == 2 and err.count("ironkernels lcn draw:") == 1 and "[Errno" not in err, err


def test_lcn_check_help_documents_the_exit_codes():
    out = run("lcn", "check", "--help")
    assert out.returncode == 0
    for text in ("exit status", "0 ", "1 ", "2 ", "130", "--self-loops"):
        assert text in out.stdout


def test_lcn_self_loops_drop(tmp_path):
    doc = {"nodes": [{"id": 1, "x": 0, "y": 0}, {"id": 2, "x": 5, "y": 5}], "width": 9, "height": 9,
           "edges": [{"source": 1, "target": 2}, {"source": 2, "target": 2}]}
    (tmp_path / "loops.json").write_text(json.dumps(doc))
    assert lcn_main("check", tmp_path / "loops.json")[0] == 2
    rc, out, _ = lcn_main("check", "--self-loops", "drop", tmp_path / "loops.json")
    assert rc == 0 and "dropped_self_loops=1" in out
    rc, out, err = lcn_main("draw", "--self-loops", "drop", "--size", "200", tmp_path / "loops.json", tmp_path / "p.svg")
    assert rc == 0, err
    assert 'width="200" height="200"' in (tmp_path / "p.svg").read_text()


def test_lcn_progress_bar_on_a_terminal_only(monkeypatch):
    monkeypatch.setattr(cli, "BAR_AFTER_S", 0.0)
    rc, _, err = lcn_main("check", GOOD)  # piped: quiet
    assert rc == 0 and err == ""
    term = _Terminal()
    rc, _, _ = lcn_main("check", GOOD, stderr=term)
    assert rc == 0 and "100.0%" in term.getvalue() and "[" in term.getvalue()
    monkeypatch.setattr(cli, "BAR_AFTER_S", 1000.0)  # short work: no bar even on a terminal
    term = _Terminal()
    assert lcn_main("check", GOOD, stderr=term)[0] == 0 and term.getvalue() == ""


def test_lcn_ctrl_c_exits_130_with_one_line(monkeypatch, tmp_path):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    from ironkernels.lcn import crossings

    monkeypatch.setattr(lcn, "evaluate", interrupted)  # what the command calls, and what lcn.draw does
    monkeypatch.setattr(crossings, "evaluate", interrupted)
    for args in (("check", GOOD), ("draw", GOOD, tmp_path / "p.svg")):
        rc, _, err = lcn_main(*args)
        assert rc == 130 and err.strip() == "ironkernels: interrupted"
    assert os.listdir(tmp_path) == []


_CTRL_C_DRIVER = """
import signal, sys
from ironkernels import cli, lcn
signal.signal(signal.SIGINT, signal.default_int_handler)  # a shell's background job starts with SIGINT ignored
evaluate = lcn.evaluate
def announced(d, progress=None):
    said = []
    def hook(done, total):
        if not said:
            said.append(1)
            print("evaluating", flush=True)
        if progress is not None:
            progress(done, total)
    return evaluate(d, progress=hook)
lcn.evaluate = announced
sys.exit(cli.main(sys.argv[1:]))
"""


def test_lcn_check_answers_a_real_ctrl_c(tmp_path):
    np = __import__("numpy")
    rng = np.random.default_rng(5)
    m = int(240000 * max(1.0, (os.cpu_count() or 2) / 2) ** 0.5)  # about 10 s of work whatever the cores
    n = m // 3
    e = rng.integers(0, n, (m, 2))
    e = e[e[:, 0] != e[:, 1]]
    d = lcn.Drawing(ids=list(range(n)), xy=rng.integers(0, 10**6, (n, 2)), edges=e, width=10**6, height=10**6)
    lcn.save(d, tmp_path / "big.json")
    proc = subprocess.Popen([sys.executable, "-c", _CTRL_C_DRIVER, "lcn", "check", str(tmp_path / "big.json")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "evaluating"  # inside the evaluation now
        proc.send_signal(signal.SIGINT)
        t0 = time.monotonic()
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert time.monotonic() - t0 < 1.5
    assert proc.returncode == 130, err
    assert err.strip() == "ironkernels: interrupted" and "Traceback" not in err


def test_a_cpu_only_build_says_so_and_how_to_get_the_gpu_one():
    """A CPU-only copy on a machine that may have a GPU: info and the demo say the copy was built
    without CUDA and point to the GPU build, instead of "no CUDA device found"."""
    import ironkernels

    if ironkernels.build_info()["cuda"]:
        pytest.skip("this copy was built with CUDA")
    info = run("info")
    assert "CPU-only build" in info.stdout and "docs/building.md" in info.stdout
    demo = run("demo")
    assert demo.returncode == 0 and "built without CUDA" in demo.stdout.splitlines()[0]
