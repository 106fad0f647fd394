"""A pull keeps its samples on disk (ridgeline.sources.spill), not in memory: per-host files
written as answers arrive, repeats kept once (within a request and across host groups), the
temporary folder removed afterwards, and the same windows and notes as an in-memory table of the
same samples. A small fake Prometheus on loopback answers with series built here."""

from __future__ import annotations

import datetime as dt
import json
import re
import tempfile
from urllib.parse import parse_qs

import polars as pl
import pytest
from prometheus_server import JsonApiHandler, serve

from ridgeline.sources import prometheus as P
from ridgeline.sources.spill import ORDER, Spill

T0 = 1767571200  # 2026-01-05T00:00:00Z
START = dt.datetime(2026, 1, 5, tzinfo=dt.timezone.utc)
END = START + dt.timedelta(minutes=10)
POINTS = [[T0 + 30 * k, str(40 + k)] for k in range(21)]  # 10 minutes at 30 s, GPU-Util 40..60 %


def _series(**labels):
    return {"metric": {"__name__": "DCGM_FI_DEV_GPU_UTIL", "gpu": "0", **labels}, "values": POINTS}


class _Fleet(JsonApiHandler):
    """Hosts h1 and h2 with a Hostname label; h1 is scraped a second time by a 1.x exporter job
    whose series carry ``hostname`` instead (so it is asked with the series without Hostname)."""

    def do_GET(self):
        path = self.path.split("?")[0]
        if path == "/api/v1/query":
            return self._send({"resultType": "scalar", "result": [0, "1"]})
        return self._send(["h1", "h2"])  # /api/v1/label/Hostname/values

    def do_POST(self):
        form = parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
        query = form["query"][0]
        result = []
        if "DCGM_FI_DEV_GPU_UTIL" in query:
            everything = [_series(Hostname="h1", UUID="GPU-1"), _series(Hostname="h2", UUID="GPU-2"),
                          _series(hostname="h1", UUID="GPU-1")]
            m = re.search(r'Hostname(=~?)"([^"]*)"', query)
            if m is None:
                result = everything
            elif m.group(2) == "":
                result = [s for s in everything if "Hostname" not in s["metric"]]
            else:
                result = [s for s in everything if s["metric"].get("Hostname") == m.group(2)]
        self._send({"resultType": "matrix", "result": result})


@pytest.fixture(scope="module")
def fleet():
    with serve(_Fleet) as url:
        yield url


pytest.importorskip("httpx", reason="httpx not installed (pip install 'ridgeline[prometheus]')")


def _pull(url, **kw):
    return P.pull(url, start=START, end=END, step_s=30, **kw)


def test_repeats_across_host_groups_are_kept_once(fleet, tmp_path):
    one = _pull(fleet, spill_dir=str(tmp_path))  # 2 hosts <= 32: one request per field, no host groups
    split = _pull(fleet, hosts_per_query=1, spill_dir=str(tmp_path))  # (h1), (h2), (no Hostname)
    try:
        assert split.chunks == 3 * one.chunks
        # three series of 21 points came; h1's came twice (once per exporter job)
        assert one.info.rows == split.info.rows == 3 * 21
        assert one.rows == split.rows == 2 * 21
        for p in (one, split):
            assert any("21 samples came twice" in n for n in p.notes), p.notes
        assert split.frame.equals(one.frame)
        assert split.frame.get_column("host").unique().sort().to_list() == ["h1", "h2"]
    finally:
        one.close()
        split.close()


def test_the_spill_is_per_host_files_and_is_removed(fleet, tmp_path):
    pulled = _pull(fleet, hosts_per_query=1, spill_dir=str(tmp_path))
    folder = pulled.spill.path
    assert folder.parent == tmp_path and folder.name.startswith("ridgeline-pull-")
    # one folder per host, each a file per request that had rows of the host (h1: two groups,
    # merged into one file when its repeats were dropped)
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.parquet"))
    assert len(files) == 2 and {f.split("/")[0] for f in files} == {"h0", "h1"}
    source = pulled.source()
    assert set(source.hosts) == {"h1", "h2"}
    assert source.long.select(pl.len()).collect().item() == pulled.rows
    pulled.close()
    assert not folder.exists()


def test_cli_pull_removes_its_temporary_folder(fleet, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from ridgeline.cli import cli

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    res = CliRunner().invoke(cli, ["telemetry", "--prometheus", fleet, "--from", "2026-01-05T00:00:00Z",
                                   "--to", "2026-01-05T00:10:00Z", "--step", "30s", "--hosts-per-query", "1",
                                   "--format", "json", "--window", "5m"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout if hasattr(res, "stdout") else res.output)
    assert {w["host"] for w in doc["telemetry"]["windows"]} == {"h1", "h2"}
    assert doc["accounting"][0]["read"] == 2 * 21  # the samples kept, as the long table holds them
    assert not list(tmp_path.glob("ridgeline-pull-*"))


def test_spill_dedupe_keeps_the_first_and_recounts(tmp_path):
    from ridgeline.parsers.telemetry.reader import finish

    def rows(host, values, uuid="U"):
        return finish(pl.DataFrame({
            "timestamp": [dt.datetime(2026, 1, 5, 0, 0, 30 * k, tzinfo=dt.timezone.utc) if k < 2 else
                          dt.datetime(2026, 1, 5, 0, 1, 30 * (k - 2), tzinfo=dt.timezone.utc) for k in range(len(values))],
            "host": host, "gpu": 0, "uuid": uuid, "field": "gpu_util_ratio", "value": values,
        }), source="test")

    spill = Spill(tmp_path)
    spill.add(0, 0, rows("a", [0.1, 0.2, None]))
    spill.add(1, 1, rows("a", [0.9, 0.9, 0.9, 0.4]))  # the first three repeat chunk 0's samples
    spill.add(2, 1, rows("b", [0.5]))
    assert spill.rows == {"a": 7, "b": 1} and spill.total_nulls == 1
    assert spill.dedupe() == 3  # only host a came from two groups
    assert spill.rows == {"a": 4, "b": 1} and spill.nulls == {"a": 1, "b": 0}
    a = spill.host_frame("a").collect()
    assert a.get_column("value").to_list() == [0.1, 0.2, None, 0.4]  # chunk 0 (first in the plan) wins
    assert spill.scan().collect().sort(ORDER).height == 5
    spill.close()
    assert not spill.path.exists()


def test_spill_order_follows_the_plan_not_arrival(tmp_path):
    from ridgeline.parsers.telemetry.reader import finish

    def one(value):
        return finish(pl.DataFrame({"timestamp": [dt.datetime(2026, 1, 5, tzinfo=dt.timezone.utc)], "host": "a",
                                    "gpu": 0, "field": "gpu_util_ratio", "value": [value]}), source="t")

    spill = Spill(tmp_path)
    for index in (5, 1, 3):  # arrival order
        spill.add(index, 0, one(float(index)))
    assert spill.host_frame("a").collect().get_column("value").to_list() == [1.0, 3.0, 5.0]
    spill.close()
