"""One config validator with bounds (issue 35, classes 5 and 8): every number a config file or a
flag hands ridgeline is finite and inside its documented range, or one line naming the key (and
the file); the documented [tool.ridgeline.diff] table is legal in every command; a config nested
thousands deep is one line. The cases are generated from the bounds table itself."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ridgeline import bounds
from ridgeline.analyzer.kernels import gpus as G
from ridgeline.errors import RidgelineError, UsageError
from ridgeline.rules import engine

ROOT = Path(__file__).resolve().parents[1]
B8 = ROOT / "fixtures" / "scenarios" / "decode-b8-h100" / "profile.ncu-raw.csv"


def _outside(key: str) -> list:
    b = bounds.BOUNDS[key]
    out = [float("nan"), float("inf"), -float("inf"), 10**400, True, "fast", None, [1], b.high * 10, -1]
    if b.low > 0:
        out.append(b.low / 10)
    if b.low_open:
        out.append(b.low)
    if b.whole:
        out.append(b.low + 0.5)
    return out


@pytest.mark.parametrize("key", sorted(bounds.BOUNDS))
def test_every_value_outside_its_bounds_is_one_line_naming_where_and_key(key):
    b = bounds.BOUNDS[key]
    assert bounds.check(key, b.low if not b.low_open else b.high, where="w") is not None
    assert bounds.check(key, b.high, where="w") == b.high
    for value in _outside(key):
        with pytest.raises(UsageError) as err:
            bounds.check(key, value, where="cfg.toml: [tool.ridgeline.x]")
        text = str(err.value)
        assert text.startswith(f"cfg.toml: [tool.ridgeline.x]: {key} must be ") and "\n" not in text, (value, text)


def test_a_flag_string_is_read_as_a_number_only_when_asked():
    assert bounds.check("trend_k", "2.5", where="--threshold", strings=True) == 2.5
    with pytest.raises(UsageError):
        bounds.check("trend_k", "2.5", where="config")
    with pytest.raises(UsageError):
        bounds.check("trend_k", "nan", where="--threshold", strings=True)


def test_the_bundled_catalogue_lies_inside_the_gpu_bounds():
    for gpu in G._bundled():
        assert bounds.check("sm_count", gpu.sm_count, where=gpu.name)
        assert bounds.check("memory_bytes", gpu.memory_bytes, where=gpu.name)
        assert bounds.check("dram_bw_bytes_per_s", gpu.dram_bw_bytes_per_s, where=gpu.name)
        for v in gpu.peak_flops.values():
            assert bounds.check("peak_flops", v, where=gpu.name)


ENTRY = {"cc": "8.9", "sm_count": 100, "memory_bytes": 48e9, "dram_bw_bytes_per_s": 1e12,
         "peak_flops": {"fp16_tensor": 200e12}, "source": "illustration"}


@pytest.mark.parametrize("key", ["sm_count", "memory_bytes", "dram_bw_bytes_per_s", "peak_flops.fp16_tensor",
                                 "datasheet_clock_hz.default"])
def test_a_gpu_entry_out_of_bounds_names_the_key(key):
    for value in [v for v in _outside(key.split(".")[0]) if v is not None]:  # (None: the key left out)
        entry = {k: dict(v) if isinstance(v, dict) else v for k, v in ENTRY.items()}
        if "." in key:
            entry.setdefault(key.split(".")[0], {})[key.split(".")[1]] = value
        else:
            entry[key] = value
        with pytest.raises(UsageError) as err:
            G.parse_entry("Lab", entry, where='x.toml: [tool.ridgeline.gpus."Lab"]')
        assert f"{key} must be" in str(err.value), value


def _cli(cwd: Path, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ridgeline.cli", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, check=False)


LAB = """[tool.ridgeline.gpus."Lab GPU"]
cc = "8.9"
sm_count = {sm}
memory_bytes = {mem}
dram_bw_bytes_per_s = {bw}
peak_flops = {{ fp32 = {peak}, fp16_tensor = {peak} }}
source = "illustration"
"""


@pytest.mark.parametrize("values, key", [
    (dict(sm="inf", mem="48e9", bw="1e12", peak="5e13"), "sm_count"),
    (dict(sm="100", mem="inf", bw="1e12", peak="5e13"), "memory_bytes"),
    (dict(sm="100", mem="48e9", bw="1e-300", peak="1e300"), "peak_flops.fp32"),  # the first key read
    (dict(sm="100", mem="48e9", bw="1e-300", peak="5e13"), "dram_bw_bytes_per_s"),
    (dict(sm="100", mem="48e9", bw="inf", peak="5e13"), "dram_bw_bytes_per_s"),
    (dict(sm="100", mem="48e9", bw="1e12", peak="nan"), "peak_flops.fp32"),
])
def test_config_numbers_through_the_cli_are_one_line_naming_file_and_key(tmp_path, values, key):
    (tmp_path / "ridgeline.toml").write_text(LAB.format(**values))
    p = _cli(tmp_path, "analyze", B8, "--what-if", "Lab GPU")
    assert p.returncode == 2, p.stderr
    line = p.stderr.strip()
    assert "\n" not in line and "ridgeline.toml" in line and f"{key} must be" in line


@pytest.mark.parametrize("text", [
    "[tool.ridgeline]\nselect = " + "[" * 5000 + "]" * 5000,
    "[tool.ridgeline." + ".".join(["a"] * 5000) + "]\nx = 1",
    "[tool.ridgeline.rules.RL103]\nmin_bandwidth_fraction = " + "{a=" * 5000 + "1" + "}" * 5000,
])
def test_a_config_nested_thousands_deep_is_one_line(tmp_path, text):
    cfg = tmp_path / "ridgeline.toml"
    cfg.write_text(text)
    with pytest.raises(RidgelineError) as err:
        engine.load_config(cfg)
    assert "deep" in str(err.value) and str(cfg) in str(err.value) and "\n" not in str(err.value)


def test_the_documented_diff_table_is_legal_in_every_command(tmp_path):
    """docs/nightly.md's [tool.ridgeline.diff] made analyze and telemetry fail with unknown key 'diff'."""
    docs = (ROOT / "docs" / "nightly.md").read_text(encoding="utf-8")
    blocks = [b.split("```")[0] for b in docs.split("```toml\n")[1:] if b.startswith("[tool.ridgeline.diff]")]
    assert len(blocks) >= 2
    (tmp_path / "ridgeline.toml").write_text(blocks[1] + "\n".join(blocks[0].splitlines()[1:]) + "\n")
    telemetry = next((ROOT / "fixtures" / "telemetry").glob("*.prom"), None) or \
        next(p for p in (ROOT / "fixtures" / "telemetry").iterdir() if p.suffix in (".txt", ".csv"))
    for args in (("analyze", B8), ("telemetry", telemetry), ("rules",), ("gpus", "H100")):
        p = _cli(tmp_path, *args)
        assert p.returncode in (0, 1), (args, p.stderr)
        assert "unknown key" not in p.stderr


