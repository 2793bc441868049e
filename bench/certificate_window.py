"""Where the certificate's 7-bit window of lower-bound magnitudes should start (docs/gemm.md).

Each line's magnitudes are rounded down to integers of w = 7 bits in units of 2^(E - s - w), E the
line's exponent bound, saturating at 2^w - 1; the INT8 product of both sides' gives a lower bound L of
|A||B|. The certificate needs, per element, bits beyond log2(1/rtol) for the row term
2^E·‖b_j‖₁ / L_ij: the looser L, the more bits (moduli); L = 0 cannot certify at all. For each
offset rule s this prints the largest such need over all elements ("inf": some L is 0) beside the
ideal one with the exact |A||B|, on (u - 0.5)·exp(φ·g) inputs:

    python bench/certificate_window.py [--m 128] [--k 256,4096] [--seed 2]

Rules: s = 0, 2, 3 (fixed), "rms+1" (one bit above the line's RMS, from its 2-norm: what the library
does) and "mean+3" (three bits above its mean magnitude, which needs the 1-norm before the window).
With --groups G, cheaper products instead, all on the rms+1 window: Λ over groups of G positions
(each group's smallest magnitude of A against B's mean, a product over k/G) and over every G-th
position only (terms are nonnegative: any subset is a lower bound).
"""
from __future__ import annotations

import argparse

import numpy as np


def family(rng, shape, phi):
    return (rng.random(shape) - 0.5) * np.exp(phi * rng.standard_normal(shape))


def needs(a, b, ga, gb, w=7, groups=0, subset=False):
    """log2 of max over elements of 2^E_i·‖b_j‖₁ / L_ij (L from windows starting at 2^ga, 2^gb)."""
    top = 2**w - 1
    la = np.minimum(np.floor(np.abs(a) * 2.0 ** (w - ga)[:, None]), top)
    lb = np.minimum(np.floor(np.abs(b) * 2.0 ** (w - gb)[None, :]), top)
    if groups and subset:
        product = la[:, ::groups] @ lb[::groups, :]
    elif groups:
        m, k = la.shape
        product = la.reshape(m, k // groups, groups).min(axis=2) @ (
            np.floor(lb.reshape(k // groups, groups, -1).sum(axis=1) / groups) * groups)
    else:
        product = la @ lb
    lower = product * (2.0 ** (ga - w))[:, None] * (2.0 ** (gb - w))[None, :]
    ea = np.ceil(np.log2(np.abs(a).max(axis=1)))
    term = (2.0**ea)[:, None] * np.abs(b).sum(axis=0)[None, :]
    with np.errstate(divide="ignore"):
        return float(np.log2(np.max(term / lower))), float(np.log2(np.max(term / (np.abs(a) @ np.abs(b)))))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--m", type=int, default=128)
    p.add_argument("--k", default="256,4096")
    p.add_argument("--seed", type=int, default=2)
    p.add_argument("--groups", type=int, default=0, help="also the cheaper products over groups of G positions")
    args = p.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"m = n = {args.m}; bits a row needs beyond log2(1/rtol), max over elements (ideal: exact |A||B|)")
    for k in map(int, args.k.split(",")):
        for phi in (0.5, 1.0, 2.0, 3.0, 4.0):
            a, b = family(rng, (args.m, k), phi), family(rng, (k, args.m), phi)
            ea, eb = np.ceil(np.log2(np.abs(a).max(axis=1))), np.ceil(np.log2(np.abs(b).max(axis=0)))
            rms_a = np.ceil(np.log2(np.sqrt((a * a).mean(axis=1)))) + 1
            rms_b = np.ceil(np.log2(np.sqrt((b * b).mean(axis=0)))) + 1
            mean_a = np.ceil(np.log2(np.abs(a).mean(axis=1))) + 3
            mean_b = np.ceil(np.log2(np.abs(b).mean(axis=0))) + 3
            rules = {"s=0": (ea, eb), "s=2": (ea - 2, eb - 2), "s=3": (ea - 3, eb - 3),
                     "rms+1": (np.minimum(ea, rms_a), np.minimum(eb, rms_b)),
                     "mean+3": (np.minimum(ea, mean_a), np.minimum(eb, mean_b))}
            cells, ideal = [], None
            for name, (ga, gb) in rules.items():
                need, ideal = needs(a, b, ga, gb)
                cells.append(f"{name} {need:5.1f}")
            if args.groups:
                ga, gb = rules["rms+1"]
                cells.append(f"groups {needs(a, b, ga, gb, groups=args.groups)[0]:5.1f}")
                cells.append(f"every {args.groups}th {needs(a, b, ga, gb, groups=args.groups, subset=True)[0]:5.1f}")
            print(f"k = {k:5d}, phi = {phi:3.1f}: ideal {ideal:5.1f} | " + " | ".join(cells))


if __name__ == "__main__":
    main()
