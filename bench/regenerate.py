# One command per area: rerun the benchmarks behind the README's figures and redraw their plots.
"""python bench/regenerate.py {fwt,gemm,lcn} [--dry-run] [--peers DIR]

Runs the area's commands below in order, from the repository root, each with this Python, output
streamed; stops at the first that fails, with its exit status (Ctrl-C: 130). The arguments are those
of the committed results (each file's "command" field, bench/README.md). Every results file is
followed by its plot; bench_lcn.py --solve draws lcn-h200.png itself. --peers DIR goes first on
PYTHONPATH (fast_hadamard_transform_cuda, faster_hadamard_transform) and, where DIR holds
libgemmul8.so and IRONKERNELS_PEER_GEMMUL8 is unset, names it. Which README figure comes from which
file: bench/check_readme_figures.py.
"""
from __future__ import annotations

import argparse
import os
import shlex
import signal
import subprocess
import sys

CORPUS = "../shared/lcn-corpus"  # as bench/README.md; both lcn scripts default to it too
AREAS = {
    "fwt": [  # the README's fwt table and plot, then the files its status line quotes
        ["bench/bench_fwt.py", "--out", "bench/results/fwt-h200.json"],
        ["bench/plot_fwt.py", "bench/results/fwt-h200.json"],
        ["bench/bench_fwt.py", "--batch-sweep", "16", "--dtypes", "float16,bfloat16,float32", "--log2n", "7-15",
         "--out", "bench/results/fwt-h200-batches.json"],
        ["bench/plot_fwt.py", "bench/results/fwt-h200-batches.json"],
        ["bench/bench_fwt_layouts.py", "--sections", "long,original,complex,integer,order",
         "--out", "bench/results/fwt-h200-layouts.json"],
        ["bench/bench_fwt_layouts.py", "--sections", "axis,factor", "--out", "bench/results/fwt-h200-layouts-axis-factor.json"],
        ["bench/bench_fwt_custatevec.py", "--out", "bench/results/fwt-h200-custatevec.json"],
    ],
    "gemm": [  # speed (and plot), then the README's accuracy table (the CPU reference, n = 1024)
        ["bench/bench_gemm.py", "--engines", "cuda,cublas", "--moduli", "14,15,16,17,18",
         "--out", "bench/results/gemm-h200.json"],
        ["bench/plot_gemm.py", "bench/results/gemm-h200.json"],
        ["bench/bench_gemm.py", "--shapes", "16384", "--families", "0.5", "--moduli", "14,15,16,17", "--scalings", "",
         "--rounds", "2", "--out", "bench/results/gemm-h200-native-16384.json"],
        ["bench/accuracy_gemm.py", "--n", "256,1024", "--contracts", "native,rtol=1e-10,rtol=1e-6,moduli=15",
         "--out", "bench/results/gemm-accuracy-cpu.json"],
    ],
    "lcn": [  # rows merge into --out; the corpus in two halves (about 5 min each); the plot comes with them
        ["bench/bench_lcn.py", "--solve", "corpus", "--part", "1/2", "--corpus", CORPUS,
         "--out", "bench/results/lcn-h200.json"],
        ["bench/bench_lcn.py", "--solve", "corpus", "--part", "2/2", "--corpus", CORPUS,
         "--out", "bench/results/lcn-h200.json"],
        ["bench/bench_lcn.py", "--solve", "examples,versus,scale", "--corpus", CORPUS,
         "--out", "bench/results/lcn-h200.json"],
    ],
}
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def environment(peers: str | None) -> dict:
    """The variables set for the commands on top of this process's environment."""
    if not peers:
        return {}
    peers = os.path.abspath(peers)
    env = {"PYTHONPATH": os.pathsep.join(p for p in (peers, os.environ.get("PYTHONPATH")) if p)}
    lib = os.path.join(peers, "libgemmul8.so")
    if os.path.isfile(lib) and not os.environ.get("IRONKERNELS_PEER_GEMMUL8"):
        env["IRONKERNELS_PEER_GEMMUL8"] = lib
    return env


def run(argv: list, env: dict) -> int:
    """Runs one command to its end. On Ctrl-C it gets a second to stop (a terminal's Ctrl-C reaches it
    too), then SIGINT from here and 10 s, then SIGKILL; the KeyboardInterrupt goes on to main."""
    proc = subprocess.Popen(argv, cwd=ROOT, env={**os.environ, **env})
    try:
        rc = proc.wait()
    except KeyboardInterrupt:
        try:
            try:
                proc.wait(timeout=1)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGINT)
                proc.wait(timeout=10)
        except (subprocess.TimeoutExpired, KeyboardInterrupt):
            pass
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        raise
    return rc if rc >= 0 else 128 - rc  # killed by signal N: 128 + N, as a shell says


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Rerun one area's benchmarks and plots (bench/README.md).")
    ap.add_argument("area", choices=sorted(AREAS))
    ap.add_argument("--dry-run", action="store_true", help="print the commands, one per line, and run none")
    ap.add_argument("--peers", metavar="DIR", help="peer builds: first on PYTHONPATH (and libgemmul8.so)")
    args = ap.parse_args(argv)
    env = environment(args.peers)
    prefix = "".join(f"{k}={shlex.quote(v)} " for k, v in env.items())
    try:
        for cmd in AREAS[args.area]:
            shown = prefix + shlex.join([sys.executable, *cmd])
            print(shown if args.dry_run else f"+ {shown}", flush=True)
            if args.dry_run:
                continue
            rc = run([sys.executable, *cmd], env)
            if rc != 0:
                print(f"regenerate: exit status {rc} from: {shown}", file=sys.stderr)
                return rc
    except KeyboardInterrupt:
        print("regenerate: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
