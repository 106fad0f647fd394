#!/usr/bin/env python
"""Fleet telemetry reduction against plain per-partition baselines, in one run.

Generates SYNTHETIC telemetry (no GPU involved) in the shape operators keep: a wide
hive-partitioned Parquet store ``date=YYYY-MM-DD/host=NAME/part-0.parquet``, one row per GPU
per second, 12 DCGM fields as exporter names (``DCGM_FI_DEV_GPU_UTIL`` percent,
``DCGM_FI_PROF_*`` ratios, power, clocks, FB MiB), rows in time order (all GPUs of a second,
then the next second); and a ``dcgmi dmon`` text capture (DCGM 2.4+ dialect, 8 GPUs, header
repeated every 14 ticks) of one host. Then times, each in its own subprocess (CPU seconds =
user + system of that process, peak RSS = its ``ru_maxrss``; the driver imports nothing heavy):

* ``ridgeline``: ``ridgeline telemetry STORE --window 5m --format csv -o w.csv --quiet``
  (reading, windows with every column, rules, CSV);
* ``polars``: ``baseline_telemetry.py polars``: per partition, per GPU and 5-minute window,
  mean and exact p95 of all 12 fields + the busy-with-idle-tensor share, then concat + CSV;
* ``duckdb``: the same as one SQL query per partition (only when ``duckdb`` imports: it is a
  benchmark-only dependency, ``pip install duckdb``);
* ``ridgeline long`` / ``polars long``: the same fleet written long (``timestamp, gpu, field,
  value``, host in the path) through ridgeline, and the same statistics per partition in plain
  polars on the long rows (``baseline_telemetry.py polars-long``);
* ``ridgeline dmon`` / ``polars dmon``: the dmon capture through ridgeline, and split on
  whitespace by polars plus the same windows.

Targets (issue 11): wide store CPU within 2x of the polars baseline and peak RSS < 1 GB; long
store within 2x of the same baseline computed on long data;
dmon text within 2x of the polars reader and peak RSS < 3x the file size. Text memory (issue
14, item 5): peak RSS of the whole process as a multiple of the file (the target: < 3x) and
above start-up (the same command on the file's first 400 lines), beside the polars reader's;
``--text-mb 210`` sizes each text file as the issue measured it.

    python benchmarks/bench_telemetry_wide.py                   # 8 hosts x 8 GPUs x 2 h, dmon 8 GPUs x 2 h
    python benchmarks/bench_telemetry_wide.py --repeat 3        # medians of 3, modes alternated
    python benchmarks/bench_telemetry_wide.py --full            # the issue's 32 hosts x 6 h, dmon 24 h
    python benchmarks/bench_telemetry_wide.py --text-mb 210 --skip-store --hosts 1 --hours 0.1  # text memory
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXPORTER_SHARE = 4  # the exporter capture covers a quarter of the dmon hours (its text is ~6x denser)
ROOT = HERE.parent
FIELDS = {  # exporter name -> kind of synthetic value
    "DCGM_FI_DEV_GPU_UTIL": "pct", "DCGM_FI_PROF_GR_ENGINE_ACTIVE": "ratio", "DCGM_FI_PROF_SM_ACTIVE": "ratio",
    "DCGM_FI_PROF_SM_OCCUPANCY": "ratio", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": "tensor",
    "DCGM_FI_PROF_DRAM_ACTIVE": "ratio", "DCGM_FI_PROF_PIPE_FP16_ACTIVE": "ratio",
    "DCGM_FI_PROF_PIPE_FP32_ACTIVE": "ratio", "DCGM_FI_DEV_POWER_USAGE": "power", "DCGM_FI_DEV_SM_CLOCK": "smclk",
    "DCGM_FI_DEV_MEM_CLOCK": "memclk", "DCGM_FI_DEV_FB_USED": "fb",
}
DMON = {"DCGM_FI_DEV_GPU_UTIL": "GPUTL", "DCGM_FI_PROF_GR_ENGINE_ACTIVE": "GRACT", "DCGM_FI_PROF_SM_ACTIVE": "SMACT",
        "DCGM_FI_PROF_SM_OCCUPANCY": "SMOCC", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": "TENSO",
        "DCGM_FI_PROF_DRAM_ACTIVE": "DRAMA", "DCGM_FI_PROF_PIPE_FP16_ACTIVE": "FP16A",
        "DCGM_FI_PROF_PIPE_FP32_ACTIVE": "FP32A", "DCGM_FI_DEV_POWER_USAGE": "POWER", "DCGM_FI_DEV_SM_CLOCK": "SMCLK",
        "DCGM_FI_DEV_MEM_CLOCK": "MMCLK", "DCGM_FI_DEV_FB_USED": "FBUSD"}


def host_frame(h: int, gpus: int, seconds: int, day):
    """One host's wide rows (deterministic pseudo-noise from a hash of host, GPU, second, field)."""
    import datetime as dt

    import polars as pl

    t0 = dt.datetime.combine(day, dt.time(), tzinfo=dt.timezone.utc)
    base = pl.DataFrame({"s": pl.int_range(0, seconds, eager=True)}).join(
        pl.DataFrame({"gpu": list(range(gpus))}), how="cross")
    busy = (pl.col("s") // 900 + pl.col("gpu") + h) % 3 != 0  # 15-minute phases
    cols = []
    for i, (name, kind) in enumerate(FIELDS.items()):
        noise = (pl.struct(pl.lit(h).alias("h"), "gpu", "s", pl.lit(i).alias("i")).hash(seed=42) % 10_000
                 ).cast(pl.Float64) / 10_000
        ratio = pl.when(busy).then(0.6 + 0.39 * noise).otherwise(0.02 * noise)
        value = {"pct": (ratio * 100).round(0), "ratio": ratio.round(3), "tensor": (ratio * 0.2).round(3),
                 "power": (100 + 500 * noise).round(3), "smclk": pl.lit(1980.0), "memclk": pl.lit(2619.0),
                 "fb": pl.lit(40960.0)}[kind]
        cols.append(value.alias(name))
    return base.select((pl.lit(t0) + pl.duration(seconds=pl.col("s"))).dt.cast_time_unit("us").alias("timestamp"),
                       pl.col("gpu").cast(pl.Int64), *cols)


# text bytes per hour of one 8-GPU host (the generator's formats), to size files by --text-mb
MB_PER_HOUR = {"dmon": 5.13, "exporter": 63.0, "smi": 2.75}


def generate(folder: Path, *, hosts: int, gpus: int, hours: float, dmon_hours: float,
             text_hours: dict | None = None) -> None:
    import datetime as dt

    text_hours = text_hours or {"dmon": dmon_hours, "exporter": dmon_hours / EXPORTER_SHARE, "smi": dmon_hours}

    day = dt.date(2026, 1, 5)
    store = folder / "store"
    for h in range(hosts):
        d = store / f"date={day}" / f"host=node{h:03d}"
        d.mkdir(parents=True, exist_ok=True)
        frame = host_frame(h, gpus, int(hours * 3600), day)
        frame.write_parquet(d / "part-0.parquet")
        # the same fleet written long (timestamp, gpu, field, value; host in the path), in time
        # order with the fields of a (second, GPU) side by side, as a scrape store keeps it
        d = folder / "store-long" / f"date={day}" / f"host=node{h:03d}"
        d.mkdir(parents=True, exist_ok=True)
        frame.with_row_index("_r").unpivot(index=["_r", "timestamp", "gpu"], variable_name="field") \
            .sort("_r", maintain_order=True).drop("_r").write_parquet(d / "part-0.parquet")
    # dcgmi dmon text (2.4+ dialect): '#Entity' header + 'ID' units line every 14 ticks
    import polars as pl

    df = host_frame(0, 8, int(text_hours["dmon"] * 3600), day)
    width = 13
    header = "#Entity".ljust(16) + "".join(s.ljust(width) for s in DMON.values())
    units = "ID".ljust(16) + "".join(("W" if s == "POWER" else "MHZ" if s.endswith("CLK") else "MB" if s == "FBUSD" else "").ljust(width)
                                    for s in DMON.values())
    row = pl.concat_str([pl.format("GPU {}", "gpu").str.pad_end(16)]
                        + [pl.col(c).cast(pl.String).str.pad_end(width) for c in DMON], separator="")
    lines = df.select(row.alias("line"), ((pl.col("timestamp") - pl.col("timestamp").min()).dt.total_seconds()).alias("tick"))
    with open(folder / "capture.dmon", "w") as fh:
        fh.write("# dcgmi dmon -e 203,1001,1002,1003,1004,1005,1008,1007,155,100,101,252 -d 1000\n")
        for _tick, block in lines.group_by((pl.col("tick") // 14), maintain_order=True):
            fh.write(header + "\n" + units + "\n")
            fh.write("\n".join(block.get_column("line").to_list()) + "\n")
    # dcgm-exporter /metrics scrapes (1 s apart, millisecond timestamps), HELP/TYPE per metric
    scr = host_frame(1, 8, int(text_hours["exporter"] * 3600), day).with_columns(
        (pl.col("timestamp").dt.epoch("ms")).alias("ms"))
    g = pl.col("gpu").cast(pl.String)
    labels = pl.concat_str([pl.lit('{gpu="'), g, pl.lit('",UUID="GPU-'), g, pl.lit('",device="nvidia'), g,
                            pl.lit('",modelName="NVIDIA H100 80GB HBM3",Hostname="node001",DCGM_FI_DRIVER_VERSION="550.54.15"}')])
    parts = [scr.select("ms", pl.lit(i).alias("m"), "gpu",
                        pl.concat_str([pl.lit(name), labels, pl.lit(" "), pl.col(name).cast(pl.String), pl.lit(" "),
                                       pl.col("ms").cast(pl.String)]).alias("line"))
             for i, name in enumerate(FIELDS)]
    heads = [pl.DataFrame({"m": [i], "head": [f"# HELP {name} synthetic\n# TYPE {name} gauge"]}) for i, name in enumerate(FIELDS)]
    body = pl.concat(parts).sort("ms", "m", "gpu").join(pl.concat(heads), on="m", how="left")
    body = body.with_columns(pl.when(pl.col("gpu") == 0).then(pl.col("head") + "\n" + pl.col("line"))
                             .otherwise(pl.col("line")).alias("line"))
    with open(folder / "scrapes.prom", "w") as fh:
        fh.write("\n".join(body.get_column("line").to_list()) + "\n")
    # nvidia-smi --query-gpu CSV, -l 1: units in the header and in every value
    smi = host_frame(2, 8, int(text_hours["smi"] * 3600), day)
    csv = smi.select(pl.concat_str([
        pl.col("timestamp").dt.strftime("%Y/%m/%d %H:%M:%S%.3f"), pl.col("gpu").cast(pl.String), pl.lit("NVIDIA H100 80GB HBM3"),
        pl.col("DCGM_FI_DEV_GPU_UTIL").cast(pl.Int64).cast(pl.String) + " %",
        pl.col("DCGM_FI_DEV_FB_USED").cast(pl.Int64).cast(pl.String) + " MiB",
        pl.col("DCGM_FI_DEV_POWER_USAGE").round(2).cast(pl.String) + " W",
        pl.col("DCGM_FI_DEV_SM_CLOCK").cast(pl.Int64).cast(pl.String) + " MHz",
        pl.col("DCGM_FI_DEV_MEM_CLOCK").cast(pl.Int64).cast(pl.String) + " MHz"], separator=", ").alias("line"))
    with open(folder / "gpu_log.csv", "w") as fh:
        fh.write("timestamp, index, name, utilization.gpu [%], memory.used [MiB], power.draw [W], clocks.sm [MHz], "
                 "clocks.mem [MHz]\n")
        fh.write("\n".join(csv.get_column("line").to_list()) + "\n")


PYCACHE = Path(tempfile.gettempdir()) / "ridgeline-bench-pycache"


def compile_checkout(root: Path) -> None:
    """Byte-compile a checkout into PYCACHE before timing it, as ``pip install`` does: without
    it, an environment with PYTHONDONTWRITEBYTECODE set compiles ridgeline's modules in every
    run (~0.1 CPU s of start-up that no installed copy pays)."""
    env = dict(os.environ, PYTHONPYCACHEPREFIX=str(PYCACHE))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "ridgeline")], env=env, check=False,
                   stdout=subprocess.DEVNULL)


