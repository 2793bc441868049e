"""The `ironkernels` command: info, demo, lcn check, lcn solve, lcn draw."""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

from . import _core
from .lcn.draw import _format_of, _matplotlib
from .lcn.io import _check_output


def _info(as_json: bool) -> int:
    from . import cmake_dir, cublas_preload

    info = dict(_core.build_info())
    devices = [dict(d) for d in _core.cuda_devices()]
    if as_json:
        print(json.dumps({"build": info, "cuda_devices": devices, "cmake_dir": cmake_dir(),
                          "cublas_preload": cublas_preload()}, indent=2, default=list))
        return 0
    print(f"ironkernels {info['version']}")
    if info["cuda"]:
        print(f"  CUDA backend: on (nvcc {info['cuda_version']}, architectures {info['cuda_archs']})")
    else:
        print("  CUDA backend: off (CPU-only build: no CUDA compiler when it was built; for the GPU kernels "
              "see docs/building.md)")
    print(f"  cuBLAS:       {'found at build time' if info['cublas'] else 'not found'}")
    try:
        threads = f"{_core.cpu_threads()} threads"
    except ValueError as e:  # a bad IRONKERNELS_NUM_THREADS: said, not a traceback
        threads = str(e)
    print(f"  CPU kernels:  {info['cpu_isas']} (using {info['cpu_isa_active']}, {threads})")
    print(f"  CMake config: {cmake_dir()}" + ("" if os.path.isdir(cmake_dir()) else " (not installed)"))
    if cublas_preload():
        print(f"  cuBLAS drop-in: LD_PRELOAD={cublas_preload()}")
    if devices:
        for d in devices:
            cc = ".".join(map(str, d["compute_capability"]))
            print(f"  GPU {d['id']}: {d['name']}, sm_{cc.replace('.', '')}, {d['sm_count']} SMs, "
                  f"{d['total_memory'] / 2**30:.0f} GiB, driver {d['driver_version']}")
    else:
        print("  GPUs: none visible" + ("" if info["cuda"] else " (and CUDA is not built in)"))
    return 0


# Exit codes of `lcn check` and `lcn draw`.
EXIT_OK, EXIT_INVALID, EXIT_UNREADABLE, EXIT_INTERRUPTED = 0, 1, 2, 130
EXIT_USAGE = 2  # no command given (argparse's own status for usage errors)
EXIT_BROKEN_PIPE = 141  # the reader closed the pipe: as a process ended by SIGPIPE
_CHECK_EPILOG = """exit status:
  0    every file is a valid drawing
  1    some drawing is invalid (vertices on one point, on a non-incident edge, outside the grid)
  2    some file could not be read or parsed (missing, not UTF-8, not JSON, a bad field); the others
       are still checked
  130  interrupted (Ctrl-C)
A progress bar is shown on stderr for evaluations over 2 s when stderr is a terminal."""

# A progress bar appears once the work has run this long (seconds), and only on a terminal.
BAR_AFTER_S = 2.0


class _ProgressBar:
    """progress(done, total) for lcn.evaluate: a bar on stderr, drawn once the work has run over
    BAR_AFTER_S seconds and only when stderr is a terminal (quiet when piped)."""

    def __init__(self, label: str):
        self.label = label if len(label) <= 40 else "…" + label[-39:]
        self.start = time.monotonic()
        self.shown = False
        self.enabled = hasattr(sys.stderr, "isatty") and sys.stderr.isatty()

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or (not self.shown and time.monotonic() - self.start < BAR_AFTER_S):
            return
        self.shown = True
        frac = done / total if total else 1.0
        bar = "#" * int(30 * frac)
        sys.stderr.write(f"\r{self.label} [{bar:<30}] {100 * frac:5.1f}%")
        sys.stderr.flush()

    def clear(self) -> None:
        if self.shown:
            sys.stderr.write("\r" + " " * (len(self.label) + 40) + "\r")
            sys.stderr.flush()
            self.shown = False


def _with_bar(label: str, call):
    """call(bar) with a _ProgressBar, cleared before the caller prints anything else."""
    bar = _ProgressBar(label)
    try:
        return call(bar)
    finally:
        bar.clear()


