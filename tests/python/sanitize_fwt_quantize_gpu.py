"""Every CUDA kernel of the rotation options and of fwt_quantize once, on small inputs, for
compute-sanitizer:

    compute-sanitizer --tool memcheck  python tests/python/sanitize_fwt_quantize_gpu.py
    compute-sanitizer --tool racecheck python tests/python/sanitize_fwt_quantize_gpu.py

The single-pass kernel in each regime (rotations in registers, across lanes, through the corner turn
and the H_m stage; groups in a thread, across lanes and across warps; a last block partly filled;
nvfp4's two passes), each format and input dtype; the two-pass path (float64); fwt's signs pass and a
caller's H_m pass. Results against the host path; exits 1 on a difference."""
import sys

import numpy as np

import ironkernels as ik
from device_arrays import get, pick  # beside this script
from fwt_helpers import np_dtype
from test_fwt_rotations import paley_one

dev = pick()
rng = np.random.default_rng(3)
bad = 0
FORMATS = ("float8_e4m3fn", "float8_e5m2", "int8", "int4", "mxfp4", "nvfp4")
FIXED = {"mxfp4": 32, "nvfp4": 16}
SPANS = [(16, 16), (128, 8), (512, 512), (4096, 64), (8192, 8192), (1 << 15, 1 << 15), (16, 1 << 15),
         (12 * 64, 64), (28 * 512, 128), (12 * 1024, 1024)]


def flat(result):
    q, s = result
    return [get(q)] + ([get(s[0]), get(s[1])] if isinstance(s, tuple) else [get(s)])


for to in FORMATS:
    for dtype in ("float32", "bfloat16", "float16", "float64"):
        for rotation, group in SPANS if dtype != "float64" else SPANS[:3]:
            group = FIXED.get(to, group)
            n = max(rotation, group, 64)
            rows = 3 if n >= 4096 else 37
            x = (rng.standard_normal((rows, n)) * 3).astype(np_dtype(dtype))
            kw = dict(to=to, block=rotation if rotation < n else None, group=None if to in FIXED else group,
                      signs=7 if rotation % 3 == 0 else None)
            got, want = flat(ik.fwt_quantize(dev.put(x), **kw)), flat(ik.fwt_quantize(x, **kw))
            if dtype != "float64" and not all(np.array_equal(g.view(np.uint8), w.view(np.uint8))
                                              for g, w in zip(got, want)):
                print(f"WRONG fwt_quantize {to} {dtype} rotation {rotation} group {group}")
                bad += 1

h = paley_one(11)
for dtype in ("float32", "float16", "int32"):
    x = (rng.standard_normal((5, 12 * 64)) * 4).astype(np_dtype(dtype)) if dtype != "int32" else \
        rng.integers(-100, 100, (5, 12 * 64)).astype(np.int32)
    for kw in ({"signs": 3}, {"hadamard": h}, {"hadamard": h, "signs": 5, "block": 96}):
        got = get(ik.fwt(dev.put(x), **kw))
        want = ik.fwt(x, **kw)
        tol = 0 if dtype == "int32" else (1e-5 if dtype == "float32" else 2e-2) * np.abs(np.asarray(want, np.float64)).max()
        if np.abs(np.asarray(got, np.float64) - np.asarray(want, np.float64)).max() > tol:
            print(f"WRONG fwt {dtype} {sorted(kw)}")
            bad += 1
print("bad:", bad)
sys.exit(1 if bad else 0)
