"""Sweep of the FWT's passes and strided tiles (bench/DECISIONS.md, fwt): ours against torch.clone of
the same tensor (256 MB), best of two rotated rounds, for case groups of long rows, float64, other
dtypes, complex, integers and strided axes. Run once per setting, each read once per process and
only with IRONKERNELS_DEV_OVERRIDES=1:
IRONKERNELS_FWT_STRIDED_SHAPE=narrow|wide|tall, IRONKERNELS_FWT_ROW_BITS=14|15,
IRONKERNELS_FWT_STRIDED_CLUSTERS=0|all and
IRONKERNELS_FWT_CLUSTER_BITS=1|2 (the strided kernel's).

    python bench/sweep_fwt_passes.py large,f64,dtypes,complex,int,axis,cluster [tag]   # -> $OUT/fwt_speed_<tag>_<groups>.json
"""
import sys, os, json, torch, ironkernels
sys.path.insert(0, "bench")
from _common import time_cuda
MB = 256
groups = sys.argv[1].split(",")
tag = sys.argv[2] if len(sys.argv) > 2 else ""
rows = []
def case(label, x, axis=-1):
    out = torch.empty_like(x)
    nbytes = x.numel() * x.element_size()
    impls = [("ik", lambda: ironkernels.fwt(x, axis=axis, out=out)), ("clone", lambda: x.clone())]
    res = {}
    for rot in range(2):
        for name, fn in (impls if rot == 0 else impls[::-1]):
            res.setdefault(name, []).append(time_cuda(torch, fn, reps=15)["median_ms"])
    ik_ms, cl_ms = min(res["ik"]), min(res["clone"])
    print(f"{tag:10s} {label:28s} {ik_ms*1e3:8.1f} us  clone {cl_ms*1e3:7.1f}  ratio {ik_ms/cl_ms:5.3f}", flush=True)
    rows.append({"tag": tag, "case": label, "ik_ms": ik_ms, "clone_ms": cl_ms, "ratio": ik_ms / cl_ms})
def rows_of(dt, log_n, es):
    n = 1 << log_n
    return torch.randn(max(1, (MB << 20) // (es * n)), n, device="cuda").to(dt)
if "large" in groups:
    for log_n in (16, 18, 20, 22, 24, 25, 26, 28, 30):
        case(f"f32 rows 2^{log_n}", rows_of(torch.float32, log_n, 4) if log_n < 28 else torch.randn(1, 1 << log_n, device="cuda"))
if "f64" in groups:
    for log_n in (14, 15, 16, 20):
        case(f"f64 rows 2^{log_n}", rows_of(torch.float64, log_n, 8))
if "dtypes" in groups:
    for dt, name, es in [(torch.float16, "f16", 2), (torch.bfloat16, "bf16", 2), (torch.float64, "f64", 8)]:
        for log_n in (16, 20, 24):
            case(f"{name} rows 2^{log_n}", rows_of(dt, log_n, es))
if "complex" in groups:
    for log_n in (4, 10, 13, 14, 15, 16, 20):
        n = 1 << log_n
        case(f"c64 rows 2^{log_n}", torch.randn(max(1, (MB << 20) // (8 * n)), n, device="cuda", dtype=torch.complex64))
        case(f"f32 rows 2^{log_n + 1}", rows_of(torch.float32, log_n + 1, 4))
    for log_n in (10, 14):
        n = 1 << log_n
        case(f"c128 rows 2^{log_n}", torch.randn(max(1, (MB << 20) // (16 * n)), n, device="cuda", dtype=torch.complex128))
if "int" in groups:
    for log_n in (4, 10, 14, 15, 16, 20):
        n = 1 << log_n
        case(f"i32 rows 2^{log_n}", torch.randint(-1000, 1000, (max(1, (MB << 20) // (4 * n)), n), device="cuda", dtype=torch.int32))
    case("i64 rows 2^12", torch.randint(-1000, 1000, ((MB << 20) // (8 << 12), 1 << 12), device="cuda", dtype=torch.int64))
if "axis" in groups:
    for inner in (8, 16, 64, 512, 4096):
        for log_n in (4, 6, 9, 10, 12, 14):
            n = 1 << log_n
            b = max(1, (MB << 20) // (4 * n * inner))
            case(f"f32 axis1 (b,2^{log_n},{inner})", torch.randn(b, n, inner, device="cuda"), axis=1)
    for log_n in (12, 14, 16):
        n = 1 << log_n
        case(f"c64 axis0 (2^{log_n},m)", torch.randn(n, (MB << 20) // (8 * n), device="cuda", dtype=torch.complex64), axis=0)
if "cluster" in groups:  # the lines one block cannot hold: one pass over a cluster, or two passes
    for dt, name, es, logs in [(torch.float32, "f32", 4, (16, 17, 18)), (torch.float64, "f64", 8, (15, 16, 17)),
                               (torch.float16, "f16", 2, (16, 17, 18))]:
        for log_n in logs:
            case(f"{name} rows 2^{log_n}", rows_of(dt, log_n, es))
    for log_n in (15, 16, 17):
        n = 1 << log_n
        case(f"c64 rows 2^{log_n}", torch.randn((MB << 20) // (8 * n), n, device="cuda", dtype=torch.complex64))
    for log_n in (20, 22, 24, 26):
        case(f"f32 rows 2^{log_n}", rows_of(torch.float32, log_n, 4))
    case("f64 rows 2^20", rows_of(torch.float64, 20, 8))
    for inner in (8, 64, 512):
        for log_n in (9, 10, 11, 12, 13):
            n = 1 << log_n
            case(f"f32 axis1 (b,2^{log_n},{inner})", torch.randn(max(1, (MB << 20) // (4 * n * inner)), n, inner, device="cuda"), axis=1)
json.dump(rows, open(os.environ.get("OUT", ".") + f"/fwt_speed_{tag or 'x'}_{'_'.join(groups)}.json", "w"), indent=1)
