"""The per-partition reduction (issue 11): one pure function from a partition's rows to its
window rows, wide tables reduced without unpivoting, engines (local threads, Dask) mapping the
same function, the polars dmon reader, and the progress line.

Every frame here is SYNTHETIC, built in the test; expected numbers are worked out by hand or
come from the long-table path (``reduce_windows`` on the same rows unpivoted), which is the
reduction as it was before partitions.
"""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from ridgeline.analyzer.fleet.telemetry import USED_FIELDS, reduce_windows
from ridgeline.analyzer.fleet.partitions import DASK_EXTRA_MESSAGE, reduce_partition, reduce_partitions
from ridgeline.parsers.telemetry import dcgm_dmon
from ridgeline.parsers.telemetry.reader import Options, finish, scan_telemetry_sources, telemetry_partitions
from ridgeline.pipeline import reduce_telemetry
from ridgeline.progress import Progress

T0 = dt.datetime(2026, 1, 5, 8, 0, 0, tzinfo=dt.timezone.utc)
FIX = Path(__file__).resolve().parents[3] / "fixtures"


def wide_rows(host="node1", gpus=(0, 1), n=120, **fields):
    """n one-second rows per GPU, time-major (all GPUs of a second, then the next second), as
    a fleet store keeps them; each field a function (gpu, i) -> value or a constant."""
    rows = []
    for i in range(n):
        for g in gpus:
            row = {"timestamp": T0 + dt.timedelta(seconds=i), "host": host, "gpu": g}
            for name, spec in fields.items():
                row[name] = spec(g, i) if callable(spec) else spec
            rows.append(row)
    schema = {"timestamp": pl.Datetime("us", "UTC"), "host": pl.String, "gpu": pl.Int64,
              **{name: pl.Float64 for name in fields}}
    return pl.DataFrame(rows, schema=schema, orient="row")


def as_long(wide: pl.DataFrame) -> pl.DataFrame:
    """The same rows as the TELEMETRY long table (field by field, as the parsers unpivot)."""
    ident = [c for c in ("timestamp", "host", "gpu", "gpu_instance", "uuid", "model") if c in wide.columns]
    fields = [c for c in wide.columns if c in USED_FIELDS]
    long = pl.concat([wide.select(*ident, pl.lit(f).alias("field"), pl.col(f).alias("value")) for f in fields])
    return finish(long, source="synthetic")


def test_partition_function_hand_checked():
    # GPU 0: util 0.9 for 120 s, tensor 0.05 for the first 60 s and 0.5 after, GR 0.8;
    # GPU 1: util 0.2 throughout. 1-minute windows: 2 per GPU, 60 samples each.
    wide = wide_rows(gpu_util_ratio=lambda g, i: 0.9 if g == 0 else 0.2,
                     tensor_active_ratio=lambda g, i: (0.05 if i < 60 else 0.5) if g == 0 else 0.0,
                     gr_engine_active_ratio=lambda g, i: 0.8 if g == 0 else 0.2,
                     power_w=lambda g, i: float(i))
    out = reduce_partition(wide, window="1m").sort("gpu", "window_start")
    assert out.height == 4
    assert out["samples"].to_list() == [60] * 4
    assert out["interval_s"].to_list() == [1.0] * 4
    assert out["busy_share"].to_list() == [1.0, 1.0, 0.0, 0.0]
    assert out["busy_tensor_idle_share"].to_list() == [1.0, 0.0, 0.0, 0.0]
    assert out["busy_tensor_idle_s"].to_list() == [60.0, 0.0, 0.0, 0.0]
    # power 0..59 then 60..119: means 29.5 / 89.5; p95 (linear) 0.95 * 59 = 56.05 above the window's first
    assert out.filter(pl.col("gpu") == 0)["power_mean_w"].to_list() == [29.5, 89.5]
    assert out.filter(pl.col("gpu") == 0)["power_p95_w"].to_list() == pytest.approx([56.05, 116.05])
    assert out["host"].unique().to_list() == ["node1"]
    assert out["null_values"].to_list() == [0] * 4


