#!/usr/bin/env python
"""Timeline readers' speed and memory, as ratios to a bare load of the same file in the same run.

Generates SYNTHETIC inputs in a temporary folder, then runs each measurement in its own
subprocess (peak memory = the process's VmHWM minus its VmHWM after imports):

* nsys sqlite with N kernel rows (plus N/10 copies and N runtime calls):
  ``bare`` = ``polars.read_database`` of ``SELECT`` the kernel table's columns (what any tool pays),
  ``read`` = ``ridgeline.parsers.timeline.reader.read_nsys_sqlite(host_calls="sync")`` as the pipeline
  calls it (kernels, copies, names joined, synchronizing host calls), ``read+analyze`` = the reader then ``ridgeline.analyzer.timeline.busy.analyze_one``.
  Target (issue 13): ``read`` within 2x of ``bare`` at 5 M kernel rows.
* Kineto trace of about S MB: ``bare`` = ``orjson.loads`` of the file (``json.loads`` when orjson
  is not installed; the ratio says which), ``read`` = ``read_kineto``, ``read+analyze``.
  Targets: within 2x of ``orjson.loads`` at 1 GB, peak memory under 3x the uncompressed size
  (files from 64 MB are parsed a chunk of events at a time).

    python benchmarks/bench_timeline.py                  # smoke: 500,000 kernel rows, 100 MB trace
    python benchmarks/bench_timeline.py --full           # the issue's sizes: 5 M rows, 1 GB trace
    python benchmarks/bench_timeline.py --kernels 2000000 --trace-mb 300 --only kineto
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

NAMES = [f"void kernel_{i}<float, (int){i % 7}>(float *, const float *, int)" for i in range(200)]


def make_sqlite(path: Path, kernels: int) -> None:
    con = sqlite3.connect(path)
    c = con.cursor()
    c.execute("PRAGMA journal_mode=OFF")
    c.execute("PRAGMA synchronous=OFF")
    c.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL)")
    c.executemany("INSERT INTO StringIds VALUES (?, ?)", list(enumerate(NAMES + ["cudaLaunchKernel_v7000",
                                                                                  "cudaStreamSynchronize_v3020"])))
    c.execute("CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT)")
    c.execute("INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_VERSION', 'SYNTHETIC bench_timeline.py')")
    c.execute("CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT)")
    c.executemany("INSERT INTO TARGET_INFO_GPU VALUES (?, 'NVIDIA H100 80GB HBM3')", [(i,) for i in range(8)])
    c.execute("""CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,
                 contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER,
                 shortName INTEGER, mangledName INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER,
                 blockY INTEGER, blockZ INTEGER)""")
    c.execute("""CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER,
                 contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER, bytes INTEGER,
                 copyKind INTEGER)""")
    c.execute("""CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, eventClass INTEGER,
                 globalTid INTEGER, correlationId INTEGER, nameId INTEGER, returnValue INTEGER)""")
    rnd = random.Random(13)
    chunk = 100_000
    t = 1_000_000
    for lo in range(0, kernels, chunk):
        rows, api = [], []
        for i in range(lo, min(kernels, lo + chunk)):
            d = rnd.randint(2_000, 60_000)
            name = rnd.randrange(len(NAMES))
            rows.append((t, t + d, i % 8, 1, 7, i, 4242 << 24, name, name, name, 128, 1, 1, 256, 1, 1))
            api.append((t - 5_000, t - 1_000, 1, (4242 << 24) + 1, i, len(NAMES), 0))
            t += d + rnd.randint(500, 8_000)
        c.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
        c.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?,?,?,?)", api)
        c.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?,?,?,?,?,?,?,?,?)",
                      [(r[0] + 10, r[0] + 900, r[2], 1, 9, r[5], r[6], 65536, 1) for r in rows[::10]])
    con.commit()
    con.close()


def make_kineto(path: Path, megabytes: int) -> int:
    rnd = random.Random(13)
    target = megabytes * 1_000_000
    written = 0
    n = 0
    ts = 1_700_000_000_000.0
    with open(path, "w", encoding="utf-8") as fh:
        head = '{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}], "traceEvents": [\n'
        fh.write(head)
        written += len(head)
        first = True
        while written < target:
            d = rnd.randint(2, 60)
            name = NAMES[rnd.randrange(len(NAMES))]
            evs = [
                {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": ts - 20, "dur": 15,
                 "args": {"External id": n, "Input Dims": [[8, 4096], [4096, 4096]]}},
                {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": ts - 8,
                 "dur": 5, "args": {"External id": n, "correlation": n}},
                {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": d,
                 "args": {"External id": n, "device": 0, "stream": 7, "correlation": n, "grid": [128, 1, 1],
                          "block": [256, 1, 1], "registers per thread": 32}},
                {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": n, "pid": 0, "tid": 7, "ts": ts, "bp": "e"},
            ]
            text = ",\n".join(json.dumps(e) for e in evs)
            if not first:
                text = ",\n" + text
            first = False
            fh.write(text)
            written += len(text)
            n += 1
            ts += d + rnd.randint(1, 10)
        fh.write("\n]}\n")
    return n


CHILD = r"""
import json, sys, time
sys.path.insert(0, {root!r})
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0
import numpy, polars as pl, sqlite3  # imports are not timed
try:
    import orjson
