"""Property tests (hypothesis) for every reader: any bytes in, only ridgeline's own errors out.

Two kinds of input per reader: arbitrary bytes behind the prefix that makes detection pick that
reader, and mutants of the real fixtures (byte flips, truncation, duplicated and deleted lines,
huge and odd numbers, odd unicode). Each goes through the readers' API
(:func:`ridgeline.pipeline.analyze_paths`, which detects, reads, checks and reduces; and
:func:`ridgeline.parsers.telemetry.reader.scan_telemetry` collected) and through the CLI's exit codes.
Anything but a :class:`~ridgeline.errors.RidgelineError` escaping is a failure.

Profiles: ``ridgeline-ci`` (default, a few dozen examples per test: seconds) and
``ridgeline-fuzz`` (``HYPOTHESIS_PROFILE=ridgeline-fuzz``, thousands) for longer local runs;
``fuzz/README.md`` describes the atheris harness for coverage-guided runs.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ridgeline.errors import RidgelineError

ROOT = Path(__file__).resolve().parents[2]
settings.register_profile("ridgeline-ci", max_examples=25, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
settings.register_profile("ridgeline-fuzz", max_examples=2000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
PROFILE = settings.get_profile(os.environ.get("HYPOTHESIS_PROFILE", "ridgeline-ci")
                               if os.environ.get("HYPOTHESIS_PROFILE", "").startswith("ridgeline-") else "ridgeline-ci")

# what makes detection choose each reader
PREFIXES = {
    "dcgm-dmon": b"# Entity  GPUTL  TENSO\n      Id\n",
    "dcgm-exporter": b"# TYPE DCGM_FI_DEV_GPU_UTIL gauge\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} ",
    "prometheus-json": b'{"status": "success", "data": {"resultType": "matrix", "result": ',
    "nvidia-smi-csv": b"timestamp, index, name, utilization.gpu [%], power.draw [W]\n",
    "nvidia-smi-dmon": b"# gpu    pwr  gtemp     sm\n# Idx      W      C      %\n",
    "telemetry-csv-long": b"timestamp,host,gpu,field,value\n",
    "telemetry-csv-wide": b"timestamp,host,gpu,DCGM_FI_DEV_GPU_UTIL\n",
    "ncu-raw": (b'"ID","Kernel Name","Block Size","Grid Size","Device","CC","gpu__time_duration.sum",'
                b'"dram__bytes.sum"\n"","","","","","","ns","byte"\n'),
    "ncu-details": (b'"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
                    b'"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"\n'),
    "parquet": b"PAR1",
    "kineto-json": b'{"schemaVersion": 1, "traceEvents": [',
    "nsys-sqlite": b"SQLite format 3\x00",
    "nsys-stats-csv": b"Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n",
    "rocprof-v1-csv": b'"Index","KernelName","gpu-id","queue-id","grd","wgr","BeginNs","EndNs"\n0,"k.kd",2,0,',
    "rocprof-v1-json": b'{"traceEvents":[{"ph":"X","pid":8,"args":{"DispatchNs":"1","BeginNs":"2","EndNs":"3",',
    "rocprof-stats": b'"Name","Calls","TotalDurationNs","AverageNs","Percentage"\n"k",',
    "rocprofv3-kernel-trace": (b'"Kind","Agent_Id","Queue_Id","Kernel_Name","Start_Timestamp","End_Timestamp",'
                               b'"Grid_Size_X","Workgroup_Size_X"\n"KERNEL_DISPATCH","Agent 2",'),
    "rocprofiler-sdk-json": b'{"rocprofiler-sdk-tool": [{"agents": [], "buffer_records": {"kernel_dispatch": [',
}

SEEDS = sorted(
    p for d in ("fixtures/telemetry", "fixtures/ncu", "ridgeline/data/demo", "tests/corpus")
    for p in (ROOT / d).glob("*")
    if p.is_file() and p.suffix not in (".py", ".md") and p.stat().st_size < 200_000
)

ODD = [b"-1", b"18446744073709551616", b"1e25", b"1.8e19", b"9" * 400, b"NaN", b"-inf", b"\xc2\xb2", b"\x00",
       b"\xef\xbb\xbf", b"\xff\xfe", b'"', b",", b"\r\n", b"9999-12-31T23:59:59Z", b"-0221-01-01", b"1.2.3",
       b"60abc", b"[]", b"{}", b"null", b"\xe2\x80\xae", b"(1e25, 1, 1)"]


@st.composite
def mutants(draw):
    """A real file, mutated a few times."""
    data = bytearray(draw(st.sampled_from(SEEDS)).read_bytes())
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "truncate", "dup_line", "del_line", "odd", "swap_lines"]))
        if not data:
            break
        i = draw(st.integers(0, len(data) - 1))
        if op == "flip":
            data[i] ^= 1 << draw(st.integers(0, 7))
        elif op == "truncate":
            del data[i:]
        elif op == "odd":
            token = draw(st.sampled_from(ODD))
            j = min(len(data), i + draw(st.integers(0, 12)))
            data[i:j] = token
        else:
            lines = bytes(data).split(b"\n")
            k = draw(st.integers(0, len(lines) - 1))
            if op == "dup_line":
                lines.insert(k, lines[k])
            elif op == "del_line" and len(lines) > 1:
                del lines[k]
            elif op == "swap_lines" and len(lines) > 2:
                m = draw(st.integers(0, len(lines) - 1))
                lines[k], lines[m] = lines[m], lines[k]
            data = bytearray(b"\n".join(lines))
    return bytes(data)


def _through_readers(data: bytes, suffix: str = ".txt") -> None:
    """analyze_paths and scan_telemetry on ``data``: a RidgelineError is fine, nothing else is."""
    from ridgeline.parsers.guard import collect_guarded
    from ridgeline.parsers.telemetry.reader import scan_telemetry
    from ridgeline.pipeline import analyze_paths

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"input{suffix}"
        path.write_bytes(data)
        try:
            analyze_paths([path], window="all")
        except RidgelineError:
            pass
        try:
            lf, _inputs, _skipped = scan_telemetry([path])
            collect_guarded(lf.collect, path)
        except RidgelineError:
            pass


@pytest.mark.parametrize("kind", sorted(PREFIXES))
def test_any_bytes_behind_a_format_prefix(kind):
    @PROFILE
    @given(st.binary(max_size=600))
    def check(tail):
        _through_readers(PREFIXES[kind] + tail, ".parquet" if kind == "parquet" else ".txt")

    check()


@PROFILE
@given(mutants())
def test_mutated_real_files(data):
    _through_readers(data)


@PROFILE
@given(st.binary(max_size=400))
def test_arbitrary_bytes(data):
    _through_readers(data)


@PROFILE
@given(mutants())
def test_cli_exit_codes(data):
    """The CLI on a mutant: exit 0, 1 or 2 (never 3: a crash), one line on 2."""
    import contextlib
    import io

    from ridgeline.cli import main

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "input"
        path.write_bytes(data)
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            with pytest.raises(SystemExit) as exc:
                main(["analyze", str(path), "--window", "all"])
        assert exc.value.code in (0, 1, 2), err.getvalue()
        if exc.value.code == 2:
            assert len(err.getvalue().strip().splitlines()) == 1, err.getvalue()


@pytest.fixture(scope="module")
def diff_documents(tmp_path_factory):
    """An analyze and a telemetry JSON document of the bundled demo, written by the CLI."""
    import json
    import subprocess
    import sys

    demo = ROOT / "ridgeline" / "data" / "demo"
    out = {}
    for kind, args in (("analyze", ["analyze", str(demo / "decode-b8-h100.ncu-raw.csv")]),
                       ("telemetry", ["telemetry", str(demo / "infer-0.dmon")])):
        text = subprocess.run([sys.executable, "-m", "ridgeline.cli", *args, "--format", "json"],
                              capture_output=True, text=True, check=True).stdout
        out[kind] = json.loads(text)
    return out


JUNK = st.sampled_from([None, "x", -1, 1e308, [], {}, [1], True, "NaN", {"a": 1}, 3.5, ""])


@PROFILE
@given(kind=st.sampled_from(["analyze", "telemetry"]), picks=st.lists(st.tuples(st.integers(0, 10 ** 6), JUNK),
                                                                       min_size=1, max_size=3))
def test_diff_reads_any_json_shape(diff_documents, kind, picks):
    """ridgeline diff (a pair, and a trend over three baselines) on a document with values replaced at
    random places: exit 0/1/2, one line on 2."""
    import contextlib
    import copy
    import io
    import json

    from ridgeline.cli import main

    doc = copy.deepcopy(diff_documents[kind])
    for where, junk in picks:
        node = doc
        for _ in range(4):  # walk down a few levels, then replace one entry
            keys = list(node) if isinstance(node, dict) else list(range(len(node))) if isinstance(node, list) else []
            if not keys:
                break
            key = keys[where % len(keys)]
            where //= max(len(keys), 1)
            child = node[key]
            if not isinstance(child, (dict, list)) or not child or where % 3 == 0:
                node[key] = copy.deepcopy(junk)
                break
            node = child
    with tempfile.TemporaryDirectory() as tmp:
        base, new = Path(tmp) / "base.json", Path(tmp) / "new.json"
        base.write_text(json.dumps(diff_documents[kind]))
        new.write_text(json.dumps(doc))
        for args in ([base, new], [new, base, "--format", "markdown"],  # pairwise
                     [base, base, base, new], [new, base, base, base, "--format", "json"]):  # trend (3 baselines)
            err = io.StringIO()
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                with pytest.raises(SystemExit) as exc:
                    main(["diff", *map(str, args)])
            assert exc.value.code in (0, 1, 2), err.getvalue()
            if exc.value.code == 2:
                assert len(err.getvalue().strip().splitlines()) == 1, err.getvalue()
