"""Benchmark: telemetry reduction throughput and peak memory on a synthetic fleet.

Generates SYNTHETIC telemetry (no GPU involved) as hive-partitioned Parquet in our long
layout (``date=YYYY-MM-DD/host=nodeNNN/part-0.parquet`` with timestamp, gpu, field,
value), 8 GPUs per host, 1 s samples, 12 fields. Then, each in its own subprocess so peak
RSS is measured per run:

* ``ridgeline``: ``reduce_telemetry(folder, window="5m")``, what ``ridgeline telemetry`` runs
  (one partition per host, each read with its filter pushed into the scan);
* ``reduce_windows``: ``scan_telemetry(folder)`` + ``reduce_windows(window="5m")``, the
  long-table API (hosts in chunks of ``chunk_rows`` long rows);
* ``baseline``: a bare polars lazy group-by over the same files (mean value per host, GPU,
  field and 5-minute window), streaming.

Prints samples/s of each, their ratio, and peak RSS. The target is a day of 512 GPUs
(512 x 86,400 x 12 = 531 M samples) at >= 20 M samples/s and < 2 GB peak; by default a
scaled-down fleet runs (``--gpus 128 --hours 6``: 33 M samples) and the full-day time is
extrapolated linearly from samples/s. ``--gpus 512 --hours 24`` runs the real size (2.1 GB
of Parquet; about 3 minutes to generate and 2 to measure on 2 cores).

    python benchmarks/bench_telemetry.py                 # default, well under 2 minutes on 2 cores
    python benchmarks/bench_telemetry.py --gpus 512 --hours 24 --keep fleet-data   # the real size
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIELDS = (
    "gpu_util_ratio", "gr_engine_active_ratio", "sm_active_ratio", "sm_occupancy_ratio",
    "tensor_active_ratio", "dram_active_ratio", "fp16_active_ratio", "fp32_active_ratio",
    "power_w", "sm_clock_hz", "mem_clock_hz", "fb_used_bytes",
)
GPUS_PER_HOST = 8
FULL_DAY_SAMPLES = 512 * 86_400 * 12


def generate(folder: Path, *, gpus: int, hours: float) -> int:
    """Write the synthetic fleet; returns the number of samples (long rows)."""
    import datetime as dt

    import polars as pl

    seconds = int(hours * 3600)
    t0 = dt.datetime(2026, 1, 5, tzinfo=dt.timezone.utc)
    hosts = (gpus + GPUS_PER_HOST - 1) // GPUS_PER_HOST
    fields = pl.DataFrame({"field": list(FIELDS), "fi": list(range(len(FIELDS)))})
    total = 0
    for h in range(hosts):
        n_gpu = min(GPUS_PER_HOST, gpus - h * GPUS_PER_HOST)
        base = pl.DataFrame({"gpu": list(range(n_gpu))}).join(
            pl.DataFrame({"s": pl.int_range(0, seconds, eager=True)}), how="cross"
        ).join(fields, how="cross")
        # deterministic pseudo-noise from a hash of (host, gpu, second, field)
        noise = (pl.struct(pl.lit(h), "gpu", "s", "fi").hash(seed=42) % 10_000).cast(pl.Float64) / 10_000
        busy = ((pl.col("s") // 900 + pl.col("gpu") + h) % 3 != 0)  # 15-minute phases
        ratio = pl.when(busy).then(0.6 + 0.39 * noise).otherwise(0.02 * noise)
        value = (
            pl.when(pl.col("field") == "power_w").then(100 + 500 * noise)
            .when(pl.col("field") == "sm_clock_hz").then(1.98e9)
            .when(pl.col("field") == "mem_clock_hz").then(2.6e9)
            .when(pl.col("field") == "fb_used_bytes").then(4e10)
            .when(pl.col("field") == "tensor_active_ratio").then(ratio * 0.2)
            .otherwise(ratio)
        )
        df = base.select(
            (pl.lit(t0) + pl.duration(seconds=pl.col("s"))).dt.cast_time_unit("us").alias("timestamp"),
            pl.col("gpu").cast(pl.Int64),
            pl.col("field"),
            value.alias("value"),
        )
        d = folder / f"date={t0.date()}" / f"host=node{h:03d}"
        d.mkdir(parents=True, exist_ok=True)
        df.write_parquet(d / "part-0.parquet", row_group_size=1_000_000)
        total += df.height
    return total


def child(mode: str, folder: str) -> None:
    """Run one measurement in this process and print a JSON line."""
    import polars as pl

    t = time.perf_counter()
    if mode == "ridgeline":  # what `ridgeline telemetry` runs: one partition per host
        from ridgeline.pipeline import reduce_telemetry

        _lf, inputs, _, out = reduce_telemetry([folder], window="5m")
        rows = inputs[0].rows
    elif mode == "reduce_windows":  # the long-table API (hosts in chunks of chunk_rows)
        from ridgeline.analyzer.fleet.telemetry import reduce_windows
        from ridgeline.parsers.telemetry.reader import scan_telemetry

        lf, inputs, _ = scan_telemetry([folder])
        out = reduce_windows(lf, window="5m")
        rows = inputs[0].rows
    else:
        lf = pl.scan_parquet(str(Path(folder) / "**" / "*.parquet"), hive_partitioning=True)
        out = lf.group_by("host", "gpu", "field", pl.col("timestamp").dt.truncate("5m")).agg(
            pl.col("value").mean()
        ).collect(engine="streaming")
        rows = lf.select(pl.len()).collect().item()
    secs = time.perf_counter() - t
    print(json.dumps({"mode": mode, "seconds": secs, "samples": rows, "out_rows": out.height,
                      "peak_rss_mb": peak_rss_mb()}))


def peak_rss_mb() -> float:
    """This process's own peak RSS. /proc VmHWM belongs to the process image; ru_maxrss
    would carry over the parent's peak through fork+exec on Linux."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def run_child(mode: str, folder: Path) -> dict:
    env = dict(os.environ)
    env.setdefault("POLARS_MAX_THREADS", str(os.cpu_count() or 2))
    proc = subprocess.run([sys.executable, __file__, "--child", mode, "--data", str(folder)],
                          capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{mode} run failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpus", type=int, default=128)
    ap.add_argument("--hours", type=float, default=6.0)
    ap.add_argument("--keep", metavar="DIR", help="write the data here and keep it (default: a temp dir, removed)")
    ap.add_argument("--child", choices=["ridgeline", "reduce_windows", "baseline"], help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.data)
        return

    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="ridgeline-bench-"))
    try:
        t = time.perf_counter()
        if not any(folder.rglob("*.parquet")):
            n = generate(folder, gpus=args.gpus, hours=args.hours)
        else:
            import polars as pl

            n = pl.scan_parquet(str(folder / "**" / "*.parquet")).select(pl.len()).collect().item()
        gen_s = time.perf_counter() - t
        size = sum(p.stat().st_size for p in folder.rglob("*.parquet"))
        print(f"data: {args.gpus} GPUs x {args.hours:g} h x {len(FIELDS)} fields at 1 s = {n:,} samples, "
              f"{size / 1e6:.0f} MB Parquet (generated in {gen_s:.1f} s)")
        base = run_child("baseline", folder)
        ours = run_child("ridgeline", folder)
        api = run_child("reduce_windows", folder)
        for r in (base, ours, api):
            r["rate"] = r["samples"] / r["seconds"]
            print(f"{r['mode']:>14}: {r['seconds']:7.2f} s  {r['rate'] / 1e6:7.1f} M samples/s  "
                  f"peak RSS {r['peak_rss_mb']:7.0f} MB  ({r['out_rows']:,} output rows)")
        print(f"ratio ridgeline/baseline throughput: {ours['rate'] / base['rate']:.2f} "
              f"(ridgeline also aligns fields per timestamp, p95s, states, coverage, gaps)")
        print(f"full day of 512 GPUs ({FULL_DAY_SAMPLES / 1e6:.0f} M samples), extrapolated: "
              f"ridgeline {FULL_DAY_SAMPLES / ours['rate']:.0f} s, baseline {FULL_DAY_SAMPLES / base['rate']:.0f} s")
        print(f"targets: >= 20 M samples/s -> {'met' if ours['rate'] >= 20e6 else 'NOT met'}; "
              f"peak < 2048 MB -> {'met' if ours['peak_rss_mb'] < 2048 else 'NOT met'} (at this size)")
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