except ImportError:
    orjson = None
from ridgeline.parsers import timeline as T
from ridgeline.analyzer import timeline as A
base = hwm()
what, path = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
if what == "sqlite-bare":
    con = sqlite3.connect(path)
    df = pl.read_database("SELECT start, end, deviceId, streamId, correlationId, demangledName, gridX, gridY, gridZ, "
                          "blockX, blockY, blockZ FROM CUPTI_ACTIVITY_KIND_KERNEL", connection=con)
    rows = df.height
elif what == "sqlite-read":
    rows = T.read_nsys_sqlite(path, host_calls="sync").activities.height
elif what == "sqlite-analyze":
    rows = A.analyze_one(T.read_nsys_sqlite(path, host_calls="sync")).devices.height
elif what == "kineto-bare":
    data = open(path, "rb").read()
    doc = orjson.loads(data) if orjson else json.loads(data)
    rows = len(doc["traceEvents"])
elif what == "kineto-read":
    rows = T.read_kineto(path, host_calls="sync").activities.height
elif what == "kineto-analyze":
    rows = A.analyze_one(T.read_kineto(path, host_calls="sync")).devices.height
dt = time.perf_counter() - t0
print(json.dumps({{"s": dt, "peak": hwm() - base, "rows": rows, "orjson": orjson is not None}}))
"""


def measure(what: str, path: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD.format(root=str(ROOT)), what, str(path)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def report(label: str, path: Path, kinds: list[str], repeat: int) -> None:
    size = path.stat().st_size
    results = {}
    for _ in range(repeat):
        for k in kinds:
            r = measure(k, path)
            if k not in results or r["s"] < results[k]["s"]:
                results[k] = r
    bare = results[kinds[0]]
    base_name = kinds[0].split("-", 1)[1]
    if kinds[0] == "kineto-bare":
        base_name = "orjson.loads" if bare["orjson"] else "json.loads (orjson not installed)"
    elif kinds[0] == "sqlite-bare":
        base_name = "polars.read_database(SELECT kernel columns)"
    print(f"\n{label}: {path.name}, {size / 1e6:,.0f} MB; baseline = {base_name} (best of {repeat})")
    print(f"  {'measurement':<16}{'time':>9}{'ratio':>8}{'peak mem':>11}{'x file':>8}")
    for k in kinds:
        r = results[k]
        print(f"  {k:<16}{r['s']:>8.2f}s{r['s'] / bare['s']:>7.2f}x{r['peak'] / 1e6:>9.0f}MB{r['peak'] / size:>7.2f}x")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", type=int, default=500_000, help="kernel rows in the sqlite (default 500,000)")
    ap.add_argument("--trace-mb", type=int, default=100, help="Kineto trace size in MB (default 100)")
    ap.add_argument("--full", action="store_true", help="the issue's sizes: 5,000,000 rows and a 1 GB trace")
    ap.add_argument("--only", choices=["sqlite", "kineto"], help="run one of the two")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args(argv)
    if args.full:
        args.kernels, args.trace_mb = 5_000_000, 1000
    with tempfile.TemporaryDirectory() as tmp:
        if args.only in (None, "sqlite"):
            db = Path(tmp) / "synthetic.sqlite"
            t = time.perf_counter()
            make_sqlite(db, args.kernels)
            print(f"generated {args.kernels:,} kernel rows in {time.perf_counter() - t:.1f}s")
            report("nsys sqlite", db, ["sqlite-bare", "sqlite-read", "sqlite-analyze"], args.repeat)
            db.unlink()
        if args.only in (None, "kineto"):
            tr = Path(tmp) / "synthetic.json"
            t = time.perf_counter()
            n = make_kineto(tr, args.trace_mb)
            print(f"\ngenerated a Kineto trace with {n:,} kernels in {time.perf_counter() - t:.1f}s")
            report("Kineto trace", tr, ["kineto-bare", "kineto-read", "kineto-analyze"], args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
