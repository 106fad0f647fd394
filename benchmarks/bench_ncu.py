#!/usr/bin/env python
"""ncu CSV parser speed and memory, as ratios to a bare ``polars.read_csv`` of the same file.

Generates (SYNTHETIC, into a temporary folder) a raw-page export of N launches x 150 metrics
(units row, quoted cells, the counters ridgeline's recipes read plus filler metrics) and a
details-page export of the same launches (long form: N x 150 rows), then times, each in its own
subprocess so peak memory (``ru_maxrss``) is per measurement:

* ``bare``: ``polars.read_csv(path)`` (what any tool pays to load the file);
* ``parse``: ``ridgeline.parsers.ncu.csv_reader.read_ncu([path])`` (KERNEL table + metrics);
* ``parse+classify``: the above then ``ridgeline.analyzer.kernels.roofline.classify`` (when it exists).

Targets from the issue: raw parse within 2x of the bare read, details within 4x, peak memory
(above the interpreter's own after imports) under 3x the file size.

    python benchmarks/bench_ncu.py                    # smoke run: 5,000 launches
    python benchmarks/bench_ncu.py --kernels 100000   # the issue's size (details file ~3 GB)
    python benchmarks/bench_ncu.py --layout raw --kernels 100000 --repeat 3
    python benchmarks/bench_ncu.py --layout wide --kernels 20000   # 2,232 columns (~360 MB): target 1.3x
    python benchmarks/bench_ncu.py --shapes --repeat 3             # issue 32 item 11: whole runs, two shapes

``--shapes`` times whole processes (interpreter start, imports, read, analysis, output) on the two
shapes real exports have: the shared H200 full-section raw page (31 launches x 2,232 columns, found
through ``../shared/samples/ncu/MANIFEST.md``), and a SYNTHETIC page of 50,000 launches x the
columns the derivation reads, made from that page's shape (its header, units row, kernel names and
values, launches repeated with new IDs). Each run is ``ridgeline analyze FILE --format json|csv -o
OUT`` (and the default table report) against a bare ``polars.read_csv(FILE)`` process, as ratios of wall and CPU time; memory is
each process's peak RSS (VmHWM) minus that of a process that only imports polars, as a multiple
of the file. Target: within 2x of the bare read, memory under 5x the file. ``--checkout DIR``
measures another checkout (a ``git archive`` of the code before a change) with the same files.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

IDENT = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
         "Grid Size", "Device", "CC"]
SASS = "sm__sass_thread_inst_executed_op_{}_pred_on.sum"
# (metric, unit, kind): kind picks the synthetic value distribution
RECIPE_METRICS = [
    ("device__attribute_display_name", "", "name"),
    ("device__attribute_global_memory_bus_width", "", "bus"),
    ("device__attribute_memory_clock_rate", "", "memclk"),
    ("dram__bytes.sum", "byte", "bytes"),
    ("dram__bytes.sum.peak_sustained", "byte/cycle", "peak_bytes"),
    ("dram__bytes_read.sum", "byte", "bytes"),
    ("dram__bytes_write.sum", "byte", "bytes"),
    ("dram__cycles_elapsed.avg.per_second", "hz", "dramclk"),
    ("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "%", "pct"),
    ("gpu__time_duration.sum", "ns", "ns"),
    ("l1tex__t_bytes.sum", "byte", "bytes"),
    ("lts__t_bytes.sum", "byte", "bytes"),
    ("sm__cycles_elapsed.avg", "cycle", "cycles"),
    ("sm__cycles_elapsed.avg.per_second", "hz", "smclk"),
    ("sm__inst_executed_pipe_tensor.sum", "inst", "count"),
    ("sm__ops_path_tensor_src_bf16_dst_fp32.sum", "", "ops"),
    ("sm__ops_path_tensor_src_bf16_dst_fp32.sum.peak_sustained", "", "peak_ops"),
    ("sm__ops_path_tensor_src_fp8_sparsity_off.sum", "", "ops"),
    ("sm__ops_path_tensor_src_tf32_dst_fp32.sum", "", "ops"),
    ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "%", "pct"),
] + [(SASS.format(op), "inst", "count") for op in ("dadd", "dfma", "dmul", "fadd", "ffma", "fmul", "hadd", "hfma", "hmul")] + [
    (SASS.format(op) + ".peak_sustained", "inst/cycle", "peak_inst") for op in ("dfma", "ffma", "hfma")
]
KERNELS = [
    "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align8>(T1::Params)",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off",
    "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 64, 4, false, false, cutlass::bfloat16_t>, true>(Flash_fwd_params)",
    "void at::native::vectorized_elementwise_kernel<(int)4, at::native::CUDAFunctor_add<float>, at::detail::Array<char *, (int)3>>(int, T2, T3)",
    "void vllm::rms_norm_kernel<c10::BFloat16, (int)8, (int)1024>(T1 *, const T1 *, const T1 *, float, int, int)",
    "void at::native::<unnamed>::softmax_warp_forward<float, float, float, (int)5, (bool)0>(T2 *, const T1 *, int, int, int)",
    "ampere_sgemm_128x64_nn",
    "void splitKreduce_kernel<(int)32, (int)16, int, float, float, float, float, (bool)1, (bool)0, (bool)0>(cublasSplitKParams<T6>, const T4 *)",
]


WIDE_METRICS = 2_232  # columns of a raw page exported with every section (the H200 export)


def metric_list(total: int = 150) -> list[tuple[str, str, str]]:
    filler = []
    i = 0
    while len(RECIPE_METRICS) + len(filler) < total:
        kind = ("pct", "%") if i % 3 else ("count", "inst")
        filler.append((f"smsp__synthetic_filler_{i:03d}.avg.pct_of_peak_sustained_active", kind[1], kind[0]))
        i += 1
    return sorted(RECIPE_METRICS + filler)


def make_wide(n: int, total: int = 150):
    """Wide string frame: identity + ``total`` metric columns (values as ncu prints them)."""
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(42)
    ns = rng.integers(2_000, 2_000_000, n)
    data = {
        "ID": np.arange(n).astype(str),
        "Process ID": np.full(n, "31337"),
        "Process Name": np.full(n, "python3.12"),
        "Host Name": np.full(n, "127.0.0.1"),
        "Kernel Name": rng.choice(np.array(KERNELS, dtype=object), n),
        "Context": np.full(n, "1"),
        "Stream": rng.choice(np.array(["7", "13", "21"]), n),
        "Block Size": rng.choice(np.array(["(128, 1, 1)", "(256, 1, 1)", "(384, 1, 1)"]), n),
        "Grid Size": rng.choice(np.array(["(132, 1, 1)", "(1024, 8, 1)", "(66, 2, 1)"]), n),
        "Device": rng.choice(np.array(["0", "1"]), n),
        "CC": np.full(n, "9.0"),
    }
    gen = {
        "name": lambda: np.full(n, "NVIDIA H100 80GB HBM3"),
        "bus": lambda: np.full(n, "5120"),
        "memclk": lambda: np.full(n, "2619000"),
        "bytes": lambda: rng.integers(1_000, 5_000_000_000, n).astype(str),
        "peak_bytes": lambda: np.full(n, "1280"),
        "dramclk": lambda: np.full(n, "2617187500"),
        "pct": lambda: np.char.mod("%.2f", rng.uniform(0, 100, n)),
        "ns": lambda: ns.astype(str),
        "cycles": lambda: (ns * 1.83).astype(np.int64).astype(str),
        "smclk": lambda: np.full(n, "1830000000"),
        "count": lambda: rng.integers(0, 10_000_000_000, n).astype(str),
        "ops": lambda: rng.integers(0, 100_000_000_000, n).astype(str),
        "peak_ops": lambda: np.full(n, "540672"),
        "peak_inst": lambda: np.full(n, "16896"),
    }
    metrics = metric_list(total)
    for name, _unit, kind in metrics:
        data[name] = gen[kind]()
    return pl.DataFrame({k: pl.Series(k, v, dtype=pl.String) for k, v in data.items()}), metrics


def quoted(values) -> str:
    return ",".join('"' + v + '"' for v in values)


def write_raw(path: Path, n: int, total: int = 150) -> None:
    wide, metrics = make_wide(n, total)
    with open(path, "w") as fh:
        fh.write(quoted(IDENT + [m for m, _u, _k in metrics]) + "\n")
        fh.write(quoted([""] * len(IDENT) + [u for _m, u, _k in metrics]) + "\n")
        wide.write_csv(fh, include_header=False, quote_style="always")


def write_details(path: Path, n: int) -> None:
    import polars as pl

    wide, metrics = make_wide(n)
    units = pl.DataFrame({"Metric Name": [m for m, _u, _k in metrics], "Metric Unit": [u for _m, u, _k in metrics],
                          "__order": list(range(len(metrics)))})
    long = (
        wide.with_row_index("__launch")
        .unpivot(index=["__launch", *IDENT], on=[m for m, _u, _k in metrics], variable_name="Metric Name",
                 value_name="Metric Value")
        .join(units, on="Metric Name", how="left")
        .sort(["__launch", "__order"])
        .with_columns(pl.lit("Command line profiler metrics").alias("Section Name"))
        .select(*IDENT, "Section Name", "Metric Name", "Metric Unit", "Metric Value")
    )
    with open(path, "w") as fh:
        long.write_csv(fh, include_header=True, quote_style="always")


CHILD = r"""
import json, sys, time

