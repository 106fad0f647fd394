"""A line break inside a quoted value (legal CSV: RFC 4180) is read as part of the value, never
taken for a cut row or for noise (issue 32 item 10).

Every input is a small SYNTHETIC export generated here (raw and details pages, with and without
``==PROF==`` lines and application output between the rows, LF and CRLF): the kernel name of one
launch holds one or two line breaks. A row really cut in the middle is still refused.
"""

from __future__ import annotations

import pytest

from ridgeline.errors import InputError
from ridgeline.parsers.ncu.csv_reader import read_ncu

IDENT = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
         "Grid Size", "Device", "CC"]
METRICS = [("gpu__time_duration.sum", "ns"), ("dram__bytes.sum", "byte")]
ODD = "void weird\nname<int>(int)"
ODD2 = "void two\nline\nbreaks<float>()"


def quoted(values) -> str:
    return ",".join('"' + v.replace('"', '""') + '"' for v in values)


def launch(i: int, name: str, ns: str | None = None) -> list[str]:
    return [str(i), "1", "python", "host", name, "1", "7", "(128, 1, 1)", "(10, 1, 1)", "0", "9.0",
            ns or str(1000 * (i + 1)), str(4096 * (i + 1))]


def raw_page(names, *, noise_after: int | None = None, eol="\n", bad_ns_at: int | None = None) -> str:
    lines = [quoted(IDENT + [m for m, _u in METRICS]), quoted([""] * len(IDENT) + [u for _m, u in METRICS])]
    for i, name in enumerate(names):
        lines.append(quoted(launch(i, name, "-5" if i == bad_ns_at else None)))
        if noise_after == i:
            lines += ["application output, not CSV", "==PROF== still profiling"]
    return ("\n".join(lines) + "\n").replace("\n", eol)  # CRLF inside the name too


def details_page(names) -> str:
    lines = [quoted(IDENT + ["Section Name", "Metric Name", "Metric Unit", "Metric Value"])]
    for i, name in enumerate(names):
        row = launch(i, name)
        for (metric, unit), value in zip(METRICS, row[len(IDENT):]):
            lines.append(quoted(row[:len(IDENT)] + ["Command line profiler metrics", metric, unit, value]))
    return "\n".join(lines) + "\n"


def write(tmp_path, text: str, name="page.csv"):
    p = tmp_path / name
    p.write_bytes(text.encode())
    return p


LAYOUTS = {
    "raw, name in the last row": lambda: raw_page(["k<int>()", ODD]),
    "raw, name in a middle row": lambda: raw_page(["k<int>()", ODD, "k<int>()"]),
    "raw, two breaks in the last row": lambda: raw_page(["k<int>()", ODD2]),
    "raw, noise after the row (line-by-line path)": lambda: raw_page(["k<int>()", ODD, "k<int>()"], noise_after=1),
    "raw, noise and two breaks last": lambda: raw_page(["k<int>()", "k<int>()", ODD2], noise_after=0),
    "raw, CRLF": lambda: raw_page(["k<int>()", ODD], eol="\r\n"),
    "raw, preamble": lambda: "==PROF== Connected to process 1\napp says hi\n" + raw_page(["k<int>()", ODD]),
    "details, name in the last launch": lambda: details_page(["k<int>()", ODD]),
    "details, two breaks, middle launch": lambda: details_page(["k<int>()", ODD2, "k<int>()"]),
}


@pytest.mark.parametrize("make", LAYOUTS.values(), ids=list(LAYOUTS))
def test_line_break_in_a_quoted_kernel_name_is_read(tmp_path, make):
    text = make()
    res = read_ncu(write(tmp_path, text))
    names = res.kernels.get_column("kernel_name").to_list()
    expected = [n.replace("\r\n", "\n") for n in names]
    assert any("\n" in n for n in expected), names
    assert res.kernels.height == len(names) >= 2
    # every launch kept with its own figures: no row merged, dropped or shifted
    assert res.kernels.get_column("launch_id").to_list() == list(range(res.kernels.height))
    assert res.kernels.get_column("dram_bytes").to_list() == [4096.0 * (i + 1) for i in range(res.kernels.height)]
    assert not [s for s in res.skipped if "cut" in s.reason or "truncated" in s.reason]
    noise = [n for n in res.notes if "non-CSV line" in n]
    assert all(" 2 non-CSV" in n or " 1 non-CSV" in n for n in noise), noise


@pytest.mark.parametrize("noise_after", [None, 0])
def test_rows_after_a_multi_line_name_keep_their_physical_line_numbers(tmp_path, noise_after):
    # launch 2's duration is bad: the error names its physical line (the name above took two lines)
    text = raw_page(["k<int>()", ODD, "k<int>()"], noise_after=noise_after, bad_ns_at=2)
    path = write(tmp_path, text)
    line = next(i for i, ln in enumerate(text.split("\n"), 1) if ln.startswith('"2",'))
    with pytest.raises(InputError) as exc:
        read_ncu(path)
    assert f"{path}:{line}:" in str(exc.value) and "gpu__time_duration.sum" in str(exc.value)


def test_a_row_cut_inside_a_value_is_still_refused(tmp_path):
    text = raw_page(["k<int>()", ODD])
    cut = text[: text.rindex("name<int>") + 4]  # the file ends inside the quoted name
    path = write(tmp_path, cut)
    with pytest.raises(InputError) as exc:
        read_ncu(path)
    assert "truncated (unterminated quote)" in str(exc.value)
    res = read_ncu(path, strict=False)
    assert res.kernels.get_column("launch_id").to_list() == [0]
    assert any("truncated row" in s.reason for s in res.skipped)
