"""Roofs for a GPU the catalogue does not know, derived from the device attributes ncu records,
and ``--gpu`` against the export's compute capability.

The fixture is a synthetic ncu ``--page raw --print-units base`` export written by
:func:`write_attr_ncu` below (no real part: a made-up "NVIDIA Lab GPU 7" of CC 8.9 with 100 SMs,
a 2.0 GHz maximum SM clock, 10,000,000 kHz memory clock on a 256-bit bus). Every expected number
is computed by hand here from those attributes and the Ada per-SM rates (NCU-FORMATS 4.5).
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from ridgeline.analyzer.kernels.archrates import DERIVED_SOURCE, derive_gpu, per_sm_rate
from ridgeline.analyzer.kernels.roofline import classify, match_devices
from ridgeline.analyzer.schema import KERNEL_COLUMNS, polars_schema
from ridgeline.cli import main
from ridgeline.errors import UsageError

HEADER = [
    "ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size", "Grid Size",
    "Device", "CC", "device__attribute_display_name", "device__attribute_multiprocessor_count",
    "device__attribute_max_gpu_frequency_khz", "device__attribute_clock_rate", "device__attribute_memory_clock_rate",
    "device__attribute_global_memory_bus_width", "dram__bytes.sum", "gpu__time_duration.sum",
    "sm__sass_thread_inst_executed_op_fadd_pred_on.sum", "sm__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
]
UNITS = ["", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "byte", "ns", "inst", "inst", "inst"]
NAME = "NVIDIA Lab GPU 7"
SMS, CLOCK_KHZ, MEM_KHZ, BUS = 100, 2_000_000, 10_000_000, 256
# hand computation: Ada (CC 8.9) runs 128 FP32 FMA = 256 FLOP per SM per clock
FP32_ROOF = SMS * 256 * CLOCK_KHZ * 1e3  # 51.2 TFLOP/s
DRAM_ROOF = 2 * MEM_KHZ * 1e3 * BUS / 8  # 640 GB/s
# (id, kernel, dram bytes, duration ns, ffma): sgemm-like at AI 2e10 / 1e8 = 200 FLOP/B > ridge 80
LAUNCHES = [(0, "void sgemm<float>(float*)", 100_000_000, 1_000_000, 10_000_000_000),
            (1, "void copy<float>(float*)", 640_000_000, 2_000_000, 0)]


def write_attr_ncu(path: Path, *, name: str = NAME, cc: str = "8.9") -> Path:
    lines = [",".join(f'"{h}"' for h in HEADER), ",".join(f'"{u}"' for u in UNITS)]
    for i, kernel, nbytes, ns, ffma in LAUNCHES:
        cells = [i, 1, "app", "host", kernel, 1, 7, "(128, 1, 1)", "(1024, 1, 1)", 0, cc, name, SMS, CLOCK_KHZ,
                 CLOCK_KHZ, MEM_KHZ, BUS, nbytes, ns, 0, 0, ffma]
        lines.append(",".join(f'"{c}"' for c in cells))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run(capsys, *args):
    with pytest.raises(SystemExit) as exc:
        main(list(map(str, args)))
    out = capsys.readouterr()
    return exc.value.code, out.out, out.err


def test_unknown_device_gets_derived_roofs_and_a_verdict(capsys, tmp_path):
    path = write_attr_ncu(tmp_path / "lab.csv")
    code, out, err = run(capsys, "analyze", path, "--format", "json")
    assert code in (0, 1), err
    doc = json.loads(out)
    by_id = {k["launch_id"]: k for k in doc["kernels"]}
    sgemm, copy = by_id[0], by_id[1]
    assert sgemm["peak_flops_source"] == DERIVED_SOURCE
    assert sgemm["peak_flops_per_s"] == pytest.approx(FP32_ROOF)
    assert sgemm["peak_bw_bytes_per_s"] == pytest.approx(DRAM_ROOF)
    assert sgemm["ridge_flop_per_byte"] == pytest.approx(FP32_ROOF / DRAM_ROOF)  # 80 FLOP/B
    assert sgemm["bound"] == "compute"  # AI 200 > 80; 20 TFLOP/s achieved = 39% of the roof
    assert sgemm["roof_fraction"] == pytest.approx(2e10 / 1e-3 / FP32_ROOF)
    assert copy["bound"] == "memory"  # 640 MB in 2 ms = 320 GB/s, half the derived DRAM roof
    assert copy["roof_fraction"] == pytest.approx(0.5)
    compute = [r for r in doc["roofs"] if r["kind"] == "compute"]
    assert [r["source"] for r in compute] == [DERIVED_SOURCE]
    assert "100 SMs x 256 FLOP/clk/SM" in compute[0]["detail"] and "2 GHz" in compute[0]["detail"]
    assert doc["gpu"]["name"] == NAME and "derived" in doc["gpu"]["match"]
    assert any("derived from the device attributes" in n for n in doc["notes"])


def test_derived_gpu_matches_hand_computation_per_precision():
    g = derive_gpu(NAME, cc="8.9", sm_count=SMS, clock_hz=CLOCK_KHZ * 1e3, dram_bw_bytes_per_s=DRAM_ROOF)
    assert g.origin == DERIVED_SOURCE and set(g.derived) == set(g.peak_flops)
    assert g.peak("fp32") == pytest.approx(51.2e12)
    assert g.peak("fp64") == pytest.approx(100 * 4 * 2e9)  # 1/64 of FP32
    assert g.peak("fp16_tensor") == pytest.approx(100 * 1024 * 2e9)  # not GeForce: full rate
    assert g.peak("fp8_tensor") == pytest.approx(100 * 2048 * 2e9)
    assert "fp64_tensor" not in g.peak_flops
    # GeForce by name: FP32-accumulate tensor work at half rate, INT8 at full rate
    gf = derive_gpu("NVIDIA GeForce RTX 4095", cc="8.9", sm_count=SMS, clock_hz=2e9)
    assert gf.peak("fp16_tensor") == pytest.approx(g.peak("fp16_tensor") / 2)
    assert gf.peak("int8_tensor") == pytest.approx(g.peak("int8_tensor"))
    # a GTX 16xx has no tensor cores
    gtx = derive_gpu("NVIDIA GeForce GTX 1670", cc="7.5", sm_count=24, clock_hz=1.8e9)
    assert not any(p.endswith("_tensor") for p in gtx.peak_flops)
    # nothing to derive from: no SM count, no clock, or a compute capability without rates
    assert derive_gpu(NAME, cc="8.9", sm_count=None, clock_hz=2e9) is None
    assert derive_gpu(NAME, cc="8.9", sm_count=100, clock_hz=None) is None
    assert derive_gpu(NAME, cc="6.1", sm_count=100, clock_hz=2e9) is None


def test_derived_roof_scales_to_the_recorded_sm_clock():
    """ncu locks clocks to base by default: a recorded SM clock scales the derived roof, as it
    scales ncu's own peaks and catalogue figures."""
    row = dict(id="1", kernel_name="k", short_name="k", device_name=NAME, cc="8.9", sm_count=SMS,
               max_sm_clock_hz=2e9, sm_clock_hz=1.5e9, duration_s=1e-3, flops_fp32=1e10, dram_bytes=1e8,
               peak_dram_bytes_per_s=DRAM_ROOF, peak_dram_bytes_per_s_source="2 x device__attribute_memory_clock_rate")
    out, roofs = classify(pl.DataFrame([row], schema=polars_schema(KERNEL_COLUMNS)))
    r = out.row(0, named=True)
    assert r["peak_flops_per_s"] == pytest.approx(SMS * 256 * 1.5e9)
    assert r["peak_flops_source"] == DERIVED_SOURCE
    assert "scaled to the recorded SM clock 1.5 GHz" in next(x.detail for x in roofs if x.kind == "compute")


