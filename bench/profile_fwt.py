"""One FWT launch per (dtype, log2 N) for Nsight Compute, e.g.

    ncu --clock-control none -k regex:fwt_ --metrics <...> python bench/profile_fwt.py float16:12 float32:15
"""
import sys

import torch

import ironkernels

for spec in sys.argv[1:] or ["float32:12"]:
    name, log_n = spec.split(":")
    dt = getattr(torch, name)
    n = 1 << int(log_n)
    x = torch.randn((256 << 20) // (n * torch.tensor([], dtype=dt).element_size()), n, device="cuda").to(dt)
    ironkernels.fwt(x, out=x)
torch.cuda.synchronize()
