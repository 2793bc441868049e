"""`ironkernels demo`: the main job on built-in data, on the GPU when there is one, else on the CPU.
Each op runs, is checked against an independent float64 reference, and is timed."""
from __future__ import annotations

import os
import statistics
import time
from typing import Callable

import numpy as np

from . import _core
from .reference import bf16_bits_from_float, float_from_bf16_bits, fwt_reference, gemm_family

# Relative L2 error allowed against the float64 reference, per dtype (rounding of the inputs is
# in the reference too; what is left is the transform's own rounding).
FWT_TOLERANCE = {"float32": 1e-6, "float64": 1e-14, "float16": 2e-3, "bfloat16": 1.6e-2}


def _host_input(dtype: str, shape: tuple, rng: np.random.Generator):
    """(array to upload, its exact values in float64)."""
    f = rng.standard_normal(shape, dtype=np.float32)
    if dtype == "bfloat16":
        bits = bf16_bits_from_float(f)
        return bits, float_from_bf16_bits(bits).astype(np.float64)
    a = f.astype(dtype)
    return a, a.astype(np.float64)


def _to_float64(host: np.ndarray, dtype: str) -> np.ndarray:
    return float_from_bf16_bits(host).astype(np.float64) if dtype == "bfloat16" else host.astype(np.float64)


def _median_ms(run: Callable[[], None], reps: int, gpu: int | None) -> float:
    times = []
    for _ in range(reps):
        if gpu is None:
            t0 = time.perf_counter()
            run()
            times.append((time.perf_counter() - t0) * 1e3)
        else:
            start, stop = _core.Event(gpu), _core.Event(gpu)
            start.record(0)
            run()
            stop.record(0)
            stop.synchronize()
            times.append(stop.elapsed_ms_since(start))
    return statistics.median(times)