def test_catalogue_wins_over_derived_and_measured_wins_over_both():
    base = dict(kernel_name="k", short_name="k", cc="8.9", sm_count=SMS, max_sm_clock_hz=2e9,
                duration_s=1e-3, flops_fp32=1e10, dram_bytes=1e8)
    rows = [dict(base, id="1", device_name="NVIDIA GeForce RTX 4090", sm_count=128),
            dict(base, id="2", device_name=NAME, peak_flops_fp32_per_s=40e12)]
    out, _ = classify(pl.DataFrame(rows, schema=polars_schema(KERNEL_COLUMNS)))
    a, b = out.row(0, named=True), out.row(1, named=True)
    assert a["peak_flops_source"] == "catalogue" and a["gpu"] == "RTX 4090"
    assert b["peak_flops_source"] == "ncu" and b["peak_flops_per_s"] == 40e12


def test_gpu_contradicting_the_compute_capability_is_an_error_naming_both():
    with pytest.raises(UsageError, match=r"--gpu H100 \(H100 SXM, compute capability 9\.0\) contradicts the export, "
                                         r"which records compute capability 12\.0 for device 'NVIDIA Lab GPU 7'"):
        match_devices([NAME], gpu="H100", ccs={NAME: "12.0"})
    # an unnamed device with a recorded CC is checked too; the same CC is accepted
    with pytest.raises(UsageError, match=r"compute capability 12\.0 for the device"):
        match_devices([None], gpu="H100", ccs={None: "12.0"})
    assert match_devices([None], gpu="H100", ccs={None: "9.0"})[0][1].name == "H100 SXM"


