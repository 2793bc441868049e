"""Whether moving code changed the kernels: compiles CUDA files of two revisions to sm_90a cubins and
compares each kernel's machine code (.text.<kernel> sections, byte for byte; kernels renamed by a move,
as those of anonymous namespaces are, are matched as a multiset of bodies). No GPU needed.

    python bench/sass_diff.py HEAD~1 --build build-cuda cuda/gemm/gemm_plan.cu cuda/gemm/gemm_run.cu

Files missing from a revision are skipped there (a file split in two: list both). `--build` is a
configured CMake build folder (its generated headers are shared by both revisions). Exit status 0:
identical; 1: some kernel differs."""
from __future__ import annotations

import argparse
import hashlib
import os
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLAGS = ["-cubin", "-O3", "-DNDEBUG", "-arch=sm_90a", "-DIRONKERNELS_HAS_SM90A=1", "-DIRONKERNELS_WITH_CUDA=1",
         "-DIRONKERNELS_X86_ISAS=1", "-Dironkernels_EXPORTS", "--expt-relaxed-constexpr", "-lineinfo", "-std=c++17"]


def kernels(cubin: str) -> dict:
    """{kernel name: machine code} from an ELF cubin's .text.<name> sections."""
    d = open(cubin, "rb").read()
    shoff, = struct.unpack_from("<Q", d, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize) for i in range(shnum)]
    names = headers[shstrndx][4]
    out = {}
    for h in headers:
        name = d[names + h[0]:d.index(b"\0", names + h[0])].decode()
        if name.startswith(".text."):
            out[name[6:]] = d[h[4]:h[4] + h[5]]
    return out


def compile_tree(tree: str, build: str, files: list, out: str) -> dict:
    includes = [f"-I{tree}/cpp/include", f"-I{build}/generated", f"-I{tree}/cpp/src", f"-I{tree}/cuda",
                f"-I{build}/generated_private"]
    found = {}
    for f in files:
        if not os.path.exists(os.path.join(tree, f)):
            continue
        cubin = os.path.join(out, os.path.basename(f) + ".cubin")
        subprocess.run(["nvcc", *FLAGS, *includes, "-o", cubin, os.path.join(tree, f)], check=True)
        found.update(kernels(cubin))
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old", help="the revision to compare against (git rev)")
    ap.add_argument("files", nargs="+", help=".cu files, relative to the repository root")
    ap.add_argument("--build", required=True, help="a configured CMake build folder")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    with tempfile.TemporaryDirectory() as tmp:
        tree = os.path.join(tmp, "old")
        subprocess.run(["git", "-C", ROOT, "worktree", "add", "-q", "--detach", tree, args.old], check=True)
        try:
            os.makedirs(os.path.join(tmp, "a")), os.makedirs(os.path.join(tmp, "b"))
            old = compile_tree(tree, build, args.files, os.path.join(tmp, "a"))
            new = compile_tree(ROOT, build, args.files, os.path.join(tmp, "b"))
        finally:
            subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", tree], check=False)
    common = set(old) & set(new)
    differing = sorted(n for n in common if old[n] != new[n])
    digest = lambda kinds, names: sorted(hashlib.sha1(kinds[n]).hexdigest() for n in names)
    renamed_equal = digest(old, set(old) - common) == digest(new, set(new) - common)
    print(f"kernels: {len(old)} before, {len(new)} after; {len(common)} by the same name, {len(differing)} of them "
          f"differ; {len(set(old) - common)} renamed, bodies {'identical' if renamed_equal else 'DIFFER'}")
    for n in differing:
        print("  differs:", n)
    return 0 if not differing and renamed_equal and len(old) == len(new) else 1


if __name__ == "__main__":
    sys.exit(main())
