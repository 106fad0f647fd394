"""`ridgeline rules`: the catalogue listing and one rule's documentation."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ridgeline.cli import cli, main
from ridgeline.rules.engine import all_rules


def test_rules_lists_every_rule_one_line_each():
    out = CliRunner().invoke(cli, ["rules"])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert len(lines) == len(all_rules())
    first = all_rules()[0]
    assert lines[0].startswith(f"{first.code}  {first.name}")
    assert "warning" in lines[0]


def test_rules_code_prints_full_doc_with_thresholds():
    out = CliRunner().invoke(cli, ["rules", "rl103"])
    assert out.exit_code == 0, out.output
    text = out.output
    assert text.startswith("RL103 below-bandwidth-roof")
    for heading in ("What it finds", "Why it matters", "What to do", "Example", "Thresholds"):
        assert f"\n{heading}\n" in text
    assert "min_bandwidth_fraction = 0.6" in text
    assert "--threshold RL103.min_bandwidth_fraction=0.6" in text


def test_rules_doc_shows_configured_threshold(tmp_path):
    cfg = tmp_path / "ridge.toml"
    cfg.write_text("[tool.ridgeline.rules.RL103]\nmin_bandwidth_fraction = 0.45\n")
    out = CliRunner().invoke(cli, ["rules", "RL103", "--config", str(cfg)])
    assert "min_bandwidth_fraction = 0.45 (configured; default 0.6)" in out.output


def test_rules_prefix_filters_and_json():
    out = CliRunner().invoke(cli, ["rules", "RL9", "--format", "json"])
    rows = json.loads(out.output)
    assert rows and all(r["code"].startswith("RL9") for r in rows)
    assert {"code", "name", "severity", "summary", "thresholds"} <= set(rows[0])


def test_rules_unknown_code_is_one_line_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["rules", "RL899"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("ridgeline: error: unknown rule code 'RL899'") and "\n" not in err
