"""Peak memory of ``ridgeline telemetry STORE`` on a store with a long history per host (issue 23).

    python benchmarks/bench_store_days.py                          # 2 and 4 days, 1 host x 8 GPUs at 1 s
    python benchmarks/bench_store_days.py --days 2 4 8 --before /tmp/before --by pod

Generates a SYNTHETIC store in ridgeline's layout (:mod:`ridgeline.sources.store`:
``date=YYYY-MM-DD/host=H/part-0.parquet``, identity columns, the workload ``labels`` column, one
column per canonical field) of ``--days`` UTC days, ``--hosts`` hosts of ``--gpus`` GPUs sampled
every ``--interval`` seconds (8 DCGM fields: GPU-Util, the four profiling ratios, power,
framebuffer, SM clock; values from a seeded generator, a pod per GPU that moves to the next GPU
each day). It is written directly as wide frames (the store's own ``save`` pivots long rows,
which would dominate the set-up at these sizes). Each run is ``ridgeline telemetry STORE --format json
-o FILE`` in its own process (peak RSS = the child's ``ru_maxrss`` from ``wait4``, CPU = its user
+ system time); ``--by pod`` adds the attribution. ``--before DIR`` runs an older checkout on the
same store; the runs without ``--by`` must give equal ``telemetry`` JSON (the store reduced
whole or by days gives the same windows; with ``--by``, code that reads no labels groups every
GPU in "(no pod)").
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DAY0 = dt.datetime(2026, 1, 5, tzinfo=dt.timezone.utc)


def write_store(folder: Path, *, days: int, hosts: int, gpus: int, interval_s: float, seed: int = 23) -> int:
    """The synthetic store (see the module docstring); returns the rows written."""
    import numpy as np
    import polars as pl

    from ridgeline.atomic import write_parquet

    rng = np.random.default_rng(seed)
    per_day = int(round(86400 / interval_s))
    rows = 0
    for d in range(days):
        day = DAY0 + dt.timedelta(days=d)
        t = pl.datetime_range(day, day + dt.timedelta(seconds=(per_day - 1) * interval_s),
                              dt.timedelta(seconds=interval_s), time_unit="us", time_zone="UTC", eager=True)
        for h in range(hosts):
            host = f"node{h + 1:02d}"
            n = per_day * gpus
            busy = rng.uniform(0.0, 1.0, n)
            frame = pl.DataFrame({
                "timestamp": pl.concat([t] * gpus),
                "gpu": np.repeat(np.arange(gpus, dtype=np.int64), per_day),
                "uuid": np.repeat(np.array([f"GPU-{h:04d}-{g:04d}" for g in range(gpus)]), per_day),
                "gpu_instance": pl.Series([None] * n, dtype=pl.String),
                "model": pl.Series(["NVIDIA H100 80GB HBM3"] * n, dtype=pl.String),
                "labels": np.repeat(np.array([f'container="main",namespace="team-{(g + d) % 3}",'
                                              f'pod="job-{(g + d) % gpus}"' for g in range(gpus)]), per_day),
                "gpu_util_ratio": np.clip(busy + rng.normal(0, 0.02, n), 0, 1),
                "gr_engine_active_ratio": np.clip(busy * 0.95, 0, 1),
                "sm_active_ratio": np.clip(busy * 0.8, 0, 1),
                "tensor_active_ratio": np.clip(busy * rng.uniform(0, 0.6, n), 0, 1),
                "dram_active_ratio": np.clip(busy * rng.uniform(0, 0.5, n), 0, 1),
                "power_w": 80 + 600 * busy,
                "fb_used_bytes": np.full(n, 6.0e10),
                "sm_clock_hz": np.full(n, 1.98e9),
            }).sort("gpu", "timestamp")
            target = folder / f"date={day:%Y-%m-%d}" / f"host={host}" / "part-0.parquet"
            target.parent.mkdir(parents=True, exist_ok=True)
            write_parquet(frame, target)
            rows += frame.height
    return rows


def run(args: list[str], root: Path) -> tuple[float, float, float]:
    """(peak RSS MiB, CPU s, wall s) of ``ridgeline ARGS`` (the code at ``root``) in a fresh process."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_prometheus_memory import run_usage

    return run_usage(args, root)[:3]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--days", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--hosts", type=int, default=1)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--interval", type=float, default=1.0, help="sample interval, s (default 1)")
    ap.add_argument("--by", default=None, help="also run with --by BY (e.g. pod)")
    ap.add_argument("--window", default=None, help="every run's --window (default ridgeline's, 5m): a longer "
                    "window has fewer windows, which separates what grows with the windows from the samples")
    ap.add_argument("--before", type=Path, default=None, help="an older checkout, run on the same store")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each (the lowest peak and CPU are shown)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder (printed)")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    tmp = Path(tempfile.mkdtemp(prefix="bench-store-days-"))
    codes = ([("before", args.before.resolve())] if args.before else []) + [("after" if args.before else "this", ROOT)]
    print(f"{'days':>4} {'rows':>11} {'store':>8} {'code':<7} {'run':<10} {'peak RSS':>10} {'CPU s':>7} {'wall s':>7}")
    try:
        for days in args.days:
            store = tmp / f"store-{days}"
            # written by a child process: a parent that held the generated days would pass its
            # resident memory to each measured child (ru_maxrss counts the child from fork on)
            code = (f"import sys; sys.path.insert(0, {str(ROOT / 'benchmarks')!r}); from bench_store_days import "
                    f"write_store; from pathlib import Path; print(write_store(Path({str(store)!r}), days={days}, "
                    f"hosts={args.hosts}, gpus={args.gpus}, interval_s={args.interval}))")
            rows = int(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                                      env=dict(os.environ, PYTHONPATH=str(ROOT))).stdout)
            size = sum(f.stat().st_size for f in store.rglob("*.parquet")) / 2**20
            docs = {}
            for code, root in codes:
                runs = [("plain", [])] + ([(f"--by {args.by}", ["--by", args.by])] if args.by else [])
                for name, extra in runs:
                    out = tmp / f"{code}-{days}-{name.replace(' ', '')}.json"
                    best = None
                    for _ in range(args.repeat):
                        window = ["--window", args.window] if args.window else []
                        got = run(["telemetry", str(store), "--format", "json", "-q", "-o", str(out), *window, *extra],
                                  root)
                        best = got if best is None else tuple(min(a, b) for a, b in zip(best, got))
                    mib, cpu, wall = best
                    print(f"{days:>4} {rows:>11,} {size:>5.0f} MiB {code:<7} {name:<10} {mib:>6.0f} MiB {cpu:>7.1f} "
                          f"{wall:>7.1f}", flush=True)
                    doc = json.loads(out.read_text())["telemetry"]
                    doc.pop("inputs", None)
                    docs.setdefault(name, []).append((code, doc))
            for name, got in docs.items():
                if name != "plain":
                    continue  # (a store read by code that keeps no labels groups every GPU in "(no pod)")
                if len(got) > 1 and any(d != got[0][1] for _c, d in got[1:]):
                    print(f"     !! {name}: the telemetry JSON differs between {', '.join(c for c, _d in got)}")
            shutil.rmtree(store)
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
