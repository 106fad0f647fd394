"""One JSON entry point for input (issue 32 item 10): every reader that parses JSON goes through
:func:`ridgeline.parsers.jsontext.loads`, with the same size and nesting guards.

Each JSON-reading input path is fed a 100,000-deep nesting (made here, a few hundred KB): one
line on stderr, exit 2, never a RecursionError (exit 3). The live Prometheus answer has its
case in ``tests/sources/test_prometheus_hostile.py`` ("deep"), on a server of its own.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import random

import pytest

from ridgeline.parsers.jsontext import MAX_JSON_DEPTH, JSONLimitError, loads, nesting_depth

DEEP = 100_000


def _nest(depth: int = DEEP) -> bytes:
    return b"[" * depth + b"]" * depth


def _run(*args) -> tuple[int, str]:
    from ridgeline.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            main(list(map(str, args)))
            code = 0
        except SystemExit as exc:
            code = exc.code
    return code, err.getvalue()


# input path -> (file name, bytes, command line before the file)
PATHS = {
    "prometheus-json (telemetry)": ("q.json", b'{"status":"success","data":{"resultType":"matrix","result":' + _nest()
                                    + b"}}", ["telemetry"]),
    "prometheus-json (analyze)": ("q.json", b'{"status":"success","data":{"resultType":"matrix","result":' + _nest()
                                  + b"}}", ["analyze", "--format", "json"]),
    "prometheus-json list of answers": ("q.json", b'[{"status":"success","data":' + _nest() + b"}]", ["telemetry"]),
    "kineto trace": ("trace.json", b'{"traceEvents": ' + _nest() + b"}", ["analyze", "--format", "json"]),
    "kineto trace, deep args": ("trace.json", b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, '
                                b'"dur": 2, "args": {"deep": ' + _nest() + b"}}]}", ["analyze", "--format", "json"]),
    "kineto trace, gzip": ("trace.json.gz", gzip.compress(b'{"traceEvents": ' + _nest() + b"}"), ["analyze"]),
    "nightly document (diff base)": ("base.json", _nest(), ["diff", "{file}", "{file}"]),
    "nightly document object (diff)": ("base.json", b'{"schema_version": "1.7", "kernels": ' + _nest() + b"}",
                                       ["diff", "{file}", "{file}"]),
}


@pytest.mark.parametrize("case", list(PATHS))
def test_a_100000_deep_nesting_is_one_line_and_exit_2_on_every_json_path(tmp_path, case):
    name, data, args = PATHS[case]
    path = tmp_path / name
    path.write_bytes(data)
    argv = [a.replace("{file}", str(path)) for a in args]
    if "{file}" not in " ".join(args):
        argv.append(str(path))
    code, err = _run(*argv)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "RecursionError" not in err and "internal error" not in err, err
    assert name in lines[0] and "nested too deeply (more than 512 levels" in lines[0], lines[0]


def test_nesting_depth_matches_a_plain_reading():
    """The vectorized scan against a character-by-character reading, over generated documents with
    brackets, quotes and backslash runs inside strings, cut in chunks of every small size."""
    import ridgeline.parsers.jsontext as J

    def plain(text: str) -> int:
        depth = deepest = 0
        inside = escaped = False
        for c in text:
            if inside:
                escaped, inside = (False, inside) if escaped else (c == "\\", c != '"')
            elif c == '"':
                inside = True
            elif c in "[{":
                depth += 1
                deepest = max(deepest, depth)
            elif c in "]}":
                depth -= 1
        return deepest

    rng = random.Random(7)
    leaves = [1, "a[b{", 'q"[[', "\\", '\\"', None, "\\\\\\" + '"[', ""]

    def gen(depth):
        if depth > 7 or rng.random() < 0.3:
            return rng.choice(leaves)
        if rng.random() < 0.5:
            return [gen(depth + 1) for _ in range(rng.randint(0, 3))]
        return {rng.choice(["k", "[", '{"', "\\"]) + str(i): gen(depth + 1) for i in range(rng.randint(0, 3))}

    docs = [json.dumps(gen(0)).encode() for _ in range(300)]
    saved = J._DEPTH_CHUNK
    try:
        for chunk, some in ((1, 20), (2, 20), (3, 40), (5, 40), (8 << 20, 300)):  # tiny chunks: a few docs (cheap)
            J._DEPTH_CHUNK = chunk
            assert [nesting_depth(d) for d in docs[:some]] == [plain(d.decode()) for d in docs[:some]]
    finally:
        J._DEPTH_CHUNK = saved


def test_loads_bounds_size_and_depth_and_reads_the_rest():
    assert loads(b'\xef\xbb\xbf{"a": ["\\ud800"]}') == {"a": ["\\ud800"]}  # BOM dropped, lone surrogate as text
    ok = b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH
    assert nesting_depth(ok) == MAX_JSON_DEPTH and loads(ok) is not None
    with pytest.raises(JSONLimitError, match="nested too deeply"):
        loads(b"[" + ok + b"]")
    with pytest.raises(JSONLimitError, match="more than the"):
        loads(b"[1, 2, 3]", max_bytes=4)
    assert loads('{"s": "[[[[" }', max_depth=1) == {"s": "[[[["}  # brackets in strings are text
