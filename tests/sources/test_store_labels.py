"""Workload labels in the telemetry store (ridgeline.sources.store): ``--by pod|namespace|label=NAME``
on a store gives the groups of the source it was written from, a pod rescheduled to another GPU
mid-night included; a store written before labels were kept still reads and says so once; the
Dask engine gives what the local one gives. Fleets are generated here with the synth API."""

from __future__ import annotations

import json
import shutil

import polars as pl
import pytest
from click.testing import CliRunner

from ridgeline import synth
from ridgeline.attribution import telemetry_groups
from ridgeline.cli import cli
from ridgeline.parsers.telemetry.reader import scan_telemetry
from ridgeline.pipeline import reduce_telemetry
from ridgeline.sources.store import save

A = {"namespace": "team-a", "pod": "train-0", "container": "main"}
B = {"namespace": "team-b", "pod": "serve-1", "container": "vllm"}
MINUTES, INTERVAL = 120, 15
START_MS = 1767222000000  # 2025-12-31T23:00:00Z: the night crosses midnight (two date= partitions per host)
MOVE = 0.4  # pod A leaves node01 GPU 1 for GPU 3 at 40% of the run (23:48), inside one day's partition


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """node01: GPU 0 trains in pod A; GPU 1 in pod A until 23:48, then no pod; GPU 2 busy with idle
    tensor cores in pod B; GPU 3 no pod, then pod A from 23:48 (A rescheduled from GPU 1 to 3).
    node02: GPU 0 idle holding memory in pod B, GPU 1 memory-bound with no pod at all.
    node03: no labels on any series (its store partitions get no labels column)."""
    d = tmp_path_factory.mktemp("fleet")
    src = d / "src"
    src.mkdir()
    synth.write_telemetry(src / "node01.prom", ["training", "training", "busy_tensor_idle", "training"],
                          format="exporter", minutes=MINUTES, interval_s=INTERVAL, start_ms=START_MS,
                          labels=[A, [(0.0, A), (MOVE, None)], B, [(0.0, None), (MOVE, A)]])
    synth.write_telemetry(src / "node02.prom", ["idle_allocated", "memory_bound"], format="exporter",
                          minutes=MINUTES, interval_s=INTERVAL, start_ms=START_MS, labels=[B, None])
    synth.write_telemetry(src / "node03.prom", ["training"], format="exporter", minutes=MINUTES,
                          interval_s=INTERVAL, start_ms=START_MS)
    long, _inputs, skipped = scan_telemetry([src])
    assert not skipped
    store = d / "store"
    report = save(long.collect(), store)
    assert len(report.written) == 6  # 3 hosts x 2 days
    return src, store


def _groups(path, by, **kw):
    notes: list[str] = []
    lf, inputs, _skipped, windows = reduce_telemetry([str(p) for p in (path if isinstance(path, list) else [path])],
                                                     **kw)
    report = telemetry_groups(lf, inputs, windows, by=by, notes=notes)
    return report.rows(), notes, windows


def _same(got, want):
    """Group rows equal: keys, GPUs and notes exactly, hours and means to rounding."""
    assert [r["key"] for r in got] == [r["key"] for r in want]
    for g, w in zip(got, want):
        assert (g["keys"], g["gpus"], g["notes"], g["first"], g["last"]) == \
            (w["keys"], w["gpus"], w["notes"], w["first"], w["last"])
        for k in ("gpu_hours", "wasted_gpu_hours", "tensor_active", "dram_active"):
            assert g[k] == pytest.approx(w[k], rel=1e-12, abs=1e-12), (g["key"], k)
        assert g["wasted_split"] == pytest.approx(w["wasted_split"], rel=1e-12, abs=1e-12)


def test_store_keeps_labels_per_row_where_there_are_any(fleet):
    _src, store = fleet
    for part in sorted(store.rglob("*.parquet")):
        schema = pl.read_parquet_schema(part)
        if "host=node03" in str(part):
            assert "labels" not in schema  # no label anywhere: no column of nulls
        else:
            assert schema["labels"] == pl.String
    day = pl.read_parquet(next(store.glob("date=2025-12-31/host=node01/*.parquet")), hive_partitioning=False)
    # one label set per row, as the exporter's series carried it (GPU 1 hands pod A over at 23:48)
    gpu1 = day.filter(pl.col("gpu") == 1).sort("timestamp")
    moved = gpu1.filter(pl.col("labels").is_null()).get_column("timestamp").min()
    assert moved.isoformat() == "2025-12-31T23:48:00+00:00"
    assert gpu1.filter(pl.col("timestamp") < moved).get_column("labels").unique().to_list() == \
        ['container="main",namespace="team-a",pod="train-0"']


