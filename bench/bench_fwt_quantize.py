"""fwt_quantize on the GPU against its bytes floor and an unfused pipeline, per ../BENCHMARKS protocol.

Each case: x (rows, N) of a 16- or 32-bit dtype, a rotation (the row, or blocks of `block`), a format
and a scale group; rows of 2^16 and 2^20, past the single pass, report the two-pass path. Timed, in
rotated order over --rounds rounds (median of 15 calls after >= 25 ms of warm-up, CUDA events, the
full Python call):
  - ours: ironkernels.fwt_quantize;
  - unfused: ironkernels.fwt (the fastest transform there is on this GPU) followed by PyTorch's
    amax / scale / round / cast (and nibble packing for the 4-bit formats) — the pipeline a user
    writes today; for the formats PyTorch cannot cast (int4, mxfp4, nvfp4) the rounding is a
    representative sequence of elementwise ops of the same reads and writes, not the exact codes;
  - clone: torch.clone of x, giving the copy bandwidth of this run.
The bytes floor is one read of x and one write of q and its scales at that bandwidth. Ours is checked
first against the host path on sampled rows (codes and scales bit for bit where the rotation is a
power of two up to 2^15; past it, the two-pass path quantises the device's own rotation, whose
rounding may differ from the host's, so exact_vs_host may be False there by design). Rows report ours / floor and unfused / ours; nvfp4 rows also ours with the tensor's amax
given (global_amax, one read of x) over the floor. Named cases: "deepseek" (bf16 tokens ×
heads × 128, 128-point rotation, FP8 E4M3, one scale per 128) and "quarot" (Llama-3-8B rows of 4096
and 14336 = 28·512, INT4 with one scale per 128).

    python bench/bench_fwt_quantize.py [--out bench/results/fwt-quantize-h200.json] [--mb 256] [--rounds 2]

With IRONKERNELS_DEV_OVERRIDES=1 IRONKERNELS_FWT_QUANTIZE_TWO_PASS=1 in the environment, ours is the
two-pass path (the rotation, then the quantisation): the alternative the single pass is measured against.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(__file__))
import ironkernels  # noqa: E402
from _common import gpu_hardware, time_cuda, write_result  # noqa: E402
from ironkernels._fwt_quantize import _FIXED_GROUP, plan  # noqa: E402

PATH = ("two-pass (forced)" if os.environ.get("IRONKERNELS_DEV_OVERRIDES") == "1"
        and os.environ.get("IRONKERNELS_FWT_QUANTIZE_TWO_PASS") == "1" else "as dispatched")
DT = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
QMAX = {"float8_e4m3fn": 448.0, "float8_e5m2": 57344.0, "int8": 127.0, "int4": 7.0, "mxfp4": 6.0, "nvfp4": 6.0}


def cases(mb: int):
    """(name, dtype, shape, block, to, group) of the table."""
    out = []
    for dtype in ("bfloat16", "float16", "float32"):
        for log_n in (7, 10, 12, 15):
            for to in ("float8_e4m3fn", "int8", "int4", "mxfp4", "nvfp4"):
                out.append((f"rows 2^{log_n}", dtype, (None, 1 << log_n), None, to, None if to in _FIXED_GROUP else 128))
        for block in (16, 32, 128, 256):
            for to in ("float8_e4m3fn", "mxfp4", "nvfp4"):
                if to == "mxfp4" and block < 32:
                    continue
                out.append((f"blocks of {block}", dtype, (None, 4096), block, to, None if to in _FIXED_GROUP else block))
        for log_n in (16, 20):  # past the one-pass kernel's 2^15: the transform, then the quantiser
            for to in ("float8_e4m3fn", "int4", "nvfp4"):
                out.append((f"rows 2^{log_n} (two passes)", dtype, (None, 1 << log_n), None, to,
                            None if to in _FIXED_GROUP else 128))
    out.append(("deepseek", "bfloat16", (None, 64, 128), 128, "float8_e4m3fn", 128))
    out.append(("quarot 4096", "float16", (None, 4096), None, "int4", 128))
    out.append(("quarot 14336", "float16", (None, 14336), None, "int4", 128))
    return out


def sized(shape, dtype: str, mb: int):
    """shape with its leading None as many rows as make the tensor about `mb` MB."""
    row = int(np.prod([d for d in shape if d is not None])) * torch.finfo(DT[dtype]).bits // 8
    return (max(1, (mb << 20) // row),) + tuple(shape[1:])


def unfused(x: torch.Tensor, block, to: str, group: int):
    """ironkernels.fwt then PyTorch's ops: the pipeline without a fused kernel."""
    r = ironkernels.fwt(x, block=block, normalized=True)
    g = r.float().reshape(-1, group)
    amax = g.abs().amax(dim=1, keepdim=True)
    scale = torch.where(amax > 0, amax / QMAX[to], torch.ones_like(amax))
    s = g / scale
    if to in ("float8_e4m3fn", "float8_e5m2"):
        q = s.to(getattr(torch, to)).view(torch.uint8)
    elif to == "int8":
        q = s.round().clamp_(-127, 127).to(torch.int8)
    else:  # 4-bit: round and pack two per byte
        c = s.round().clamp_(-7, 7).to(torch.int8).reshape(-1, 2)
        q = (c[:, 0] & 0x0F) | (c[:, 1] << 4)
    return q, scale


