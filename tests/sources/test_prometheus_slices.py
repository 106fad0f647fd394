"""A long pull is reduced one time slice of one host at a time (ridgeline.analyzer.fleet.slices)
and gives the same windows as the whole-host reduction, whatever the slice length; no step reads
more than one slice. A fake Prometheus on loopback answers ``query_range`` for three days of
SYNTHETIC series built here (values from the formulas in ``_value``), with what crosses a
slice boundary on purpose: gaps whose median differs per day, a GPU that starts on day 2, an
XID and an ECC counter that change at the first sample of day 2."""

from __future__ import annotations

import datetime as dt
import json
import re
from urllib.parse import parse_qs

import polars as pl
import pytest
from polars.testing import assert_frame_equal
from prometheus_server import JsonApiHandler, serve

pytest.importorskip("httpx", reason="httpx not installed (pip install 'ridgeline[prometheus]')")

from ridgeline.sources import prometheus as P  # noqa: E402

pytestmark = pytest.mark.early  # one worker runs the module (its fixtures): started first, never the run's tail

T0 = 1767571200  # 2026-01-05T00:00:00Z
DAY = 86400
STEP = 60
DAYS = 3
START = dt.datetime(2026, 1, 5, tzinfo=dt.timezone.utc)
END = START + dt.timedelta(seconds=DAYS * DAY - STEP)
NAMES = ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_DRAM_ACTIVE",
         "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL")
GPUS = {"h1": (0, 1), "h2": (0, 1, 2)}
DAY2 = T0 + DAY


