"""Integration: every command end to end through ``ridgeline.cli.main``: readable 80-column
output, honest provenance, and bad input answered by ONE line on stderr with exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ridgeline.cli import DEMO_START, main
from ridgeline.render.terminal import distinct_labels, format_result, roof_source_text
from ridgeline.result import Roof
from ridgeline.rules.base import Finding
from ridge_inputs import write_mini_ncu
from test_integration_pipeline import write_dmon

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "fixtures" / "scenarios"

GEMMS = [
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x64x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x128x64_warpgroupsize1x1x1_execute_segment_k_on_kernel__5x_cublas",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x32x64_warpgroupsize1x1x1_execute_segment_k_on_kernel__5x_cublas",
]


def run(capsys, *args):
    with pytest.raises(SystemExit) as exc:
        main(list(map(str, args)))
    out = capsys.readouterr()
    return exc.value.code, out.out, out.err


def assert_one_line_error(code, out, err, *needles):
    assert code == 2, (code, out, err)
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("ridgeline: error: ")
    assert "Traceback" not in err
    for n in needles:
        assert n in lines[0], (n, lines[0])


# ---------------------------------------------------------------- kernel names and roofs


def test_gemm_labels_keep_the_tile_size_and_stay_distinct():
    labels = distinct_labels(GEMMS, 30)
    assert len(set(labels)) == 4
    assert all(len(label) <= 30 for label in labels)
    for label, tile in zip(labels, ("128x64x64", "64x128x64", "64x64x64", "64x32x64")):
        assert tile in label and label.startswith("sm90_xmma")


def test_equal_short_names_use_the_full_names():
    labels = distinct_labels(["gemv", "gemv", "norm"], 20,
                             ["void gemv<float, 128>(float*)", "void gemv<half, 256>(half*)", "norm"])
    assert labels[0] != labels[1] and labels[2] == "norm"
    assert "128" in labels[0] and "256" in labels[1]


def test_roof_source_is_short_and_says_measured_or_datasheet():
    ncu = Roof("bandwidth", 3.35e12, "ncu", level="dram",
               detail="median of 359 launches on NVIDIA H100 80GB HBM3: peak_dram_bytes_per_s = "
                      "dram__bytes.sum.peak_sustained x dram__cycles_elapsed.avg.per_second, at DRAM clock 2.62 GHz")
    assert roof_source_text(ncu) == "measured by ncu (359 launches, at 2.62 GHz)"
    cat = Roof("compute", 989e12, "catalogue", precision="fp16_tensor", detail="H100 SXM datasheet")
    assert roof_source_text(cat) == "datasheet"


def test_analyze_table_names_distinct_and_roofs_brief(capsys):
    code, out, err = run(capsys, "analyze", SCENARIOS / "decode-b8-h100" / "profile.ncu-raw.csv")
    assert code == 0, err
    assert max(map(len, out.splitlines())) <= 80
    table = out.split("Top kernels by GPU time", 1)[1].split("\n\n", 1)[0]
    rows = [ln for ln in table.splitlines()[2:] if ln[:2].strip().isdigit()]
    gemm_rows = [ln for ln in rows if "sm90 xmma" in ln]
    assert len(gemm_rows) == 5
    name_end = table.splitlines()[1].index("prec")  # the kernel column ends where the header's next begins
    names = [ln[3:name_end].strip() for ln in gemm_rows]
    # five distinct labels, each naming the library and the tile that tells them apart
    assert len(set(names)) == 5 and all(n.startswith("cuBLAS sm90 xmma gemm") for n in names)
    assert {"64x128", "64x256", "64x32", "64x64"} <= {n.rsplit("~", 1)[-1] for n in names}
    # provenance: short on the roof lines, the full counter formula only in JSON
    assert "measured by ncu (359 launches, at 2.62 GHz)" in out
    assert "dram__bytes.sum.peak_sustained" not in out


def test_findings_of_one_rule_are_grouped_in_the_terminal_only(capsys, tmp_path):
    from ridgeline.pipeline import analyze_paths

    result = analyze_paths([write_mini_ncu(tmp_path / "p.csv")], run_rules=False)
    result.findings = [
        Finding(code="RL101", name="x", severity="warning", subject=name, message="intensity 8 < ridge 295",
                remedy="batch more", impact_s=1e-4 * (4 - i), impact_share=0.01 * (4 - i), subject_kind="kernel")
        for i, name in enumerate(GEMMS[:3])
    ]
    text = format_result(result)
    assert max(map(len, text.splitlines())) <= 80
    assert "RL101 warning  3 kernels  [up to 900 us, 9.0% of profiled GPU time]" in text
    assert text.count("intensity 8 < ridge 295") == 1 and text.count("-> batch more") == 1
    assert "128x64x64" in text and "64x128x64" in text and "64x64x64" in text
    from ridgeline.render.jsonout import to_document

    assert len(to_document(result)["findings"]) == 3


# ---------------------------------------------------------------- telemetry


def test_telemetry_default_is_per_gpu_plus_worst_windows(capsys):
    code, out, err = run(capsys, "telemetry", SCENARIOS / "telemetry-fleet")
    assert code == 0, err
    assert max(map(len, out.splitlines())) <= 80
    assert "Per GPU, whole run" in out and "Worst windows by wasted time (1 of 1 spans" in out
    per_gpu = out.split("Per GPU, whole run", 1)[1].split("\n\n", 1)[0].splitlines()[3:]
    assert len(per_gpu) == 34  # one row per GPU / MIG instance
    worst = out.split("Worst windows", 1)[1].split("util = ", 1)[0].split("-" * 80 + "\n", 1)[1].splitlines()
    # wasted = idle with memory allocated (one GPU here); the busy-but-idle-tensor GPUs are underused
    assert len([ln for ln in worst if ln.strip()]) == 1
    assert "Fleet: wasted 2.00 GPU-h of 68.00 GPU-h observed" in out and "underused 47.50 GPU-h" in out
    assert len(out.splitlines()) < 300


def test_telemetry_all_windows(capsys):
    code, out, err = run(capsys, "telemetry", SCENARIOS / "telemetry-fleet", "--all-windows", "--max-rows", "50")
    assert code == 0, err
    assert "Per GPU, whole run" not in out
    assert "... 766 more window rows" in out


def test_analyze_accepts_start_for_dmon(capsys, tmp_path):
    dmon = write_dmon(tmp_path / "node.dmon", 30)
    code, out, err = run(capsys, "analyze", dmon, "--start", "2026-01-05T08:00:00Z", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["telemetry"]["windows"][0]["window_start"].startswith("2026-01-05T08:00:00")


# ---------------------------------------------------------------- demo


def test_demo_prints_a_short_path_and_anchored_times(capsys):
    code, out, err = run(capsys, "demo")
    assert code == 0, err
    assert "ridgeline/data/demo (bundled)" in out
    assert str(REPO) not in out
    assert "1970" not in out
    assert DEMO_START in out
    # telemetry shares are of the time the telemetry observed, kernel shares of the profiled time
    import re

    # the demo GPU is memory-bound: RL202 says so (RL201 leaves that time to it)
    assert re.search(r"RL202 info +host:infer-0 gpu:0", out) and "RL201" not in out
    assert re.search(r"RL101 warning +5 kernels +\[up to [0-9.]+ ms, [0-9.]+% of profiled GPU time\]", out)
    assert "600 telemetry records" in " ".join(out.split())  # 10 minutes of 1 s dmon ticks
    assert max(map(len, out.splitlines())) <= 90  # the capture recipe line is the widest


def test_demo_json_paths_are_short(capsys):
    code, out, err = run(capsys, "demo", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert all(i["path"].startswith("ridgeline/data/demo/") for i in doc["inputs"])


# ---------------------------------------------------------------- bad input: one line, exit 2


def test_missing_file(capsys):
    assert_one_line_error(*run(capsys, "analyze", "/nonexistent/profile.csv"), "/nonexistent/profile.csv",
                          "no such file")


def test_empty_folder(capsys, tmp_path):
    assert_one_line_error(*run(capsys, "analyze", tmp_path), str(tmp_path), "no input files")


def test_folder_with_nothing_usable(capsys, tmp_path):
    (tmp_path / "README.txt").write_text("hello\n")
    assert_one_line_error(*run(capsys, "analyze", tmp_path), "none found")
    assert_one_line_error(*run(capsys, "telemetry", tmp_path), "none found", "README.txt")


def test_binary_file(capsys, tmp_path):
    p = tmp_path / "x.csv"
    p.write_bytes(bytes(range(256)) * 8)
    assert_one_line_error(*run(capsys, "analyze", p), str(p), "binary data")


def test_truncated_csv(capsys, tmp_path):
    src = (SCENARIOS / "decode-b8-h100" / "profile.ncu-raw.csv").read_bytes()
    p = tmp_path / "cut.csv"
    p.write_bytes(src[:2500])
    code, out, err = run(capsys, "analyze", p)
    assert_one_line_error(code, out, err, f"{p}:", "truncated")


def test_wrong_gpu(capsys, mini=None, tmp_path=None):
    assert_one_line_error(*run(capsys, "analyze", SCENARIOS / "decode-b8-h100", "--gpu", "h1000"),
                          "unknown GPU 'h1000'", "H100 SXM")


@pytest.mark.parametrize("window", ["5q", "-5m", "0s"])
def test_bad_window(capsys, window):
    assert_one_line_error(*run(capsys, "analyze", SCENARIOS / "decode-b1-h100", "--window", window), "--window")


@pytest.mark.parametrize("threshold, needle", [("garbage", "CODE.name=value"), ("RL101.nope=3", "unknown threshold")])
def test_bad_threshold(capsys, threshold, needle):
    assert_one_line_error(*run(capsys, "analyze", SCENARIOS / "decode-b8-h100", "--threshold", threshold), needle)


def test_bad_start(capsys, tmp_path):
    dmon = write_dmon(tmp_path / "n.dmon", 3)
    assert_one_line_error(*run(capsys, "analyze", dmon, "--start", "yesterday"), "--start", "ISO 8601")


@pytest.mark.parametrize("command", ["analyze", "telemetry", "report"])
def test_unwritable_output(capsys, tmp_path, command):
    target = tmp_path / "missing-dir" / "out.txt"
    src = SCENARIOS / ("telemetry-fleet" if command == "telemetry" else "decode-b8-h100")
    assert_one_line_error(*run(capsys, command, src, "-o", target), f"cannot write {target}", "No such file")


def test_unwritable_csv_has_no_polars_noise(capsys, tmp_path):
    target = tmp_path / "missing-dir" / "out.csv"
    code, out, err = run(capsys, "analyze", SCENARIOS / "decode-b8-h100", "--format", "csv", "-o", target)
    assert_one_line_error(code, out, err, f"cannot write {target}")
    assert "os error" not in err


def test_unwritable_plot(capsys, tmp_path):
    target = tmp_path / "missing-dir" / "r.png"
    assert_one_line_error(*run(capsys, "roofline", SCENARIOS / "decode-b8-h100", "-o", target), f"cannot write {target}")


def test_output_is_a_directory(capsys, tmp_path):
    code, out, err = run(capsys, "analyze", SCENARIOS / "decode-b8-h100", "-o", tmp_path)
    assert_one_line_error(code, out, err, "is a directory", "ridgeline analyze --help")


def test_parquet_to_stdout_fails_before_reading(capsys, tmp_path):
    # the input does not even exist: the usage error comes first
    assert_one_line_error(*run(capsys, "analyze", tmp_path / "nope.csv", "--format", "parquet"), "-o PATH")
    assert_one_line_error(*run(capsys, "telemetry", tmp_path / "nope.dmon", "--format", "parquet"), "-o PATH")


def test_usage_errors_are_one_line(capsys):
    assert_one_line_error(*run(capsys, "analyze"), "Missing argument")
    assert_one_line_error(*run(capsys, "analyze", "x", "--top", "0"), "--top")
    assert_one_line_error(*run(capsys, "nosuchcommand"), "No such command")


def test_binary_config_is_one_line(capsys, tmp_path):
    cfg = tmp_path / "ridgeline.toml"
    cfg.write_bytes(b"\xff\xfe\xb4 not toml")
    assert_one_line_error(*run(capsys, "analyze", SCENARIOS / "decode-b8-h100", "--config", cfg), str(cfg), "UTF-8")


def test_rules_list_checks_config(capsys, tmp_path):
    assert_one_line_error(*run(capsys, "rules", "--config", tmp_path / "missing.toml"), "not found")


def test_rules_list_wraps_to_a_terminal_width():
    from ridgeline.cli import rule_list_lines
    from ridgeline.rules import engine

    rows = engine.catalogue_rows()
    piped = rule_list_lines(rows)  # not a terminal: one line per rule for grep
    assert len(piped) == len(rows)
    wrapped = rule_list_lines(rows, 80)
    assert max(map(len, wrapped)) <= 80
    assert wrapped[0].startswith("RL101  ")
    # every summary word is still there
    assert " ".join(" ".join(wrapped).split()).count("RL1") >= sum(r["code"].startswith("RL1") for r in rows)


def test_broken_pipe_is_quiet():
    code = "from ridgeline.cli import main; main(['rules'])"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    proc.stdout.readline()
    proc.stdout.close()  # the reader goes away, like `| head -1`
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=60) == 0
    assert err == ""


def test_finding_subjects_keep_their_bracketed_gpu():
    subjects = [f"{GEMMS[0]} [bf16/fp16, H100 SXM]", f"{GEMMS[0]} [bf16/fp16, H200]",
                f"{GEMMS[1]} [bf16/fp16, H100 SXM]"]
    labels = distinct_labels(subjects, 54, together=True)
    assert labels[0].endswith(" [bf16/fp16, H100 SXM]") and labels[1].endswith(" [bf16/fp16, H200]")
    assert "128x64x64" in labels[0] and "128x64x64" in labels[1] and "64x128x64" in labels[2]
    assert all(len(label) <= 54 and "~~" not in label for label in labels)


def test_roofs_of_two_devices_are_listed_per_device(capsys):
    code, out, err = run(capsys, "analyze", SCENARIOS / "decode-b8-h100" / "profile.ncu-raw.csv",
                         SCENARIOS / "decode-b8-h200" / "profile.ncu-raw.csv")
    assert code == 0, err
    roofs = out.split("Roofs", 1)[1].split("\n\n", 1)[0].splitlines()
    assert "  NVIDIA H100 80GB HBM3:" in roofs and "  NVIDIA H200:" in roofs
    h200 = roofs[roofs.index("  NVIDIA H200:") + 1:]
    # H200: 989 TFLOP/s over its own 4.8 TB/s -> ridge 206 FLOP/B (not the H100's 295)
    assert any("BF16 TC wgmma" in ln and " 206 " in ln for ln in h200)
    # FlashAttention-2 runs the mma.sync path: 2/3 of the dense wgmma rate -> ridge ~138
    assert any("BF16 TC mma.sync" in ln and " 138 " in ln for ln in h200)
    assert max(map(len, out.splitlines())) <= 80


def test_csv_without_kernels_says_the_table_is_empty(capsys, tmp_path):
    dmon = write_dmon(tmp_path / "n.dmon", 5)
    code, out, err = run(capsys, "analyze", dmon, "--format", "csv")
    assert code == 0
    assert out.splitlines()[0].startswith("id,") and len(out.splitlines()) == 1  # the header only
    assert "no kernels in the input" in err and "ridgeline telemetry --format csv" in err


def test_templated_kernels_with_equal_short_names():
    shorts = ["at::native::elementwise_kernel", "at::native::elementwise_kernel", "splitKreduce_kernel",
              "splitKreduce_kernel"]
    fulls = [
        "void at::native::elementwise_kernel<(int)128, (int)2, void at::native::gpu_kernel_impl<"
        "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase &)::[lambda() (instance 2)]>(int, T3)",
        "void at::native::elementwise_kernel<(int)128, (int)2, void at::native::gpu_kernel_impl<"
        "at::native::CUDAFunctor_add<float>>(at::TensorIteratorBase &, const T1 &)::[lambda(int) (instance 1)]>(int, T3)",
        "void splitKreduce_kernel<(int)32, (bool)1, (bool)0>(cublasSplitKParams<T6>)",
        "void splitKreduce_kernel<(int)32, (bool)0, (bool)1>(cublasSplitKParams<T6>)",
    ]
    labels = distinct_labels(shorts, 29, fulls)
    assert labels[0].startswith("element") and "direct_copy" in labels[0]
    assert "CUDAFunctor_a" in labels[1]
    # same words, different order of template values: numbered, both of them
    assert labels[2:] == ["splitKreduce_kernel#1", "splitKreduce_kernel#2"]
    assert all(len(label) <= 29 for label in labels)


def test_demo_copy_to_an_unwritable_place(capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert_one_line_error(*run(capsys, "demo", "--format", "json", "--copy-to", blocker / "sub"),
                          f"cannot copy the demo inputs to {blocker / 'sub'}")


def test_report_checks_compare_gpu_in_every_format(capsys, tmp_path):
    assert_one_line_error(*run(capsys, "report", SCENARIOS / "decode-b8-h100", "-o", tmp_path / "r.md",
                               "--compare-gpu", "nosuch"), "unknown GPU 'nosuch'")
    assert not (tmp_path / "r.md").exists()


def test_compressed_and_binary_report_inputs_say_what_they_are(capsys, tmp_path):
    import gzip

    gz = tmp_path / "profile.csv.gz"
    gz.write_bytes(gzip.compress((SCENARIOS / "decode-b8-h100" / "profile.ncu-raw.csv").read_bytes()))
    assert_one_line_error(*run(capsys, "analyze", gz), "gzip-compressed", "decompress it first")
    rep = tmp_path / "run.ncu-rep"
    rep.write_bytes(b"\x00\x01NVIDIA binary\xff\xfe" * 50)
    assert_one_line_error(*run(capsys, "analyze", rep), "binary Nsight Compute report",
                          "ncu --import run.ncu-rep --csv --page raw --print-units base > run.csv")


def test_a_warmup_longer_than_the_run_is_explained(capsys, tmp_path):
    dmon = write_dmon(tmp_path / "n.dmon", 60)  # one minute of ticks
    for command in ("telemetry", "analyze"):
        code, out, err = run(capsys, command, dmon, "--warmup", "2h")
        assert code == 0, err
        assert "Telemetry: no windows (see the notes)" in out
        assert "--warmup 2h dropped every sample" in " ".join(out.split())


@pytest.mark.parametrize("args", [["--help"], ["rules", "RL101"], ["rules", "RL201", "RL905"], ["gpus"], ["gpus", "h100"]])
def test_help_docs_and_catalogues_fit_80_columns(capsys, args):
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert max(map(len, out.splitlines())) <= 80


@pytest.mark.parametrize("command", ["telemetry", "analyze"])
def test_a_window_shorter_than_the_sample_interval_is_refused(capsys, tmp_path, command):
    dmon = write_dmon(tmp_path / "n.dmon", 30)  # 1 s ticks
    assert_one_line_error(*run(capsys, command, dmon, "--window", "0.5s"), "--window 0.5s",
                          "sample interval (1 s)")
    code, out, err = run(capsys, command, dmon, "--window", "1s")
    assert code == 0, err


def test_many_findings_of_one_rule_print_each_kind_of_advice_once(tmp_path):
    from ridgeline.pipeline import analyze_paths

    result = analyze_paths([write_mini_ncu(tmp_path / "p.csv")], run_rules=False)
    remedy_sm = "Kernels occupy few SMs (SM_ACTIVE {}%): raise batch size."
    remedy_mem = "Memory-bound (DRAM_ACTIVE {}%): batch more."
    result.findings = [
        Finding(code="RL201", name="x", severity="warning", subject=f"host:n gpu:{g}", message=f"busy gpu {g}",
                remedy=(remedy_sm if g < 4 else remedy_mem).format(20 + g), impact_s=100.0 - g,
                impact_share=0.01, subject_kind="gpu")
        for g in range(10)
    ]
    text = format_result(result)
    assert "RL201 warning  10 GPUs" in text
    assert "... and 2 more (--format json lists every finding)" in text  # 8 listed
    assert "e.g. host:n gpu:0: busy gpu 0" in text
    assert "-> (4 of 10) Kernels occupy few SMs (SM_ACTIVE 20%)" in text
    assert "-> (6 of 10) Memory-bound (DRAM_ACTIVE 24%)" in text
    assert text.split("Findings", 1)[1].count("->") == 2


def test_prometheus_json_that_is_not_utf8(capsys, tmp_path):
    bad = tmp_path / "q.json"
    bad.write_bytes(b'{"status":"success",\n"data":{"resultType":"matrix",\n"result":[\xae]}}\n')
    assert_one_line_error(*run(capsys, "telemetry", bad), f"{bad}:3:", "UTF-8", "0xae")


def test_cache_roofs_are_labelled_by_level():
    from ridgeline.render.terminal import _gpu_lines
    from ridgeline.result import AnalysisResult

    detail = "median of 12 launches on NVIDIA H100 80GB HBM3: {}, at {} clock 1.75 GHz"
    result = AnalysisResult(gpu_name="H100 SXM", roofs=[
        Roof("bandwidth", 3.35e12, "ncu", level="dram", detail=detail.format("peak_dram_bytes_per_s", "DRAM")),
        Roof("bandwidth", 1.2e13, "ncu", level="l2", detail=detail.format("lts__t_bytes", "L2")),
        Roof("compute", 989e12, "ncu", precision="fp16_tensor", detail=detail.format("peak", "SM")),
    ])
    lines = _gpu_lines(result)
    l2 = next(ln for ln in lines if "L2 bandwidth" in ln)
    assert "12 TB/s" in l2 and "measured by ncu (12 launches, at 1.75 GHz)" in l2
    # the ridge is against DRAM: 989e12 / 3.35e12 = 295
    assert any("BF16 TC" in ln and " 295 " in ln for ln in lines)


@pytest.mark.parametrize("command, extra", [("analyze", ["--format", "csv"]), ("analyze", ["--plot"]),
                                            ("telemetry", ["--format", "csv"]), ("report", ["--format", "markdown"])])
def test_output_onto_an_input_is_refused(capsys, tmp_path, command, extra):
    src = tmp_path / ("n.dmon" if command == "telemetry" else "p.csv")
    if command == "telemetry":
        write_dmon(src, 5)
    else:
        write_mini_ncu(src)
    before = src.read_bytes()
    args = [command, src, *extra, src] if extra == ["--plot"] else [command, src, *extra, "-o", src]
    assert_one_line_error(*run(capsys, *args), f"{src} is one of the input files")
    assert src.read_bytes() == before


def test_analyze_all_windows(capsys):
    code, out, err = run(capsys, "analyze", SCENARIOS / "telemetry-fleet", "--all-windows")
    assert code == 0, err
    assert "Per GPU, whole run" not in out and "... 776 more window rows" in out
    assert max(map(len, out.splitlines())) <= 80