def test_repeated_timestamps_merge_like_the_long_table():
    # one GPU, 40 s; every 10th second is written twice: the second copy's values win, and a
    # blank in it counts once per blank cell (as the long table's null rows would)
    base = wide_rows(gpus=(0,), n=40, gpu_util_ratio=0.5, tensor_active_ratio=0.2)
    again = base.filter(pl.col("timestamp").dt.second() % 10 == 0).with_columns(
        pl.lit(0.9).alias("gpu_util_ratio"), pl.lit(None, pl.Float64).alias("tensor_active_ratio"))
    wide = pl.concat([base, again])
    out = reduce_partition(wide, window="all")
    assert out["samples"].to_list() == [40]
    assert out["null_values"].to_list() == [4]
    assert out["gpu_util_mean_ratio"].to_list() == pytest.approx([(36 * 0.5 + 4 * 0.9) / 40])
    assert_frame_equal(out, reduce_windows(as_long(wide), window="all"))


def test_wide_equals_long_on_awkward_rows():
    # several hosts in one frame (hashed ids), a GPU without an index, rows shuffled, blanks,
    # gaps, a profiling ratio clamped and one fed as percent, a constant (stalled) field
    def frame(host, gpus, n, skip=0):
        w = wide_rows(host=host, gpus=gpus, n=n,
                      gpu_util_ratio=lambda g, i: None if i % 17 == 3 else ((i * 37 + (g or 0)) % 100) / 100,
                      gr_engine_active_ratio=lambda g, i: 1.2 if i == 25 else ((i * 11) % 90) / 100,
                      sm_active_ratio=lambda g, i: 40.0 if (host == "b" and i == 27) else 0.3,
                      tensor_active_ratio=lambda g, i: ((i * 13) % 50) / 100,
                      fb_used_bytes=2e9)
        return w.filter(pl.col("timestamp").dt.second() % 29 != skip) if skip else w

    # one index-less GPU alone: a single hashed id (any 64-bit value); then a mix of hosts
    for wide in (frame("gpu-log", (None,), 150), pl.concat([frame("a", (0, 1), 200), frame("b", (None, 3), 150, skip=4)])):
        shuffled = wide.sample(fraction=1.0, shuffle=True, seed=3)
        ref = reduce_windows(as_long(shuffled), window="1m", warmup="10s")
        for w in (wide, shuffled):
            assert_frame_equal(reduce_partition(w, window="1m", warmup="10s"), ref)
        # samples and mean GPU-Util per window, counted independently of the reduction's code
        t0 = pl.col("timestamp").min().over("host", "gpu")
        plain = (wide.filter(pl.col("timestamp") >= t0 + pl.duration(seconds=10))
                 .group_by("host", "gpu", pl.col("timestamp").dt.truncate("1m").alias("window_start"))
                 .agg(pl.len().alias("samples"), pl.col("gpu_util_ratio").mean().alias("util"))
                 .sort("host", "gpu", "window_start", nulls_last=True))
        assert ref["samples"].to_list() == plain["samples"].to_list()
        assert ref["gpu_util_mean_ratio"].to_list() == pytest.approx(plain["util"].to_list(), rel=1e-12)
    assert set(ref["host"].unique().to_list()) == {"a", "b"}
    assert ref["ratio_clamped_values"].sum() > 0
    assert ref["stalled_fields"].drop_nulls().len() > 0 and ref["percent_as_ratio"].any()


def test_order_check_takes_any_64_bit_id():
    # ids are 64-bit hashes: half of them do not fit a signed integer (a diff would be null)
    from ridgeline.analyzer.fleet.telemetry import _non_decreasing

    big = 2**63 + 5
    ts = [T0 + dt.timedelta(seconds=s) for s in (0, 1, 1, 0)]
    def frame(ids):
        return pl.DataFrame({"_gid": pl.Series(ids, dtype=pl.UInt64), "timestamp": ts})

    assert not _non_decreasing(frame([big] * 4), strict=False)  # time goes back
    assert not _non_decreasing(frame([big, big, big, 3]), strict=False)  # id goes down
    assert _non_decreasing(frame([3, 3, big, big + 1]), strict=True)
    assert not _non_decreasing(frame([big, big, big, big + 1]), strict=True)  # (id, 1 s) twice
    assert _non_decreasing(frame([big, big, big, big + 1]), strict=False)


