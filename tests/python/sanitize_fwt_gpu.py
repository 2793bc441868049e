"""Every CUDA FWT kernel configuration once, on small inputs, for compute-sanitizer:

    compute-sanitizer --tool memcheck  python tests/python/sanitize_fwt_gpu.py
    compute-sanitizer --tool racecheck python tests/python/sanitize_fwt_gpu.py

Covers each dtype, N = 2^0 … 2^15 (every warp count and number of corner turns), ragged batches,
the misaligned fallback, in place, and batches of 2^13–2^15-element rows large enough that the
blocks of a resident grid loop over several tiles (refilling their shared-memory stages). Device
arrays from whichever framework is here (device_arrays); exits 1 on a wrong result."""
import sys

import numpy as np

import ironkernels
from device_arrays import get, pick  # beside this script
from ironkernels.reference import fwt_reference

TOL = {"float32": 1e-5, "float64": 1e-12, "float16": 3e-3}
dev = pick()
bad = 0
rng = np.random.default_rng(1)
for dtype in TOL:
    for log_n in range(16):
        n = 1 << log_n
        # Enough rows that the resident grids (off Hopper, 16-bit from 2^13) loop over several tiles
        # and that two split-row blocks (float32 2^15, float64 2^14; on Hopper 16-bit 2^13, 2^15) share each SM.
        many = {13: 3001, 14: 600, 15: 300}.get(log_n)
        shapes = ((3, 0), (2, 1)) + (((many, 0),) if many else ())
        for rows, offset in shapes:  # offset 1: misaligned, takes the fallback kernel
            flat = rng.standard_normal(rows * n + offset).astype(dtype)
            x = dev.put(flat)[offset:].reshape(rows, n)
            out = dev.poisoned((rows, n), dtype)
            ironkernels.fwt(x, out=out)
            ironkernels.fwt(x, out=x)  # in place
            ref = fwt_reference(flat[offset:].reshape(rows, n).astype(np.float64))
            for got in (out, x):
                g = get(got).astype(np.float64)
                err = np.linalg.norm(g - ref) / np.linalg.norm(ref)
                if not np.isfinite(g).all() or err > TOL[dtype]:
                    print(f"WRONG {dtype} 2^{log_n} rows={rows} offset={offset}: rel err {err:.3g}")
                    bad += 1
dev.synchronize()
print("sanitize_fwt_gpu:", "FAILED" if bad else "all configurations correct")
sys.exit(1 if bad else 0)
