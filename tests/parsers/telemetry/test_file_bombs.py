"""Telemetry files that are bombs (issue 35, class 6) and legal files refused (class 8).

Caps are the answer where a line or a header has no business being that long: the caps are module
constants (text_chunks.MAX_LINE_BYTES, syntax.MAX_COLUMNS), set small here so the tests stay fast,
and the error names the cap and the line. Where a cap is not the answer (a long but legal label,
many columns under the cap) the cost is linear: checked by doubling the size.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ridgeline.errors import InputError
from ridgeline.parsers import text_chunks
from ridgeline.parsers.telemetry import syntax
from ridgeline.parsers.telemetry.common import workload_labels
from ridgeline.parsers.telemetry.reader import HEAD_BYTES, detect_telemetry_format, read_telemetry
from ridgeline.pipeline import analyze_paths

T0 = 1767225600000


def _scrape(path: Path, *, label: str = "p", lines_before: int = 0, header: bool = False) -> Path:
    rows = ["# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization.", "# TYPE DCGM_FI_DEV_GPU_UTIL gauge"] if header else []
    rows += [f'DCGM_FI_DEV_GPU_UTIL{{gpu="1",Hostname="n1"}} 10 {T0 - 30000 * (i + 1)}' for i in range(lines_before)]
    for k in range(3):
        for g in range(2):
            lab = f'gpu="{g}",UUID="GPU-{g}",Hostname="node1",pod="{label}",namespace="ns"'
            rows.append(f"DCGM_FI_DEV_GPU_UTIL{{{lab}}} 50 {T0 + 30000 * k}")
            rows.append(f"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{{{lab}}} 0.1 {T0 + 30000 * k}")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("size", [HEAD_BYTES - 100, HEAD_BYTES + 5, 100_000, 3 * HEAD_BYTES])
@pytest.mark.parametrize("header", [False, True])
def test_a_scrape_with_a_label_longer_than_the_detection_head_is_telemetry(tmp_path, size, header):
    path = _scrape(tmp_path / "long.prom", label="p" * size, header=header)
    assert detect_telemetry_format(path) == "dcgm-exporter"
    assert analyze_paths([path], window="all").windows.height == 2
    df, _inputs, _skipped = read_telemetry([path])
    pods = df.get_column("labels").unique().to_list()
    assert len(pods) == 1 and f'pod="{"p" * size}"' in pods[0]


def test_an_unclosed_label_set_is_a_scrape_only_where_the_head_cut_it(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text('DCGM_FI_DEV_GPU_UTIL{gpu="0" 5\n' + "x" * (2 * HEAD_BYTES) + "\n")
    assert detect_telemetry_format(path) is None


@pytest.mark.parametrize("where", [0, 3])
def test_a_line_past_the_cap_is_refused_naming_it_and_the_cap(tmp_path, monkeypatch, where):
    monkeypatch.setattr(text_chunks, "MAX_LINE_BYTES", 2_000)
    path = _scrape(tmp_path / "bomb.prom", label="p" * 5_000, lines_before=where, header=True)
    with pytest.raises(InputError) as err:
        analyze_paths([path], window="all")
    text = str(err.value)
    assert f"bomb.prom:{3 + where}:" in text and "MAX_LINE_BYTES" in text and "2,000" in text


@pytest.mark.parametrize("chunk", [64, 1000, 1 << 20])
def test_line_chunks_name_the_first_long_line_at_any_piece_size(tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(text_chunks, "MAX_LINE_BYTES", 100)
    for lines, bad in ((["a" * 10] * 5 + ["b" * 101] + ["c"] * 3, 6), (["a" * 100] * 20, None), (["a"] * 3 + ["z" * 500], 4)):
        path = tmp_path / "t.txt"
        path.write_bytes(("\n".join(lines) + ("\n" if bad != 4 else "")).encode())
        if bad is None:
            assert b"".join(p for p, _ in text_chunks.line_chunks(path, chunk)) == path.read_bytes()
            continue
        with pytest.raises(InputError) as err:
            list(text_chunks.line_chunks(path, chunk))
        assert err.value.line == bad


def test_a_long_label_costs_its_size(tmp_path):
    """The label pairs were matched with a pattern that kept backtracking state per character: a
    5 MB label took 0.9 GB; now about its size (memory is measured, not time: no timed
    assertions in tests; benchmarks/ holds the speed figures)."""
    import tracemalloc

    def peak(n):
        text = '{Hostname="n1",pod="' + "p" * n + '\\"q",namespace="ns"}'
        tracemalloc.start()
        try:
            got = workload_labels(text)
            return tracemalloc.get_traced_memory()[1], got
        finally:
            tracemalloc.stop()
    small, _ = peak(1_000_000)
    big, got = peak(4_000_000)
    assert got.startswith('namespace="ns",pod="ppp') and got.endswith('\\"q"')
    assert big < 6 * 4_000_000 and big < 5 * small + (1 << 20), (small, big)  # linear in the label, a few copies


def _wide_csv(path: Path, columns: int, rows: int = 5) -> Path:
    head = ["timestamp", "host", "gpu", "gpu_util_ratio"] + [f"x{i}" for i in range(columns - 4)]
    body = [",".join([f"2026-01-01T00:00:{k:02d}Z", "n1", "0", "0.5"] + ["1"] * (columns - 4)) for k in range(rows)]
    path.write_text(",".join(head) + "\n" + "\n".join(body) + "\n")
    return path


def test_a_csv_past_the_column_cap_is_refused_naming_the_cap(tmp_path, monkeypatch):
    monkeypatch.setattr(syntax, "MAX_COLUMNS", 50)
    ok = _wide_csv(tmp_path / "ok.csv", 50)
    assert analyze_paths([ok], window="all").windows.height
    with pytest.raises(InputError) as err:
        analyze_paths([_wide_csv(tmp_path / "wide.csv", 51)], window="all")
    assert "MAX_COLUMNS" in str(err.value) and "51 columns" in str(err.value) and "wide.csv:1:" in str(err.value)


def test_columns_under_the_cap_are_read(tmp_path):
    """2,000 columns (just under the cap) are read and reduced; the time they take (df.schema built
    once per column made 10,000 columns take 125 s) is a benchmark's figure, not a test's."""
    windows = analyze_paths([_wide_csv(tmp_path / "w2000.csv", 2_000)], window="all").windows
    assert windows.height == 1 and windows.get_column("gpu_util_mean_ratio").to_list() == [0.5]


def test_the_caps_are_documented():
    text = (Path(__file__).resolve().parents[3] / "docs" / "refusals.md").read_text(encoding="utf-8")
    assert "MAX_LINE_BYTES" in text and "MAX_COLUMNS" in text