def test_partition_items_of_one_host_merge_in_order():
    # the same host in a wide frame and a long table: merged as long rows, later items winning
    wide = wide_rows(gpus=(0,), n=90, gpu_util_ratio=0.5, power_w=200.0)
    long = as_long(wide_rows(gpus=(0,), n=90, gpu_util_ratio=0.7).filter(pl.col("timestamp").dt.second() < 30))
    got = reduce_partition([("wide", wide), ("long", long)], window="1m")
    ref = reduce_windows(pl.concat([as_long(wide), long]), window="1m")
    assert_frame_equal(got, ref)
    # 8:00 window: 30 s overridden (0.7) + 30 s of the wide frame (0.5); 8:01 (30 s): all overridden
    assert got["gpu_util_mean_ratio"].to_list() == pytest.approx([(30 * 0.7 + 30 * 0.5) / 60, 0.7])


@pytest.fixture()
def wide_store(tmp_path):
    """A wide hive store: 3 hosts x 2 GPUs x 10 minutes over 2 days, exporter column names."""
    for day in (0, 1):
        for h in range(3):
            w = wide_rows(host=f"n{h}", n=600,
                          gpu_util_ratio=lambda g, i: float((i * 7 + g) % 101),  # percent, as exporters write
                          tensor_active_ratio=lambda g, i: ((i + g) % 40) / 100,
                          gr_engine_active_ratio=lambda g, i: 0.9)
            w = w.with_columns(pl.col("timestamp") + pl.duration(days=day)).rename({
                "gpu_util_ratio": "DCGM_FI_DEV_GPU_UTIL", "tensor_active_ratio": "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
                "gr_engine_active_ratio": "DCGM_FI_PROF_GR_ENGINE_ACTIVE"}).drop("host")
            d = tmp_path / "store" / f"date=2026-01-0{5 + day}" / f"host=n{h}"
            d.mkdir(parents=True)
            w.write_parquet(d / "part-0.parquet")
    return tmp_path / "store"


def test_wide_hive_store_one_partition_per_host(wide_store):
    sources, inputs, _skipped = scan_telemetry_sources([str(wide_store)])
    assert [s.layout for s in sources] == ["wide"]
    parts = telemetry_partitions(sources)
    assert len(parts) == 3  # one per host, both days of it
    heights = [item[1].collect().height for part in parts for item in part]
    assert heights == [2 * 2 * 600] * 3
    lf, _inputs, _skipped, windows = reduce_telemetry([str(wide_store)], window="5m")
    assert_frame_equal(windows, reduce_windows(lf, window="5m"))  # the long table, reduced as before
    assert windows.height == 3 * 2 * 2 * 2  # hosts x GPUs x days x 5-minute windows
    assert windows["gpu_util_mean_ratio"].max() <= 1.0  # percent scaled to a ratio


def test_progress_reports_every_partition(wide_store):
    calls = []
    reduce_telemetry([str(wide_store)], progress=lambda done, total, rows: calls.append((done, total, rows)))
    assert [c[:2] for c in calls] == [(1, 3), (2, 3), (3, 3)]
    assert calls[-1][2] == 3 * 2 * 2 * 600


def test_progress_line_only_on_a_terminal():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    tty, pipe = Tty(), io.StringIO()
    for stream in (tty, pipe):
        p = Progress(stream=stream, min_interval_s=0.0)
        p(1, 2, 1000)
        p(2, 2, 2000)
    assert "1/2 partitions" in tty.getvalue() and "2,000 rows" in tty.getvalue()
    assert tty.getvalue().endswith("\r")  # erased when done
    assert pipe.getvalue() == ""
    quiet = Tty()
    Progress(stream=quiet, enabled=False)(1, 1, 5)
    assert quiet.getvalue() == ""


