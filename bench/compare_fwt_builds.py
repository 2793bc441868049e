"""The row kernels of two builds of ironkernels on the same tensors (256 MB), best of four rotated
rounds, each also over torch.clone of the tensor: a change's no-regression check, or two variants of
one kernel side by side (bench/DECISIONS.md, fwt).

    python bench/compare_fwt_builds.py <old build's site dir> <new build's site dir>   # -> $OUT/oldnew.json
        [--rows float64:15,complex64:15,...]   # dtype:log2(n) rows only (default: every dtype, 2^1-2^15)
"""
import argparse, importlib, json, os, sys

import torch

sys.path.insert(0, "bench")
from _common import time_cuda

parser = argparse.ArgumentParser()
parser.add_argument("old")
parser.add_argument("new")
parser.add_argument("--rows", default="", help="comma-separated dtype:log2n, e.g. float64:15,float32:16")
args = parser.parse_args()
mods = []
for p in (args.old, args.new):
    sys.path.insert(0, p)
    for k in [k for k in sys.modules if k.startswith("ironkernels")]:
        del sys.modules[k]
    mods.append(importlib.import_module("ironkernels"))
    sys.path.remove(p)
if args.rows:
    cases = [(getattr(torch, d), int(b)) for d, b in (r.split(":") for r in args.rows.split(","))]
else:
    cases = [(dt, b) for dt in (torch.float32, torch.float16, torch.bfloat16, torch.float64) for b in range(1, 16)
             if not (dt == torch.float64 and b == 15)]
rows = []
for dt, log_n in cases:
    n = 1 << log_n
    es = torch.empty((), dtype=dt).element_size()
    shape = ((256 << 20) // (es * n), n)
    if dt.is_floating_point or dt.is_complex:
        x = torch.randn(shape, device="cuda", dtype=dt)
    else:
        x = torch.randint(-1000, 1000, shape, device="cuda", dtype=dt)
    out = torch.empty_like(x)
    t = {0: [], 1: [], "clone": []}
    for rnd in range(4):
        order = [0, 1, "clone"] if rnd % 2 == 0 else ["clone", 1, 0]
        for i in order:
            fn = (lambda: x.clone()) if i == "clone" else (lambda m=mods[i]: m.fwt(x, out=out))
            t[i].append(time_cuda(torch, fn, reps=15)["median_ms"])
    old, new, clone = min(t[0]), min(t[1]), min(t["clone"])
    print(f"{str(dt):15s} 2^{log_n:2d} old {old*1e3:7.1f} new {new*1e3:7.1f} new/old {new/old:6.3f}"
          f"  over clone: old {old/clone:.3f} new {new/clone:.3f}", flush=True)
    rows.append({"dtype": str(dt), "log2n": log_n, "old_ms": old, "new_ms": new, "ratio": new / old,
                 "clone_ms": clone, "old_over_clone": old / clone, "new_over_clone": new / clone})
json.dump(rows, open(os.environ.get("OUT", ".") + "/oldnew.json", "w"), indent=1)
