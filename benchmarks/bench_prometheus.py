"""Pulling a day from a real Prometheus against reading the same samples from a file.

    python benchmarks/bench_prometheus.py                 # 3 hosts x 2 GPUs, one day at 30 s
    python benchmarks/bench_prometheus.py --hosts 16 --repeat 3

Needs ``prometheus`` and ``promtool`` (Debian: ``apt-get install prometheus``) and the
``ridgeline[prometheus]`` extra. Generates the SYNTHETIC day of ``tests/prometheus_server.py``
(OpenMetrics + the equivalent long CSV) in a temporary folder, loads it with promtool, starts the
server on a free loopback port, then times (best of ``--repeat``), each as a ratio to the
baseline of the same run, reading the CSV (``scan_telemetry`` + collect):

* ``pull``: ``ridgeline.sources.prometheus.pull``, one request per field;
* ``pull chunked``: 500 points per request and one host per request (many small requests);
* ``save``: writing what was pulled as the Parquet store; ``read store``: reading it back.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))


def best(fn, repeat):
    times = []
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hosts", type=int, default=3, help="hosts of 2 GPUs (default 3)")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()

    import shutil

    import prometheus_server as ps

    from ridgeline.parsers.telemetry.reader import scan_telemetry
    from ridgeline.sources.prometheus import parse_time, pull
    from ridgeline.sources.store import save

    if not (shutil.which("prometheus") and shutil.which("promtool")):
        sys.exit("bench_prometheus: prometheus/promtool not installed (apt-get install prometheus)")
    hosts = tuple(f"node{i:02d}" for i in range(1, args.hosts + 1))
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        t = time.perf_counter()
        om, csv = ps.write_fixture_day(tmp / "fixture", hosts)
        ps.load_blocks(om, tmp / "data")
        print(f"setup: {len(hosts)} hosts x 2 GPUs, {csv.stat().st_size / 2**20:.0f} MiB CSV, "
              f"{time.perf_counter() - t:.1f} s to generate and load")
        server = ps.PrometheusServer(tmp / "data", tmp)
        try:
            start = parse_time("2026-01-05T00:00:00Z")
            end = parse_time("2026-01-05T23:59:30Z")
            base, df = best(lambda: scan_telemetry([csv])[0].collect(), args.repeat)
            rows = df.height
            results = []
            t_pull, pulled = best(lambda: pull(server.url, start=start, end=end, step_s=30), args.repeat)
            results.append((f"pull ({pulled.chunks} requests)", t_pull))
            t_chunk, chunked = best(lambda: pull(server.url, start=start, end=end, step_s=30, max_points=500,
                                                 hosts_per_query=1), args.repeat)
            results.append((f"pull chunked ({chunked.chunks} requests)", t_chunk))
            assert chunked.frame.height == pulled.frame.height == rows, (chunked.frame.height, pulled.frame.height, rows)
            store = tmp / "store"
            t_save, _ = best(lambda: (shutil.rmtree(store, ignore_errors=True), save(pulled.frame, store)), args.repeat)
            results.append(("save store", t_save))
            t_read, back = best(lambda: scan_telemetry([store])[0].collect(), args.repeat)
            assert back.height == rows
            results.append(("read store", t_read))
        finally:
            server.stop()
    print(f"baseline: read the CSV, {rows:,} samples: {base:.2f} s")
    for name, secs in results:
        print(f"{name:<34} {secs:6.2f} s  {secs / base:5.2f}x baseline  {rows / secs / 1e6:5.2f} M samples/s")


if __name__ == "__main__":
    main()
