"""Your own GPUs: [tool.ridgeline.gpus."NAME"] in ridgeline.toml / pyproject.toml.

The GPU below is an illustration (round figures, not a real part); the export naming it is the
decode-b8-h100 fixture with its device name replaced, written to tmp_path by the test.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ridgeline.analyzer.kernels import gpus as G
from ridgeline.errors import UsageError

REPO = Path(__file__).resolve().parents[3]
B8 = REPO / "fixtures" / "scenarios" / "decode-b8-h100" / "profile.ncu-raw.csv"

LAB = """
[tool.ridgeline.gpus."Lab GPU"]
aliases = ["NVIDIA Lab GPU 48GB"]
cc = "8.9"
sm_count = 100
memory_bytes = 48e9
dram_bw_bytes_per_s = 1.0e12
peak_flops = { fp32 = 50e12, fp16_tensor = 200e12 }
source = "illustration for the tests"
"""


@pytest.fixture(autouse=True)
def _clean_catalogue():
    G.configure(None)
    yield
    G.configure(None)


def _cli(cwd: Path, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ridgeline.cli", *map(str, args)], cwd=cwd, capture_output=True, check=False,
                          text=True)


def _lab_export(tmp_path: Path) -> Path:
    text = B8.read_text().replace("NVIDIA H100 80GB HBM3", "NVIDIA Lab GPU 48GB")
    out = tmp_path / "lab.ncu-raw.csv"
    out.write_text(text)
    return out


def test_configured_gpu_is_found_by_name_and_alias():
    (gpu,) = G.configure({"Lab GPU": {"aliases": ["NVIDIA Lab GPU 48GB"], "cc": "8.9", "sm_count": 100,
                                      "memory_bytes": 48e9, "dram_bw_bytes_per_s": 1e12,
                                      "peak_flops": {"fp16_tensor": 200e12}, "source": "illustration"}})
    assert G.lookup("lab gpu")[0] is gpu and G.lookup("NVIDIA Lab GPU 48GB")[0] is gpu
    assert gpu.ridge("fp16_tensor") == pytest.approx(200.0)
    assert G.catalogue()[0] is gpu and len(G.catalogue()) == len(G._bundled()) + 1
    G.configure(None)
    assert G.try_lookup("Lab GPU")[0] is None


@pytest.mark.parametrize("change, message", [
    ({"peak_flops": {"fp16_tensor": -1}}, "peak_flops.fp16_tensor must be a number > 0, from 1e+09 to 1e+18 FLOP/s, got -1"),
    ({"peak_flops": {"fp16_tensor": 0}}, "must be a number > 0"),
    ({"peak_flops": {}}, "peak_flops must be a table"),
    ({"peak_flops": {"bf16": 1e12}}, "unknown precision 'bf16'"),
    ({"dram_bw_bytes_per_s": "fast"}, "dram_bw_bytes_per_s must be a number > 0"),
    ({"cc": "ampere"}, "cc must be a compute capability"),
    ({"sm_count": 0}, "sm_count must be a whole number > 0"),
    ({"bandwidth": 1}, "unknown key 'bandwidth'"),
    ({"source": None}, "missing source"),
])
def test_a_bad_entry_is_one_clear_line(change, message):
    entry = {"cc": "8.9", "sm_count": 100, "memory_bytes": 48e9, "dram_bw_bytes_per_s": 1e12,
             "peak_flops": {"fp16_tensor": 200e12}, "source": "illustration"}
    entry.update(change)
    entry = {k: v for k, v in entry.items() if v is not None}
    with pytest.raises(UsageError) as err:
        G.configure({"Lab GPU": entry})
    text = str(err.value)
    assert message in text and '[tool.ridgeline.gpus."Lab GPU"]' in text and "\n" not in text


def test_the_bundled_catalogue_passes_the_same_checks():
    for gpu in G._bundled():
        unit = ({"vendor": "AMD", "gfx": gpu.gfx, "cu_count": gpu.sm_count} if gpu.vendor == "AMD"
                else {"cc": gpu.cc, "sm_count": gpu.sm_count})
        again = G.parse_entry(gpu.name, {**unit, "memory_bytes": gpu.memory_bytes,
                                         "dram_bw_bytes_per_s": gpu.dram_bw_bytes_per_s,
                                         "peak_flops": gpu.peak_flops, "source": gpu.source}, where=gpu.name)
        assert again.peak_flops == gpu.peak_flops and again.vendor == gpu.vendor and again.gfx == gpu.gfx


def test_gpus_command_shows_a_configured_gpu_from_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text(LAB)
    p = _cli(tmp_path, "gpus", "lab gpu", "--config", "pyproject.toml")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("Lab GPU") and "source: illustration for the tests" in p.stdout
    assert "None" not in p.stdout


def test_a_negative_peak_in_ridgeline_toml_stops_analyze_with_one_line(tmp_path):
    (tmp_path / "ridgeline.toml").write_text(LAB.replace("fp32 = 50e12", "fp32 = -50e12"))
    p = _cli(tmp_path, "analyze", B8)
    assert p.returncode == 2
    assert p.stderr.strip().count("\n") == 0 and "peak_flops.fp32 must be a number > 0" in p.stderr


def test_an_export_naming_an_unknown_gpu_says_how_to_add_it_and_never_prints_none(tmp_path):
    export = _lab_export(tmp_path)
    p = _cli(tmp_path, "analyze", export)
    assert p.returncode == 0, p.stderr
    text = " ".join(p.stdout.split())
    assert "'NVIDIA Lab GPU 48GB' is not in the GPU catalogue" in text
    assert '[tool.ridgeline.gpus."NVIDIA Lab GPU 48GB"]' in text
    assert "None" not in p.stdout
    # with the GPU configured, its roofs are the configured ones and the what-if can target it
    (tmp_path / "ridgeline.toml").write_text(LAB.replace("[tool.ridgeline.gpus.", "[gpus."))
    p = _cli(tmp_path, "analyze", export, "--what-if", "H200")
    assert p.returncode == 0, p.stderr
    assert "Lab GPU" in p.stdout and "not in the GPU catalogue" not in p.stdout
    assert "on H200:" in p.stdout and "None" not in p.stdout


def test_unknown_what_if_gpu_says_how_to_add_it(tmp_path):
    p = _cli(tmp_path, "analyze", B8, "--what-if", "Z9000")
    assert p.returncode == 2 and "[tool.ridgeline.gpus." in p.stderr
