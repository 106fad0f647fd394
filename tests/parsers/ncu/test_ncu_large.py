"""Files larger than the parser's head/tail windows (1 MiB): the fast path (polars reads the
file directly) and its hand-offs to the line-by-line path. Files are synthetic, made in tmp_path."""

from __future__ import annotations

import pytest

from ridgeline.errors import InputError
from ridgeline.parsers.ncu.csv_reader import HEAD_BYTES, read_ncu

H15 = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size", "Grid Size",
       "Device", "CC", "Section Name", "Metric Name", "Metric Unit", "Metric Value"]
N = 4000  # launches; 3 rows each, ~1.6 MB


def q(*fields):
    return ",".join('"' + str(f) + '"' for f in fields)


def details_lines(n=N):
    lines = [q(*H15)]
    for i in range(n):
        ident = [i, 7, "app", "host", f"void kernel_{i % 7}<float, {i % 3}>(float *, int, int)", 1, 7, "(128, 1, 1)",
                 "(64, 1, 1)", 0, "9.0", "Command line profiler metrics"]
        lines.append(q(*ident, "gpu__time_duration.sum", "ns", f"{1000 + i:,}"))
        lines.append(q(*ident, "dram__bytes.sum", "byte", f"{64 * (i + 1):,}"))
        lines.append(q(*ident, "sm__throughput.avg.pct_of_peak_sustained_elapsed", "%", "12.50"))
    return lines


def write(tmp_path, lines, name="big.csv"):
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    assert p.stat().st_size > HEAD_BYTES
    return p


def test_large_clean_file_with_trailing_prof_lines(tmp_path):
    lines = ["==PROF== Connected to process 7 (/bin/app)"] + details_lines() + ["==PROF== Disconnected from process 7"]
    res = read_ncu([write(tmp_path, lines)])
    k = res.kernels
    assert k.height == N
    assert k["duration_s"][N - 1] == pytest.approx((1000 + N - 1) * 1e-9)
    assert k["dram_bytes"].sum() == 64 * N * (N + 1) / 2
    assert any("1 non-CSV line" in n for n in res.notes)
    assert res.skipped == []


def test_large_file_truncated_before_trailing_prof_line(tmp_path):
    lines = details_lines()
    lines.append(lines[-1][:40])  # cut row, then ncu's last words
    lines.append("==PROF== Disconnected from process 7")
    p = write(tmp_path, lines)
    with pytest.raises(InputError) as exc:
        read_ncu([p])
    assert exc.value.line == len(lines) - 1  # 1-based: the cut row
    res = read_ncu([p], strict=False)
    assert res.kernels.height == N
    assert [s.item for s in res.skipped] == [f"line {len(lines) - 1}"]


def test_large_file_with_app_output_between_rows_keeps_line_numbers(tmp_path):
    lines = details_lines()
    lines.insert(10, "step 1: loss=0.25, lr=1e-4")  # application output (slow path)
    bad_at = next(i for i in range(5000, len(lines)) if '"12.50"' in lines[i])
    lines[bad_at] = lines[bad_at].replace('"12.50"', '"twelve"')
    p = write(tmp_path, lines)
    with pytest.raises(InputError) as exc:
        read_ncu([p])
    assert exc.value.line == bad_at + 1
    assert exc.value.actual == "twelve"
    res = read_ncu([p], strict=False)
    assert [s.item for s in res.skipped] == [f"line {bad_at + 1}"]
    assert res.kernels["sm_throughput_pct"].null_count() == 1


def test_large_file_second_header_block(tmp_path):
    first = details_lines(2000)
    second = details_lines(2000)
    p = write(tmp_path, first + ["==PROF== Connected to process 8 (/bin/app)"] + second)
    k = read_ncu([p]).kernels
    assert k.height == 4000
    assert k["id"][1999] == "1999" and k["id"][2000] == "1/0"
