# Checks each measured figure in README.md against the results file it comes from.
"""python bench/check_readme_figures.py [--readme README.md]

Each entry of FIGURES: a pattern that finds the figure in the README (every occurrence is checked),
the results file, and how the figure is derived from its rows (written as the README writes it).
Prints one line per figure: "ok", "DIFF" (README and file disagree) or "MISSING" (the sentence is no
longer in the README); a file that bench/regenerate.py does not write is marked "not regenerated".
Exit status 1 on any DIFF or MISSING. Not checked: the `ironkernels demo` transcript (console output of
a 2-core CPU machine, no results file) and the plots (drawn from the same files by plot_fwt.py,
plot_gemm.py and bench_lcn.py --solve).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)
import plot_fwt  # noqa: E402  (the README's fwt table is its markdown_table)
import plot_gemm  # noqa: E402  (the README's speed ratios are its summary at 16384³)
from regenerate import AREAS  # noqa: E402

DASH = "–"


def load(name):
    with open(os.path.join(BENCH, "results", name)) as f:
        return json.load(f)


def span(values, fmt, unit=""):
    lo, hi = fmt(min(values)), fmt(max(values))
    return f"{lo}{unit}" if lo == hi else f"{lo}{DASH}{hi}{unit}"


def pct(values):
    return span(values, lambda v: f"{round(100 * v)}", "%")


def fwt_ratio(dtypes, ns, name="fwt-h200.json"):
    """ours GB/s / clone GB/s per (dtype, log2 N) of a bench_fwt.py file (every batch of a sweep)."""
    t = {}
    for r in load(name)["rows"]:
        t.setdefault((r["dtype"], r["log2n"], r["batch"]), {})[r["impl"]] = r["gbps"]
    return [v["ironkernels"] / v["clone"] for (d, n, _), v in t.items() if d in dtypes and n in ns]


AXIS_FACTOR = "fwt-h200-layouts-axis-factor.json"  # bench_fwt_layouts.py --sections axis,factor


def layout_ratios(select, peer, name="fwt-h200-layouts.json", rows=None):
    """ours time / peer time per case of a bench_fwt_layouts.py file whose label `select` takes."""
    t = {}
    for r in rows if rows is not None else load(name)["rows"]:
        t.setdefault(r["case"], {})[r["impl"]] = r["median_ms"]
    return [v["ironkernels"] / v[k] for c, v in t.items() if select(c) for k in v if k.startswith(peer)]


def x2(values):
    return span(values, "{:.2f}".format)


def same_bytes():
    """complex / integer rows over the float rows of their bytes: the README says "at the speed" (within 5%)."""
    v = layout_ratios(lambda c: c.startswith(("complex", "int")) and "·" not in c, "float_same")
    return "at the speed of" if 0.95 <= min(v) and max(v) <= 1.05 else f"at {x2(v)}× the time of"


def custatevec_30():
    row = next(r for r in load("fwt-h200-custatevec.json")["rows"] if r["qubits"] == 30)
    return f"{row['speedup_vs_one_gate_per_call']:.1f}"


def pair_rows_f64_15():
    return x2([r["ratio"] for r in load("fwt-h200-pair-rows.json")["rows"] if (r["dtype"], r["log_n"]) == ("float64", 15)])


def gemm_16384():
    """plot_gemm's summary at 16384³ (family φ = 0.5, round 0): the series behind the README's speed ratios."""
    doc = load("gemm-h200.json")
    doc["rows"] = [r for r in doc["rows"] if str(r.get("family", "0.5")) == "0.5" and r.get("round", 0) == 0]
    return plot_gemm.summary(doc)[(16384, 16384, 16384)]


def gemm_certified(peer):
    """native() (certified) over `peer` at 16384³, φ = 0.5, per round of gemm-h200-native-16384.json."""
    doc = load("gemm-h200-native-16384.json")
    ratios = []
    for r in sorted({row["round"] for row in doc["rows"]}):
        s = plot_gemm.summary(dict(doc, rows=[row for row in doc["rows"] if row["round"] == r]))[(16384, 16384, 16384)]
        ratios.append(s[peer]["median_ms"] / s["ironkernels native()"]["median_ms"])
    return x2(ratios)


def gemm_speed(ours, peer):
    s = gemm_16384()
    return f"{s[peer]['median_ms'] / s[ours]['median_ms']:.2f}"


ACCURACY_ROWS = {"(u − ½)·exp(0.5g)": "0.5", "(u − ½)·exp(2g)": "2", "(u − ½)·exp(4g)": "4", "(u − ½)·exp(8g)": "8",
                 "one 2^60 element per row meeting zeros": "outliers", "φ = 0.5, 10% of rows as above": "mixed10"}
ACCURACY_COLS = (None, "Contract.native()", "Contract(rtol=1e-10)", "Contract(moduli=15, scaling='norm')")


def accuracy_row(label):
    """The README's gemm accuracy row: gemm-accuracy-cpu.json at n = 1024, max relative / componentwise error,
    and for native() and rtol what the call did (moduli, + rows / lines computed natively, or native)."""
    rows = [r for r in load("gemm-accuracy-cpu.json")["rows"] if r["n"] == 1024 and r["family"] == ACCURACY_ROWS[label]]
    cells = []
    for i, contract in enumerate(ACCURACY_COLS):
        r = next(r for r in rows if r["contract"] == contract)
        cell = f"{r['max_rel_err']:.1e} / {r['max_componentwise_err']:.1e}"
        if i in (1, 2):
            extra = "rows" if r["native_rows"] and not r["native_cols"] else "lines"
            cell += {"native": " (native)", "emulated": f" ({r['moduli']})"}.get(r["path"], f" ({r['moduli']} + {extra})")
        cells.append(cell)
    return f"| {label} | " + " | ".join(cells) + " |"


def lcn_corpus():
    return [r for r in load("lcn-h200.json")["rows"] if r.get("section") == "corpus"]


def lcn_all(rows, ok):
    """"N" when all N rows are ok, else "n of N"."""
    n = sum(map(ok, rows))
    return str(len(rows)) if n == len(rows) else f"{n} of {len(rows)}"


def float32_17_24(c):
    return re.fullmatch(r"float32 rows 2\^(1[7-9]|2[0-4])", c)


ALL = {"float32", "float16", "bfloat16", "float64"}
HALF = {"float16", "bfloat16"}
WIDE = "2^13, 4096)"  # the strided case of 2^13 lines 16 KB apart
# (what, results file, pattern with one group, the group as the file gives it)
FIGURES = [(f"fwt table, row {line.split(' | ')[0][2:]}", "fwt-h200.json",
            "^(" + re.escape(line.split(" | ")[0]) + r" \|.*)$", lambda line=line: line)
           for line in plot_fwt.markdown_table(load("fwt-h200.json")).splitlines()[2:]]
FIGURES += [
    ("fwt N = 2^1…2^11 of clone", "fwt-h200.json", r"at (\S+) of the copy bandwidth for N = 2\^1 … 2\^11",
     lambda: pct(fwt_ratio(ALL, range(1, 12)))),
    ("fwt 16-bit 2^12–2^14 of clone", "fwt-h200.json", r"16-bit at (\S+) for 2\^12–2\^14",
     lambda: pct(fwt_ratio(HALF, range(12, 15)))),
    ("fwt 16-bit 2^15 of clone", "fwt-h200.json", r"and (\S+) at 2\^15, float32", lambda: pct(fwt_ratio(HALF, [15]))),
    ("fwt float32 to 2^14 of clone", "fwt-h200.json", r"float32 at (\S+) to 2\^14",
     lambda: pct(fwt_ratio({"float32"}, range(1, 15)))),
    ("fwt float32 2^15 of clone, 16 batches", "fwt-h200-batches.json", r"to 2\^14 and (\S+) at 2\^15",
     lambda: pct(fwt_ratio({"float32"}, [15], "fwt-h200-batches.json"))),
    ("fwt float64 to 2^14 of clone", "fwt-h200.json", r"float64 at (\S+) to 2\^14",
     lambda: pct(fwt_ratio({"float64"}, range(1, 15)))),
    ("fwt 256 KB rows over clone", "fwt-h200-layouts.json", r"over a pair of CTAs at (\S+)× the time",
     lambda: x2(layout_ratios(lambda c: c in ("float32 rows 2^16", "float64 rows 2^15"), "clone"))),
    ("fwt float32 2^17–2^24 over clone", "fwt-h200-layouts.json", r"2\^17–2\^24 in two passes at (\S+)×",
     lambda: x2(layout_ratios(float32_17_24, "clone"))),
    ("fwt strided axis over rows", AXIS_FACTOR, r"a strided axis at (\S+)× the contiguous",
     lambda: x2(layout_ratios(lambda c: c.endswith("axis 1") and WIDE not in c, "rows", AXIS_FACTOR))),
    ("fwt strided axis 2^13 x 16 KB over rows", AXIS_FACTOR, r"\((\S+) at 2\^13 with a 16 KB stride\)",
     lambda: x2(layout_ratios(lambda c: WIDE in c, "rows", AXIS_FACTOR))),
    ("fwt m·2^k over the nearest power of two", AXIS_FACTOR, r"m·2\^k at (\S+)× the nearest",
     lambda: span(layout_ratios(lambda c: "·2^" in c, "pow2", AXIS_FACTOR), "{:.1f}".format)),
    ("fwt complex and integers over float of their bytes", "fwt-h200-layouts.json",
     r"complex and integers (at the speed of) the float of their bytes", same_bytes),
    ("fwt H on every qubit 2^30 over cuStateVec's gate per qubit", "fwt-h200-custatevec.json",
     r"2\^30-amplitude state (\S+)× faster", custatevec_30),
    ("fwt float64 2^15 over clone, cited", "fwt-h200-pair-rows.json",
     r"\((\S+)× the time of `torch.clone`, `bench/results/fwt-h200-pair", pair_rows_f64_15),
    ("fwt float64 2^15 over clone", "fwt-h200-layouts.json", r"\((\S+)× the time of `torch.clone`, `bench/results/fwt-h200-pair",
     lambda: x2(layout_ratios(lambda c: c == "float64 rows 2^15", "clone"))),
]


def quantize_rows(keep):
    return [r for r in load("fwt-quantize-h100.json")["rows"] if keep(r)]


def short_rotation(r):
    return r["case"].startswith("blocks") or r["case"] in ("rows 2^7", "rows 2^10", "rows 2^12")


FIGURES += [
    ("fwt_quantize FP8 over its bytes floor, rotations to 2^12", "fwt-quantize-h100.json",
     r"FP8 at (\S+)× its bytes floor",
     lambda: x2([r["ours_over_floor"] for r in quantize_rows(lambda r: r["to"] == "float8_e4m3fn" and short_rotation(r))])),
    ("fwt_quantize unfused over ours", "fwt-quantize-h100.json", r"(\S+)× faster than `fwt` then PyTorch",
     lambda: span([r["unfused_over_ours"] for r in quantize_rows(lambda r: "two passes" not in r["case"])], "{:.1f}".format)),
]
FIGURES += [(f"gemm accuracy, {label}", "gemm-accuracy-cpu.json", "^(" + re.escape(f"| {label} |") + ".*)$",
             lambda label=label: accuracy_row(label)) for label in ACCURACY_ROWS]
FIGURES += [
    ("gemm native() over cublasDgemm, 16384³", "gemm-h200-native-16384.json", r"ran at (\S+)× (?:cublasDgemm|DGEMM)",
     lambda: gemm_certified("cublas-dgemm")),
    ("gemm native() over GEMMul8's fastest at DGEMM's error", "gemm-h200-native-16384.json",
     r"(\S+)× GEMMul8's fastest configuration", lambda: gemm_certified("gemmul8 best ≤ native err")),
    ("gemm 16 accurate moduli over GEMMul8's", "gemm-h200.json", r"(\S+)× GEMMul8 at equal moduli",
     lambda: gemm_speed(*plot_gemm.EQUAL_MODULI)),
    ("gemm native()'s plan at 16384³", "gemm-h200-native-16384.json", r"certified these inputs with (\d+ moduli)",
     lambda: "{} moduli".format(next(r["moduli"] for r in load("gemm-h200-native-16384.json")["rows"]
                                     if r["impl"] == "ironkernels-cuda"))),
    ("lcn corpus graphs with k <= reference", "lcn-h200.json", r"k at or below the reference on all (\d+) benchmark",
     lambda: lcn_all(lcn_corpus(), lambda r: r["k"] <= r["reference"])),
    ("lcn corpus graphs with k < reference", "lcn-h200.json", r"\(below it on (\d+)\)",
     lambda: str(sum(r["k"] < r["reference"] for r in lcn_corpus()))),
    ("lcn planar graphs at k = 0", "lcn-h200.json", r"k = 0 on all (\d+) planar",
     lambda: lcn_all([r for r in lcn_corpus() if r["init"] == "planar"], lambda r: r["k"] == 0)),
    ("lcn seconds per graph", "lcn-h200.json", r"(?:graphs at|H200,) (\S+) s (?:each|per graph)",
     lambda: "/".join(sorted({f"{r['time_limit']:g}" for r in lcn_corpus()}))),
]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--readme", default=os.path.join(BENCH, "..", "README.md"))
    readme = open(ap.parse_args(argv).readme, encoding="utf-8").read()
    prose = " ".join(readme.split())  # sentences wrap; table rows ("^...$" patterns) are read by line
    regenerated = {os.path.basename(a) for cmds in AREAS.values() for cmd in cmds for a in cmd if a.endswith(".json")}
    bad = 0
    for what, name, pattern, derive in FIGURES:
        where = "" if name in regenerated else ", not regenerated"
        said = [m.group(1) for m in re.finditer(pattern, readme if pattern[0] == "^" else prose, flags=re.M)]
        got = derive()
        if not said:
            status, detail = "MISSING", f"no /{pattern}/ in the README; the file gives {got}"
        elif all(s == got for s in said):
            status, detail = "ok", got if len(got) < 60 else ""
        else:
            status, detail = "DIFF", f"README {' / '.join(dict.fromkeys(said))}, the file {got}"
        bad += status != "ok"
        print(f"{status:7s} {what} [{name}{where}] {detail}".rstrip())
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
