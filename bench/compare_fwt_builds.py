"""The row kernels of two builds of ironkernels on the same tensors (256 MB), best of four rotated
rounds: a change's no-regression check (bench/DECISIONS.md, fwt).

    python bench/compare_fwt_builds.py <old build's site dir> <new build's site dir>   # -> $OUT/oldnew.json
"""
import sys, importlib, json, os, torch
sys.path.insert(0, "bench")
from _common import time_cuda
paths = sys.argv[1:3]
mods = []
for p in paths:
    sys.path.insert(0, p)
    for k in [k for k in sys.modules if k.startswith("ironkernels")]:
        del sys.modules[k]
    mods.append(importlib.import_module("ironkernels"))
    sys.path.remove(p)
rows = []
for dt, es in [(torch.float32, 4), (torch.float16, 2), (torch.bfloat16, 2), (torch.float64, 8)]:
    for log_n in range(1, 16):
        n = 1 << log_n
        if dt == torch.float64 and log_n == 15:
            continue
        x = torch.randn((256 << 20) // (es * n), n, device="cuda").to(dt)
        out = torch.empty_like(x)
        t = {0: [], 1: []}
        for rnd in range(4):
            order = [0, 1] if rnd % 2 == 0 else [1, 0]
            for i in order:
                t[i].append(time_cuda(torch, lambda m=mods[i]: m.fwt(x, out=out), reps=15)["median_ms"])
        old, new = min(t[0]), min(t[1])
        print(f"{str(dt):15s} 2^{log_n:2d} old {old*1e3:7.1f} new {new*1e3:7.1f} new/old {new/old:6.3f}", flush=True)
        rows.append({"dtype": str(dt), "log2n": log_n, "old_ms": old, "new_ms": new, "ratio": new / old})
json.dump(rows, open(os.environ.get("OUT", ".") + "/oldnew.json", "w"), indent=1)