def test_cli_gpu_against_compute_capability_exits_2_naming_both(capsys, tmp_path):
    path = write_attr_ncu(tmp_path / "cc12.csv", cc="12.0", name="")
    code, out, err = run(capsys, "analyze", path, "--gpu", "H100")
    assert code == 2
    line = err.strip()
    assert "\n" not in line and "Traceback" not in line
    assert "H100 SXM" in line and "compute capability 9.0" in line and "compute capability 12.0" in line
    # a GPU of the export's own compute capability is accepted
    code, out, err = run(capsys, "analyze", path, "--gpu", "RTX 5090", "--format", "json")
    assert code in (0, 1), err
    assert json.loads(out)["gpu"]["name"] == "RTX 5090"


SAMPLES = Path(__file__).resolve().parents[4] / "shared" / "samples"
B200_RAW = SAMPLES / "ncu" / "roofline-analysis-b200-raw-flashinfer-decode-b64.csv"


@pytest.mark.skipif(not B200_RAW.is_file(), reason="../shared/samples is absent")
def test_real_export_attributes_give_the_derived_gpu(monkeypatch):
    """A real raw export (B200, 148 SMs, max_gpu_frequency 1,965,000 kHz, memory clock
    3,996,000 kHz on 7680 bits), with the catalogue made to not know it: the fallback derives
    the roofs from what the file records."""
    import ridgeline.analyzer.kernels.roofline as roofline
    from ridgeline.analyzer.kernels.roofline import device_entries
    from ridgeline.pipeline import read_kernel_files

    parsed, _rules = read_kernel_files([B200_RAW], strict=False)
    monkeypatch.setattr(roofline, "try_lookup", lambda name: (None, f"device {name!r} is not in the GPU catalogue"))
    [(name, g, note)] = device_entries(parsed.kernels)
    assert name == "NVIDIA B200" and g.origin == DERIVED_SOURCE and "derived" in note
    clock = 1_965_000e3
    assert g.sm_count == 148 and g.cc == "10.0"
    assert g.peak("fp16_tensor") == pytest.approx(148 * 8192 * clock)  # 2.38 PFLOP/s (datasheet 2.25 at ~1.86 GHz)
    assert g.peak("fp32") == pytest.approx(148 * 256 * clock)
    assert g.dram_bw_bytes_per_s == pytest.approx(2 * 3_996_000e3 * 7680 / 8)  # 7.67 TB/s
    assert "148 SMs x 8192 FLOP/clk/SM" in g.derivation["fp16_tensor"]