def hwm_kb():
    # VmHWM: this process's own peak RSS (ru_maxrss would inherit the parent's across exec)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

sys.path.insert(0, {root!r})
import polars as pl
from ridgeline.parsers.ncu.csv_reader import read_ncu
try:
    from ridgeline.analyzer.kernels.roofline import classify
except Exception:
    classify = None
base = hwm_kb()
mode, path = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
if mode == "bare":
    out = pl.read_csv(path)
    rows = out.height
elif mode == "parse":
    rows = read_ncu([path]).kernels.height
else:
    res = read_ncu([path])
    table, _roofs = classify(res.kernels)
    rows = table.height
dt = time.perf_counter() - t0
print(json.dumps({{"seconds": dt, "maxrss_kb": hwm_kb(), "base_kb": base, "rows": rows}}))
"""


def measure(mode: str, path: Path, repeat: int) -> dict:
    best = None
    code = CHILD.format(root=str(ROOT))
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", code, mode, str(path)], capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"{mode} failed:\n{out.stderr[-2000:]}")
        r = json.loads(out.stdout.strip().splitlines()[-1])
        if best is None or r["seconds"] < best["seconds"]:
            best = r
    return best


def has_classify() -> bool:
    import importlib

    try:
        return hasattr(importlib.import_module("ridgeline.analyzer.kernels.roofline"), "classify")
    except Exception:
        return False


def run(layout: str, n: int, repeat: int, tmp: Path) -> list[str]:
    path = tmp / f"bench-{layout}-{n}.csv"
    t0 = time.perf_counter()
    # generate in a child process so this one stays small (its memory would otherwise count in
    # the measurements' ru_maxrss, which Linux carries across exec)
    subprocess.run([sys.executable, __file__, "--generate", layout, str(n), str(path)], check=True)
    gen_s = time.perf_counter() - t0
    size = path.stat().st_size
    modes = ["bare", "parse"] + (["parse+classify"] if has_classify() else [])
    res = {m: measure(m, path, repeat) for m in modes}
    target = {"raw": 2.0, "details": 4.0, "wide": 1.3}[layout]
    width = WIDE_METRICS if layout == "wide" else 150
    lines = [f"{layout} page: {n:,} launches x {width:,} metrics, {size / 1e6:,.1f} MB (generated in {gen_s:.1f} s), best of {repeat}; "
             f"peak RSS = VmHWM of the measuring process, 'over imports' = minus its VmHWM before the call"]
    bare = res["bare"]["seconds"]
    for m in modes:
        r = res[m]
        extra_mb = (r["maxrss_kb"] - r["base_kb"]) / 1024
        ratio = r["seconds"] / bare
        mark = ""
        if m == "parse":
            mem_target = 2.5 if layout == "wide" else 3.0
            mark = (f"  [target <= {target:g}x: {'ok' if ratio <= target else 'MISSED'}; memory target < {mem_target:g}x file: "
                    f"{'ok' if extra_mb * 2**20 < mem_target * size else 'MISSED'}]")
        lines.append(
            f"  {m:<15} {r['seconds']:8.2f} s  {ratio:5.2f}x bare   peak RSS {r['maxrss_kb'] / 1024:8.0f} MiB "
            f"(+{extra_mb:,.0f} MiB over imports = {extra_mb * 2**20 / size:4.2f}x file)  rows {r['rows']:,}{mark}"
        )
    path.unlink()
    return lines


# ---------------------------------------------------------------------------------------------
# --shapes: whole runs on the two shapes real exports have (issue 32 item 11)
# ---------------------------------------------------------------------------------------------
SAMPLES = ROOT.parent / "shared" / "samples" / "ncu"


def h200_raw_page(folder: Path = SAMPLES) -> Path | None:
    """The H200 full-section raw page, found through the folder's MANIFEST.md (the first table row
    naming an H200 and a raw page with a units row)."""
    manifest = folder / "MANIFEST.md"
    if not manifest.is_file():
        return None
    for line in manifest.read_text(encoding="utf-8").splitlines():
        if line.startswith("| `") and "H200" in line and "raw, units row" in line:
            path = folder / line.split("`")[1]
            if path.is_file():
                return path
    return None


def narrow_columns(header: list[str]) -> list[str]:
    """Identity columns, the recipes' counters and the tensor precision totals of a raw page's
    header (what a roofline export holds: no per-family tensor rollups)."""
    from ridgeline.parsers.ncu import metrics as V

    def tensor_total(c):
        base = c[: -len(V.TENSOR_PEAK_SUFFIX)] + ".sum" if c.endswith(V.TENSOR_PEAK_SUFFIX) else c
        return V.TENSOR_TOTAL_RE.match(base) is not None and base.endswith(".sum")

    return [c for c in header if c in V.IDENTITY_COLUMNS
            or (V.needed_metric(c) and (not V.is_tensor_metric(c) or tensor_total(c)))]


def write_from_shape(src: Path, out: Path, launches: int) -> None:
    """SYNTHETIC raw page: ``src``'s header (narrowed to :func:`narrow_columns`), units row and
    launch rows, repeated to ``launches`` rows with IDs 0..launches-1."""
    import polars as pl

    from ridgeline.parsers.ncu.blocks import _split_header

    with open(src, "rb") as fh:
        header = _split_header(fh.readline())
    cols = narrow_columns(header)
    df = pl.read_csv(src, infer_schema=False, columns=cols)
    units, rows = df.head(1), df.slice(1)
    reps = -(-launches // rows.height)
    body = pl.concat([rows] * reps).head(launches).with_columns(pl.int_range(launches).cast(pl.String).alias("ID"))
    with open(out, "w", encoding="utf-8", newline="") as fh:
        fh.write(quoted(cols) + "\n")
        units.write_csv(fh, include_header=False, quote_style="always")
        body.write_csv(fh, include_header=False, quote_style="always")


WHOLE = r"""
import json, sys, time
t0 = time.perf_counter()
import resource

