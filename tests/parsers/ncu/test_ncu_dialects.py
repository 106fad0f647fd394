"""One behavioral suite over every ncu CSV dialect.

The same three launches are written (synthetic, in tmp_path) in each layout/era/encoding ncu
produces; every dialect must give the same KERNEL values, computed here by hand.
"""

from __future__ import annotations

import csv
import io

import pytest

from ridgeline.analyzer.schema import KERNEL_COLUMNS
from ridgeline.errors import InputError
from ridgeline.parsers.ncu.csv_reader import detect_ncu_layout, read_ncu

GEMM = "void gemm_kernel<float, (int)128>(const float *, float *, int)"
LAUNCHES = [
    dict(id=0, pid=4100, kernel=GEMM, block=(128, 1, 1), grid=(64, 2, 1), dur_ns=20_000, dram=1_000_000,
         lts=2_000_000, l1=3_000_000, fadd=100, fmul=200, ffma=1_000_000, hadd=5, hmul=6, hfma=7, dadd=1, dmul=2, dfma=3),
    dict(id=1, pid=4100, kernel="ampere_sgemm_128x64_nn", block=(256, 1, 1), grid=(10, 1, 1), dur_ns=5_000, dram=64_000,
         lts=120_000, l1=256_000, fadd=0, fmul=0, ffma=4_096, hadd=0, hmul=0, hfma=0, dadd=0, dmul=0, dfma=0),
    dict(id=2, pid=4100, kernel=GEMM, block=(128, 1, 1), grid=(64, 2, 1), dur_ns=1_234_000, dram=5_000_000,
         lts=6_000_000, l1=7_000_000, fadd=10, fmul=20, ffma=30, hadd=40, hmul=50, hfma=60, dadd=70, dmul=80, dfma=90),
]
# hand-computed expectations per launch
EXPECTED = [
    dict(launch_id=0, short_name="gemm_kernel", block_threads=128, grid_blocks=128, duration_s=20e-6, dram_bytes=1e6,
         l2_bytes=2e6, l1_bytes=3e6, flops_fp32=100 + 200 + 2_000_000, flops_fp16=10 + 12 + 28, flops_fp64=1 + 2 + 6),
    dict(launch_id=1, short_name="ampere_sgemm_128x64_nn", block_threads=256, grid_blocks=10, duration_s=5e-6,
         dram_bytes=64e3, l2_bytes=120e3, l1_bytes=256e3, flops_fp32=8_192, flops_fp16=0, flops_fp64=0),
    dict(launch_id=2, short_name="gemm_kernel", block_threads=128, grid_blocks=128, duration_s=1.234e-3, dram_bytes=5e6,
         l2_bytes=6e6, l1_bytes=7e6, flops_fp32=10 + 20 + 60, flops_fp16=80 + 100 + 240, flops_fp64=70 + 80 + 180),
]
OPS = ["fadd", "fmul", "ffma", "hadd", "hmul", "hfma", "dadd", "dmul", "dfma"]


def sass(op):
    return f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum"


def dims(t):
    return f"({t[0]}, {t[1]}, {t[2]})"


def grouped(n):
    return f"{n:,}"


def q(*fields):
    return ",".join('"' + str(f).replace('"', '""') + '"' for f in fields)


def counters(L, *, scaled=False):
    """(metric, unit, value) in ncu base units, or auto-scaled."""
    out = []
    if scaled:
        out.append(("gpu__time_duration.sum", "usecond", f"{L['dur_ns'] / 1000:.2f}"))
        out.append(("dram__bytes.sum", "Kbyte", f"{L['dram'] / 1000:,.2f}"))
        out.append(("lts__t_bytes.sum", "Mbyte", f"{L['lts'] / 1e6:.2f}"))
    else:
        out.append(("gpu__time_duration.sum", "nsecond", grouped(L["dur_ns"])))
        out.append(("dram__bytes.sum", "byte", grouped(L["dram"])))
        out.append(("lts__t_bytes.sum", "byte", grouped(L["lts"])))
    out.append(("l1tex__t_bytes.sum", "byte", grouped(L["l1"])))
    out += [(sass(op), "inst", grouped(L[op])) for op in OPS]
    return out


# --- details dialects -----------------------------------------------------------------------
def details_2019():
    lines = ["==PROF== Connected to process 4100 (/bin/app)"]
    lines.append(q("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Kernel Time", "Context", "Stream",
                   "Section Name", "Metric Name", "Metric Unit", "Metric Value"))
    for L in LAUNCHES:
        ident = [L["id"], L["pid"], "app", "127.0.0.1", L["kernel"], "2020-Apr-16 17:54:38", 1, 7]
        lines.append(q(*ident, "GPU Speed Of Light", "Duration", "nsecond", grouped(L["dur_ns"])))
        lines.append(q(*ident, "Launch Statistics", "Block Size", "", grouped(L["block"][0] * L["block"][1] * L["block"][2])))
        lines.append(q(*ident, "Launch Statistics", "Grid Size", "", grouped(L["grid"][0] * L["grid"][1] * L["grid"][2])))
        for name, unit, value in counters(L)[1:]:
            lines.append(q(*ident, "Command line profiler metrics", name, unit, value))
    return "\n".join(lines) + "\n"


