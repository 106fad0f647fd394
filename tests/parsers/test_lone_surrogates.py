"""Lone surrogates in names (issue 35, class 9): generated names holding half a UTF-16 pair go
through every output format escaped (docs/output-safety.md), never a codec message.

The names come from hypothesis (printable text with lone high and low surrogates, pairs and
backslashes mixed in) and travel as JSON escapes in a Kineto trace (kernel names) and a
Prometheus API answer (labels), the two JSON inputs whose strings reach polars; the writers are
checked directly with the same strings (safe_text, the JSON writer)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ridgeline.parsers.jsontext import lone_surrogates_as_text
from ridgeline.render.safe_text import for_output, inline

LONE = st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff", "\udcff", "\ud83d"])
PIECES = st.one_of(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7e), max_size=4), LONE,
                   st.just("\U0001F600"), st.just("\\"), st.just("\\u"))
# (a high half right before a low half is a pair, one character: not lone)
NAMES = st.lists(PIECES, min_size=1, max_size=6).map("".join).filter(
    lambda s: re.search("[\ud800-\udfff]", s) is not None and re.search("[\ud800-\udbff][\udc00-\udfff]", s) is None)


def _escaped(name: str) -> str:
    """The JSON text of ``name`` with surrogates as \\uXXXX escapes (what a writer that keeps them emits)."""
    return json.dumps(name)  # ensure_ascii: every surrogate as its escape, pairs as pairs


@settings(max_examples=200, deadline=None, derandomize=True)
@given(NAMES)
def test_a_lone_surrogate_reads_as_its_escape_text_and_pairs_stay(name):
    got = json.loads(lone_surrogates_as_text(_escaped(name).encode()))
    got.encode("utf-8")  # nothing UTF-8 cannot hold
    assert got == for_output(name)  # the six characters \\udXXX, as every output writes a surrogate
    assert json.loads(lone_surrogates_as_text(_escaped(name))) == got


@settings(max_examples=100, deadline=None, derandomize=True)
@given(NAMES)
def test_the_writers_escape_a_surrogate_from_anywhere(name):
    for text in (for_output(name), inline(name), for_output(json.dumps({"k": name}, ensure_ascii=False))):
        text.encode("utf-8")
    doc = for_output(json.dumps({"k": name}, ensure_ascii=False))
    assert json.loads(doc)["k"] == name  # JSON stays exact: the escape is JSON's own


def _kineto(path: Path, names: list[str]) -> Path:
    events = []
    for i, n in enumerate(names):
        events.append({"ph": "X", "cat": "kernel", "name": n, "pid": 0, "tid": 7, "ts": 1e6 + 100 * i, "dur": 30.0,
                       "args": {"device": 0, "stream": 7, "correlation": i + 1, "grid": [1, 1, 1], "block": [1, 1, 1]}})
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                       "ts": 1e6 + 100 * i - 5, "dur": 2.0, "args": {"correlation": i + 1}})
    doc = {"deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}], "traceEvents": events}
    path.write_text(json.dumps(doc))  # ensure_ascii: the surrogates as lone \uXXXX escapes
    return path


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "ridgeline.cli", *map(str, args)], capture_output=True, cwd=cwd,
                          check=False)


def _clean(out: bytes) -> str:
    text = out.decode("utf-8")  # strict: nothing that is not UTF-8 was written
    assert not re.search("[\ud800-\udfff]", text)
    return text


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def test_kernel_names_with_lone_surrogates_through_every_format(tmp_path):
    names = _generated_names(4)
    trace = _kineto(tmp_path / "trace.json", names)
    for fmt in ("table", "json", "csv", "sarif", "github", "parquet"):
        out = tmp_path / f"out.{fmt}"
        p = _cli("analyze", trace, "--format", fmt, "-o", out)
        assert p.returncode in (0, 1), (fmt, p.stderr)
        _clean(p.stderr)
        if fmt != "parquet":
            _clean(out.read_bytes())
    for args in (("report", trace, "-o", tmp_path / "r.html"),
                 ("report", trace, "--format", "markdown", "-o", tmp_path / "r.md")):
        p = _cli(*args)
        assert p.returncode in (0, 1), (args, p.stderr)
        _clean(Path(args[-1]).read_bytes())
    kept = set(_strings(json.loads((tmp_path / "out.json").read_text())))
    for name in names:  # each name comes back as its escaped text, whole
        assert any(for_output(name) in s for s in kept), name


def _generated_names(n: int) -> list[str]:
    """``n`` distinct names drawn from NAMES with a fixed seed (one CLI run per format for all)."""
    import random

    rng = random.Random(35)
    pieces = ["gemm", "_", "\\", "\\u", "\U0001F600", "\ud800", "\udbff", "\udc00", "\udfff", "x<1>"]
    out: list[str] = []
    while len(out) < n:
        name = "".join(rng.choice(pieces) for _ in range(rng.randint(2, 6)))
        if re.search("[\ud800-\udfff]", name) and not re.search("[\ud800-\udbff][\udc00-\udfff]", name) \
                and name not in out:
            out.append(name)
    return out


def test_a_lone_surrogate_in_a_prometheus_label_is_escaped(tmp_path):
    answer = {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {"__name__": "DCGM_FI_DEV_GPU_UTIL", "gpu": "0", "Hostname": "n\udc80", "pod": "p\ud800"},
         "values": [[1767225600 + 30 * k, "50"] for k in range(4)]}]}}
    path = tmp_path / "answer.json"
    path.write_text(json.dumps(answer))
    for fmt in ("table", "json", "csv"):
        p = _cli("telemetry", path, "--format", fmt, "--by", "pod")
        assert p.returncode in (0, 1), (fmt, p.stderr)
        text = _clean(p.stdout)
        assert "n\\udc80" in text.replace("\\\\", "\\"), fmt


@pytest.mark.parametrize("text, want", [
    (r'"a\ud800b"', "a\\ud800b"), (r'"\ud83d\ude00"', "\U0001F600"), (r'"\\ud800"', "\\ud800"),
    (r'"\\\ud800"', "\\\\ud800"), (r'"\udc00\ud800"', "\\udc00\\ud800"), (r'"\ud800\ud800\udc00"', "\\ud800\U00010000"),
])
def test_escape_text_examples(text, want):
    assert json.loads(lone_surrogates_as_text(text.encode())) == want