def _message(e: BaseException, prefix: str) -> str:
    """An exception's text for a one-line error after `prefix: `: an OSError's own words and file
    (not its "[Errno N]" form), without the prefix where the text already starts with it."""
    if isinstance(e, OSError) and e.strerror:
        text = e.strerror + (f": {e.filename!r}" if e.filename and str(e.filename) not in e.strerror else "")
    else:
        text = str(e) or type(e).__name__
    return text[len(prefix) + 2:] if text.startswith(prefix + ": ") else text


def _error(where: str, e: BaseException) -> None:
    print(f"{where}: ERROR {_message(e, where)}", file=sys.stderr)


def _lcn_check(files: list, self_loops: str) -> int:
    """One line per file; the violations of invalid drawings below it. A file that cannot be read or
    parsed is reported and the next one checked."""
    from . import lcn

    status = EXIT_OK
    for path in files:
        try:
            d = lcn.load(path, self_loops=self_loops)
            ev = _with_bar(path, lambda bar: lcn.evaluate(d, progress=bar))
        except Exception as e:  # OSError, ValueError (UnicodeDecodeError included), …: reported, go on
            _error(path, e)
            status = max(status, EXIT_UNREADABLE)
            continue
        verdict = "valid" if ev.valid else f"INVALID ({len(ev.violations)} violations)"
        print(f"{path}: n={d.n} m={d.m} W={d.width} H={d.height} {verdict} k={ev.k} edges_at_k={ev.edges_at_k} "
              f"total={ev.total_crossings}" + (f" duplicate_edges={len(d.duplicate_edges)}" if d.duplicate_edges else "")
              + (f" dropped_self_loops={len(d.dropped_self_loops)}" if d.dropped_self_loops else ""))
        for v in ev.violations[:20]:
            print("   ", *v)
        if len(ev.violations) > 20:
            print(f"    … {len(ev.violations) - 20} more")
        if not ev.valid:
            status = max(status, EXIT_INVALID)
    return status


def _same_file(a: str, b: str) -> bool:
    """Whether paths a and b name one file (symlinks, relative paths and hard links included)."""
    try:
        if os.path.exists(a) and os.path.exists(b) and os.path.samefile(a, b):
            return True
    except OSError:
        pass
    return os.path.realpath(a) == os.path.realpath(b)


def _lcn_draw(src: str, dst: str, self_loops: str, size: int) -> int:
    """Draws src into dst (format from dst's extension); never overwrites src."""
    from . import lcn

    prog = "ironkernels lcn draw"
    if _same_file(src, dst):
        print(f"{prog}: the output {dst!r} is the input drawing {src!r}; accepted: another path "
              f"(ending in {', '.join(lcn.DRAW_FORMATS)})", file=sys.stderr)
        return EXIT_UNREADABLE
    try:
        fmt = _format_of(dst, prog)
        if fmt == "png":
            _matplotlib()
        _check_output(dst, prog)
        d = lcn.load(src, self_loops=self_loops)
    except Exception as e:
        print(f"{prog}: {_message(e, prog)}", file=sys.stderr)
        return EXIT_UNREADABLE
    try:
        _with_bar(src, lambda bar: lcn.draw(d, dst, size=size, progress=bar))
    except Exception as e:
        print(f"{prog}: {_message(e, prog)}", file=sys.stderr)
        return EXIT_UNREADABLE
    print(f"wrote {dst}")
    return EXIT_OK


_SOLVE_EPILOG = """exit status:
  0    the best drawing found was written (valid: checked by the exact evaluator)
  2    the input could not be read, an option is out of range, or the output could not be written
       (nothing is written then)
  130  interrupted (Ctrl-C): the best drawing found so far was written
On a terminal a progress line on stderr shows k, edges at k, total crossings, moves/s and the time left."""


