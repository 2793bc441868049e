"""FWT on the GPU past the contiguous rows of N <= 2^15: long rows (passes), strided axes, complex
and integer dtypes, the sequency and dyadic orders, N = m·2^k, per ../BENCHMARKS protocol (see
bench/README.md).

Every case times ironkernels against torch.clone of the same tensor (the copy ceiling) and against
the case it is judged by: long rows against a plain PyTorch FWT (log2 N butterfly stages on
reshapes) and the original experiments' float32 batch-128 rows; a strided axis against the
contiguous rows of the same size; complex against float of the same bytes; integers against the
float of their width; an order against the natural order; m·2^k against rows of the power of two
nearest it (tensors of the same bytes). Medians of 15 timed calls (CUDA events, calls back to back, after >= 25 ms of
warm-up), over two rounds in rotated order; the row keeps the faster round of each. Outputs are
checked on sampled lines against a float64 (exact integer) reference before timing.

    python bench/bench_fwt_layouts.py [--out bench/results/fwt-h200-layouts.json] [--mb 256]
                                      [--sections long,original,axis,complex,integer,order,factor]
                                      [--only "rows 2^16,axis 1"]
"""
from __future__ import annotations

import argparse
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(__file__))
import ironkernels  # noqa: E402
from ironkernels.reference import fwt_reference  # noqa: E402
from _common import gpu_hardware, time_cuda, write_result  # noqa: E402

DT = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16, "float64": torch.float64,
      "complex64": torch.complex64, "complex128": torch.complex128, "int32": torch.int32, "int64": torch.int64}


