"""Config found the way ruff finds it, --isolated, threshold ranges (issue 14)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ridgeline.cli import main
from ridgeline.rules import engine

PROFILE = Path(__file__).resolve().parents[2] / "ridgeline" / "data" / "demo" / "decode-b8-h100.ncu-raw.csv"


def run_cli(args, capsys):
    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in args])
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def codes(capsys, *extra):
    code, out, err = run_cli(["analyze", PROFILE, "--format", "json", *extra], capsys)
    assert code == 0, err
    return {f["code"] for f in json.loads(out)["findings"]}


def test_nearest_parent_ridgeline_toml(tmp_path, monkeypatch, capsys):
    (tmp_path / "ridgeline.toml").write_text('ignore = ["RL101"]\n')
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    assert engine.find_config() == (tmp_path / "ridgeline.toml").resolve()
    assert "RL101" not in codes(capsys)
    assert "RL101" in codes(capsys, "--isolated")


def test_pyproject_only_with_its_table(tmp_path, monkeypatch, capsys):
    (tmp_path / "ridgeline.toml").write_text('ignore = ["RL101"]\n')
    sub = tmp_path / "proj"
    sub.mkdir()
    (sub / "pyproject.toml").write_text('[project]\nname = "x"\n')  # no [tool.ridgeline]: keep looking up
    monkeypatch.chdir(sub)
    assert engine.find_config() == (tmp_path / "ridgeline.toml").resolve()
    (sub / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.ridgeline]\nignore = ["RL9"]\n')
    assert engine.find_config() == (sub / "pyproject.toml").resolve()
    found = codes(capsys)
    assert "RL101" in found  # the nearer pyproject wins; the parent's ridgeline.toml is not merged
    assert not any(c.startswith("RL9") for c in found)


def test_ridgeline_toml_beats_pyproject_in_the_same_folder(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.ridgeline]\nignore = ["RL9"]\n')
    (tmp_path / "ridgeline.toml").write_text('ignore = ["RL1"]\n')
    assert engine.find_config(tmp_path) == (tmp_path / "ridgeline.toml").resolve()


def test_isolated_and_config_together_is_a_usage_error(tmp_path, capsys):
    cfg = tmp_path / "r.toml"
    cfg.write_text("ignore = []\n")
    code, _out, err = run_cli(["analyze", PROFILE, "--config", cfg, "--isolated"], capsys)
    assert code == 2 and "not both" in err and len(err.strip().splitlines()) == 1


def test_isolated_ignores_a_broken_config(tmp_path, monkeypatch, capsys):
    (tmp_path / "ridgeline.toml").write_text("this is = = not toml\n")
    monkeypatch.chdir(tmp_path)
    code, _out, err = run_cli(["analyze", PROFILE], capsys)
    assert code == 2 and "ridgeline.toml" in err
    for args in (["analyze", PROFILE, "--isolated"], ["rules", "--isolated"], ["rules", "RL101", "--isolated"]):
        code, _out, err = run_cli(args, capsys)
        assert code == 0, err


@pytest.mark.parametrize("key,value,ok", [
    ("RL103.min_bandwidth_fraction", 7, False),
    ("RL103.min_bandwidth_fraction", 1.0, True),
    ("RL101.max_ridge_fraction", 1.5, False),
    ("RL904.max_peak_ratio", 2, False),
    ("RL107.dominance_share", 1.01, False),
    ("RL111.max_sm_fraction", 2.0, True),  # a multiple of the SM count: up to 64 waves
    ("RL111.max_sm_fraction", 65, False),
    ("RL106.max_kernel_duration_s", 5.0, True),
    ("RL106.max_kernel_duration_s", -1, False),
])
def test_threshold_ranges(key, value, ok, tmp_path, capsys):
    code_, name = key.split(".")
    cfg = tmp_path / "ridgeline.toml"
    cfg.write_text(f"[rules.{code_}]\n{name} = {value}\n")
    code, _out, err = run_cli(["analyze", PROFILE, "--config", cfg, "--format", "json"], capsys)
    if ok:
        assert code == 0, err
    else:
        assert code == 2
        lines = err.strip().splitlines()
        assert len(lines) == 1 and f"{code_}.{name}" in lines[0] and str(value) in lines[0]
