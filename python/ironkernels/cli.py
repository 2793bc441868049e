"""The `ironkernels` command: info, demo, lcn check, lcn draw."""
from __future__ import annotations

import argparse
import json
import os
import sys

from . import _core


def _info(as_json: bool) -> int:
    from . import cmake_dir

    info = dict(_core.build_info())
    devices = [dict(d) for d in _core.cuda_devices()]
    if as_json:
        print(json.dumps({"build": info, "cuda_devices": devices, "cmake_dir": cmake_dir()}, indent=2, default=list))
        return 0
    print(f"ironkernels {info['version']}")
    if info["cuda"]:
        print(f"  CUDA backend: on (nvcc {info['cuda_version']}, architectures {info['cuda_archs']})")
    else:
        print("  CUDA backend: off (CPU-only build)")
    print(f"  cuBLAS:       {'found at build time' if info['cublas'] else 'not found'}")
    print(f"  CPU kernels:  {info['cpu_isas']} (using {info['cpu_isa_active']}, {_core.cpu_threads()} threads)")
    print(f"  CMake config: {cmake_dir()}" + ("" if os.path.isdir(cmake_dir()) else " (not installed)"))
    if devices:
        for d in devices:
            cc = ".".join(map(str, d["compute_capability"]))
            print(f"  GPU {d['id']}: {d['name']}, sm_{cc.replace('.', '')}, {d['sm_count']} SMs, "
                  f"{d['total_memory'] / 2**30:.0f} GiB, driver {d['driver_version']}")
    else:
        print("  GPUs: none visible" + ("" if info["cuda"] else " (and CUDA is not built in)"))
    return 0


def _lcn_check(files: list) -> int:
    """One line per file; the violations of invalid drawings below it. Exit 1 if any is invalid."""
    from . import lcn

    status = 0
    for path in files:
        try:
            d = lcn.load(path)
        except (OSError, ValueError) as e:
            print(f"{path}: ERROR {e}")
            status = max(status, 2)
            continue
        ev = lcn.evaluate(d)
        verdict = "valid" if ev.valid else f"INVALID ({len(ev.violations)} violations)"
        print(f"{path}: n={d.n} m={d.m} W={d.width} H={d.height} {verdict} k={ev.k} edges_at_k={ev.edges_at_k} "
              f"total={ev.total_crossings}" + (f" duplicate_edges={len(d.duplicate_edges)}" if d.duplicate_edges else ""))
        for v in ev.violations[:20]:
            print("   ", *v)
        if len(ev.violations) > 20:
            print(f"    … {len(ev.violations) - 20} more")
        if not ev.valid:
            status = max(status, 1)
    return status


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="ironkernels", description="GPU kernels under stated contracts")
    sub = p.add_subparsers(dest="cmd", required=True)
    pi = sub.add_parser("info", help="version, build (CUDA, architectures, cuBLAS) and visible GPUs")
    pi.add_argument("--json", action="store_true")
    pd = sub.add_parser("demo", help="run every op on built-in data (GPU if present), check and time it")
    pd.add_argument("--cpu", action="store_true", help="run on the CPU even when a GPU is present")
    pl = sub.add_parser("lcn", help="k-plane drawings: check contest JSON files")
    lsub = pl.add_subparsers(dest="lcn_cmd", required=True)
    pc = lsub.add_parser("check", help="validity, k, edges at k and total crossings of each file")
    pc.add_argument("files", nargs="+")
    pdw = lsub.add_parser("draw", help="picture of a drawing (SVG, or PNG with matplotlib)")
    pdw.add_argument("input")
    pdw.add_argument("output")
    args = p.parse_args(argv)
    if args.cmd == "info":
        return _info(args.json)
    if args.cmd == "lcn" and args.lcn_cmd == "draw":
        from . import lcn

        lcn.draw(lcn.load(args.input), args.output)
        print(f"wrote {args.output}")
        return 0
    if args.cmd == "lcn":
        return _lcn_check(args.files)
    from ._demo import run

    return run(force_cpu=args.cpu)


if __name__ == "__main__":
    sys.exit(main())
