"""bench/regenerate.py: each area's commands name existing bench scripts and options they accept, write
bench/results/<area>-h200.json and its plot; a failing command stops the run with its status; Ctrl-C
exits 130 without a traceback; an unknown area is refused. CPU only: nothing is benchmarked."""
import os
import pathlib
import re
import shlex
import signal
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
SCRIPT = ROOT / "bench" / "regenerate.py"
AREAS = ("fwt", "gemm", "lcn")


def regenerate(*args, env=None):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60,
                          cwd=ROOT, env=env)


def dry_run(area, *extra):
    r = regenerate(area, "--dry-run", *extra)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines, f"{area}: no commands"
    commands = []
    for line in lines:
        words = shlex.split(line)
        while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):  # VAR=value prefixes
            words.pop(0)
        assert words[0] == sys.executable, line
        commands.append(words[1:])
    return lines, commands


@pytest.mark.parametrize("area", AREAS)
def test_dry_run_names_existing_scripts_and_their_options(area):
    _, commands = dry_run(area)
    for cmd in commands:
        script = ROOT / cmd[0]
        assert cmd[0].startswith("bench/") and cmd[0].endswith(".py") and script.is_file(), cmd
        source = script.read_text(encoding="utf-8")
        for option in (w for w in cmd[1:] if w.startswith("--")):
            assert f'"{option}"' in source, f"{cmd[0]} has no option {option}"


@pytest.mark.parametrize("area", AREAS)
def test_dry_run_writes_the_area_results_file_and_its_plot(area):
    _, commands = dry_run(area)
    headline = f"bench/results/{area}-h200.json"
    writers = [c for c in commands if headline in c and c[c.index(headline) - 1] == "--out"]
    assert writers, f"no command of {area} writes {headline}"
    plotters = [c for c in commands if re.fullmatch(r"bench/plot_\w+\.py", c[0]) and headline in c[1:]]
    # bench_lcn.py --solve draws <out>.png itself (lcn_solve_bench.plot)
    drawn_by_bench = (all(c[0] == "bench/bench_lcn.py" and "--solve" in c for c in writers)
                      and 'os.path.splitext(args.out)[0] + ".png"' in (ROOT / "bench/lcn_solve_bench.py").read_text())
    assert plotters or drawn_by_bench, f"nothing draws bench/results/{area}-h200.png"
    if plotters:
        assert commands.index(plotters[0]) > commands.index(writers[0])  # the plot after its file
    for c in commands:  # every results file written under bench/results
        if "--out" in c:
            assert c[c.index("--out") + 1].startswith("bench/results/"), c


def test_dry_run_with_peers_puts_them_first_on_pythonpath(tmp_path):
    lines, _ = dry_run("fwt", "--peers", str(tmp_path))
    for line in lines:
        first = shlex.split(line)[0]
        assert first.startswith("PYTHONPATH=") and first[11:].split(os.pathsep)[0] == str(tmp_path), line


def test_unknown_area_exits_2_naming_the_areas():
    r = regenerate("nonesuch")
    assert r.returncode == 2
    assert "nonesuch" in r.stderr and all(a in r.stderr for a in AREAS), r.stderr


_DRIVER = """
import signal, sys
sys.path.insert(0, {bench!r})
import regenerate
signal.signal(signal.SIGINT, signal.default_int_handler)  # a shell's background job starts with SIGINT ignored
regenerate.AREAS["fwt"] = {commands!r}
sys.exit(regenerate.main(["fwt"]))
"""


def driver(commands):
    return [sys.executable, "-c", _DRIVER.format(bench=str(ROOT / "bench"), commands=commands)]


def test_stops_at_the_first_failing_command_with_its_status():
    r = subprocess.run(driver([["-c", "print('first')"], ["-c", "import sys; sys.exit(3)"], ["-c", "print('never')"]]),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 3, r.stderr
    assert "first" in r.stdout and "never" not in r.stdout
    assert "exit status 3" in r.stderr


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
def test_ctrl_c_stops_cleanly_with_130():
    child = ("import signal, sys, time; signal.signal(signal.SIGINT, lambda *a: sys.exit(1)); "
             "print('started', flush=True); time.sleep(60)")
    proc = subprocess.Popen(driver([["-c", child], ["-c", "print('never')"]]), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        while proc.stdout.readline().strip() != "started":  # "+ command" first, then the child's line
            assert proc.poll() is None
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "never" not in out
    assert err.strip() == "regenerate: interrupted" and "Traceback" not in err