class _SolveLine:
    """The solve callback of the command: a live line on stderr when it is a terminal (quiet when piped)."""

    def __init__(self, label: str):
        self.label = label if len(label) <= 30 else "…" + label[-29:]
        self.enabled = hasattr(sys.stderr, "isatty") and sys.stderr.isatty()
        self.width = 0

    def __call__(self, p) -> bool:
        if self.enabled:
            rate = p.moves / p.seconds if p.seconds > 0 else 0.0
            left = "" if p.time_left is None else f"  {p.time_left:5.1f} s left"
            line = (f"\r{self.label}: k={p.k} edges_at_k={p.edges_at_k} total={p.total_crossings}  "
                    f"{rate:.3g} moves/s{left}")
            self.width = max(self.width, len(line))
            sys.stderr.write(line.ljust(self.width))
            sys.stderr.flush()
        return True

    def clear(self) -> None:
        if self.enabled and self.width:
            sys.stderr.write("\r" + " " * self.width + "\r")
            sys.stderr.flush()


def _lcn_solve(args) -> int:
    """Solves args.input into args.output (contest JSON), optionally drawing it; never overwrites the input."""
    from . import lcn

    prog = "ironkernels lcn solve"
    outputs = [args.output] + ([args.svg] if args.svg else [])
    for out in outputs:
        if _same_file(args.input, out):
            print(f"{prog}: the output {out!r} is the input drawing {args.input!r}; accepted: another path",
                  file=sys.stderr)
            return EXIT_UNREADABLE
    try:
        if args.svg:
            fmt = _format_of(args.svg, prog)
            if fmt == "png":
                _matplotlib()
            _check_output(args.svg, prog)
        _check_output(args.output, prog)
        d = lcn.load(args.input, self_loops=args.self_loops)
    except Exception as e:
        print(f"{prog}: {_message(e, prog)}", file=sys.stderr)
        return EXIT_UNREADABLE
    line = _SolveLine(args.input)
    try:
        time_limit = args.time if args.time is not None or args.max_moves is not None else 10.0
        r = lcn.solve(d, time_limit=time_limit, max_moves=args.max_moves, seed=args.seed, device=args.device,
                      init=args.init, callback=line, chains=args.chains)
    except (TypeError, ValueError) as e:
        line.clear()
        print(f"{prog}: {_message(e, prog)}", file=sys.stderr)
        return EXIT_UNREADABLE
    line.clear()
    try:
        lcn.save(r.drawing, args.output)
        if args.svg:
            lcn.draw(r.drawing, args.svg, r.evaluation)
    except Exception as e:
        print(f"{prog}: {_message(e, prog)}", file=sys.stderr)
        return EXIT_UNREADABLE
    ev = r.evaluation
    print(f"{args.output}: n={d.n} m={d.m} k={ev.k} edges_at_k={ev.edges_at_k} total={ev.total_crossings} "
          f"(start {r.init}: k={r.start_evaluation.k}; lower bound k >= {r.lower_bound}, {r.lower_bound_reason}) "
          f"{r.device} {r.seconds:.1f} s, {r.moves_per_second:.3g} moves/s"
          + (f", GPU busy {100 * r.busy_fraction:.0f}%" if r.device != "cpu" else "")
          + ("" if r.stopped != "interrupted" else " [interrupted]"))
    if args.svg:
        print(f"wrote {args.svg}")
    return EXIT_INTERRUPTED if r.stopped == "interrupted" else EXIT_OK


def main(argv: list[str] | None = None) -> int:
    """The command; a reader that closes the pipe early (`ironkernels info | head -1`) ends it quietly."""
    try:
        status = _main(argv)
        sys.stdout.flush()  # here, where a closed pipe is caught, not at exit
        return status
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return EXIT_BROKEN_PIPE


