"""A few gemm calls per (n, moduli, scaling) for Nsight Systems / Compute, with the phase times of
report=True, e.g.

    nsys profile --stats=true python bench/profile_gemm.py 8192:16:accurate 16384:16:fast
"""
import sys

import torch

import ironkernels
from ironkernels import Contract

for spec in sys.argv[1:] or ["4096:16:accurate"]:
    n, moduli, scaling = spec.split(":")
    n = int(n)
    a = torch.randn(n, n, dtype=torch.float64, device="cuda")
    b = torch.randn(n, n, dtype=torch.float64, device="cuda")
    contract = Contract(int(moduli), scaling)
    ironkernels.gemm(a, b, contract=contract)  # plan, cuBLAS heuristics, workspace
    _, rep = ironkernels.gemm(a, b, contract=contract, report=True)
    print(spec, {k: round(v, 3) if isinstance(v, float) else v for k, v in rep.items() if k != "moduli_set"})
torch.cuda.synchronize()