def measure(cmd: list[str], root: Path = ROOT) -> dict:
    # the checkout first; a PYTHONPATH given to the benchmark follows it (e.g. a folder holding
    # duckdb, `pip install --target DIR duckdb`, to leave the environment as it is)
    extra = os.environ.get("PYTHONPATH")
    env = dict(os.environ, PYTHONPATH=str(root) + (os.pathsep + extra if extra else ""),
               PYTHONPYCACHEPREFIX=str(PYCACHE))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    t = time.perf_counter()
    # run outside any checkout: `python -c` puts the working directory first on sys.path
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=tempfile.gettempdir())
    _pid, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    err = proc.stderr.read().decode() if proc.stderr else ""
    # ridgeline exits 1 when it has findings; a baseline that exits 1 failed (a traceback)
    if os.waitstatus_to_exitcode(status) not in ((0, 1) if "ridgeline.cli" in " ".join(cmd) else (0,)):
        raise SystemExit(f"failed: {' '.join(cmd)}\n{err}")
    return {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "rss_mb": ru.ru_maxrss / 1024}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hosts", type=int, default=8)
    ap.add_argument("--gpus", type=int, default=8, help="GPUs per host")
    ap.add_argument("--hours", type=float, default=2.0)
    ap.add_argument("--dmon-hours", type=float, default=2.0)
    ap.add_argument("--full", action="store_true", help="the issue's size: 32 hosts x 8 GPUs x 6 h, dmon 24 h")
    ap.add_argument("--repeat", type=int, default=1, help="rounds (modes alternated); medians are printed")
    ap.add_argument("--keep", metavar="DIR", help="generate into DIR and keep it (reused when present)")
    ap.add_argument("--skip-text", action="store_true", help="only the Parquet stores")
    ap.add_argument("--skip-long", action="store_true", help="leave out the long store")
    ap.add_argument("--before", metavar="DIR",
                    help="also run ridgeline from this checkout (e.g. git archive OLD | tar -x -C DIR): before/after rows")
    ap.add_argument("--text-mb", type=float, metavar="N",
                    help="size each text file (dmon, exporter, nvidia-smi) to about N MB instead of --dmon-hours "
                         "(issue 14 measured memory at 210)")
    ap.add_argument("--skip-store", action="store_true", help="only the text files (no Parquet store runs)")
    ap.add_argument("--gen", metavar="DIR", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.full:
        args.hosts, args.hours, args.dmon_hours = 32, 6.0, 24.0
    text_hours = {"dmon": args.dmon_hours, "exporter": args.dmon_hours / EXPORTER_SHARE, "smi": args.dmon_hours}
    if args.text_mb:
        text_hours = {k: round(args.text_mb / rate, 3) for k, rate in MB_PER_HOUR.items()}
    if args.gen:
        generate(Path(args.gen), hosts=args.hosts, gpus=args.gpus, hours=args.hours, dmon_hours=args.dmon_hours,
                 text_hours=text_hours)
        return
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="ridgeline-bench-"))
    py = sys.executable
    try:
        if not (folder / "store").exists():
            t = time.perf_counter()
            subprocess.run([py, __file__, "--gen", str(folder), "--hosts", str(args.hosts), "--gpus", str(args.gpus),
                            "--hours", str(args.hours), "--dmon-hours", str(args.dmon_hours)]
                           + (["--text-mb", str(args.text_mb)] if args.text_mb else []), check=True)
            print(f"generated in {time.perf_counter() - t:.1f} s")
        store, dmon = folder / "store", folder / "capture.dmon"
        size = sum(p.stat().st_size for p in store.rglob("*.parquet"))
        n_files = len(list(store.rglob("*.parquet")))
        rows = args.hosts * args.gpus * int(args.hours * 3600)
        print(f"store: {n_files} partitions, {args.hosts} hosts x {args.gpus} GPUs x {args.hours:g} h = {rows:,} rows "
              f"x {len(FIELDS)} fields = {rows * len(FIELDS) / 1e6:.1f} M samples, {size / 1e6:.0f} MB Parquet")
        cli = [py, "-c", "from ridgeline.cli import main; main()", "telemetry"]
        out = folder / "out.csv"
        modes = {
            "ridgeline": cli + [str(store), "--window", "5m", "--format", "csv", "-o", str(out), "--quiet"],
            "polars": [py, str(HERE / "baseline_telemetry.py"), "polars", str(store), str(out)],
        }
        long_store = folder / "store-long"
        if long_store.exists() and not args.skip_long:
            modes["ridgeline long"] = cli + [str(long_store), "--window", "5m", "--format", "csv", "-o", str(out), "--quiet"]
            modes["polars long"] = [py, str(HERE / "baseline_telemetry.py"), "polars-long", str(long_store), str(out)]
            lsize = sum(p.stat().st_size for p in long_store.rglob("*.parquet"))
            print(f"long store: the same fleet as {rows * len(FIELDS):,} long rows (timestamp, gpu, field, value), "
                  f"{lsize / 1e6:.0f} MB Parquet")
        if subprocess.run([py, "-c", "import duckdb"], capture_output=True).returncode == 0:
            modes["duckdb"] = [py, str(HERE / "baseline_telemetry.py"), "duckdb", str(store), str(out)]
        else:
            print("duckdb: not installed (pip install duckdb), skipped")
        if args.skip_store:
            modes.clear()
        texts = {"dmon": (dmon, "polars-dmon", text_hours["dmon"]),
                 "exporter": (folder / "scrapes.prom", "polars-exporter", text_hours["exporter"]),
                 "smi": (folder / "gpu_log.csv", "polars-smi", text_hours["smi"])}
        for name, (f, base_mode, hours) in texts.items():
            if args.skip_text or not f.exists():
                continue
            modes[f"ridgeline {name}"] = cli + [str(f), "--window", "5m", "--format", "csv", "-o", str(out), "--quiet"]
            modes[f"polars {name}"] = [py, str(HERE / "baseline_telemetry.py"), base_mode, str(f), str(out)]
            # start-up for this format: the same command on the file's first 400 lines
            tiny = folder / f"tiny-{f.name}"
            with open(f, encoding="utf-8") as src, open(tiny, "w", encoding="utf-8") as dst:
                dst.writelines(line for _i, line in zip(range(400), src))
            modes[f"startup {name}"] = cli + [str(tiny), "--window", "5m", "--format", "csv", "-o", str(out), "--quiet"]
            print(f"{name}: 8 GPUs x {hours:g} h, {f.stat().st_size / 1e6:.0f} MB text")
        tiny = ROOT / "fixtures" / "telemetry" / "hive"
        modes["ridgeline startup"] = cli + [str(tiny), "--format", "csv", "-o", str(out), "--quiet"]
        modes["polars startup"] = [py, "-c", "import polars"]
        roots = {m: ROOT for m in modes}
        if args.before:
            for m in [m for m in modes if m.startswith("ridgeline")]:
                modes[m.replace("ridgeline", "before", 1)] = [a for a in modes[m] if a != "--quiet"]  # an option of 11
                roots[m.replace("ridgeline", "before", 1)] = Path(args.before).resolve()
        for root in set(roots.values()):
            compile_checkout(root)
        runs: dict[str, list[dict]] = {m: [] for m in modes}
        for _ in range(args.repeat):
            for m, cmd in modes.items():
                runs[m].append(measure(cmd, roots[m]))
        med = {m: {k: statistics.median(r[k] for r in rs) for k in ("wall", "cpu", "rss_mb")} for m, rs in runs.items()}
        print(f"{'mode':>18} {'wall s':>8} {'CPU s':>8} {'peak RSS MB':>12} {'CPU / baseline':>15}")
        for m, r in med.items():
            kind = m.split()[1] if len(m.split()) > 1 else None
            base = None if m.startswith("startup") else med.get(f"polars {kind}" if kind else "polars")
            ratio = f"{r['cpu'] / base['cpu']:15.2f}" if base else ""
            print(f"{m:>18} {r['wall']:8.2f} {r['cpu']:8.2f} {r['rss_mb']:12.0f} {ratio}")
        st, pst = med["ridgeline startup"], med["polars startup"]
        if "ridgeline" in med:
            w, b = med["ridgeline"], med["polars"]
            print(f"wide store: CPU {w['cpu'] / b['cpu']:.2f}x polars (target <= 2x: "
                  f"{'met' if w['cpu'] <= 2 * b['cpu'] else 'NOT met'}), wall {w['wall'] / b['wall']:.2f}x, "
                  f"peak RSS {w['rss_mb']:.0f} MB (target < 1024: {'met' if w['rss_mb'] < 1024 else 'NOT met'})")
            if "duckdb" in med:
                d = med["duckdb"]
                print(f"vs duckdb: CPU {w['cpu'] / d['cpu']:.2f}x, wall {w['wall'] / d['wall']:.2f}x")
            if "ridgeline long" in med:
                lw, lb = med["ridgeline long"], med["polars long"]
                print(f"long store: CPU {lw['cpu'] / lb['cpu']:.2f}x the polars baseline on long data (target <= 2x: "
                      f"{'met' if lw['cpu'] <= 2 * lb['cpu'] else 'NOT met'}), {lw['cpu'] / b['cpu']:.2f}x the wide "
                      f"baseline, peak RSS {lw['rss_mb']:.0f} MB")
        # peak RSS as a multiple of the file: whole process (the target, issue 14: < 3x) and above
        # start-up (ridgeline: the same command on the file's first 400 lines; polars: `import polars`)
        for name, (f, _base_mode, _hours) in texts.items():
            if f"ridgeline {name}" not in med:
                continue
            rd, bd, sd = med[f"ridgeline {name}"], med[f"polars {name}"], med[f"startup {name}"]
            mb = f.stat().st_size / 2**20
            print(f"{name} text, {mb:.0f} MiB: CPU {rd['cpu'] / bd['cpu']:.2f}x polars reader (target <= 2x: "
                  f"{'met' if rd['cpu'] <= 2 * bd['cpu'] else 'NOT met'}); peak RSS {rd['rss_mb'] / mb:.2f}x the file "
                  f"(target < 3x: {'met' if rd['rss_mb'] < 3 * mb else 'NOT met'}), "
                  f"{(rd['rss_mb'] - sd['rss_mb']) / mb:.2f}x above start-up ({sd['rss_mb']:.0f} MB on its first "
                  f"400 lines); polars reader {bd['rss_mb'] / mb:.2f}x, {(bd['rss_mb'] - pst['rss_mb']) / mb:.2f}x "
                  f"above its import")
        print(f"start-up (imports, a 2-host fixture): ridgeline {st['cpu']:.2f} CPU s / {st['rss_mb']:.0f} MB, "
              f"polars import {pst['cpu']:.2f} CPU s / {pst['rss_mb']:.0f} MB")
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