def demo_fwt(gpu: int | None, log_n: int = 12, megabytes: int = 256) -> list[dict]:
    rng = np.random.default_rng(2026)
    rows_out = []
    for dtype in ("float32", "float16", "bfloat16", "float64"):
        itemsize = 8 if dtype == "float64" else 4 if dtype == "float32" else 2
        n = 1 << log_n
        batch = max(1, (megabytes << 20) // (n * itemsize))
        host, exact = _host_input(dtype, (batch, n), rng)
        check_rows = min(batch, 64)
        ref = fwt_reference(exact[:check_rows])
        if gpu is not None:
            dx = _core.empty([batch, n], dtype, "cuda", gpu)
            dy = _core.empty([batch, n], dtype, "cuda", gpu)
            _core.copy_(dx, host)
            _core.fill_bytes_(dy, 0xFF)  # NaN poison: an unwritten element fails the check
            run = lambda: _core.fwt(dx, dy)  # noqa: E731
            run()
            ms = _median_ms(run, 20, gpu)
            out = np.empty_like(host)
            _core.copy_(out, dy)
            _core.synchronize(0, gpu)
            where = f"cuda:{gpu}"
        else:
            out = np.empty_like(host)
            run = lambda: _core.fwt(host, out, as_bfloat16=dtype == "bfloat16")  # noqa: E731
            run()
            ms = _median_ms(run, 5, None)
            where = f"cpu ({_core.cpu_threads()} threads, {_core.build_info()['cpu_isa_active']})"
        got = _to_float64(out, dtype)
        finite = bool(np.isfinite(got).all())
        err = float(np.linalg.norm(got[:check_rows] - ref) / np.linalg.norm(ref))
        ok = finite and err <= FWT_TOLERANCE[dtype]
        rows_out.append(
            dict(op="fwt", dtype=dtype, shape=f"{batch}x2^{log_n}", device=where, rel_err=err,
                 tol=FWT_TOLERANCE[dtype], ok=ok, ms=ms, gbps=2 * host.nbytes / ms / 1e6)
        )
    return rows_out


def demo_gemm(gpu: int | None) -> list[dict]:
    """The emulated DGEMM under Contract.native() against native float64 (cublasDgemm through PyTorch
    on the GPU, NumPy's BLAS on the CPU) on the standard family; both measured against a long-double
    product on sampled entries. ok: every sampled entry within the bound the call certified
    (bound·(|A||B|)_ij plus one rounding) and the max error no worse than native's."""
    from ._gemm import gemm

    torch = None
    if gpu is not None:
        try:
            import torch  # noqa: F811
        except ImportError:
            pass
    n = 4096 if torch is not None else 512  # on the CPU the reference's time
    rng = np.random.default_rng(2027)
    rows = []
    for phi in (0.5, 2.0):
        a, b = gemm_family(rng, (n, n), phi), gemm_family(rng, (n, n), phi)
        ri, ci = np.sort(rng.choice(n, 64, replace=False)), np.sort(rng.choice(n, 64, replace=False))
        ref = np.matmul(a[ri].astype(np.longdouble), b[:, ci].astype(np.longdouble))
        if torch is not None:
            ad, bd = torch.from_numpy(a).to(f"cuda:{gpu}"), torch.from_numpy(b).to(f"cuda:{gpu}")
            ours, rep = gemm(ad, bd, report=True)
            ours = ours.cpu().numpy()
            native = (ad @ bd).cpu().numpy()
            ms = _median_ms(lambda: gemm(ad, bd), 5, gpu)
            native_ms = _median_ms(lambda: ad @ bd, 5, gpu)
            device = f"cuda:{gpu}"
        else:
            t0 = time.perf_counter()
            ours, rep = gemm(a, b, report=True)
            ms = (time.perf_counter() - t0) * 1e3
            t0 = time.perf_counter()
            native = a @ b
            native_ms = (time.perf_counter() - t0) * 1e3
            device = "cpu"
        block = ours[np.ix_(ri, ci)]
        err = float(np.max(np.abs((block - ref) / ref)))
        native_err = float(np.max(np.abs((native[np.ix_(ri, ci)] - ref) / ref)))
        magnitude = np.matmul(np.abs(a[ri]).astype(np.longdouble), np.abs(b[:, ci]).astype(np.longdouble))
        bound = rep["bound"] * magnitude + 2.0**-52 * np.abs(ref)
        ok = bool(np.isfinite(ours).all() and (np.abs(block - ref) <= bound).all() and err <= native_err)
        lines = [f"{count} {what}" for count, what in ((rep["native_rows"], "rows"), (rep["native_cols"], "cols")) if count]
        path = {"emulated": f"{rep['moduli']} moduli", "native": "native"}.get(
            rep["path"], " + ".join([str(rep["moduli"])] + lines))
        rows.append(dict(phi=phi, n=n, err=err, native=native_err, ms=ms, native_ms=native_ms, device=device,
                         path=path, scaling=rep["scaling"], ok=ok))
    return rows


DEMO_DRAWING = os.path.join(os.path.dirname(__file__), "data", "lcn-70-nodes.json")


def demo_lcn(gpu: int | None) -> list[dict]:
    """Per-edge crossing counts of the bundled drawing (a GD Contest 2025 sample solution, k = 16) and
    of random layouts of its graph on the same grid, against an independent all-pairs NumPy count
    (ironkernels.reference): lcn.evaluate on the CPU (with validity), and lcn.count_crossings on
    device arrays when there is a GPU. ok = every count equal, the bundled drawing valid at k = 16."""
    from . import lcn
    from .reference import lcn_crossing_counts

    d = lcn.load(DEMO_DRAWING)
    rng = np.random.default_rng(2028)
    cases = [("70-node solution", d.xy)]
    for copies in (1, 8):  # the graph repeated `copies` times, every vertex at a random grid point
        cases.append((f"random layout x{copies}", rng.integers(0, [d.width + 1, d.height + 1], (copies * d.n, 2))))
    rows = []
    for label, xy in cases:
        copies = len(xy) // d.n
        edges = np.concatenate([d.edges + i * d.n for i in range(copies)])
        drawing = lcn.Drawing(ids=list(range(len(xy))), xy=np.ascontiguousarray(xy, dtype=np.int64),
                              edges=edges, width=d.width, height=d.height)
        expect = lcn_crossing_counts(drawing.xy, drawing.edges)
        if gpu is None:
            ev = lcn.evaluate(drawing)
            counts, device = ev.edge_crossings, "cpu"
            ms = _median_ms(lambda: lcn.evaluate(drawing), 5, None)
        else:
            dxy, de = _core.empty([len(xy), 2], "int64", "cuda", gpu), _core.empty([len(edges), 2], "int64", "cuda", gpu)
            dc = _core.empty([len(edges)], "int64", "cuda", gpu)
            _core.copy_(dxy, drawing.xy)
            _core.copy_(de, drawing.edges)
            run = lambda: lcn.count_crossings(dxy, de, out=dc)  # noqa: E731
            run()
            ms = _median_ms(run, 5, gpu)
            counts = np.empty(len(edges), np.int64)
            _core.copy_(counts, dc)
            _core.synchronize(0, gpu)
            ev = lcn.evaluate(drawing)
            device = f"cuda:{gpu}"
        ok = bool(np.array_equal(counts, expect) and np.array_equal(ev.edge_crossings, expect))
        if copies == 1 and label.startswith("70"):
            ok = ok and ev.valid and ev.k == 16
        rows.append(dict(label=label, n=drawing.n, m=drawing.m, device=device, k=ev.k, at_k=ev.edges_at_k,
                         total=ev.total_crossings, valid=ev.valid, ok=ok, ms=ms))
    return rows


DEMO_INSTANCE = os.path.join(os.path.dirname(__file__), "data", "lcn-70-nodes-instance.json")
DEMO_SOLVE_SECONDS = 3.0


def demo_lcn_solve(gpu: int | None) -> dict:
    """lcn.solve on the bundled GD Contest 2025 example instance (70 vertices, 374 edges) for a few seconds,
    from its given coordinates (init="auto": the best of the start layouts). ok = the result valid, its
    counts equal to the independent NumPy count, and k no worse than the contest's sample solution (16)."""
    from . import lcn
    from .reference import lcn_crossing_counts

    d = lcn.load(DEMO_INSTANCE)
    r = lcn.solve(d, time_limit=DEMO_SOLVE_SECONDS, seed=0, device="cpu" if gpu is None else gpu)
    ev = r.evaluation
    ok = bool(ev.valid and np.array_equal(lcn_crossing_counts(r.drawing.xy, r.drawing.edges), ev.edge_crossings)
              and ev.k <= 16)
    return dict(n=d.n, m=d.m, device=r.device, start_k=r.start_evaluation.k, k=ev.k, at_k=ev.edges_at_k,
                total=ev.total_crossings, bound=r.lower_bound, seconds=r.seconds, rate=r.moves_per_second, ok=ok,
                init=r.init)


def _ok(r: dict) -> str:
    return f"{'  yes' if r['ok'] else '  NO':<6}"


def _table(header: str, lines: list) -> None:
    print(header)
    print("-" * len(header))
    for line in lines:
        print(line)


def run(force_cpu: bool = False) -> int:
    devices = [] if force_cpu else _core.cuda_devices()
    gpu = devices[0]["id"] if devices else None
    info = _core.build_info()
    if force_cpu:
        where = "CPU (--cpu)"
    elif devices:
        where = f"GPU {devices[0]['name']} (cuda:{gpu})"
    elif not info["cuda"]:  # a GPU may well be there: this copy cannot use it
        where = "CPU (this copy was built without CUDA; for the GPU kernels see docs/building.md)"
    else:
        where = "CPU (no CUDA device found)"
    print(f"ironkernels {info['version']} demo on {where}")
    print("fwt: y = H_N x along the last axis, checked against a float64 NumPy reference (relative L2 error)\n")
    rows = demo_fwt(gpu, megabytes=256 if gpu is not None else 32)
    _table(f"{'op':<5}{'dtype':<10}{'shape':<14}{'device':<28}{'rel.err':>10}{'tol':>9}{'  ok':<6}{'ms':>9}{'GB/s':>9}",
           [f"{r['op']:<5}{r['dtype']:<10}{r['shape']:<14}{r['device']:<28}{r['rel_err']:>10.2e}{r['tol']:>9.0e}"
            f"{_ok(r)}{r['ms']:>9.3f}{r['gbps']:>9.1f}" for r in rows])
    print("\nGB/s counts one read and one write of the tensor; time is the median of the timed calls"
          + (" (CUDA events around each call)." if gpu is not None else " (wall clock)."))
    g = demo_gemm(gpu)
    print("\ngemm: C = A·B in float64 by Ozaki scheme II under Contract.native(), certified element by element"
          " (docs/gemm.md);\n      path: the moduli of the emulated elements (+ the rows / columns computed"
          " natively); max relative\n      error on 64x64 sampled entries against a long-double product, beside"
          " native float64 (cublasDgemm\n      via PyTorch on the GPU, NumPy's BLAS on the CPU); ok = within the"
          " certified bound and no worse than\n      native; TFLOP/s counts 2n^3\n")
    _table(f"{'op':<5}{'inputs':<18}{'shape':<10}{'device':<8}{'path':<13}{'max.rel.err':>12}{'native':>10}{'  ok':<6}"
           f"{'ms':>9}{'native ms':>10}{'TFLOP/s':>9}",
           [f"{'gemm':<5}{'(u-.5)exp(' + str(r['phi']) + 'g)':<18}{str(r['n']) + '^3':<10}{r['device']:<8}"
            f"{r['path']:<13}{r['err']:>12.2e}{r['native']:>10.2e}{_ok(r)}{r['ms']:>9.2f}{r['native_ms']:>10.2f}"
            f"{2 * r['n'] ** 3 / r['ms'] / 1e9:>9.3g}" for r in g])
    lr = demo_lcn(gpu)
    print("\nlcn: exact per-edge crossing counts of grid drawings (" + ("lcn.count_crossings on the GPU"
          if gpu is not None else "lcn.evaluate on the CPU") + "), checked against an independent\n"
          "     all-pairs NumPy count; the bundled drawing is a GD Contest 2025 sample solution with k = 16\n")
    _table(f"{'op':<5}{'drawing':<22}{'n':>6}{'m':>7}{'  device':<10}{'k':>5}{'at k':>6}{'total':>9}{'valid':>7}"
           f"{'  ok':<6}{'ms':>9}",
           [f"{'lcn':<5}{r['label']:<22}{r['n']:>6}{r['m']:>7}  {r['device']:<8}{r['k']:>5}{r['at_k']:>6}{r['total']:>9}"
            f"{'yes' if r['valid'] else 'no':>7}{_ok(r)}{r['ms']:>9.3f}" for r in lr])
    sr = demo_lcn_solve(gpu)
    print(f"\nlcn.solve: simulated annealing on (k, edges at k, total) for {DEMO_SOLVE_SECONDS:g} s on the bundled "
          "70-node contest\n     example; ok = valid, recounted independently, and k no worse than the sample "
          "solution's 16\n")
    _table(f"{'op':<10}{'n':>5}{'m':>6}{'  device':<10}{'start':<14}{'k':>5}{'at k':>6}{'total':>8}{'k >=':>6}"
           f"{'  ok':<6}{'s':>6}{'moves/s':>10}",
           [f"{'lcn.solve':<10}{sr['n']:>5}{sr['m']:>6}  {sr['device']:<8}{sr['init'] + ' k=' + str(sr['start_k']):<14}"
            f"{sr['k']:>5}{sr['at_k']:>6}{sr['total']:>8}{sr['bound']:>6}{_ok(sr)}{sr['seconds']:>6.1f}{sr['rate']:>10.3g}"])
    print("k >= is a lower bound for the graph (lcn.lower_bound).")
    rows = rows + g + lr + [sr]
    bad = [r for r in rows if not r["ok"]]
    if bad:
        print(f"FAILED: {len(bad)} result(s) outside tolerance")
        return 1
    return 0
