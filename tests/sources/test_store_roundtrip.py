"""The store reads back exactly what was saved (issue 35, class 3): host names that need escaping
(``10.0.0.5:9400``, ``gpu node 7``, ``node+1``, ``50%``, unicode, ``007`` that polars would read
as a number), a host named ``unknown`` apart from series with no host, and the partition codec
(ridgeline.parsers.telemetry.hive) as an exact inverse pair. Also: the store never writes or
reads through a symbolic link that leads outside it."""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ridgeline.errors import UsageError
from ridgeline.parsers.telemetry import hive
from ridgeline.parsers.telemetry.reader import finish, scan_telemetry, scan_telemetry_sources, telemetry_partitions
from ridgeline.sources.store import save

T0 = dt.datetime(2026, 1, 5, 23, 58, tzinfo=dt.timezone.utc)  # two days: two partitions per host

# any text polars can hold (no lone surrogates), short enough that its encoded folder name fits in
# 255 bytes (a 4-byte character encodes to 12); not the one reserved spelling of "no host"
HOSTS = st.text(st.characters(exclude_categories=("Cs",)), max_size=20).filter(lambda h: h != hive.NULL)
FEW_HOSTS = st.lists(st.one_of(st.none(), HOSTS, st.sampled_from(["unknown", "10.0.0.5:9400", "gpu node 7", "node+1",
                                                                    "007", "1e5", "true", "2026-01-05", "%", "%41",
                                                                    "__HIVE_DEFAULT_PARTITION", "a=b", "..", ""])),
                     min_size=1, max_size=4, unique=True)


def _long(hosts) -> pl.DataFrame:
    rows = []
    for i, host in enumerate(hosts):
        for k in range(8):  # 30 s apart, across midnight
            rows.append({"timestamp": T0 + dt.timedelta(seconds=30 * k), "host": host, "gpu": i % 8,
                         "field": "gpu_util_ratio", "value": 0.1 * (k + 1)})
    df = pl.DataFrame(rows, schema={"timestamp": pl.Datetime("us", "UTC"), "host": pl.String, "gpu": pl.Int64,
                                    "field": pl.String, "value": pl.Float64})
    return finish(df, source="test")


def _key(df):
    return (df.select("timestamp", "host", "gpu", "field", "value")
            .sort("host", "gpu", "timestamp", nulls_last=True))


def _partition_hosts(folder, skipped=0):
    """The hosts the nightly flow's reduction sees (telemetry_partitions), with their row counts."""
    sources, _inputs, listed = scan_telemetry_sources([folder], check_folder_pages=False)
    assert len(listed) == skipped
    out = {}
    for items in telemetry_partitions(sources):
        for _layout, frame, _source in items:
            df = frame.collect()
            for h, n in df.group_by("host").len().iter_rows():
                out[h] = out.get(h, 0) + n
    return out


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(FEW_HOSTS)
def test_saved_hosts_read_back_exactly(hosts):
    long = _long(hosts)
    with tempfile.TemporaryDirectory() as folder:
        report = save(long, folder)
        assert report.rows_added == len(hosts) * 8
        lf, _inputs, skipped = scan_telemetry([folder])
        assert not skipped
        back = lf.collect()
        assert _key(back).equals(_key(long))  # same hosts, same rows
        # the per-host reduction (what `telemetry STORE` and the nightly flow read) loses none
        assert _partition_hosts(folder) == {h: 8 for h in hosts}


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.one_of(st.none(), HOSTS))
def test_codec_is_an_exact_inverse_pair_and_stays_in_one_folder(value):
    text = hive.encode(value)
    assert hive.decode(text) == value
    assert "/" not in text and os.sep not in text and "=" not in text and text not in (".", "..")
    assert (text == hive.NULL) == (value is None)