def test_local_and_dask_give_the_same_windows(wide_store):
    pytest.importorskip("distributed", reason="dask.distributed not installed (pip install 'ridgeline[dask]')")
    from distributed import Client, LocalCluster

    paths = [str(wide_store), str(FIX / "telemetry" / "dmon-v24-mig.txt"), str(FIX / "telemetry" / "exporter-3-scrapes.prom"),
             str(FIX / "telemetry" / "exporter-health.prom"), str(FIX / "telemetry" / "dmon-health.txt")]
    _lf, _inputs, _skipped, local = reduce_telemetry(paths, window="1m")
    # the health columns (analyzer/fleet/health.py) are part of the compared rows: XID 79 in both fixtures
    assert local.get_column("xid_codes").to_list().count("79") == 2
    # so are the classes of GPU time (issue 31): XID 79 makes its windows unavailable
    assert local.get_column("class").null_count() == 0 and "unavailable" in local.get_column("class").to_list()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        _lf, _inputs, _skipped, remote = reduce_telemetry(paths, window="1m", engine="dask", scheduler=client)
        parts = telemetry_partitions(scan_telemetry_sources(paths)[0])
        direct = reduce_partitions(parts, window="1m", engine="dask", scheduler=client)
    assert local.height > 0
    assert_frame_equal(remote, local)
    assert_frame_equal(direct, local)


