"""Fuzzing of the nightly documents and the config with atheris (not run in CI; see README.md).

The fuzzer's bytes choose one of four inputs:

* any bytes as a night or as tonight (among valid nights), through the reader of ``ridgeline diff``;
* a valid night (telemetry or analyze) with one value anywhere replaced by a JSON value the bytes
  choose (numbers of any size, NaN, Infinity, 1e999, text, lists, objects nested up to 5,000 deep),
  as tonight or as a past night;
* any bytes as a config file (``ridgeline.toml``);
* a valid config with one value replaced by a TOML value the bytes choose (``inf``, ``nan``,
  ``1e300``, integers of any size, text, arrays nested up to 5,000 deep) at any key.

Each night set goes through the pairwise diff and the trend, rendered as text, Markdown and JSON;
each config through ``load_config``, the key check, the rule settings and the GPU catalogue. A
RidgelineError (one line) is the right answer to bad input; any other exception, a message of more
than one line, or NaN or Infinity in what was judged is a crash atheris saves with its input.

    pip install atheris
    python fuzz/fuzz_nightly.py -max_total_time=3600 -rss_limit_mb=4096

``tests/analyzer/nightly/test_nightly_fuzz_harness.py`` runs :func:`one_input` on seeded random
bytes (no atheris needed) so the harness itself stays working.
"""

from __future__ import annotations

import copy
import json
import shutil
import sys
import tempfile
from pathlib import Path

TMP = Path(tempfile.mkdtemp(prefix="ridgeline-fuzz-nightly-"))


class Draw:
    """Deterministic choices from the fuzzer's bytes (atheris' FuzzedDataProvider, without atheris)."""

    def __init__(self, data: bytes):
        self.data, self.i = data, 0

    def byte(self) -> int:
        if self.i >= len(self.data):
            return 0
        self.i += 1
        return self.data[self.i - 1]

    def int(self, n: int) -> int:
        return int.from_bytes(bytes(self.byte() for _ in range(n)), "little")

    def pick(self, items):
        return items[self.int(2) % len(items)] if items else None

    def text(self, limit: int = 24) -> str:
        n = self.byte() % (limit + 1)
        return bytes(self.byte() for _ in range(n)).decode("utf-8", errors="replace")

    def rest(self) -> bytes:
        out, self.i = self.data[self.i:], len(self.data)
        return out


# ------------------------------------------------------------------------------------------
# seeds: small valid documents and a config (synthetic, built here)
# ------------------------------------------------------------------------------------------
def telemetry_night(day: int, waste: float = 0.5) -> dict:
    start, end = f"2026-01-{day:02d}T00:00:00+00:00", f"2026-01-{day:02d}T01:00:00+00:00"
    hosts = [{"host": h, "gpus": 1, "span_h": 10.0, "wasted_gpu_h": waste, "busy_tensor_idle_h": 0.0,
              "allocated_idle_h": waste, "wasted_share": waste / 10.0} for h in ("a", "b")]
    return {"schema_version": "1.6", "kernels": [], "summary": [], "findings": [
        {"code": "RL201", "severity": "warning", "subject": "host:a gpu 0", "name": "n", "message": "m"}],
        "telemetry": {"windows": [{"host": h, "gpu": 0, "gpu_instance": None, "model": "H100", "window_start": start,
                                   "window_end": end, "span_s": 3600.0} for h in ("a", "b")],
                      "fleet": {"by_host": hosts, "by_gpu": [dict(r, gpu=0, gpu_instance=None) for r in hosts]},
                      "groups": [{"key": {"pod": "p"}, "gpu_hours": 20.0, "wasted_gpu_hours": 2 * waste}]}}


def analyze_night(day: int) -> dict:
    t = 1e-3 * (1 + day / 10)
    return {"schema_version": "1.6", "gpu": {"name": "H100 SXM"}, "total_gpu_time_s": 2 * t, "telemetry": None,
            "kernels": [{"short_name": n, "kernel_name": f"void {n}<128>()", "grid_size": "(1,1,1)",
                         "block_size": "(128,1,1)", "bound": "memory", "duration_s": t, "flops": 1e9,
                         "dram_bytes": 1e8, "roof_fraction": 0.5} for n in ("gemm", "attn")],
            "summary": [], "findings": [{"code": "RL101", "severity": "warning", "subject": "gemm", "name": "n",
                                         "message": "m"}]}


