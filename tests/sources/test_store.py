"""The telemetry store (ridgeline.sources.store) without a server: layout, read-back, merging,
atomicity. Rows are built here from a small deterministic generator."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

from ridgeline.parsers.telemetry.reader import finish, scan_telemetry
from ridgeline.sources.store import save

T0 = dt.datetime(2026, 1, 5, 23, 50, tzinfo=dt.timezone.utc)  # ten minutes before midnight


def _long(minutes: int = 20, fields=("gpu_util_ratio", "tensor_active_ratio", "fb_used_bytes"), hosts=("a", "b"),
          drop=None) -> pl.DataFrame:
    """TELEMETRY rows at 30 s; ``drop(field, host, k)`` leaves a value out."""
    rows = []
    for host in hosts:
        for gpu in (0, 1):
            for k in range(minutes * 2):
                for f in fields:
                    if drop and drop(f, host, k):
                        continue
                    value = {"gpu_util_ratio": 0.9, "tensor_active_ratio": 0.05 + 0.01 * (k % 3),
                             "fb_used_bytes": 2.0 ** 34}[f]
                    rows.append({"timestamp": T0 + dt.timedelta(seconds=30 * k), "host": host, "gpu": gpu,
                                 "field": f, "value": value})
    return finish(pl.DataFrame(rows), source="test")


def _read(folder) -> pl.DataFrame:
    lf, inputs, skipped = scan_telemetry([folder])
    assert not skipped
    return lf.collect()


def _key(df):
    return df.select("timestamp", "host", "gpu", "field", "value").sort("host", "gpu", "field", "timestamp")


def test_layout_and_read_back(tmp_path):
    long = _long(hosts=("a", "b/c"))
    report = save(long, tmp_path)
    files = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert files == [f"date={d}/host={h}/part-0.parquet" for d in ("2026-01-05", "2026-01-06") for h in ("a", "b%2Fc")]
    assert len(report.written) == 4 and report.rows_added == 2 * 2 * 40
    back = _read(tmp_path)
    assert _key(back).equals(_key(long))  # the reader decodes the partition value: host "b/c" again


def test_hosts_with_different_fields_read_back_without_blank_rows(tmp_path):
    long = _long(drop=lambda f, host, k: host == "b" and f == "tensor_active_ratio")
    save(long, tmp_path)
    back = _read(tmp_path)
    assert back.filter(pl.col("value").is_null()).height == 0
    assert _key(back).equals(_key(long))


def test_rerun_adds_rows_and_fills_values_then_leaves_the_store_alone(tmp_path):
    partial = _long(drop=lambda f, host, k: k >= 30 or (f == "tensor_active_ratio" and k < 10))
    save(partial, tmp_path)
    files = sorted(tmp_path.rglob("*.parquet"))
    full = _long()
    report = save(full, tmp_path)
    assert len(report.extended) == len(files) and report.rows_added == 2 * 2 * 10
    assert _key(_read(tmp_path)).equals(_key(full))
    stamps = {p: p.stat().st_mtime_ns for p in files}
    again = save(full, tmp_path)
    assert not again.written and not again.extended and len(again.unchanged) == len(files)
    assert {p: p.stat().st_mtime_ns for p in files} == stamps
    assert not [p for p in tmp_path.rglob(".*")]


def test_a_failed_write_leaves_no_partition(tmp_path, monkeypatch):
    def boom(self, *a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pl.DataFrame, "write_parquet", boom)
    from ridgeline.errors import UsageError

    with pytest.raises(UsageError, match="No space left"):
        save(_long(), tmp_path / "store")
    assert not [p for p in (tmp_path / "store").rglob("*") if p.is_file()]


def test_a_full_disk_as_polars_reports_it_is_one_line(tmp_path, monkeypatch):
    # polars raises ComputeError, not OSError, when the disk fills during a Parquet write
    def full(self, *a, **k):
        raise pl.exceptions.ComputeError("parquet: underlying IO error: No space left on device (os error 28)")

    monkeypatch.setattr(pl.DataFrame, "write_parquet", full)
    from ridgeline.errors import UsageError

    with pytest.raises(UsageError, match="No space left"):
        save(_long(), tmp_path / "store")
    assert not [p for p in (tmp_path / "store").rglob("*") if p.is_file()]