def test_dask_engine_without_dask_is_a_one_line_error(monkeypatch, capsys):
    from ridgeline.analyzer.fleet import partitions as telemetry_partitions
    from ridgeline.cli import main

    monkeypatch.setattr(telemetry_partitions, "dask_available", lambda: False)
    with pytest.raises(SystemExit) as e:
        main(["telemetry", str(FIX / "telemetry" / "long.csv"), "--engine", "dask"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"ridgeline: error: {DASK_EXTRA_MESSAGE}"]
    assert "ridgeline[dask]" in err[0]
    with pytest.raises(SystemExit) as e:
        main(["telemetry", str(FIX / "telemetry" / "long.csv"), "--workers", "2"])
    assert e.value.code == 2


def test_cli_quiet_and_engine_local_same_output(tmp_path):
    from click.testing import CliRunner

    from ridgeline.cli import cli

    src = str(FIX / "scenarios" / "telemetry-fleet")
    a = CliRunner().invoke(cli, ["telemetry", src, "--format", "csv"], catch_exceptions=False)
    b = CliRunner().invoke(cli, ["telemetry", src, "--format", "csv", "--engine", "local", "--quiet"],
                           catch_exceptions=False)
    assert a.exit_code == b.exit_code and a.stdout == b.stdout and a.stdout.count("\n") > 100
    assert "partitions" not in a.stderr  # not a terminal: no progress line


DMON_EDGE = {
    # two captures with different fields, a LINK entity, junk, a cut-off last line
    "multi.txt": ("#Entity   GRACT        TENSO        XXXXX\nID\nGPU 0     0.500        0.100        3\n"
                  "GPU 1     0.600        N/A          4\nGPU 0 LINK 3  0.1   0.2  0.3\nbogus line here\n"
                  "GPU 0     0.700        0.100        5\n#Entity   GPUTL        POWER\nID                     W\n"
                  "GPU 0     55           100.5\nGPU 1     66           200.5\nGPU 0     77"),
    # text before the header, the -d command line, a field named twice, a MIG instance
    "dup.txt": ("junk before\n# comment\ndcgmi dmon -e 1 -d 250\n#Entity   GRACT        TENSO        GRACT\nID\n"
                "GPU 0     0.5          0.1          0.4\nGPU-I 3   0.5          1.2\n"),
    # CRLF and a form feed: the line-by-line reader's splitting
    "odd.txt": "#Entity   GRACT        TENSO\r\nID\r\nGPU 0     0.5          0.1\r\n\x0cGPU 0     0.5          0.1\r\n",
    "crlf.txt": "#Entity   GRACT        TENSO\r\nID\r\nGPU 1     0.5          0.1\r\nGPU 0     0.25         0.1\r\n\r\n",
}


def _dmon_files(tmp_path):
    files = sorted((FIX / "telemetry").glob("dmon*.txt")) + sorted(FIX.glob("scenarios/*/*.dmon"))
    for name, text in DMON_EDGE.items():
        (tmp_path / name).write_bytes(text.encode())
        files.append(tmp_path / name)
    return files


def test_polars_dmon_reader_equals_the_line_by_line_reader(tmp_path):
    for f in _dmon_files(tmp_path):
        got, want = [], []
        for reader, out in ((dcgm_dmon.read_dmon, got), (dcgm_dmon._read_dmon_python, want)):
            opts = Options()
            df, info, skipped = reader(f, opts=opts)
            df = finish(df, source="x").sort("host", "gpu", "gpu_instance", "timestamp", "field",
                                             nulls_last=True, maintain_order=True)
            out += [df, info, skipped, opts.notes]
        assert_frame_equal(got[0], want[0]), f
        assert got[1:] == want[1:], f


def test_dmon_bad_value_names_its_line(tmp_path):
    from ridgeline.errors import InputError

    f = tmp_path / "bad.txt"
    f.write_text("#Entity   GRACT        TENSO\nID\nGPU 0     0.5          0.1\nGPU 0     0.5          abc\n")
    with pytest.raises(InputError) as e:
        dcgm_dmon.read_dmon_wide(f, opts=Options())
    assert ":4:" in str(e.value) and "TENSO" in str(e.value) and "abc" in str(e.value)


def test_exporter_line_split_equals_the_sample_regex():
    # the fast cut (braces, single spaces) must give the regex's groups on every line, and the
    # regex must still see the lines the cut does not take (tabs, double spaces, '}' in a value,
    # non-ASCII, no labels, no sample at all)
    from ridgeline.parsers.telemetry.dcgm_exporter import SAMPLE_RE, _split_samples

    lines = [
        'DCGM_FI_DEV_GPU_UTIL{gpu="0",modelName="NVIDIA H100 80GB HBM3",Hostname="n1"} 97 1767600000000',
        'DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-b"} 40',
        'DCGM_FI_DEV_GPU_UTIL{gpu="0",weird="a}b"} 5 1767600000000',
        'DCGM_FI_DEV_GPU_UTIL{gpu="0",modelName="Hé"} 6',
        'DCGM_FI_DEV_GPU_UTIL{gpu="1"}  7   1767600000000',
        'DCGM_FI_DEV_GPU_UTIL{gpu="1"}\t7',
        "DCGM_FI_DEV_GPU_UTIL 8",
        'DCGM_FI_DEV_GPU_UTIL{gpu="2"} 10 12.5',
        'DCGM_FI_DEV_GPU_UTIL{gpu="2"} ERROR - FAILED TO CONVERT TO STRING',
        'DCGM_FI_DEV_GPU_UTIL{gpu="2"} 3 abc',
        "garbage { line }",
    ]
    body = pl.DataFrame({"line": lines}).with_row_index("lineno", offset=1)
    want = body.with_columns(pl.col("line").str.extract_groups(SAMPLE_RE).alias("g")).unnest("g").rename(
        {"1": "metric", "2": "labels", "3": "raw", "4": "ts_ms"})
    got = _split_samples(body)
    assert_frame_equal(got, want)
    assert got["metric"].null_count() == 3  # the error line, the bad timestamp, the garbage
    assert got["labels"][2] == '{gpu="0",weird="a}b"}'


def test_nvidia_smi_values_read_in_one_pass(tmp_path):
    from ridgeline.errors import InputError
    from ridgeline.parsers.telemetry import nvidia_smi

    f = tmp_path / "q.csv"
    f.write_bytes(b"timestamp, index, power.draw [W], utilization.gpu [%]\n"
                  b"2026/01/05 09:00:00.000, 0, 1e2 W, 5%\n"       # exponent; unit glued to the number
                  b"2026/01/05 09:00:01.000, 0, [N/A], 7 %\r\n"    # blank; CRLF
                  b"2026/01/05 09:00:02.000, 0, .5 W, 12\n")       # no leading digit; no unit
    wide, long, info, _skipped = nvidia_smi.read_query_csv_wide(f, opts=Options())
    assert long is None and info.rows == 3
    assert wide["power_w"].to_list() == [100.0, None, 0.5]
    assert wide["gpu_util_ratio"].to_list() == [0.05, 0.07, 0.12]
    # lone carriage returns split lines as Python's text reading does
    g = tmp_path / "cr.csv"
    g.write_bytes(b"timestamp, index, power.draw [W]\r\n2026/01/05 09:00:00.000, 0, 10 W\r"
                  b"2026/01/05 09:00:01.000, 1, 11 W\r\n")
    assert nvidia_smi.read_query_csv_wide(g, opts=Options())[0]["gpu"].to_list() == [0, 1]
    h = tmp_path / "inf.csv"
    h.write_text("timestamp, index, power.draw [W]\n2026/01/05 09:00:00.000, 0, inf W\n")
    with pytest.raises(InputError) as e:
        nvidia_smi.read_query_csv_wide(h, opts=Options())
    assert ":2:" in str(e.value) and "inf W" in str(e.value)


def test_unreachable_scheduler_is_a_usage_error(monkeypatch):
    pytest.importorskip("distributed", reason="dask.distributed not installed (pip install 'ridgeline[dask]')")
    import distributed

    from ridgeline.errors import UsageError

    def refuse(address, *a, **kw):
        raise OSError(f"Timed out trying to connect to {address}")

    monkeypatch.setattr(distributed, "Client", refuse)
    with pytest.raises(UsageError) as e:
        reduce_telemetry([str(FIX / "telemetry" / "long.csv")], engine="dask", scheduler="tcp://127.0.0.1:1")
    assert "tcp://127.0.0.1:1" in str(e.value) and "Dask scheduler" in str(e.value)


def test_wide_store_with_files_of_different_columns(wide_store):
    # host n1's second day lacks the tensor column: that day's rows have no tensor field (absent,
    # not blank), exactly as the long reader's per-column-set scans give them
    f = next(wide_store.glob("date=2026-01-06/host=n1/*.parquet"))
    pl.read_parquet(f).drop("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE").write_parquet(f)
    sources, _inputs, _skipped = scan_telemetry_sources([str(wide_store)])
    parts = telemetry_partitions(sources)
    assert [len(p) for p in parts] == [1, 2, 1]  # n1's files are in two column sets
    lf, _inputs, _skipped, windows = reduce_telemetry([str(wide_store)], window="5m")
    assert_frame_equal(windows, reduce_windows(lf, window="5m"))
    n1 = windows.filter((pl.col("host") == "n1") & (pl.col("window_start").dt.day() == 6))
    assert n1["tensor_active_mean_ratio"].null_count() == n1.height and n1["null_values"].sum() == 0


@pytest.mark.parametrize("window", ["1m", "all"])
def test_a_large_partition_reduced_in_slices_of_whole_gpus_gives_the_same_windows(monkeypatch, window):
    """Above WINDOW_CHUNK_ROWS rows a partition's window query runs per slice of whole GPUs (its
    per-row temporaries held for one slice); every step is per GPU, so nothing may change, even
    with a field only some GPUs report (its aggregates must stay computed, not 'absent')."""
    from ridgeline.analyzer.fleet import telemetry

    wide = wide_rows(gpus=(0, 1, 2, 3, 4), n=150,
                     gpu_util_ratio=lambda g, i: ((g + 1) * 7 + i) % 100 / 100,
                     tensor_active_ratio=lambda g, i: (i % 13) / 20 if g == 3 else None,
                     power_w=lambda g, i: 100.0 + g * 10 + (i % 7))
    whole = reduce_partition(wide, window=window)
    monkeypatch.setattr(telemetry, "WINDOW_CHUNK_ROWS", 320)  # slices of 2 GPUs (300 rows), 2, then 1
    heights = []
    query = telemetry._window_query
    monkeypatch.setattr(telemetry, "_window_query", lambda w, *a, **k: heights.append(w.height) or query(w, *a, **k))
    sliced = reduce_partition(wide, window=window)
    assert heights == [300, 300, 150]
    assert whole.height == sliced.height > 0
    assert_frame_equal(sliced.sort("gpu", "window_start"), whole.sort("gpu", "window_start"))
    assert sliced.filter(pl.col("gpu") == 3).get_column("tensor_active_mean_ratio").is_not_null().all()