def test_a_host_named_unknown_and_no_host_are_two_partitions(tmp_path):
    save(_long(["unknown", None]), tmp_path)
    assert sorted(p.name for p in tmp_path.glob("date=2026-01-05/*")) == ["host=__HIVE_DEFAULT_PARTITION__",
                                                                         "host=unknown"]
    assert _partition_hosts(tmp_path) == {"unknown": 8, None: 8}


def test_the_reserved_spelling_is_refused_in_one_line(tmp_path):
    with pytest.raises(UsageError, match="cannot save host '__HIVE_DEFAULT_PARTITION__'"):
        save(_long([hive.NULL]), tmp_path)
    assert not list(tmp_path.rglob("*.parquet"))


@pytest.mark.parametrize("host", ["n" * (hive.MAX_TEXT + 1), "\U0001F600" * 21, "node " * 60, "\x1b[31m" + "x" * 400])
def test_a_host_too_long_for_a_folder_name_is_refused_in_one_line_naming_it(tmp_path, host):
    """Not the operating system's "File name too long" naming no host: one line naming the host
    (its start when long, with its length), before anything is written."""
    with pytest.raises(UsageError) as err:
        save(_long([host]), tmp_path / "store")
    line = str(err.value)
    assert "\n" not in line and f"cannot save host {repr(host[:80])}" in line
    assert f"({len(host)} characters)" in line and "more than the 250" in line
    assert "\x1b" not in line  # a control character is shown escaped, never raw
    assert not (tmp_path / "store").exists()


@pytest.mark.parametrize("host", ["n" * hive.MAX_TEXT, "\U0001F600" * 20, "%" * 83])
def test_a_host_whose_folder_name_just_fits_reads_back(tmp_path, host):
    assert len(hive.encode(host)) <= hive.MAX_TEXT
    save(_long([host]), tmp_path / "store")
    assert _partition_hosts(tmp_path / "store") == {host: 8}


def test_save_never_writes_through_a_link_out_of_the_store(tmp_path):
    store, outside = tmp_path / "store", tmp_path / "elsewhere"
    outside.mkdir()
    (store / "date=2026-01-06").mkdir(parents=True)
    (store / "date=2026-01-06" / "host=a").symlink_to(outside, target_is_directory=True)
    with pytest.raises(UsageError, match=r"host=a is a symbolic link that leads outside the store"):
        save(_long(["a"]), store)
    assert not list(outside.iterdir()) and not list(store.rglob("*.parquet"))  # nothing written, anywhere


def test_save_never_replaces_a_file_outside_through_a_partition_link(tmp_path):
    store, victim = tmp_path / "store", tmp_path / "victim.parquet"
    victim.write_bytes(b"keep me")
    part = store / "date=2026-01-05" / "host=a"
    part.mkdir(parents=True)
    (part / "part-0.parquet").symlink_to(victim)
    with pytest.raises(UsageError, match="leads outside the store"):
        save(_long(["a"]), store)
    assert victim.read_bytes() == b"keep me"


def test_the_reader_lists_and_leaves_out_links_out_of_the_store(tmp_path):
    store = tmp_path / "store"
    save(_long(["a"]), store)
    other = tmp_path / "other"
    save(_long(["b"]), other)
    (store / "date=2026-01-05" / "host=b").symlink_to(other / "date=2026-01-05" / "host=b", target_is_directory=True)
    (store / "date=2026-01-06" / "host=c").mkdir()
    (store / "date=2026-01-06" / "host=c" / "part-0.parquet").symlink_to(other / "date=2026-01-06" / "host=b"
                                                                        / "part-0.parquet")
    lf, _inputs, skipped = scan_telemetry([store])
    assert lf.collect().get_column("host").unique().to_list() == ["a"]
    assert sorted(Path(s.source).parent.name if s.source.endswith(".parquet") else Path(s.source).name
                  for s in skipped) == ["host=b", "host=c"]
    assert all("symbolic link" in s.reason and "outside" in s.reason for s in skipped)
    assert _partition_hosts(store, skipped=2) == {"a": 8}
