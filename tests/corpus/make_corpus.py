"""Write the hardening corpus: minimal reproducers of inputs that once crashed ridgeline or
were misread without a word (issue 14). SYNTHETIC: every file is written by this script.

Regenerate with:  python tests/corpus/make_corpus.py

Each case is (file name, what it is, expected outcome, content). The expected outcome is
``error`` (exit 2, one line naming the file) or ``ok`` (exit 0 or 1); tests/test_corpus.py
runs every file through the CLI and MANIFEST.md lists them (written from CASES too).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent


def prom(series=None, *, data=None, result=None, doc=None) -> str:
    """A Prometheus query_range answer holding ``series`` (or the given data/result/doc)."""
    if doc is not None:
        return json.dumps(doc) if not isinstance(doc, str) else doc
    if series is None:
        series = [{"metric": {"__name__": "DCGM_FI_DEV_GPU_UTIL", "gpu": "0", "Hostname": "n1"},
                   "values": [[1767600000, "80"], [1767600060, "90"]]}]
    if data is None:
        data = {"resultType": "matrix", "result": series if result is None else result}
    return json.dumps({"status": "success", "data": data})


def prom_series(*, gpu="0", values=None) -> list:
    return [{"metric": {"__name__": "DCGM_FI_DEV_GPU_UTIL", "gpu": gpu, "Hostname": "n1"},
             "values": values if values is not None else [[1767600000, "80"], [1767600060, "90"]]}]


DMON_HEAD = "# Entity  GPUTL  TENSO\n      Id\n"
EXPORTER = 'DCGM_FI_DEV_GPU_UTIL{{gpu="{gpu}",Hostname="n1"}} 90{ts}\n'
LONG_HEAD = "timestamp,host,gpu,field,value\n"
WIDE_HEAD = "timestamp,host,gpu,DCGM_FI_DEV_GPU_UTIL\n"
SMI_HEAD = "timestamp, index, name, utilization.gpu [%], power.draw [W], clocks.sm [MHz]\n"
SMI_ROW = "2026/01/05 09:00:0{s}.000, 0, NVIDIA A10, {util}, {power}, {clock}\n"
NCU_RAW = (
    '"ID","Kernel Name","Block Size","Grid Size","Device","CC","device__attribute_display_name",'
    '"gpu__time_duration.sum","dram__bytes.sum"\n'
    '"","","","","","","","ns","byte"\n'
    '"{id}","gemv_kernel","(128, 1, 1)","{grid}","0","9.0","NVIDIA H100 80GB HBM3","1000","1000000"\n'
)
NCU_DETAILS_HEAD = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
                    '"Grid Size","Device","CC","Section Name","Metric Name","{unit}","Metric Value"\n')
NCU_DETAILS_ROW = ('"0","500","w0","gpu-a","gemv_kernel","1","7","(128, 1, 1)","(132, 1, 1)","0","9.0",'
                   '"Command line profiler metrics","gpu__time_duration.sum","ns","20,480"\n')


def smi(util="50 %", power="100.00 W", clock="1500 MHz") -> str:
    return SMI_HEAD + SMI_ROW.format(s=0, util="50 %", power="100.00 W", clock="1500 MHz") + \
        SMI_ROW.format(s=1, util=util, power=power, clock=clock)


def long_csv(*, gpu="0", ts1="2026-01-05T08:00:00Z", ts2="2026-01-05T08:00:01Z") -> str:
    return LONG_HEAD + f"{ts1},n1,{gpu},gpu_util_ratio,0.5\n{ts2},n1,{gpu},gpu_util_ratio,0.7\n"


def corrupt_parquet() -> bytes:
    """A real telemetry Parquet file (zstd) whose page bytes are overwritten in the middle."""
    import polars as pl

    df = pl.DataFrame({"timestamp": [1767600000 + i for i in range(200)], "host": ["n1"] * 200,
                       "gpu": [0] * 200, "field": ["gpu_util_ratio"] * 200, "value": [0.5] * 200})
    buf = io.BytesIO()
    df.write_parquet(buf, compression="zstd")
    data = bytearray(buf.getvalue())
    for i in range(8, min(len(data) - 200, 400)):  # column chunks; the footer (schema) stays readable
        data[i] = (data[i] * 7 + 13) % 256
    return bytes(data)


def truncated_parquet() -> bytes:
    import polars as pl

    df = pl.DataFrame({"timestamp": [1767600000, 1767600001], "host": ["n1", "n1"], "gpu": [0, 0],
                       "field": ["gpu_util_ratio"] * 2, "value": [0.5, 0.6]})
    buf = io.BytesIO()
    df.write_parquet(buf)
    data = buf.getvalue()
    return data[: len(data) // 2] + b"PAR1"


# (name, description, expected, content): content is str, bytes, or a callable returning either
CASES = [
    # Prometheus JSON: wrong shapes and types
    ("prom-point-wrong-length.json", "Prometheus matrix whose point is [ts] (one element, not [ts, value])",
     "error", lambda: prom(prom_series(values=[[1767600000]]))),
    ("prom-result-null.json", "Prometheus answer with \"result\": null", "error",
     lambda: prom(data={"resultType": "matrix", "result": None})),
    ("prom-data-list.json", "Prometheus answer with \"data\": [] (a list, not an object)", "error",
     lambda: prom(doc={"status": "success", "data": [], "resultType": "matrix"})),
    ("prom-gpu-superscript.json", "gpu label \"²\" (str.isdigit() accepts it, int() refuses it)", "error",
     lambda: prom(prom_series(gpu="\u00b2"))),
    ("prom-gpu-word.json", "gpu label \"abc\" (once a GPU called '?' without a note)", "error",
     lambda: prom(prom_series(gpu="abc"))),
    ("prom-timestamp-string.json", "a point's timestamp is the string \"soon\"", "error",
     lambda: prom(prom_series(values=[[1767600000, "80"], ["soon", "90"]]))),
    ("prom-timestamp-swapped.json", "points written [value, ts] instead of [ts, value]", "error",
     lambda: prom(prom_series(values=[["80", 1767600000], ["90", 1767600060]]))),
    ("prom-timestamp-1.8e19.json", "a timestamp of 1.8e19 seconds (beyond any datetime)", "error",
     lambda: prom(prom_series(values=[[1767600000, "80"], [1.8e19, "90"]]))),
    ("prom-5000-digits.json", "a timestamp written with 5,000 digits", "error",
     lambda: prom(prom_series(values=[[1767600000, "80"]])).replace("1767600000", "9" * 5000)),
    ("prom-metric-list.json", "\"metric\" is a list instead of an object", "error",
     lambda: prom([{"metric": ["DCGM_FI_DEV_GPU_UTIL"], "values": [[1767600000, "80"]]}])),
    ("prom-values-string.json", "\"values\" is a string instead of a list of points", "error",
     lambda: prom([{"metric": {"__name__": "DCGM_FI_DEV_GPU_UTIL", "gpu": "0"}, "values": "80"}])),
    # dcgmi dmon: GPU ids out of range
    ("dmon-gpu-negative.txt", "dcgmi dmon row 'GPU -1'", "error", lambda: DMON_HEAD + "   GPU -1     88  0.300\n"),
    ("dmon-gpu-2e64.txt", "dcgmi dmon row 'GPU 18446744073709551616' (2^64)", "error",
     lambda: DMON_HEAD + "   GPU 18446744073709551616     88  0.300\n"),
    # dcgm-exporter scrapes
    ("exporter-gpu-negative.prom", "exporter sample with gpu=\"-1\"", "error",
     lambda: EXPORTER.format(gpu="-1", ts="")),
    ("exporter-gpu-2e64.prom", "exporter sample with gpu=\"18446744073709551616\" (once a null GPU)", "error",
     lambda: EXPORTER.format(gpu="18446744073709551616", ts="")),
    ("exporter-year-9999.prom", "exporter samples stamped in year 9999 (ms timestamps)", "error",
     lambda: EXPORTER.format(gpu="0", ts=" 253402300799000") + EXPORTER.format(gpu="0", ts=" 253402300800000")),
    # long / wide telemetry CSV
    ("long-gpu-negative.csv", "long telemetry CSV with gpu -1", "error", lambda: long_csv(gpu="-1")),
    ("long-gpu-2e64.csv", "long telemetry CSV with gpu 18446744073709551616 (once a null GPU)", "error",
     lambda: long_csv(gpu="18446744073709551616")),
    ("long-year-9999.csv", "long telemetry CSV stamped 9999-12-31 (reached datetime in RL205)", "error",
     lambda: long_csv(ts1="9999-12-31T23:59:58Z", ts2="9999-12-31T23:59:59Z")),
    ("long-year-minus-221.csv", "long telemetry CSV stamped in year -221", "error",
     lambda: long_csv(ts1="-0221-01-01T00:00:00Z", ts2="-0221-01-01T00:00:01Z")),
    ("long-ragged-row.csv", "long telemetry CSV with a row of 7 cells under a 5-column header", "error",
     lambda: LONG_HEAD + "2026-01-05T08:00:00Z,n1,0,gpu_util_ratio,0.5\n2026-01-05T08:00:01Z,n1,0,gpu_util_ratio,0.7,x,y\n"),
    ("wide-gpu-word.csv", "wide telemetry CSV whose gpu is 'abc' (once a GPU called '?' without a note)", "error",
     lambda: WIDE_HEAD + "1767600000,n1,abc,90\n1767600001,n1,abc,80\n"),
    ("wide-gpu-epoch-huge.csv", "wide telemetry CSV with an epoch timestamp of 1e30", "error",
     lambda: WIDE_HEAD + "1767600000,n1,0,90\n1000000000000000000000000000000,n1,0,80\n"),
    # nvidia-smi --query-gpu CSV
    ("smi-duplicate-header.csv", "nvidia-smi CSV naming utilization.gpu twice (polars DuplicateError)", "error",
     lambda: SMI_HEAD.replace("power.draw [W]", "utilization.gpu [%]") + SMI_ROW.format(
         s=0, util="50 %", power="60 %", clock="1500 MHz")),
    ("smi-power-1.2.3.csv", "nvidia-smi cell '1.2.3 W' (once read as 1.2)", "error", lambda: smi(power="1.2.3 W")),
    ("smi-util-60abc.csv", "nvidia-smi cell '60abc %' (once read as 60)", "error", lambda: smi(util="60abc %")),
    ("smi-clock-1500.5.5.csv", "nvidia-smi cell '1500.5.5 MHz' (once read as 1500.5)", "error",
     lambda: smi(clock="1500.5.5 MHz")),
    ("smi-index-2e64.csv", "nvidia-smi index 18446744073709551616", "error",
     lambda: SMI_HEAD + SMI_ROW.format(s=0, util="50 %", power="100.00 W", clock="1500 MHz").replace(
         ", 0, NVIDIA", ", 18446744073709551616, NVIDIA")),
    # Nsight Compute exports
    ("ncu-raw-grid-1e25.csv", "ncu raw page with Grid Size (1e25, 1, 1) (once read as 25 blocks)", "error",
     lambda: NCU_RAW.format(id="0", grid="(1e25, 1, 1)")),
    ("ncu-raw-launch-id-2e64.csv", "ncu raw page with launch ID 18446744073709551616 (once a null id)", "error",
     lambda: NCU_RAW.format(id="18446744073709551616", grid="(132, 1, 1)")),
    ("ncu-details-empty-unit-header.csv", "ncu details page whose 'Metric Unit' header name is empty", "error",
     lambda: NCU_DETAILS_HEAD.format(unit="") + NCU_DETAILS_ROW),
    # Parquet containers
    ("corrupt-zstd.parquet", "telemetry Parquet whose compressed pages are overwritten (thrift/zstd errors)", "error",
     corrupt_parquet),
    ("truncated.parquet", "telemetry Parquet cut in half, PAR1 appended (footer unreadable)", "error",
     truncated_parquet),
    # a folder is many inputs: one bad file must not refuse the others
    ("folder-one-bad", "folder with one good dmon file and one corrupt Parquet file", "ok", None),
]


def write_all(root: Path = HERE) -> list[Path]:
    out = []
    for name, _what, _expected, make in CASES:
        path = root / name
        if make is None:  # the folder case
            path.mkdir(exist_ok=True)
            (path / "good.dmon").write_text(DMON_HEAD + "   GPU 0     88  0.300\n   GPU 0     90  0.310\n",
                                            encoding="utf-8")
            (path / "bad.parquet").write_bytes(corrupt_parquet())
            out.append(path)
            continue
        content = make()
        if isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        else:
            path.write_bytes(content)
        out.append(path)
    lines = ["# Hardening corpus (SYNTHETIC)", "",
             "Minimal reproducers of inputs that once crashed ridgeline or were misread without a word",
             "(issue 14). Every file here is written by `python tests/corpus/make_corpus.py`;",
             "`tests/test_corpus.py` runs each through the CLI: exit 0/1/2, one-line error on 2, no traceback.",
             "", "| file | what it is | expected |", "|---|---|---|"]
    for name, what, expected, _make in CASES:
        lines.append(f"| `{name}` | {what} | {'exit 2, one line' if expected == 'error' else 'exit 0/1'} |")
    (root / "MANIFEST.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


if __name__ == "__main__":
    for p in write_all():
        print(p.name)