CONFIG = """[tool.ridgeline]
select = ["RL1", "RL2"]
ignore = ["RL107"]

[tool.ridgeline.rules.RL103]
min_bandwidth_fraction = 0.5
severity = "critical"

[tool.ridgeline.diff]
kernel_time_rel = 0.2
trend_window = 28
new_finding_severity = "critical"

[tool.ridgeline.gpus."Lab GPU"]
cc = "8.9"
sm_count = 100
memory_bytes = 48e9
dram_bw_bytes_per_s = 1.0e12
peak_flops = { fp32 = 50e12, fp16_tensor = 200e12 }
datasheet_clock_hz = { default = 2.0e9 }
source = "illustration"
"""


def json_value(d: Draw, depth: int = 0):
    kind = d.byte() % 12
    if kind == 0:
        return None
    if kind == 1:
        return d.byte() & 1 == 1
    if kind == 2:
        v = d.int(d.pick([1, 2, 4, 8, 9, 64]))
        return -v if d.byte() & 1 else v
    if kind == 3:
        return d.int(4) / (1 + d.int(2)) * (10.0 ** (d.byte() % 40 - 20))
    if kind == 4:
        return d.pick([float("nan"), float("inf"), -float("inf"), 1e308, -0.0, 5e-324])
    if kind == 5:
        return d.pick(["1e999", "NaN", "2026-01-01T00:00:00Z", "yesterday", "1.6", "99.1", "", "\ud800"])
    if kind == 6:
        return d.text()
    if kind == 7 and depth < 3:
        return [json_value(d, depth + 1) for _ in range(d.byte() % 4)]
    if kind == 8 and depth < 3:
        return {d.text(8): json_value(d, depth + 1) for _ in range(d.byte() % 4)}
    if kind == 9:
        n = d.pick([10, 500, 5000])
        return json.loads("[" * n + "]" * n) if n < 500 else _Deep(n)
    return d.text(4)


class _Deep:
    """A list nested ``n`` deep, written as text (Python cannot build it as objects to dump)."""

    def __init__(self, n: int):
        self.n = n


def _dump(doc) -> str:
    """JSON text of ``doc`` (NaN and Infinity as Python writes them; a _Deep as its brackets)."""
    marks: list[_Deep] = []

    def default(o):
        if isinstance(o, _Deep):
            marks.append(o)
            return f"@@deep{len(marks) - 1}@@"
        raise TypeError(type(o).__name__)

    text = json.dumps(doc, default=default)
    for i, m in enumerate(marks):
        text = text.replace(f'"@@deep{i}@@"', "[" * m.n + "]" * m.n)
    return text


def _edit(d: Draw, doc):
    """``doc`` with the value at a path the bytes choose replaced by :func:`json_value`."""
    doc = copy.deepcopy(doc)
    node, parent, key = doc, None, None
    for _ in range(d.byte() % 6):
        if isinstance(node, dict) and node:
            parent, key = node, d.pick(sorted(node))
        elif isinstance(node, list) and node:
            parent, key = node, d.int(1) % len(node)
        else:
            break
        node = parent[key]
    if parent is None:
        return json_value(d)
    if d.byte() % 5 == 0 and isinstance(parent, dict):
        parent.pop(key)
    else:
        parent[key] = json_value(d)
    return doc


def _nights(d: Draw, tonight_text: str | None = None, edited_text: str | None = None):
    """A folder of 4 nights and tonight: an edited or raw document as tonight or a past night."""
    folder = TMP / "nights"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    make = telemetry_night if d.byte() & 1 else analyze_night
    texts = [json.dumps(make(day)) for day in range(1, 6)]
    bad = tonight_text if tonight_text is not None else edited_text
    where = d.byte() % (5 if d.byte() & 1 else 2)  # 0..4: which of the five; often tonight or the last night
    texts[-1 - where if where < 2 else where] = bad
    paths = []
    for i, text in enumerate(texts):
        p = folder / f"2026-01-{i + 1:02d}.json"
        p.write_text(text, encoding="utf-8", errors="surrogatepass")
        paths.append(str(p))
    return paths, make