def hwm_kb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

mode, path, out = sys.argv[1:4]
rc = 0
if mode == "import":
    import polars
elif mode == "bare":
    import polars as pl
    pl.read_csv(path)
else:
    from ridgeline.cli import main
    try:
        main(["analyze", path, "--format", mode, "-o", out])  # table: the default report
    except SystemExit as err:
        rc = err.code or 0
wall = time.perf_counter() - t0
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "hwm_kb": hwm_kb(), "rc": rc}))
"""


def whole_run(mode: str, path: Path, checkout: Path, repeat: int, tmp: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(checkout)
    best = None
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", WHOLE, mode, str(path), str(tmp / f"out.{mode}")],
                             capture_output=True, text=True, env=env, cwd=tmp)
        if out.returncode != 0 or not out.stdout.strip():
            raise SystemExit(f"{mode} failed:\n{out.stderr[-2000:]}")
        r = json.loads(out.stdout.strip().splitlines()[-1])
        if r["rc"] not in (0, 1):
            raise SystemExit(f"analyze {path.name} --format {mode} exited {r['rc']}:\n{out.stderr[-2000:]}")
        if best is None or r["wall"] < best["wall"]:
            best = {**r, "cpu_min": min(r["cpu"], best["cpu_min"]) if best else r["cpu"]}
        else:
            best["cpu_min"] = min(best["cpu_min"], r["cpu"])
    return best


def run_shapes(checkout: Path, launches: int, repeat: int, tmp: Path) -> list[str]:
    src = h200_raw_page()
    if src is None:
        return [f"--shapes needs the shared samples ({SAMPLES}/MANIFEST.md naming the H200 raw page): skipped"]
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(checkout / "ridgeline")], capture_output=True, check=False)
    narrow = tmp / f"h200-shape-{launches}-launches.csv"
    subprocess.run([sys.executable, __file__, "--generate", "shape", str(launches), str(narrow)], check=True)
    lines = [f"whole runs of {checkout}; best of {repeat} by wall time (CPU: best of {repeat}); memory = peak RSS "
             "minus that of a process importing polars only, as a multiple of the file"]
    for label, path in ((f"{src.name} (few launches x many columns)", src),
                        (f"SYNTHETIC {launches:,} launches from its shape (many launches x few columns)", narrow)):
        size = path.stat().st_size
        with open(path, "rb") as fh:
            width = fh.readline().count(b'","') + 1
        res = {m: whole_run(m, path, checkout, repeat, tmp) for m in ("import", "bare", "table", "csv", "json")}
        floor = res["import"]["hwm_kb"]
        lines.append(f"{label}: {size / 1e6:,.2f} MB, {width:,} columns")
        for m in ("import", "bare", "table", "csv", "json"):
            r = res[m]
            extra = (r["hwm_kb"] - floor) * 1024
            what = {"import": "python + import polars", "bare": "polars.read_csv(FILE)", "table": "analyze (table report)",
                    "json": "analyze --format json", "csv": "analyze --format csv"}[m]
            ratio = "" if m == "import" else (f"  {r['wall'] / res['bare']['wall']:5.2f}x wall  "
                                              f"{r['cpu_min'] / res['bare']['cpu_min']:5.2f}x CPU")
            lines.append(f"  {what:<24} {r['wall']:7.2f} s wall {r['cpu_min']:6.2f} s CPU  peak {r['hwm_kb'] / 1024:6.0f} MiB"
                         f" (+{extra / 2**20:5.0f} MiB = {extra / size:6.2f}x file){ratio}")
    narrow.unlink()
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels", type=int, default=5000, help="launches per export (default 5,000: a smoke run)")
    ap.add_argument("--layout", choices=["raw", "details", "both", "wide"], default="both",
                    help=f"wide: a raw page of {WIDE_METRICS:,} metric columns (a full-section export's width)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per measurement, the fastest is kept")
    ap.add_argument("--tmp", default=None, help="folder for the generated files (default: system temp)")
    ap.add_argument("--shapes", action="store_true", help="whole runs on the H200 raw page and a 50,000-launch page of its shape")
    ap.add_argument("--launches", type=int, default=50_000, help="launches of the --shapes synthetic page")
    ap.add_argument("--checkout", type=Path, default=ROOT, help="--shapes: the ridgeline checkout to run (default: this one)")
    ap.add_argument("--generate", nargs=3, metavar=("LAYOUT", "N", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.generate:
        layout, n, out = args.generate
        if layout == "shape":
            write_from_shape(h200_raw_page(), Path(out), int(n))
        elif layout == "wide":
            write_raw(Path(out), int(n), WIDE_METRICS)
        else:
            (write_raw if layout == "raw" else write_details)(Path(out), int(n))
        return 0
    layouts = ["raw", "details"] if args.layout == "both" else [args.layout]
    print(f"ridgeline ncu parser benchmark; python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    if args.shapes:
        with tempfile.TemporaryDirectory(dir=args.tmp) as d:
            for line in run_shapes(args.checkout.resolve(), args.launches, args.repeat, Path(d)):
                print(line, flush=True)
        return 0
    with tempfile.TemporaryDirectory(dir=args.tmp) as d:
        for layout in layouts:
            for line in run(layout, args.kernels, args.repeat, Path(d)):
                print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
