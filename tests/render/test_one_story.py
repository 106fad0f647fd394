"""One story in every view (issue 37): the "ncu utilization" table agrees with the kernel table
above it (one row per kernel name with the kernel table's label, the time unknown rather than 0 s, the
reason each launch is off the roofline read from its ``missing`` list), grouped findings keep their
measured text, skipped files say why, and summaries are counted as what they are."""

from __future__ import annotations

import types

import polars as pl

from ridgeline.render.facts import off_roofline, off_roofline_reason
from ridgeline.render.timeline.postmortem import utilization_lines
from ridgeline.render.timeline.postmortem_html import utilization_section

FA3 = "void cutlass::device_kernel<flash::FlashAttnFwdSm90<...>>(T1::Params)"
OTHER = "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<...>>(T1::Params)"


def _result(rows):
    base = {"kernel_name": None, "short_name": "cutlass::device_kernel", "kernel_label": None, "bound": "unknown",
            "duration_s": None, "sm_throughput_pct": None, "dram_throughput_pct": None, "missing": []}
    df = pl.DataFrame([{**base, **r} for r in rows],
                      schema_overrides={"duration_s": pl.Float64, "sm_throughput_pct": pl.Float64,
                                        "dram_throughput_pct": pl.Float64, "missing": pl.List(pl.String)})
    return types.SimpleNamespace(kernels=df)


def test_one_row_per_kernel_name_with_its_label_and_its_own_speed_of_light():
    res = _result([
        {"kernel_name": FA3, "kernel_label": "FlashAttention-3 fwd (sm90)", "duration_s": 2e-6,
         "sm_throughput_pct": 80.0, "missing": ["DRAM bandwidth roof"]},
        {"kernel_name": OTHER, "kernel_label": "CUTLASS GEMM", "duration_s": 1e-6, "sm_throughput_pct": 10.0,
         "missing": ["flops_tensor"]},
    ])
    rows, why = off_roofline(res)
    assert rows.get_column("kernel_label").to_list() == ["FlashAttention-3 fwd (sm90)", "CUTLASS GEMM"]
    assert rows.get_column("sm_pct").to_list() == [80.0, 10.0]  # not one median of both
    assert why == {"launches": 2, "no_counters": 1, "no_roof": 1, "counters": ["flops_tensor"],
                   "roofs": ["DRAM bandwidth roof"]}
    text = " ".join(" ".join(utilization_lines(res)).split())
    assert "1 has its FLOP/byte counters but no roof (DRAM bandwidth roof)" in text
    assert "1 lacks FLOP/byte counters (flops_tensor)" in text
    assert "FlashAttention-3 fwd (sm90)" in text and "CUTLASS GEMM" in text
    html = utilization_section(res)
    assert "FlashAttention-3 fwd (sm90)" in html and "lacks FLOP/byte counters" in html


def test_roofs_missing_alone_is_not_called_missing_counters_and_unknown_time_is_not_zero():
    res = _result([{"kernel_name": FA3, "kernel_label": "FA3", "sm_throughput_pct": 50.0,
                    "missing": ["DRAM bandwidth roof", "compute roof"]}] * 3)
    rows, why = off_roofline(res)
    assert rows.get_column("total_duration_s").to_list() == [None]
    assert why["no_counters"] == 0 and why["no_roof"] == 3
    reason = off_roofline_reason(why)
    assert reason == "3 launches off the roofline: 3 have their FLOP/byte counters but no roof (DRAM bandwidth roof, compute roof)"
    line = [x for x in utilization_lines(res) if x.strip().startswith("FA3")][0]
    assert " 0 s" not in line and line.split()[2] == "-"
    assert "without FLOP/byte counters" not in "\n".join(utilization_lines(res))


def test_no_table_when_every_launch_is_placed():
    assert off_roofline(_result([{"kernel_name": FA3, "bound": "memory", "sm_throughput_pct": 5.0}])) is None
    assert utilization_lines(_result([{"kernel_name": FA3, "bound": "memory", "sm_throughput_pct": 5.0}])) == []


def test_grouped_findings_keep_each_measured_message_when_the_subject_needs_its_own_line():
    """Issue 37 item 5: "RL205 info 2 findings" listed two long telemetry subjects and lost their
    measured text (a subject too long for the column skipped its message)."""
    from ridgeline.render.text import _findings
    from ridgeline.rules.base import Finding

    host = "host:" + "a-very-long-host-name-from-a-file-name-" * 2
    fs = [Finding(code="RL205", name="telemetry-implausible", severity="info", subject=f"{host} gpu:{g}",
                  message=f"{n} blank values in {s} samples", remedy="Expected.", subject_kind="telemetry")
          for g, n, s in ((0, 8, 3), (7, 9, 4))]
    text = " ".join(" ".join(_findings(types.SimpleNamespace(findings=fs))).split())
    assert "8 blank values in 3 samples" in text and "9 blank values in 4 samples" in text


def test_a_skipped_file_is_listed_with_its_reason_not_the_word_file(tmp_path):
    """Issue 37 item 12: a folder's skipped file read 'e.g. PATH: file', and an ncu log that
    profiled no kernels was only 'not an ncu export or telemetry'."""
    from pathlib import Path

    from ridgeline.pipeline import analyze_paths
    from ridgeline.render.terminal import render_terminal

    src = Path(__file__).resolve().parents[2] / "fixtures" / "ncu" / "no-kernels-profiled.csv"
    (tmp_path / "empty.csv").write_bytes(src.read_bytes())
    (tmp_path / "notes.txt").write_text("hello\n")
    gemm = Path(__file__).resolve().parents[2] / "fixtures" / "scenarios" / "decode-b8-h100" / "profile.ncu-raw.csv"
    (tmp_path / "profile.csv").write_bytes(gemm.read_bytes())
    res = analyze_paths([tmp_path], run_rules=False)
    reasons = {Path(s.source).name: s.reason for s in res.skipped}
    assert reasons["empty.csv"].startswith("ncu profiled no kernels")
    assert reasons["notes.txt"] == "not an ncu export, timeline or telemetry (found in a folder)"
    text = render_terminal(res)
    assert ": file" not in text and "e.g. " in text


def test_nsys_stats_summaries_are_counted_as_totals_not_timeline_records():
    """Issue 37 item 12: a cuda_gpu_kern_sum CSV was announced as 'N timeline records', then
    called 'totals only: no timeline'."""
    from ridgeline.render.terminal import _header
    from ridgeline.result import InputInfo

    res = types.SimpleNamespace(kernels=None, inputs=[InputInfo("k.csv", "nsys-stats:cuda_gpu_kern_sum", 10),
                                                      InputInfo("t.csv", "nsys-stats:cuda_gpu_trace", 7)])
    text = " ".join(" ".join(_header(res)).split())
    assert "10 nsys stats totals (per name, no timeline)" in text and "7 timeline records" in text