def details_2021_rules():
    lines = [q("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Kernel Time", "Context", "Stream",
               "Section Name", "Metric Name", "Metric Unit", "Metric Value", "Rule Name", "Rule Type", "Rule Description")]
    for L in LAUNCHES:
        ident = [L["id"], L["pid"], "app", "127.0.0.1", L["kernel"], "2023-May-07 19:59:29", 1, 7]
        lines.append(q(*ident, "Launch Statistics", "Block Size", "", L["block"][0] * L["block"][1] * L["block"][2]) + ",")
        lines.append(q(*ident, "Launch Statistics", "Grid Size", "", L["grid"][0] * L["grid"][1] * L["grid"][2]) + ",")
        for name, unit, value in counters(L):
            lines.append(q(*ident, "Command line profiler metrics", name, unit, value) + ",")
        lines.append(q(*ident, "LaunchStats", "", "", "", "LaunchConfiguration", "WRN", "The grid is small, 1 wave."))
    return "\n".join(lines) + "\n"


H15 = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size", "Grid Size",
       "Device", "CC", "Section Name", "Metric Name", "Metric Unit", "Metric Value"]


def _d15_rows(noise=False, ns="ns"):
    rows = []
    for L in LAUNCHES:
        ident = [L["id"], L["pid"], "app", "127.0.0.1", L["kernel"], 1, 7, dims(L["block"]), dims(L["grid"]), 0, "8.0"]
        if noise:
            rows.append(None)
        for name, unit, value in counters(L):
            rows.append([*ident, "Command line profiler metrics", name, ns if unit == "nsecond" else unit, value])
    return rows


def details_2023(noise=False):
    lines = [q(*H15)]
    for r in _d15_rows(noise):
        lines.append("==PROF== Profiling \"kernel\" - 0: 0%....50%....100% - 9 passes" if r is None else q(*r))
    return "\n".join(lines) + "\n"


def details_2023_unquoted():
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")  # minimal quoting, as a re-saved file
    w.writerow(H15)
    for r in _d15_rows():
        w.writerow(r)
    return buf.getvalue()


def details_2025_speedup():
    head = H15 + ["Rule Name", "Rule Type", "Rule Description", "Estimated Speedup Type", "Estimated Speedup"]
    lines = [q(*head)]
    for L in LAUNCHES:
        ident = [L["id"], L["pid"], "app", "127.0.0.1", L["kernel"], 1, 7, dims(L["block"]), dims(L["grid"]), 0, "8.0"]
        scaled = counters(L, scaled=True)
        lines.append(q(*ident, "GPU Speed Of Light Throughput", "Duration", "us", scaled[0][2]) + ",")
        for name, unit, value in scaled[1:]:
            lines.append(q(*ident, "Command line profiler metrics", name, unit, value) + ",")
        lines.append(q(*ident, "SpeedOfLight", "", "", "", "SOLBottleneck", "OPT", "Look at memory.", "global", "12.5"))
    return "\n".join(lines) + "\n"


# --- raw dialects ---------------------------------------------------------------------------
RAW_ID = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
          "Grid Size", "Device", "CC"]


def raw(units_row=True, scaled=False):
    names = [n for n, _u, _v in counters(LAUNCHES[0], scaled=scaled)]
    units = [u for _n, u, _v in counters(LAUNCHES[0], scaled=scaled)]
    units = ["ns" if u == "nsecond" else u for u in units]
    lines = ["==PROF== Connected to process 4100 (/bin/app)", q(*RAW_ID, *names)]
    if units_row:
        lines.append(q(*[""] * len(RAW_ID), *units))
    for L in LAUNCHES:
        ident = [L["id"], L["pid"], "app", "127.0.0.1", L["kernel"], 1, 7, dims(L["block"]), dims(L["grid"]), 0, "8.0"]
        values = [v.replace(",", "") if not scaled else v for _n, _u, v in counters(L, scaled=scaled)]
        lines.append(q(*ident, *values))
    lines.append("==PROF== Disconnected from process 4100")
    return "\n".join(lines) + "\n"