def _main(argv: list[str] | None) -> int:
    from . import __version__

    p = argparse.ArgumentParser(prog="ironkernels", description="GPU kernels under stated contracts")
    p.add_argument("--version", action="version", version=f"ironkernels {__version__}")
    sub = p.add_subparsers(dest="cmd", metavar="{info,demo,lcn}")
    pi = sub.add_parser("info", help="version, build (CUDA, architectures, cuBLAS) and visible GPUs")
    pi.add_argument("--json", action="store_true")
    pd = sub.add_parser("demo", help="run every op on built-in data (GPU if present), check and time it")
    pd.add_argument("--cpu", action="store_true", help="run on the CPU even when a GPU is present")
    pl = sub.add_parser("lcn", help="k-plane drawings: check, solve and draw contest JSON files")
    lsub = pl.add_subparsers(dest="lcn_cmd", metavar="{check,solve,draw}")
    loops_help = "self-loops in a file: an error (reject, the default) or left out and counted (drop)"
    pc = lsub.add_parser("check", help="validity, k, edges at k and total crossings of each file",
                         description="Validity, k, edges at k and total crossings of each contest JSON file.",
                         epilog=_CHECK_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    pc.add_argument("files", nargs="+")
    pc.add_argument("--self-loops", choices=("reject", "drop"), default="reject", help=loops_help)
    ps = lsub.add_parser("solve", help="a valid drawing with the smallest k found (simulated annealing, GPU if present)",
                         description="From a contest instance to a valid drawing on its grid with the smallest k "
                                     "found: a start layout, then simulated annealing on (k, edges at k, total "
                                     "crossings) on the GPU (or all CPU cores). Ctrl-C or the time limit stops it "
                                     "within a second and writes the best drawing found.",
                         epilog=_SOLVE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    ps.add_argument("input")
    ps.add_argument("-o", "--output", required=True, help="the solution's path (contest JSON; never the input)")
    ps.add_argument("--time", type=float, default=None,
                    help="seconds for the whole run (default 10, or no limit with --max-moves)")
    ps.add_argument("--max-moves", type=int, default=None,
                    help="a budget of proposals: the same result on every run (with --time too: whichever ends first)")
    ps.add_argument("--chains", type=int, default=None,
                    help="chains run at once (default: all cores, or a few per SM on a GPU); with --max-moves, "
                         "the same drawing on every machine, CPU or GPU")
    ps.add_argument("--seed", type=int, default=0)
    ps.add_argument("--device", default="auto", help="auto (GPU if present), cpu, cuda or cuda:N")
    ps.add_argument("--init", default="auto", help="start layout: auto (the best of those available), keep (the "
                    "input, repaired if invalid), or a name of lcn.start_methods()")
    ps.add_argument("--svg", metavar="PICTURE", help="also draw the solution (.svg, or .png with matplotlib)")
    ps.add_argument("--self-loops", choices=("reject", "drop"), default="reject", help=loops_help)
    pdw = lsub.add_parser("draw", help="picture of a drawing (.svg, or .png with matplotlib)",
                          description="Picture of a drawing: edges coloured by crossings, the edges at k in red, "
                                      "a legend, the vertices of violations circled. The format follows the "
                                      "output's extension: .svg, or .png (pip install 'ironkernels[plot]').",
                          epilog="exit status: 0 written, 2 the input could not be read or the output not "
                                 "written (nothing is written then), 130 interrupted (Ctrl-C)")
    pdw.add_argument("input")
    pdw.add_argument("output", help="the picture's path, ending in .svg or .png (never the input)")
    pdw.add_argument("--self-loops", choices=("reject", "drop"), default="reject", help=loops_help)
    pdw.add_argument("--size", type=int, default=900, help="the picture is SIZE x SIZE pixels (64 … 16384; default 900)")
    args = p.parse_args(argv)
    if args.cmd is None or (args.cmd == "lcn" and args.lcn_cmd is None):  # what there is to run
        (pl if args.cmd else p).print_help(sys.stderr)
        return EXIT_USAGE
    if args.cmd == "info":
        return _info(args.json)
    if args.cmd == "lcn":
        try:
            if args.lcn_cmd == "solve":
                return _lcn_solve(args)
            if args.lcn_cmd == "draw":
                return _lcn_draw(args.input, args.output, args.self_loops, args.size)
            return _lcn_check(args.files, args.self_loops)
        except KeyboardInterrupt:
            print("\nironkernels: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
    from ._demo import run

    try:
        return run(force_cpu=args.cpu)
    except KeyboardInterrupt:
        print("\nironkernels: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
