"""Shared by the benchmark scripts: hardware description, timing with CUDA events, result files."""
from __future__ import annotations

import ctypes
import datetime
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
from typing import Callable

import numpy as np


def gpu_hardware(torch) -> dict:
    p = torch.cuda.get_device_properties(0)
    driver = ""
    try:
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                capture_output=True, text=True, timeout=20).stdout.strip().splitlines()[0]
    except Exception:
        pass
    cublas = ""
    for name in ("libcublas.so.13", "libcublas.so.12", "libcublas.so"):
        try:
            lib = ctypes.CDLL(name)
            v = [ctypes.c_int() for _ in range(3)]
            for i in range(3):
                lib.cublasGetProperty(i, ctypes.byref(v[i]))
            cublas = ".".join(str(x.value) for x in v)
            break
        except OSError:
            continue
    return {"gpu": p.name, "sm_count": p.multi_processor_count, "driver": driver,
            "cuda": torch.version.cuda, "cublas": cublas, "l2_bytes": getattr(p, "L2_cache_size", None)}


def cpu_hardware() -> dict:
    model = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": model, "logical_cores": os.cpu_count(), "machine": platform.machine()}


def time_cuda(torch, fn: Callable[[], object], reps: int = 20, warmup: int = 3, warmup_ms: float = 25.0) -> dict:
    """Median/min/max ms of fn, CUDA events around each call. Calls are queued back to back
    (no synchronisation between them), so the GPU never waits for the Python launch overhead
    unless a call's host time exceeds its GPU time. Warm-up: at least `warmup` calls and at least
    `warmup_ms` of GPU time, so that every implementation is timed at the clocks of a busy GPU,
    not of one that idled through the previous correctness check (a 1 ms burst of short calls
    does not bring the clocks up)."""
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    batch, done, elapsed = max(warmup, 1), 0, 0.0
    while done < warmup or elapsed < warmup_ms:
        start.record()
        for _ in range(batch):
            fn()
        stop.record()
        stop.synchronize()
        done += batch
        elapsed += start.elapsed_time(stop)
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for start, stop in events:
        start.record()
        fn()
        stop.record()
    torch.cuda.synchronize()
    ms = [s.elapsed_time(e) for s, e in events]
    return {"median_ms": statistics.median(ms), "min_ms": min(ms), "max_ms": max(ms), "reps": reps}


def sampled_reference(a, b, rows, cols):
    """Long-double products of the sampled rows of a and columns of b (64-bit significands)."""
    return np.matmul(a[rows].astype(np.longdouble), b[:, cols].astype(np.longdouble))


def max_rel(c, ref):
    """Max relative error of c against ref over the entries where ref is not 0."""
    ref = np.asarray(ref)
    mask = ref != 0
    return float(np.max(np.abs((c[mask] - ref[mask]) / ref[mask])))


def write_result(path: str, hardware: dict, rows: list, extra: dict | None = None) -> None:
    doc = {"hardware": hardware, "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "command": shlex.join([os.path.basename(sys.executable)] + sys.argv), "rows": rows}
    if extra:
        doc.update(extra)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"wrote {path} ({len(rows)} rows)", flush=True)
