"""Series with very many workload labels (issue 35, class 6): a pull keeps each label set once, as a
number in its temporary files (ridgeline.sources.spill, LABEL_ID), so its memory does not grow with
the pull's length because each row repeats a 300 KB text; the labels read back are the same text."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polars as pl

import hostile_http as H
from ridgeline.parsers.telemetry.common import GPU_LABELS, workload_labels
from ridgeline.sources import prometheus as P

pytest.importorskip("httpx", reason="httpx not installed (pip install 'ridgeline[prometheus]')")

START = dt.datetime(2026, 1, 5, tzinfo=dt.timezone.utc)


def labelled(label_sets):
    """A server answering every query_range with one series per (GPU, label set), on the step grid."""
    def answer(handler, path, method):
        if H.prometheus_like(handler, path, method):
            return
        q = parse_qs(handler.body.decode())
        start, end, step = float(q["start"][0]), float(q["end"][0]), float(q["step"][0])
        n = int(round((end - start) / step)) + 1
        series = [{"metric": {"__name__": "DCGM_FI_DEV_GPU_UTIL", "Hostname": "h1", "gpu": str(g), **labels},
                   "values": [[start + k * step, "0.5"] for k in range(n)]} for g, labels in enumerate(label_sets)]
        H.send(handler, H.matrix(series))

    return answer


names = st.from_regex(r"[a-z_][a-zA-Z0-9_]{0,8}", fullmatch=True).filter(
    lambda n: n not in GPU_LABELS and n not in ("hostname", "Hostname", "instance"))
label_set = st.dictionaries(names, st.text(alphabet='ab"\\,= é', max_size=6), max_size=6)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sets=st.lists(label_set, min_size=1, max_size=4))
def test_labels_read_back_are_the_series_labels(sets, tmp_path_factory):
    with H.serve(labelled(sets)) as server:
        pulled = P.pull(server.url, start=START, end=START + dt.timedelta(minutes=5), retries=0,
                        fields={"gpu_util_ratio": ("DCGM_FI_DEV_GPU_UTIL",)})
    try:
        frame = pulled.frame
        got = dict(zip(frame.get_column("gpu").to_list(), frame.get_column("labels").to_list()))
        assert got == {g: workload_labels(s) for g, s in enumerate(sets)}
        stored = [c for f in pulled.spill.path.rglob("*.parquet") for c in pl.read_parquet_schema(f)]
        assert "labels" not in stored  # the text is not in the files, its number is
    finally:
        pulled.close()


_MEASURE = r"""
import datetime as dt, sys
from ridgeline.sources import prometheus as P
from ridgeline.pipeline import reduce_telemetry
start = dt.datetime(2026, 1, 5, tzinfo=dt.timezone.utc)
p = P.pull(sys.argv[1], start=start, end=start + dt.timedelta(hours=float(sys.argv[2])), retries=0)
reduce_telemetry([], window="5m", warmup=None, tz=None, interval_s=None, host=None, start=None, notes=[],
                 extra=[p.source()])
print([int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM")][0] // 1024)
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="peak memory read from /proc")
def test_memory_does_not_grow_with_the_pull_for_series_with_many_labels():
    labels = {f"label_{i:05d}": f"value-{i:05d}-xxxxxxxx" for i in range(5000)}  # 150 KB of labels a series
    peaks = {}
    with H.serve(labelled([labels, labels])) as server:
        for hours in (1, 4):  # 39 fields x 2 series x 241 / 961 points
            out = subprocess.run([sys.executable, "-c", _MEASURE, server.url, str(hours)], capture_output=True,
                                 text=True, timeout=300, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
            assert out.returncode == 0, out.stderr[-2000:]
            peaks[hours] = int(out.stdout.split()[-1])
    # before: 1 h -> 4 h grew by ~300 MB here (the text copied per row by the Parquet writer)
    print("peak MiB by hours pulled:", peaks)
    assert peaks[4] - peaks[1] < 80, json.dumps(peaks)
