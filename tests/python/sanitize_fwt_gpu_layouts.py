"""Every CUDA FWT path past the contiguous rows of N <= 2^15 once, on small inputs, for compute-sanitizer:

    compute-sanitizer --tool memcheck  python tests/python/sanitize_fwt_gpu_layouts.py
    compute-sanitizer --tool racecheck python tests/python/sanitize_fwt_gpu_layouts.py [CASE ...]

Long rows (pairs of CTAs, cluster and two-pass splits, the outer column pass), strided axes (each
tile shape, the column pass on one CTA and on clusters), complex and integer dtypes, the sequency
and dyadic orders (in the row kernels' store and as a gather), and N = m·2^k (packed rows, the
factor tile, the column pass, strided blocks), out of place and in place, each against the CPU
transform in float64 (exact for integers); CASE numbers (positions in CASES) run only those. Device
arrays from whichever framework is here (device_arrays); exits 1 on a wrong result."""
import sys

import numpy as np

import ironkernels
from device_arrays import get, pick  # beside this script
from fwt_layout_cases import random_array

CASES = [  # (shape, dtype, axis, order)
    ((2, 1 << 16), "float32", -1, "natural"), ((1, 1 << 18), "float32", -1, "natural"),
    ((1, 1 << 20), "float32", -1, "natural"), ((2, 1 << 15), "float64", -1, "natural"),
    ((1, 1 << 17), "float64", -1, "natural"), ((2, 1 << 16), "float16", -1, "natural"),
    ((2, 1 << 16), "complex64", -1, "natural"), ((2, 1 << 14), "complex128", -1, "natural"),
    ((2, 1 << 17), "int32", -1, "natural"), ((1, 1 << 16), "int64", -1, "natural"),
    ((3, 1 << 10, 64), "float32", 1, "natural"), ((2, 1 << 12, 8), "float32", 1, "natural"),
    ((2, 1 << 13, 8), "float64", 1, "natural"), ((64, 1 << 6, 16), "float32", 1, "natural"),
    ((2, 1 << 9, 64), "int64", 1, "natural"), ((1 << 10, 5), "complex64", 0, "natural"),
    ((4, 1 << 10), "float32", -1, "sequency"), ((2, 1 << 16), "float32", -1, "dyadic"),
    ((2, 1 << 8, 16), "float64", 1, "sequency"), ((3, 1 << 11), "complex128", -1, "sequency"),
    ((2, 1 << 12), "float16", -1, "dyadic"),
    ((3, 12), "float32", -1, "natural"), ((1500, 20 << 1), "float32", -1, "natural"),
    ((5, 12 << 10), "float32", -1, "natural"), ((2, 28 << 9), "float64", -1, "natural"),
    ((3, 20 << 11), "float16", -1, "natural"), ((2, 12 << 16), "float32", -1, "natural"),
    ((2, 28 << 15), "float64", -1, "natural"), ((1, 20 << 17), "int32", -1, "natural"),
    ((3, 12 << 4, 5), "float32", 1, "natural"), ((40 << 2, 3), "int64", 0, "natural"),
    ((2, 1 << 15), "complex64", -1, "natural"), ((2, 1 << 11, 64), "float32", 1, "natural"),
    ((1, 1 << 12, 16), "int32", 1, "natural"), ((1, 1 << 13, 4), "float64", 1, "natural"),
    ((1, 1 << 12, 32), "float64", 1, "natural"), ((1, 1 << 13, 64), "float32", 1, "natural"),
    ((37, 1 << 3), "float32", -1, "sequency"), ((37, 1 << 9), "int32", -1, "dyadic"),
    ((3, 1 << 14), "float32", -1, "sequency"), ((3, 1 << 13), "float64", -1, "dyadic"),
    ((7, 1 << 11), "float16", -1, "sequency"), ((5, 1 << 12), "complex64", -1, "sequency"),
]
TOL = {"float32": 1e-5, "float64": 1e-12, "float16": 3e-3, "complex64": 1e-5, "complex128": 1e-12}

rng = np.random.default_rng(3)
dev = pick()
bad = 0
chosen = [CASES[int(i)] for i in sys.argv[1:]] or CASES
for shape, dtype, axis, order in chosen:
    x = random_array(rng, shape, dtype)
    wide = x if dtype.startswith("int") else x.astype(np.complex128 if dtype.startswith("complex") else np.float64)
    ref = ironkernels.fwt(wide, axis=axis, order=order)
    xd = dev.put(x)
    out = dev.zeros(x.shape, x.dtype)
    ironkernels.fwt(xd, axis=axis, order=order, out=out)
    ironkernels.fwt(xd, axis=axis, order=order, out=xd)  # in place
    for got in (out, xd):
        g = get(got)
        if dtype.startswith("int"):
            ok = np.array_equal(g, ref)
            err = 0.0 if ok else 1.0
        else:
            g = g.astype(ref.dtype)
            err = np.linalg.norm(g - ref) / np.linalg.norm(ref)
            ok = np.isfinite(g).all() and err <= TOL[dtype]
        if not ok:
            print(f"WRONG {dtype} {shape} axis={axis} order={order}: rel err {err:.3g}")
            bad += 1
dev.synchronize()
print("sanitize_fwt_gpu_layouts:", "FAILED" if bad else f"all {len(chosen)} cases correct")
sys.exit(1 if bad else 0)
