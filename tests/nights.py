"""Generated nights for the diff trend tests: each night is a folder of dcgm-exporter scrapes made by
the synth API (``ridgeline.synth.write_telemetry``, SYNTHETIC, regenerated on every run), one file
per host, starting at midnight UTC of its day, read by ``ridgeline telemetry --format json``.

The noise between nights is the synth's own (a seed per host and night); what a night's hosts do
is given as behaviours per GPU, so which host regressed is known by construction."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from ridgeline import synth
from ridgeline.cli import cli

DAY_MS = 86_400_000
START_MS = 1767225600000  # 2026-01-01T00:00:00Z

# a fleet where waste is low: two GPUs per host, training or serving
CALM = {"node01": ["training", "serving_mix"], "node02": ["training", "training"],
        "node03": ["serving_mix", "training"], "node04": ["training", "serving_mix"]}


def night(folder: Path, day: int, hosts: dict[str, list], *, gpu: dict[str, str] | None = None,
          minutes: float = 10, interval_s: float = 10.0) -> dict:
    """Write one night's scrapes under ``folder`` and return its telemetry document."""
    folder.mkdir(parents=True, exist_ok=True)
    for host, behaviours in hosts.items():
        synth.write_telemetry(folder / f"{host}.prom", behaviours, host=host, format="exporter",
                              start_ms=START_MS + day * DAY_MS, seed=f"{host}/{day}",
                              gpu=(gpu or {}).get(host, "H100"), minutes=minutes, interval_s=interval_s)
    res = CliRunner().invoke(cli, ["telemetry", str(folder), "--format", "json"])
    assert res.exit_code in (0, 1), res.output
    return json.loads(res.stdout)


def write_nights(root: Path, plans: list[dict[str, list]], *, gpus: list[dict] | None = None) -> list[Path]:
    """``plans[i]``: the hosts of night i (day i); the documents as ``root/nights/2026-01-0N.json``."""
    out = []
    (root / "nights").mkdir(parents=True, exist_ok=True)
    for day, hosts in enumerate(plans):
        doc = night(root / "scrapes" / f"day{day}", day, hosts, gpu=(gpus or [None] * len(plans))[day])
        path = root / "nights" / f"2026-01-{day + 1:02d}.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        out.append(path)
    return out