def check(x: torch.Tensor, block, to: str, group) -> bool:
    """Ours against the host path on 8 sampled rows, bit for bit (an m·2^k rotation may round
    differently on the GPU: then False, reported)."""
    rows = x.reshape(-1, x.shape[-1])
    sample = rows[torch.linspace(0, rows.shape[0] - 1, 8, device=x.device).long()].contiguous()
    got = ironkernels.fwt_quantize(sample, to=to, block=block, group=group)
    want = ironkernels.fwt_quantize(sample.cpu(), to=to, block=block, group=group)
    flat = lambda r: [r[0]] + (list(r[1]) if isinstance(r[1], tuple) else [r[1]])  # noqa: E731
    return all(torch.equal(a.cpu(), b) for a, b in zip(flat(got), flat(want)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "fwt-quantize-h200.json"))
    ap.add_argument("--mb", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--only", default="", help="comma-separated substrings of case names to keep")
    ap.add_argument("--dtypes", default="", help="comma-separated input dtypes to keep")
    args = ap.parse_args()
    keep = [s for s in args.only.split(",") if s]
    dtypes = [s for s in args.dtypes.split(",") if s]
    rows = []
    for name, dtype, shape, block, to, group in cases(args.mb):
        if keep and not any(k in name for k in keep) or dtypes and dtype not in dtypes:
            continue
        shape = sized(shape, dtype, args.mb)
        x = torch.randn(shape, device="cuda", dtype=torch.float32).to(DT[dtype])
        p = plan(shape, to, block, group, None, "row-major")
        g = p.group
        exact = check(x, block, to, group)
        q_bytes = int(np.prod(p.q_shape))
        s_bytes = int(np.prod(p.s_shape)) * (1 if to in _FIXED_GROUP else 4)
        impls = {
            "ironkernels": lambda: ironkernels.fwt_quantize(x, to=to, block=block, group=group),
            "unfused": lambda: unfused(x, block, to, g),
            "clone": lambda: torch.clone(x),
        }
        if to == "nvfp4":  # with the tensor's amax given (calibrated), as inference runs it: one read of x
            amax = float(ironkernels.fwt_quantize(x, to=to, block=block)[1][1][0]) * 2688.0
            impls["ironkernels-global-amax"] = lambda: ironkernels.fwt_quantize(x, to=to, block=block, global_amax=amax)
        best = {}
        order = list(impls)
        for r in range(args.rounds):
            for impl in order[r % len(order):] + order[:r % len(order)]:
                t = time_cuda(torch, impls[impl], reps=15)
                if impl not in best or t["median_ms"] < best[impl]["median_ms"]:
                    best[impl] = t
        bandwidth = 2 * x.numel() * x.element_size() / (best["clone"]["median_ms"] * 1e-3)
        floor_ms = (x.numel() * x.element_size() + q_bytes + s_bytes) / bandwidth * 1e3
        row = {"case": name, "path": PATH, "dtype": dtype, "shape": list(shape), "block": block, "to": to, "group": g,
               "exact_vs_host": exact, "floor_ms": floor_ms, "copy_gbps": bandwidth / 1e9,
               **{f"{k}_ms": v["median_ms"] for k, v in best.items()},
               "ours_over_floor": best["ironkernels"]["median_ms"] / floor_ms,
               "unfused_over_ours": best["unfused"]["median_ms"] / best["ironkernels"]["median_ms"]}
        if "ironkernels-global-amax" in best:
            row["global_amax_over_floor"] = best["ironkernels-global-amax"]["median_ms"] / floor_ms
        rows.append(row)
        print(f"{name:<14} {dtype:<9} {to:<14} g{g:<6} ours {row['ironkernels_ms']:8.3f} ms  /floor "
              f"{row['ours_over_floor']:5.2f}  unfused/ours {row['unfused_over_ours']:5.2f}  exact {exact}", flush=True)
        del x
        torch.cuda.empty_cache()
    write_result(args.out, gpu_hardware(torch), rows)


if __name__ == "__main__":
    main()