def torch_fwt(x: torch.Tensor) -> torch.Tensor:
    """The plain PyTorch FWT along the last axis: one (add, subtract) stage per bit on reshapes."""
    n = x.shape[-1]
    y, h = x, 1
    while h < n:
        y = y.reshape(-1, n // (2 * h), 2, h)
        y = torch.stack((y[:, :, 0] + y[:, :, 1], y[:, :, 0] - y[:, :, 1]), dim=2)
        h *= 2
    return y.reshape(x.shape)


def make(dtype: str, shape) -> torch.Tensor:
    if dtype.startswith("int"):
        return torch.randint(-1000, 1000, shape, device="cuda", dtype=DT[dtype])
    return torch.randn(shape, device="cuda", dtype=torch.complex64 if dtype == "complex128" else torch.float32).to(DT[dtype])


def checked(x: torch.Tensor, axis: int, y: torch.Tensor) -> float:
    """Max error on 4 sampled lines against the reference, relative to the largest reference value."""
    xm, ym = torch.movedim(x, axis, -1), torch.movedim(y, axis, -1)
    flat_x, flat_y = xm.reshape(-1, xm.shape[-1]), ym.reshape(-1, ym.shape[-1])
    idx = torch.linspace(0, flat_x.shape[0] - 1, 4, device=x.device).long()
    sx, sy = flat_x[idx].cpu(), flat_y[idx].cpu()
    if x.dtype in (torch.float16, torch.bfloat16):
        sx, sy = sx.float(), sy.float()
    ref = fwt_reference(sx.numpy())
    got = sy.numpy()
    if x.dtype in (torch.int32, torch.int64):
        return 0.0 if np.array_equal(got, ref) else float("inf")
    return float(np.max(np.abs(got - ref)) / max(np.max(np.abs(ref)), 1e-300))


def checked_on_cpu(x: torch.Tensor, axis: int, y: torch.Tensor, kwargs: dict) -> float:
    """As `checked`, against the CPU transform in float64 (integers exactly) with the same options."""
    xm, ym = torch.movedim(x, axis, -1), torch.movedim(y, axis, -1)
    flat_x, flat_y = xm.reshape(-1, xm.shape[-1]), ym.reshape(-1, ym.shape[-1])
    idx = torch.linspace(0, flat_x.shape[0] - 1, 4, device=x.device).long()
    sx, sy = flat_x[idx].cpu(), flat_y[idx].cpu()
    integer = x.dtype in (torch.int32, torch.int64)
    ref = ironkernels.fwt(sx.numpy() if integer else sx.double().numpy(), **kwargs)
    got = sy.numpy() if integer else sy.double().numpy()
    if integer:
        return 0.0 if np.array_equal(got, ref) else float("inf")
    return float(np.max(np.abs(got - ref)) / max(np.max(np.abs(ref)), 1e-300))


def time_group(label: str, impls: dict, nbytes: int) -> list:
    """Rows of one case: each implementation's best-round median, two rounds in rotated order."""
    best = {}
    names = list(impls)
    for rnd in range(2):
        order = names[rnd % len(names):] + names[:rnd % len(names)]
        for name in order:
            ms = time_cuda(torch, impls[name], reps=15)["median_ms"]
            best[name] = min(best.get(name, math.inf), ms)
    return [{"case": label, "impl": k, "median_ms": v, "bytes": nbytes, "gbps": 2 * nbytes / (v * 1e6)}
            for k, v in best.items()]


ONLY: list = []  # --only: label substrings to run (all when empty)


def selected(label: str) -> bool:
    return not ONLY or any(part in label for part in ONLY)


def run_case(label, x, axis=-1, extra=None, **kwargs):
    """ours, clone, and the named comparison implementations (`extra`: name -> fn); `kwargs` go to
    fwt (an order)."""
    if not selected(label):
        return []
    out = torch.empty_like(x)
    ironkernels.fwt(x, axis=axis, out=out, **kwargs)
    n = x.shape[axis]
    err = checked(x, axis, out) if not kwargs and n & (n - 1) == 0 else checked_on_cpu(x, axis, out, kwargs)
    impls = {"ironkernels": lambda: ironkernels.fwt(x, axis=axis, out=out, **kwargs), "clone": lambda: x.clone()}
    impls.update(extra or {})
    rows = time_group(label, impls, x.numel() * x.element_size())
    by = {r["impl"]: r["median_ms"] for r in rows}
    for r in rows:
        r.update({"dtype": str(x.dtype).replace("torch.", ""), "shape": list(x.shape), "axis": axis, "rel_err": err})
    ratios = "  ".join(f"ik/{k}={by['ironkernels'] / by[k]:.3f}" for k in by if k != "ironkernels")
    print(f"{label:34s} {by['ironkernels'] * 1e3:8.1f} us  err {err:.1e}  {ratios}", flush=True)
    return rows


def rows_for(mb: int, itemsize: int, n: int) -> int:
    return max(1, math.ceil((mb << 20) / (n * itemsize)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "fwt-h200-layouts.json"))
    ap.add_argument("--mb", type=int, default=256)
    ap.add_argument("--sections", default="long,original,axis,complex,integer")
    ap.add_argument("--only", default="", help="comma-separated substrings: run only the cases whose label has one")
    args = ap.parse_args()
    sections = args.sections.split(",")
    ONLY[:] = [part for part in args.only.split(",") if part]
    torch.manual_seed(0)
    rows = []
    if "long" in sections:
        for dtype, logs in [("float32", range(16, 25)), ("float16", (16, 20, 24)), ("bfloat16", (16, 20, 24)),
                            ("float64", (15, 16, 20, 24))]:
            size = DT[dtype].itemsize
            for log_n in logs:
                x = make(dtype, (rows_for(args.mb, size, 1 << log_n), 1 << log_n))
                extra = {"torch_fwt": lambda x=x: torch_fwt(x)} if dtype == "float32" and log_n in (16, 20, 24) else None
                rows += run_case(f"{dtype} rows 2^{log_n}", x, extra=extra)
                del x
    if "original" in sections:  # the experiments' contract: float32, batch 128
        for log_n in (15, 16, 20):
            x = make("float32", (128, 1 << log_n))
            rows += run_case(f"float32 128 x 2^{log_n}", x, extra={"torch_fwt": lambda x=x: torch_fwt(x)})
    if "axis" in sections:  # (B, N, inner) along axis 1 against (B·inner, N) rows
        for dtype, log_n, inner in [("float32", 4, 8), ("float32", 6, 64), ("float32", 9, 64), ("float32", 10, 64),
                                    ("float32", 11, 64), ("float32", 12, 64), ("float32", 13, 64),
                                    ("float32", 6, 4096), ("float32", 9, 4096), ("float32", 12, 4096),
                                    ("float32", 13, 4096), ("float32", 10, 8), ("float32", 12, 8),
                                    ("float64", 11, 64), ("float64", 12, 64), ("float64", 13, 8)]:
            n = 1 << log_n
            b = rows_for(args.mb, DT[dtype].itemsize * inner, n)
            x = make(dtype, (b, n, inner))
            rows_x = make(dtype, (b * inner, n))
            rows += run_case(f"{dtype} ({b}, 2^{log_n}, {inner}) axis 1", x, axis=1,
                             extra={"rows": lambda r=rows_x: ironkernels.fwt(r)})
            del x, rows_x
    if "complex" in sections:  # complex (B, N) against float (B, 2N) of the same bytes
        for dtype, real, logs in [("complex64", "float32", (4, 10, 13, 14, 15, 16, 20)), ("complex128", "float64", (10, 13, 15))]:
            size = DT[dtype].itemsize
            for log_n in logs:
                x = make(dtype, (rows_for(args.mb, size, 1 << log_n), 1 << log_n))
                f = make(real, (x.shape[0], 2 << log_n))
                rows += run_case(f"{dtype} rows 2^{log_n}", x, extra={"float_same_bytes": lambda f=f: ironkernels.fwt(f)})
                del x, f
    if "integer" in sections:  # integers against the float of their width, same shape
        for dtype, real, logs in [("int32", "float32", (4, 10, 14, 15, 16, 20)), ("int64", "float64", (10, 14, 16))]:
            size = DT[dtype].itemsize
            for log_n in logs:
                x = make(dtype, (rows_for(args.mb, size, 1 << log_n), 1 << log_n))
                f = make(real, tuple(x.shape))
                rows += run_case(f"{dtype} rows 2^{log_n}", x, extra={"float_same_shape": lambda f=f: ironkernels.fwt(f)})
                del x, f
    if "order" in sections:  # sequency and dyadic against the natural order, same rows
        # Rows the row kernels order in their store (float32 to 2^14, float64 to 2^13, complex64 to
        # 2^13, 16-bit to 2^11), and longer ones ordered by a gather before the transform.
        for dtype, log_n in [("float32", 4), ("float32", 10), ("float32", 13), ("float32", 14), ("float64", 10),
                             ("complex64", 10), ("float16", 11), ("int32", 12), ("float32", 15), ("float32", 16),
                             ("float32", 20), ("complex64", 15), ("float64", 20)]:
            x = make(dtype, (rows_for(args.mb, DT[dtype].itemsize, 1 << log_n), 1 << log_n))
            natural_out = torch.empty_like(x)
            for order in ("sequency", "dyadic"):
                rows += run_case(f"{dtype} rows 2^{log_n} {order}", x, order=order,
                                 extra={"natural": lambda x=x, o=natural_out: ironkernels.fwt(x, out=o)})
            # In place: one pass where the store orders, else the gather into a workspace, then the
            # transform back into x.
            label = f"{dtype} rows 2^{log_n} sequency in place"
            if selected(label):
                in_place = lambda x=x: ironkernels.fwt(x, order="sequency", out=x)  # noqa: E731
                rows += [dict(r, case=label) for r in time_group(
                    "", {"ironkernels": in_place, "natural": lambda x=x: ironkernels.fwt(x, out=x)},
                    x.numel() * DT[dtype].itemsize)]
                print(f"{label}: ik/natural={rows[-2]['median_ms'] / rows[-1]['median_ms']:.3f}", flush=True)
            del x, natural_out
    if "factor" in sections:  # m·2^k against rows of the nearest power of two, same bytes
        for m in (12, 20, 28):
            for k in (0, 4, 10, 14, 16, 20):
                n = m << k
                x = make("float32", (rows_for(args.mb, 4, n), n))
                p = make("float32", (rows_for(args.mb, 4, 1 << (k + round(math.log2(m)))), 1 << (k + round(math.log2(m)))))
                po = torch.empty_like(p)
                rows += run_case(f"float32 rows {m}·2^{k}", x,
                                 extra={f"pow2_2^{k + round(math.log2(m))}": lambda p=p, o=po: ironkernels.fwt(p, out=o)})
                del x, p, po
    write_result(args.out, gpu_hardware(torch), rows, {"sections": sections})


if __name__ == "__main__":
    main()