def test_what_if_batch_and_batch_flags_are_bounded():
    from ridgeline.analyzer.kernels.whatif import parse_spec

    assert parse_spec("batch=0064") == ("batch", 64)
    for spec in ("batch=" + "9" * 5000, "batch=100000000000"):
        with pytest.raises(UsageError, match="N must be"):
            parse_spec(spec)
    from ridgeline.pipeline import _what_if_targets

    for b in (float("nan"), float("inf"), 1e300, -1.0, 0.0):
        with pytest.raises(UsageError, match="--batch"):
            _what_if_targets([], b)


def test_rule_thresholds_are_finite_and_at_most_the_cap():
    for value in (float("nan"), float("inf"), 10**400):
        with pytest.raises(UsageError, match="RL106.min_launches"):
            engine.rule_overrides({"rules": {"RL106": {"min_launches": value}}})


# ------------------------------------------------------------------------------------------
# property: any config table is read or one line
# ------------------------------------------------------------------------------------------
SCALARS = st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats() | st.text(max_size=6)
VALUES = st.recursive(SCALARS.filter(lambda v: v is not None),
                      lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
                      max_leaves=12)
KEYS = st.sampled_from([*engine.CONFIG_KEYS, "other"])
DIFF_KEYS = st.sampled_from([*bounds.BOUNDS, "new_finding_severity", "nope"])
GPU_KEYS = st.sampled_from([*G.ENTRY_KEYS, "nope"])


@st.composite
def tables(draw):
    table = draw(st.dictionaries(KEYS, VALUES, max_size=3))
    if draw(st.booleans()):
        table["diff"] = draw(st.dictionaries(DIFF_KEYS, SCALARS, max_size=3))
    if draw(st.booleans()):
        entry = dict(ENTRY)
        entry.update(draw(st.dictionaries(GPU_KEYS, VALUES, max_size=2)))
        table["gpus"] = {draw(st.text(min_size=1, max_size=5)): entry}
    return table


@settings(max_examples=80, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(tables())
def test_any_config_table_is_read_or_one_line(table):
    try:
        engine.check_config_values(table, origin="x.toml")
        engine.validate_config(table)
        engine.rule_overrides(table)
        G.configure(table.get("gpus"), origin="x.toml")
    except RidgelineError as err:
        assert "\n" not in str(err)
        return
    finally:
        G.configure(None)
    for gpu in G.configure(table.get("gpus"), origin="x.toml"):  # what was accepted is finite and bounded
        assert all(math.isfinite(v) for v in (gpu.sm_count, gpu.memory_bytes, gpu.dram_bw_bytes_per_s,
                                                *gpu.peak_flops.values()))
    G.configure(None)