def test_read_back_labels_and_pod_are_the_sources(fleet):
    src, store = fleet
    key = ["host", "gpu", "timestamp", "field"]
    a = scan_telemetry([src])[0].select(*key, "labels", "pod").collect().sort(key)
    b = scan_telemetry([store])[0].select(*key, "labels", "pod").collect().sort(key)
    assert b.equals(a)
    assert set(b.get_column("pod").drop_nulls()) == {"team-a/train-0", "team-b/serve-1"}


@pytest.mark.parametrize("by", [["pod"], ["namespace"], ["label=container"], ["namespace", "pod"], ["host", "pod"]])
def test_groups_from_the_store_equal_the_sources(fleet, by):
    src, store = fleet
    want, want_notes, _w = _groups(src, by)
    got, got_notes, _w = _groups(store, by)
    _same(got, want)
    assert got_notes == want_notes


def test_a_rescheduled_pod_keeps_both_gpus_time(fleet):
    _src, store = fleet
    rows = {r["key"]: r for r in _groups(store, ["host", "pod"])[0]}
    a = rows["node01 / team-a/train-0"]
    # GPU 0 all 2 h, GPU 1 until 40% of the run, GPU 3 from there: 2 + 0.8 + 1.2 GPU-h on 3 GPUs
    assert a["gpus"] == 3
    assert a["gpu_hours"] == pytest.approx(2 + MINUTES / 60, abs=INTERVAL / 3600)
    assert rows["node01 / (no pod)"]["gpu_hours"] == pytest.approx(MINUTES / 60, abs=INTERVAL / 3600)
    assert rows["node03 / (no pod)"]["gpus"] == 1


def test_cli_json_groups_of_the_store_equal_the_sources(fleet):
    src, store = fleet

    def doc(path):
        r = CliRunner().invoke(cli, ["telemetry", str(path), "--by", "pod", "--by", "label=container",
                                     "--format", "json", "-q"], catch_exceptions=False)
        assert r.exit_code == 0, r.output
        return json.loads(r.output)["telemetry"]

    want, got = doc(src), doc(store)
    _same(got["groups"], want["groups"])
    assert got["groups_by"] == ["pod", "label=container"]
    assert not [n for n in got.get("notes", []) if "labels" in n]


def _old_store(store, to):
    """The store as the writer before labels kept it: the same partitions without the column."""
    shutil.copytree(store, to)
    for part in to.rglob("*.parquet"):
        df = pl.read_parquet(part, hive_partitioning=False)
        if "labels" in df.columns:
            df.drop("labels").write_parquet(part)
    return to


def test_an_old_store_reads_and_says_once_it_has_no_labels(fleet, tmp_path):
    src, store = fleet
    old = _old_store(store, tmp_path / "old")
    rows, notes, windows = _groups(old, ["pod"])
    assert [r["key"] for r in rows] == ["(no pod)"]
    assert rows[0]["gpu_hours"] == pytest.approx(windows.get_column("span_s").sum() / 3600)
    said = [n for n in notes if "no workload labels" in n]
    assert len(said) == 1 and "stores written before ridgeline kept labels" in said[0]
    # beside a labelled input, the old store's GPUs are "(no pod)" and the note names the store, once
    rows, notes, _w = _groups([old, src / "node02.prom"], ["pod", "namespace"])
    said = [n for n in notes if "keeps no workload labels" in n]
    assert len(said) == 1 and said[0].startswith(str(old)) and "(no pod), (no namespace)" in said[0]
    # --by host asks for no label: nothing said
    assert not [n for n in _groups(old, ["host"])[1] if "labels" in n]


def test_saving_again_over_an_old_store_fills_the_labels(fleet, tmp_path):
    src, store = fleet
    old = _old_store(store, tmp_path / "old")
    report = save(scan_telemetry([src])[0].collect(), old)
    assert len(report.extended) == 4 and report.rows_added == 0  # node01, node02 x 2 days gained labels
    assert len(report.unchanged) == 2  # node03: nothing to add
    _same(_groups(old, ["pod"])[0], _groups(store, ["pod"])[0])