def test_findings_on_derived_roofs_say_so():
    from ridgeline.rules import kernels as K

    assert K.confidence("ncu", DERIVED_SOURCE) == "derived"
    assert K.confidence("catalogue", DERIVED_SOURCE) == "catalogue"  # weakest link
    assert K.confidence("ncu", "ncu-device-attributes") == "measured"
    assert K.roof_source(DERIVED_SOURCE).startswith("derived: ")


def test_terminal_names_the_derived_roof_and_its_device(capsys, tmp_path):
    path = write_attr_ncu(tmp_path / "lab.csv")
    code, out, err = run(capsys, "analyze", path)
    assert code in (0, 1), err
    assert "device not named" not in out  # the derived roof is grouped with its device
    assert "derived: SMs x per-SM rate x clock" in out
    assert "51.2 TFLOP/s" in out  # 100 SMs x 256 x 2 GHz


def test_sm_count_other_than_the_catalogue_entry_uses_derived_roofs():
    """A device named like a catalogue part but recording another SM count (a MIG slice: ncu
    reports the instance's SMs) is measured against roofs of the SMs it has."""
    from ridgeline.analyzer.kernels.roofline import device_entries

    name = "NVIDIA H100 80GB HBM3 MIG 1g.10gb"
    row = dict(id="1", kernel_name="k", short_name="k", device_name=name, cc="9.0", sm_count=16,
               max_sm_clock_hz=1.98e9, duration_s=1e-3, flops_fp32=1e9, dram_bytes=1e8)
    frame = pl.DataFrame([row], schema=polars_schema(KERNEL_COLUMNS))
    [(_n, g, note)] = device_entries(frame)
    assert g.origin == DERIVED_SOURCE and g.peak("fp32") == pytest.approx(16 * 256 * 1.98e9)
    assert "records 16 SMs where H100 SXM has 132" in note
    # the same SM count as the entry: the catalogue entry stays
    frame = frame.with_columns(pl.lit(132, dtype=pl.Int64).alias("sm_count"))
    assert device_entries(frame)[0][1].name == "H100 SXM"


def test_laptop_and_ti_parts_do_not_borrow_the_desktop_entry():
    from ridgeline.analyzer.kernels.gpus import try_lookup

    assert try_lookup("NVIDIA GeForce RTX 4090 Laptop GPU")[0] is None  # AD103, 76 SMs: derived instead
    assert try_lookup("NVIDIA GeForce RTX 4090 Ti")[0] is None
    assert try_lookup("NVIDIA GeForce RTX 4060 Ti 16GB")[0].name == "RTX 4060 Ti"  # memory size suffix: same chip


def test_header_and_notes_for_a_mig_slice():
    from ridgeline.analyzer.kernels.devices import resolve_gpu_choice

    name = "NVIDIA H100 80GB HBM3 MIG 1g.10gb"
    row = dict(id="1", kernel_name="k", short_name="k", device_name=name, cc="9.0", sm_count=16,
               max_sm_clock_hz=1.98e9, duration_s=1e-3, flops_fp32=1e9, dram_bytes=1e8)
    roofline, roofs = classify(pl.DataFrame([row], schema=polars_schema(KERNEL_COLUMNS)))
    choice = resolve_gpu_choice(roofline, roofs)
    assert choice.gpu_name == name and "records 16 SMs" in choice.gpu_match
    assert any("records 16 SMs where the catalogue's H100 SXM has 132" in n for n in choice.notes)
    assert not any("not in the GPU catalogue" in n for n in choice.notes)
    # the DRAM roof: none recorded, and the derived GPU has no bandwidth: the launch says what is missing
    assert roofline.row(0, named=True)["peak_flops_source"] == DERIVED_SOURCE