def check_nights(paths: list[str], d: Draw) -> None:
    from ridgeline.commands.diff import _read_json_document
    from ridgeline.errors import RidgelineError
    from ridgeline.nightly import diff_many

    for subset in (paths, paths[-2:]):
        for fmt in ("text", "json", "markdown"):
            try:
                text, _regressed = diff_many(subset, _read_json_document, {}, fmt=fmt, top=5)
            except RidgelineError as err:
                assert "\n" not in str(err), str(err)
                continue
            if fmt == "json":  # RFC 8259 JSON: no NaN or Infinity judged (a quoted reason may hold the word)
                json.loads(text, parse_constant=_no_constant)


def _no_constant(name: str):
    raise AssertionError(f"{name} in the JSON output: a figure that is no number was judged")


def check_config(text: bytes) -> None:
    from ridgeline.analyzer.kernels import gpus
    from ridgeline.errors import RidgelineError
    from ridgeline.rules import engine

    path = TMP / "ridgeline.toml"
    path.write_bytes(text)
    try:
        cfg = engine.load_config(path)
        engine.validate_config(cfg)
        engine.rule_overrides(cfg)
        for g in gpus.configure(cfg.get("gpus"), origin=str(path)):
            assert 0 < g.dram_bw_bytes_per_s < float("inf") and all(0 < v < float("inf") for v in g.peak_flops.values())
            for p in g.peak_flops:
                assert 0 < g.ridge(p) < float("inf")
        from ridgeline.analyzer.nightly.diff import thresholds

        thresholds(cfg.get("diff") or {})
    except RidgelineError as err:
        assert "\n" not in str(err), str(err)
    finally:
        gpus.configure(None)


def toml_value(d: Draw) -> str:
    kind = d.byte() % 8
    if kind == 0:
        return d.pick(["inf", "-inf", "nan", "+nan", "1e300", "1e-300", "0", "-1", "1.5", "true"])
    if kind == 1:
        return str(d.int(d.pick([1, 4, 9, 64])))
    if kind == 2:
        return json.dumps(d.text())
    if kind == 3:
        n = d.pick([2, 50, 5000])
        return "[" * n + "]" * n
    if kind == 4:
        n = d.pick([2, 50, 5000])
        return "{a=" * n + "1" + "}" * n
    if kind == 5:
        return "[" + ", ".join(toml_value(d) for _ in range(d.byte() % 3)) + "]"
    if kind == 6:
        return "{ " + ", ".join(f"{d.pick(['fp32', 'fp16_tensor', 'x', 'default'])} = {toml_value(d)}"
                                for _ in range(d.byte() % 3)) + " }"
    return d.text(8).encode("unicode_escape").decode("ascii").join('""')


def edited_config(d: Draw) -> bytes:
    lines = CONFIG.splitlines()
    keyed = [i for i, ln in enumerate(lines) if " = " in ln]
    for _ in range(1 + d.byte() % 2):
        i = d.pick(keyed)
        lines[i] = lines[i].split(" = ")[0] + " = " + toml_value(d)
    if d.byte() % 4 == 0:
        lines.insert(d.int(1) % len(lines), f"[tool.ridgeline.{'.'.join(['a'] * d.pick([2, 20, 5000]))}]")
    return "\n".join(lines).encode("utf-8", "surrogatepass")


def one_input(data: bytes) -> None:
    d = Draw(data)
    target = d.byte() % 4
    if target == 0:
        paths, _make = _nights(d, tonight_text=d.rest().decode("utf-8", "replace"))
        check_nights(paths, d)
    elif target == 1:
        make = telemetry_night if d.byte() & 1 else analyze_night
        paths, _make = _nights(d, edited_text=_dump(_edit(d, make(3))))
        check_nights(paths, d)
    elif target == 2:
        check_config(d.rest())
    else:
        check_config(edited_config(d))


def main() -> None:
    import os

    import atheris

    os.environ.setdefault("POLARS_MAX_THREADS", "1")
    with atheris.instrument_imports():
        import ridgeline.analyzer.nightly.diff  # noqa: F401
        import ridgeline.analyzer.nightly.docshape  # noqa: F401
        import ridgeline.analyzer.nightly.trend  # noqa: F401
        import ridgeline.bounds  # noqa: F401
        import ridgeline.nightly  # noqa: F401
        import ridgeline.rules.engine  # noqa: F401
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