def test_dask_engine_gives_the_local_groups(fleet):
    pytest.importorskip("distributed", reason="dask.distributed not installed (pip install 'ridgeline[dask]')")
    from distributed import Client, LocalCluster
    from polars.testing import assert_frame_equal

    _src, store = fleet
    local, _n, local_windows = _groups(store, ["namespace", "pod"])
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        remote, _n, remote_windows = _groups(store, ["namespace", "pod"], engine="dask", scheduler=client)
    assert_frame_equal(remote_windows, local_windows)
    _same(remote, local)


def test_label_runs_read_file_by_file_equal_the_long_tables(fleet):
    from ridgeline.analyzer.fleet.groups import label_runs, label_runs_in_chunks
    from ridgeline.parsers.telemetry.reader import Options
    from ridgeline.parsers.telemetry.table import label_chunks

    _src, store = fleet
    chunks = label_chunks(store, opts=Options())
    assert len(chunks) == 6  # one per file: 3 hosts x 2 days
    order = ["host", "gpu", "gpu_instance", "_s"]
    whole = label_runs(scan_telemetry([store])[0]).sort(order)
    by_file = label_runs_in_chunks(chunks).sort(order)
    assert by_file.equals(whole)
    # a run that goes on past midnight is one run (node01 GPU 0: pod A all night)
    gpu0 = by_file.filter((pl.col("host") == "node01") & (pl.col("gpu") == 0))
    assert gpu0.height == 1 and gpu0.get_column("_e").item().isoformat() == "2026-01-01T01:00:00+00:00"


def test_a_corrupt_file_of_a_labelled_store_is_listed_and_the_rest_grouped(fleet, tmp_path):
    _src, store = fleet
    copy = tmp_path / "store"
    shutil.copytree(store, copy)
    bad = next(copy.glob("date=2026-01-01/host=node02/*.parquet"))
    bad.write_bytes(bad.read_bytes()[:200])
    r = CliRunner().invoke(cli, ["telemetry", str(copy), "--by", "pod", "--format", "json", "-q"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert [s["source"] for s in doc["skipped"]] == [str(bad)]
    keys = {g["key"] for g in doc["telemetry"]["groups"]}
    assert keys == {"team-a/train-0", "team-b/serve-1", "(no pod)"}


def test_label_runs_in_chunks_of_untidy_rows_equal_label_runs():
    """Chunks whose rows are shuffled, with a (GPU, time) given twice with two label sets (a
    hand-over inside one scrape) and a GPU that skips a chunk: the runs of the rows at once."""
    import datetime as dt

    from ridgeline.analyzer.fleet.groups import label_runs, label_runs_in_chunks

    t0 = dt.datetime(2026, 1, 5, tzinfo=dt.timezone.utc)
    rows = []
    for gpu in (0, 1):
        for k in range(90):
            lab = 'pod="a"' if k < 40 else None if k < 55 else 'pod="b"'
            if gpu == 1 and 30 <= k < 60:
                continue  # GPU 1 is silent through the second chunk
            rows.append({"host": "h", "gpu": gpu, "gpu_instance": None, "timestamp": t0 + dt.timedelta(seconds=15 * k),
                         "labels": lab})
    rows.append({**rows[70], "labels": 'pod="c"'})  # a second label set at one time
    df = pl.DataFrame(rows, schema={"host": pl.String, "gpu": pl.Int64, "gpu_instance": pl.String,
                                    "timestamp": pl.Datetime("us", "UTC"), "labels": pl.String})
    cut = [t0 + dt.timedelta(seconds=15 * k) for k in (30, 60)]
    chunks = [df.filter(pl.col("timestamp") < cut[0]),
              df.filter((pl.col("timestamp") >= cut[0]) & (pl.col("timestamp") < cut[1])),
              df.filter(pl.col("timestamp") >= cut[1])]
    chunks = [c.sample(fraction=1.0, shuffle=True, seed=3) for c in chunks]
    order = ["host", "gpu", "gpu_instance", "_s"]
    assert label_runs_in_chunks(chunks).sort(order).equals(label_runs(df).sort(order))