DIALECTS = {
    "details-2019-12col": (lambda: details_2019().encode(), "details"),
    "details-2021-15col-rules-ragged": (lambda: details_2021_rules().encode(), "details"),
    "details-2023-15col": (lambda: details_2023().encode(), "details"),
    "details-2023-noise-between-launches": (lambda: details_2023(noise=True).encode(), "details"),
    "details-2023-bom-crlf": (lambda: ("\ufeff" + details_2023().replace("\n", "\r\n")).encode(), "details"),
    "details-2023-utf16le-bom": (lambda: details_2023().encode("utf-16-le").join([b"\xff\xfe", b""]), "details"),
    "details-2023-utf16be-bom": (lambda: b"\xfe\xff" + details_2023().encode("utf-16-be"), "details"),
    "details-2023-unquoted-resaved": (lambda: details_2023_unquoted().encode(), "details"),
    "details-2025-20col-speedup": (lambda: details_2025_speedup().encode(), "details"),
    "raw-units-row": (lambda: raw().encode(), "raw"),
    "raw-autoscaled": (lambda: raw(scaled=True).encode(), "raw"),
    "raw-no-units-row": (lambda: raw(units_row=False).encode(), "raw"),
    "raw-crlf": (lambda: raw().replace("\n", "\r\n").encode(), "raw"),
}


@pytest.fixture(params=sorted(DIALECTS))
def dialect(request, tmp_path):
    make, layout = DIALECTS[request.param]
    path = tmp_path / f"{request.param}.csv"
    path.write_bytes(make())
    return path, layout


def test_layout_detected(dialect):
    path, layout = dialect
    assert detect_ncu_layout(path) == layout


def test_same_kernel_table_in_every_dialect(dialect):
    path, layout = dialect
    res = read_ncu([path])
    k = res.kernels
    assert list(k.columns) == list(KERNEL_COLUMNS)
    assert k.height == 3
    assert res.inputs[0].kind == f"ncu-{layout}" and res.inputs[0].rows == 3
    assert k["kernel_name"].to_list() == [L["kernel"] for L in LAUNCHES]
    assert k["id"].to_list() == ["0", "1", "2"]
    assert k["process_id"].to_list() == [4100] * 3
    for got, want in zip(k.iter_rows(named=True), EXPECTED):
        for col, value in want.items():
            if isinstance(value, float):
                assert got[col] == pytest.approx(value, rel=1e-9), col
            else:
                assert got[col] == value, col
        for col in ("duration_s_source", "dram_bytes_source", "flops_fp32_source"):
            assert got[col], col
    assert not [s for s in res.skipped], res.skipped


def test_metrics_keep_every_counter_by_ncu_name(dialect):
    path, layout = dialect
    res = read_ncu([path])
    table = res.metrics[str(path)]
    if layout == "raw":
        assert table.height == 3
        assert {sass(op) for op in OPS} <= set(table.columns)
    else:
        names = set(table["Metric Name"].drop_nulls())
        assert {sass(op) for op in OPS} <= names
        assert set(table["id"]) == {"0", "1", "2"}


def test_lenient_equals_strict_on_clean_input(dialect):
    path, _ = dialect
    a, b = read_ncu([path]), read_ncu([path], strict=False)
    assert a.kernels.equals(b.kernels)


# --- noise anywhere after the header does not change the table ------------------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

NOISE = st.sampled_from(
    [
        "==PROF== Disconnected from process 4100",
        "==WARNING== Found outstanding GPU clock reset, trying to revert...Success.",
        "step 12: loss=0.25, lr=1e-4",
        "",
        "   ",
        "2208    2048    5608    0   358.15  141.59",
    ]
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    layout=st.sampled_from(["details-2023-15col", "details-2021-15col-rules-ragged", "raw-units-row"]),
    inserts=st.lists(st.tuples(st.integers(1, 10_000), NOISE), max_size=6),
    bad=st.booleans(),
)
def test_noise_lines_anywhere_after_the_header(tmp_path_factory, layout, inserts, bad):
    make, _ = DIALECTS[layout]
    lines = make().decode().splitlines()
    header_at = next(i for i, ln in enumerate(lines) if ln.startswith('"ID"'))
    first_data = header_at + (2 if layout.startswith("raw") else 1)
    if bad:  # a garbage value in a counter the recipes read, on the last data line
        if layout.startswith("raw"):
            target = max(i for i, ln in enumerate(lines) if ln.startswith('"2",'))
        else:
            target = max(i for i, ln in enumerate(lines) if '"dram__bytes.sum"' in ln)
        old = lines[target]
        lines[target] = old.replace('"5,000,000"', '"oops"').replace('"5000000"', '"oops"')
        assert lines[target] != old
    for pos, text in sorted(inserts, reverse=True):
        lines.insert(first_data + pos % (len(lines) - first_data), text)
    path = tmp_path_factory.mktemp("noise") / "n.csv"
    path.write_text("\n".join(lines) + "\n")
    if bad:
        with pytest.raises(InputError) as exc:
            read_ncu([path])
        assert lines[exc.value.line - 1].count('"oops"') == 1  # the reported line is the physical one
        return
    k = read_ncu([path]).kernels
    assert k["id"].to_list() == ["0", "1", "2"]
    assert k["dram_bytes"].to_list() == [e["dram_bytes"] for e in EXPECTED]
    assert k["flops_fp32"].to_list() == [e["flops_fp32"] for e in EXPECTED]
