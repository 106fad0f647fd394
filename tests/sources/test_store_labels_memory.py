"""The store keeps each workload label set once (issue 35, class 6): ``--save`` of series with
10,000 labels no longer grows with the pull's length (the wide pivot copied a row's 300 KB of label
text onto every row, and polars' Parquet writer copied it again per row). The labels column is a
Parquet dictionary that reads back as the same text; a store written before (a plain text column)
still reads, and is extended without losing its labels."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import hostile_http as H
from ridgeline.parsers.telemetry.reader import finish
from ridgeline.sources.store import save
from tests.sources.test_prometheus_labels_memory import labelled

T0 = dt.datetime(2026, 1, 5, 10, tzinfo=dt.timezone.utc)
A = 'namespace="team-a",pod="train-0"'
B = 'namespace="team-b",pod="serve-1"'


def _long(minutes: range, labels_of) -> pl.DataFrame:
    rows = [{"timestamp": T0 + dt.timedelta(minutes=m), "host": "n1", "gpu": g, "field": "gpu_util_ratio",
             "value": 0.5, "labels": labels_of(m, g)} for m in minutes for g in (0, 1)]
    df = pl.DataFrame(rows, schema={"timestamp": pl.Datetime("us", "UTC"), "host": pl.String, "gpu": pl.Int64,
                                    "field": pl.String, "value": pl.Float64, "labels": pl.String})
    return finish(df, source="test").with_columns(df.get_column("labels"))


def _read(store: Path) -> pl.DataFrame:
    (part,) = store.rglob("*.parquet")
    return pl.read_parquet(part, hive_partitioning=False).sort("gpu", "timestamp")


def test_labels_are_a_dictionary_that_reads_back_as_the_text_saved(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    long = _long(range(30), lambda m, g: A if g == 0 else (B if m >= 10 else None))
    save(long, tmp_path)
    (part,) = tmp_path.rglob("*.parquet")
    assert pl.read_parquet_schema(part)["labels"] == pl.String  # text, as stores always held
    meta = pq.ParquetFile(part).metadata
    col = [meta.row_group(0).column(i) for i in range(meta.num_columns)
           if meta.row_group(0).column(i).path_in_schema == "labels"][0]
    assert "RLE_DICTIONARY" in col.encodings or "PLAIN_DICTIONARY" in col.encodings
    got = _read(tmp_path)
    want = [A] * 30 + [None] * 10 + [B] * 20
    assert got.get_column("labels").to_list() == want


def test_a_store_written_before_reads_and_is_extended_with_its_labels_kept(tmp_path):
    first = _long(range(20), lambda m, g: A if g == 0 else B)
    save(first, tmp_path)
    (part,) = tmp_path.rglob("*.parquet")
    old = pl.read_parquet(part, hive_partitioning=False)
    old.write_parquet(part)  # as stores were written before: polars' writer, a plain text column
    more = _long(range(10, 40), lambda m, g: A if g == 0 else None)
    report = save(more, tmp_path)
    assert report.extended and report.rows_added == 2 * 20
    got = _read(tmp_path)
    assert got.get_column("labels").to_list() == [A] * 40 + [B] * 20 + [None] * 20  # old values win, gaps filled


_MEASURE = r"""
import datetime as dt, sys, pathlib
from ridgeline.sources import prometheus as P
start = dt.datetime(2026, 1, 5, tzinfo=dt.timezone.utc)
p = P.pull(sys.argv[1], start=start, end=start + dt.timedelta(hours=float(sys.argv[2])), retries=0)
p.save(sys.argv[3])
size = sum(f.stat().st_size for f in pathlib.Path(sys.argv[3]).rglob("*.parquet"))
print([int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM")][0] // 1024, size // 1024)
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="peak memory read from /proc")
def test_save_does_not_grow_with_the_pull_for_series_with_many_labels(tmp_path):
    labels = {f"label_{i:05d}": f"value-{i:05d}-xxxxxxxx" for i in range(10_000)}  # 300 KB of labels a series
    peaks, sizes = {}, {}
    with H.serve(labelled([labels, labels])) as server:
        for hours in (1, 4):  # 39 fields x 2 series x 241 / 961 points
            out = subprocess.run([sys.executable, "-c", _MEASURE, server.url, str(hours), str(tmp_path / f"s{hours}")],
                                 capture_output=True, text=True, timeout=300,
                                 env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
            assert out.returncode == 0, out.stderr[-2000:]
            peaks[hours], sizes[hours] = map(int, out.stdout.split()[-2:])
    # before: 342 -> 838 MiB and 179 -> 666 KiB (the text per row); after: 185 -> 221 MiB, 16 -> 18 KiB
    print("peak MiB, store KiB by hours pulled:", peaks, sizes)
    assert peaks[4] - peaks[1] < 100, json.dumps(peaks)
    assert sizes[4] < 3 * sizes[1] + 64, json.dumps(sizes)
