"""The `ironkernels` command: info, demo."""
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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="ironkernels", description="GPU kernels under stated contracts")
    sub = p.add_subparsers(dest="cmd", required=True)
    pi = sub.add_parser("info", help="version, build (CUDA, architectures, cuBLAS) and visible GPUs")
    pi.add_argument("--json", action="store_true")
    pd = sub.add_parser("demo", help="run every op on built-in data (GPU if present), check and time it")
    pd.add_argument("--cpu", action="store_true", help="run on the CPU even when a GPU is present")
    args = p.parse_args(argv)
    if args.cmd == "info":
        return _info(args.json)
    from ._demo import run

    return run(force_cpu=args.cpu)


if __name__ == "__main__":
    sys.exit(main())
