"""Where a gemm call's time goes: per (n, contract), the median of full calls against cublasDgemm
(cublasZgemm), the phase times of report=True (after a sustained series, at the clocks back-to-back
calls run at), the per-kernel CUDA times of two calls (torch.profiler) and how much of those calls'
time no kernel ran; a last field names the INT8 product engine (mma, wgmma or cublas; default: the
library's choice), a field "complex" makes the operands complex128 (ZGEMM). Also usable under Nsight
Compute, e.g.

    python bench/profile_gemm.py 4096:native 16384:16:accurate 16384:15:fast 8192:16:fast:mma 8192:native:complex
    ncu --clock-control none -k regex:'wgmma|residues' python bench/profile_gemm.py 4096:16:accurate --once
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
import ironkernels  # noqa: E402
from ironkernels import Contract  # noqa: E402
from _common import time_cuda  # noqa: E402


def median_ms(fn):
    return time_cuda(torch, fn, reps=10, warmup=2)["median_ms"]


once = "--once" in sys.argv
gen = torch.Generator(device="cuda").manual_seed(7)
for spec in [a for a in sys.argv[1:] if a != "--once"] or ["4096:native"]:
    n, *rest = spec.split(":")
    n = int(n)
    complex_operands = "complex" in rest
    rest = [f for f in rest if f != "complex"]
    engine = rest.pop() if rest[-1] in ("mma", "wgmma", "cublas") else "auto"
    contract = Contract.native() if rest == ["native"] else Contract(int(rest[0]), rest[1])
    real = lambda: (torch.rand(n, n, generator=gen, device="cuda", dtype=torch.float64) - 0.5) * torch.exp(  # noqa: E731
        0.5 * torch.randn(n, n, generator=gen, device="cuda", dtype=torch.float64))
    draw = (lambda: torch.complex(real(), real())) if complex_operands else real
    a, b = draw(), draw()
    out = torch.empty(n, n, dtype=a.dtype, device="cuda")
    call = lambda: ironkernels.gemm(a, b, contract=contract, out=out, engine=engine)  # noqa: E731
    call()  # plan, tune, workspace
    if once:
        torch.cuda.synchronize()
        continue
    ours, dgemm = median_ms(call), median_ms(lambda: torch.matmul(a, b, out=out))
    for _ in range(10):  # sustained, then the phases
        call()
    _, rep = ironkernels.gemm(a, b, contract=contract, out=out, report=True, engine=engine)
    phases = {k: round(v, 3) for k, v in rep.items() if k.endswith("_ms")}
    print(f"{spec}: {ours:.3f} ms, cuBLAS {dgemm:.3f} ms ({dgemm / ours:.2f}x), moduli {rep['moduli']}, "
          f"bits {rep['bits_a']}/{rep['bits_b']}, {rep['products']}, phases {phases}", flush=True)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(2):
            call()
        torch.cuda.synchronize()
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=16, max_name_column_width=60), flush=True)
    spans = sorted((e.time_range.start, e.time_range.end) for e in prof.events()
                   if e.device_type == torch.autograd.DeviceType.CUDA)
    busy, reach = 0, spans[0][0] if spans else 0
    for start, end in spans:  # the union of the kernels' intervals (us)
        busy += max(0, end - max(start, reach))
        reach = max(reach, end)
    if spans:
        print(f"two calls: {(reach - spans[0][0]) / 1000:.3f} ms from the first kernel's start to the last's end, "
              f"{busy / 1000:.3f} ms with a kernel running", flush=True)
    del a, b, out
    torch.cuda.empty_cache()
