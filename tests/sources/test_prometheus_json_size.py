"""The JSON of a pull grows with its windows, not its samples: ``skipped`` lists a few items of
each kind and counts the rest (ridgeline.skiplog), and the accounting still adds up. A fake
Prometheus on loopback (tests/sources/test_prometheus_slices.py's SYNTHETIC days) sends one
malformed point (a JSON ``true`` as the value) in every 50 of every series."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("httpx", reason="httpx not installed (pip install 'ridgeline[prometheus]')")
sys.path.insert(0, str(Path(__file__).parent))

import test_prometheus_slices as days_server  # noqa: E402
from prometheus_server import serve  # noqa: E402

from ridgeline.result import Skipped  # noqa: E402
from ridgeline.skiplog import PER_KIND, CappedSkipped  # noqa: E402

BAD_EVERY = 50


class _Damaged(days_server._Days):
    def _send(self, data):
        if isinstance(data, dict) and data.get("resultType") == "matrix":
            for series in data["result"]:
                for i, point in enumerate(series["values"]):
                    if (int(point[0]) // 60) % BAD_EVERY == 0:
                        series["values"][i] = [point[0], True]
        super()._send(data)


@pytest.fixture(scope="module")
def damaged():
    with serve(_Damaged) as url:
        yield url


def _run(url, days):
    from click.testing import CliRunner

    from ridgeline.cli import cli

    end = days_server.START.timestamp() + days * 86400 - 60
    res = CliRunner().invoke(cli, ["telemetry", "--prometheus", url, "--from", days_server.START.isoformat(),
                                   "--to", str(int(end)), "--step", "60s", "--format", "json", "--window", "1h"])
    assert res.exit_code in (0, 1), res.output
    return json.loads(res.stdout), len(res.stdout)


def test_skipped_does_not_grow_with_the_pull(damaged):
    one, _ = _run(damaged, 1)
    three, _ = _run(damaged, 3)
    for doc, days in ((one, 1), (three, 3)):
        acc = doc["accounting"][0]
        # every malformed point is counted: one in 50 minutes of each series (7 fields x 5 GPUs
        # where the GPU has points; derived from the server's formulas, not copied from output)
        bad = sum(1 for name in days_server.NAMES for host, gpus in days_server.GPUS.items() for gpu in gpus
                  for t in range(days_server.T0, days_server.T0 + days * 86400, 60)
                  if days_server._kept(host, gpu, t) and (t // 60) % BAD_EVERY == 0)
        assert acc["skipped"] == bad == sum(acc["skipped_reasons"].values())
        assert acc["read"] == acc["used"] + acc["missing"]  # samples kept; the bad points are not samples
        listed = sum(s.get("count", 1) for s in doc["skipped"])
        assert listed == bad
        more = [s for s in doc["skipped"] if s["item"].endswith("more like this")]
        assert more and all(s["count"] > 1 for s in more)
    # the same kinds (field x host group) whatever the length: as many entries, three times the count
    assert len(three["skipped"]) == len(one["skipped"])
    assert three["accounting"][0]["skipped"] > 2.5 * one["accounting"][0]["skipped"]


def test_capped_list_keeps_a_few_of_each_kind_and_counts_the_rest():
    capped = CappedSkipped()
    for i in range(PER_KIND + 7):
        capped.append(Skipped("u", f"series {i}, point {i * 3}", f"series {i}, point {i * 3}: expected a value, got 'x'"))
    capped.append(Skipped("u", "chunk", "request failed: HTTP 503"))
    out = capped.items()
    assert len(out) == PER_KIND + 2 and capped.total == PER_KIND + 8
    assert out[-1].item == "7 more like this" and out[-1].count == 7 and out[-1].to_dict()["count"] == 7
    assert "count" not in out[0].to_dict()  # the usual entry keeps its three keys