def _kept(host: str, gpu: int, t: int) -> bool:
    """Which points exist: h1 gpu 1 every minute until noon of day 1, every other minute after
    (its median gap is not day 1's); h2 gpu 2 starts on day 2 at 06:00; h2 gpu 0 misses an hour."""
    if (host, gpu) == ("h1", 1) and t >= T0 + 12 * 3600:
        return (t // STEP) % 2 == 0
    if (host, gpu) == ("h2", 2):
        return t >= DAY2 + 6 * 3600
    if (host, gpu) == ("h2", 0):
        return not (T0 + 30 * 3600 <= t < T0 + 31 * 3600)
    return True


def _value(name: str, host: str, gpu: int, t: int) -> float:
    k = (t - T0) // STEP
    phase = (k // 37 + gpu * 5 + len(host)) % 10  # changes every 37 minutes: windows differ
    if name == "DCGM_FI_DEV_GPU_UTIL":
        return 10.0 * phase
    if name == "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE":
        return round(0.02 * ((k * 7 + gpu) % 13), 4)
    if name == "DCGM_FI_PROF_DRAM_ACTIVE":
        return round(0.07 * ((k + gpu * 3) % 14), 4)
    if name == "DCGM_FI_DEV_POWER_USAGE":
        return 100.0 + 25 * phase + (k % 3)
    if name == "DCGM_FI_DEV_FB_USED":
        return 1000.0 * (phase + 1)
    if name == "DCGM_FI_DEV_XID_ERRORS":
        return 13.0 if (host, gpu) == ("h1", 0) and t >= DAY2 else 0.0
    return 1.0 if (host, gpu) == ("h1", 0) and t >= DAY2 else 0.0  # ECC DBE volatile: +1 at day 2


class _Days(JsonApiHandler):
    def do_GET(self):
        if self.path.split("?")[0] == "/api/v1/query":
            return self._send({"resultType": "scalar", "result": [0, "1"]})
        return self._send(sorted(GPUS))  # /api/v1/label/Hostname/values

    def do_POST(self):
        form = parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
        query = form["query"][0]
        t0, t1, step = float(form["start"][0]), float(form["end"][0]), float(form["step"][0])
        names = re.search(r'__name__=~"([^"]*)"', query).group(1).split("|")
        m = re.search(r'Hostname(=~?)"([^"]*)"', query)
        hosts = sorted(GPUS) if m is None else [h for h in GPUS if re.fullmatch(m.group(2), h)]
        result = []
        for name in (n for n in names if n in NAMES):
            for host in hosts:
                for gpu in GPUS[host]:
                    times = range(int(t0), int(t1) + 1, int(step))
                    values = [[t, repr(_value(name, host, gpu, t))] for t in times if _kept(host, gpu, t)]
                    if values:
                        result.append({"metric": {"__name__": name, "Hostname": host, "gpu": str(gpu),
                                                  "UUID": f"GPU-{host}-{gpu}", "modelName": "NVIDIA H100"},
                                       "values": values})
        self._send({"resultType": "matrix", "result": result})


@pytest.fixture(scope="module")
def days():
    with serve(_Days) as url:
        yield url


def _fields():
    names = P.field_names()
    return {f: n for f, n in names.items() if n[0] in NAMES}


def _pull(url, tmp_path, slice_s, **kw):
    return P.pull(url, start=START, end=END, step_s=STEP, fields=_fields(), slice_s=slice_s,
                  spill_dir=str(tmp_path), **kw)


def _whole(pulled, **kw):
    """The reference: each host's rows reduced whole (the reduction before time slices)."""
    from ridgeline.analyzer.fleet.partitions import reduce_partitions

    return reduce_partitions([[("long", pulled.spill.host_frame(h))] for h in pulled.spill.hosts()], **kw)


def _sliced(pulled, **kw):
    from ridgeline.pipeline import reduce_telemetry

    counts: dict = {}
    _lf, _inputs, skipped, windows = reduce_telemetry([], extra=[pulled.source()], sample_counts=counts, **kw)
    assert not skipped
    return windows, counts


@pytest.fixture(scope="module")
def reference(days, tmp_path_factory):
    pulled = _pull(days, tmp_path_factory.mktemp("ref"), 1000 * DAY)  # one slice: nothing is cut
    try:
        yield {key: _whole(pulled, **kw) for key, kw in
               {"5m": {}, "1h": {"window": "1h"}, "warmup": {"warmup": "10m"}, "all": {"window": "all"}}.items()}, \
            pulled.rows
    finally:
        pulled.close()


# 7000 s: not a multiple of the step nor of a window; a day: the default; 1000 days: one slice
@pytest.mark.parametrize("slice_s", [7000, DAY, 1000 * DAY])
def test_windows_equal_whatever_the_slice_length(days, tmp_path, reference, slice_s):
    ref, total = reference
    pulled = _pull(days, tmp_path, slice_s)
    try:
        assert pulled.rows == total
        for key, kw in {"5m": {}, "1h": {"window": "1h"}, "warmup": {"warmup": "10m"}, "all": {"window": "all"}}.items():
            windows, counts = _sliced(pulled, **kw)
            assert windows.height == ref[key].height > 0
            assert_frame_equal(windows, ref[key], check_exact=True)
            assert sum(n for n, _z in counts.values()) == total  # every sample counted once
    finally:
        pulled.close()


def test_what_crosses_a_slice_boundary_is_kept(reference):
    """The reference shows the boundary cases really happen (else the equality above proves little)."""
    ref = reference[0]["5m"]
    h1 = ref.filter((pl.col("host") == "h1") & (pl.col("gpu") == 0))
    day2 = dt.datetime(2026, 1, 6, tzinfo=dt.timezone.utc)
    first = h1.filter(pl.col("window_start") == day2).row(0, named=True)
    assert first["xid_codes"] == "13"  # 0 on day 1, 13 from the first sample of day 2
    assert first["ecc_dbe_increase_count"] == 1
    # h1 gpu 1: 720 gaps of 60 s (day 1, to noon), 3,240 of 120 s after: the median is 120 s; a
    # reduction of day 1 alone would find 60 s (720 gaps of 60 s, 360 of 120 s)
    assert ref.filter((pl.col("host") == "h1") & (pl.col("gpu") == 1)).get_column("interval_s").unique().to_list() == [120.0]
    late = ref.filter((pl.col("host") == "h2") & (pl.col("gpu") == 2))
    assert late.get_column("window_start").min() == day2 + dt.timedelta(hours=6)


def test_no_step_reads_more_than_one_slice(days, tmp_path):
    """The spill, the repeats check (two host groups), --save and the reduction read at most one
    slice of one host at a time: rows bounded by the slice's points x fields x the host's GPUs."""
    slice_s = 7000
    pulled = _pull(days, tmp_path, slice_s, hosts_per_query=1)  # h1, h2, no-Hostname groups
    try:
        _sliced(pulled)
        pulled.save(tmp_path / "store")
        per_point = len(NAMES) * max(len(g) for g in GPUS.values())
        # a reduction range is a slice aligned down to the 5 min window: up to one window more
        bound = (slice_s // STEP + 1 + 300 // STEP) * per_point
        host_rows = max(pulled.spill.rows.values())
        assert 0 < pulled.max_rows_read <= bound < host_rows / 10
        assert pulled.max_rows_read >= (slice_s // STEP - 1) * len(NAMES) * 2  # it did read whole slices
    finally:
        pulled.close()


def test_requests_stay_inside_one_slice():
    chunks = P.plan_chunks({"f": ("X",)}, [None], start=T0 - 600, end=T0 + 2 * DAY, step=STEP, slice_s=DAY)
    assert [(c.start, c.end) for c in chunks][:2] == [(T0 - 600, T0 - STEP), (T0, T0 + DAY - STEP)]
    assert all(c.start // DAY == c.end // DAY for c in chunks)
    assert sum(round((c.end - c.start) / STEP) + 1 for c in chunks) == (2 * DAY + 600) // STEP + 1


def test_cli_pull_equals_the_store_read(days, tmp_path):
    """End to end: the pull's JSON (reduced in slices) and the store it saved, read back by
    ``ridgeline telemetry STORE`` (each host read whole), give the same windows and findings."""
    from click.testing import CliRunner

    from ridgeline.cli import cli

    common = ["--format", "json", "--window", "5m"]
    pull = CliRunner().invoke(cli, ["telemetry", "--prometheus", days, "--from", START.isoformat(), "--to",
                                    END.isoformat(), "--step", "60s", "--save", str(tmp_path / "store"), *common])
    assert pull.exit_code in (0, 1), pull.output
    store = CliRunner().invoke(cli, ["telemetry", str(tmp_path / "store"), *common])
    assert store.exit_code in (0, 1), store.output
    a, b = json.loads(pull.stdout), json.loads(store.stdout)
    assert a["telemetry"]["windows"] and a["telemetry"] == b["telemetry"]
    assert a["findings"] == b["findings"]
