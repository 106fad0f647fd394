"""Nights validated before judging (issue 35, class 4): every figure the diff reads, every bad value.

The cases are generated from the validator's own table (docshape.FIGURES) crossed with values that
are not ridgeline's (NaN, infinities, 1e999, text, true, a negative, an integer past any float,
a list), so a figure added to the comparison and the table is covered at once. A bad tonight is
refused naming the file and the JSON path; a bad past night is left out and named, and the trend
says how many nights it stood on; any JSON at all is judged or one line, never an exception.
"""

from __future__ import annotations

import copy
import os
import json

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ridgeline.analyzer.nightly import docshape
from ridgeline.analyzer.nightly.diff import compare
from ridgeline.analyzer.nightly.docshape import FIGURES, check_document
from ridgeline.analyzer.nightly.trend import Night, trend
from ridgeline.cli import cli
from ridgeline.errors import InputError, RidgelineError

BAD = [float("nan"), float("inf"), -float("inf"), "12", True, -1.0, 10**400, [1.0], {"v": 1}]


def telemetry_doc(waste: float = 0.5, *, day: int = 1) -> dict:
    """A small valid telemetry document: two hosts, a GPU row each, windows, groups."""
    start, end = f"2026-01-{day:02d}T00:00:00+00:00", f"2026-01-{day:02d}T01:00:00+00:00"
    hosts = [{"host": h, "gpus": 1, "span_h": 10.0, "wasted_gpu_h": waste, "busy_tensor_idle_h": 0.0,
              "allocated_idle_h": waste, "wasted_share": waste / 10.0} for h in ("a", "b")]
    gpus = [dict(r, gpu=0, gpu_instance=None) for r in hosts]
    windows = [{"host": h, "gpu": 0, "gpu_instance": None, "model": "H100", "window_start": start,
                "window_end": end, "span_s": 3600.0} for h in ("a", "b")]
    groups = [{"key": {"pod": "p"}, "gpu_hours": 20.0, "wasted_gpu_hours": 2 * waste}]
    return {"schema_version": "1.6", "kernels": [], "summary": [], "findings": [],
            "telemetry": {"windows": windows, "fleet": {"by_host": hosts, "by_gpu": gpus}, "groups": groups}}


def analyze_doc(scale: float = 1.0) -> dict:
    kernels = [{"short_name": "gemm", "kernel_name": "void gemm<128>()", "grid_size": "(1,1,1)",
                "block_size": "(128,1,1)", "bound": "memory", "duration_s": 1e-3 * scale, "flops": 1e9,
                "dram_bytes": 1e8, "roof_fraction": 0.5}]
    summary = [{"short_name": "gemm", "kernel_name": "void gemm<128>()", "bound": "memory", "launches": 1,
                "total_duration_s": 1e-3 * scale, "intensity_dram": 10.0, "roof_fraction": 0.5}]
    return {"schema_version": "1.6", "kernels": kernels, "summary": summary, "total_gpu_time_s": 1e-3 * scale,
            "findings": [{"code": "RL101", "severity": "warning", "subject": "gemm", "name": "x", "message": "m"}],
            "telemetry": None}


def _at(doc: dict, where: str) -> dict:
    """The first record of the list at dotted path ``where`` (``groups`` lives under telemetry)."""
    node = doc["telemetry"] if where == "groups" else doc
    for part in where.split("."):
        node = node[part]
    return node[0]


FIGURE_CASES = [(where, key) for where, keys in FIGURES.items() for key in keys]


def test_the_valid_documents_pass():
    check_document(telemetry_doc(), "t.json")
    check_document(analyze_doc(), "a.json")


@pytest.mark.parametrize("where, key", FIGURE_CASES)
def test_every_figure_with_every_bad_value_is_named_by_its_json_path(where, key):
    for bad in BAD + ([0.5 + 1.0] if FIGURES[where][key] == "share" else []) + \
            ([2.5] if FIGURES[where][key] == "count" else []):
        doc = analyze_doc() if where in ("kernels", "summary") else telemetry_doc()
        _at(doc, where)[key] = bad
        path_key = "telemetry.groups" if where == "groups" else where
        with pytest.raises(InputError) as err:
            check_document(doc, "night.json")
        text = str(err.value)
        assert text.startswith("night.json: ") and f"'{path_key}[0].{key}'" in text and "\n" not in text, (bad, text)


@pytest.mark.parametrize("change, needle", [
    (lambda d: d.update(schema_version="7.0"), "schema_version 1.x"),
    (lambda d: d.update(schema_version=None), "'schema_version'"),
    (lambda d: d.update(schema_version="one"), "'schema_version'"),
    (lambda d: d["telemetry"]["windows"][1].update(window_start="yesterday"), "'telemetry.windows[1].window_start'"),
    (lambda d: d["telemetry"]["windows"][0].update(window_end="2025-01-01T00:00:00+00:00"), "no earlier than"),
    (lambda d: d["telemetry"]["windows"][0].update(window_end=None), "'telemetry.windows[0].window_end'"),
    (lambda d: d["telemetry"]["fleet"]["by_host"][0].update(host=["a"]), "'telemetry.fleet.by_host[0].host'"),
    (lambda d: d["telemetry"]["groups"][0].update(key={"pod": [1]}), "'telemetry.groups[0].key'"),
    (lambda d: d["telemetry"].update(fleet=[]), "'telemetry.fleet'"),
    (lambda d: d["telemetry"]["fleet"].update(by_gpu=[1]), "'telemetry.fleet.by_gpu[0]'"),
    (lambda d: d.update(total_gpu_time_s=float("nan")), "'total_gpu_time_s'"),
    (lambda d: d.pop("findings"), "with keys"),
])
def test_other_damage_is_one_line_naming_the_place(change, needle):
    doc = telemetry_doc()
    change(doc)
    with pytest.raises(InputError) as err:
        check_document(doc, "night.json")
    assert needle in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("doc", [None, [], "text", 3, 1.5, True])
def test_a_document_that_is_no_object_is_refused(doc):
    with pytest.raises(InputError, match="an object"):
        check_document(doc, "night.json")


# ------------------------------------------------------------------------------------------
# the command: a bad tonight is refused, a bad past night left out and counted
# ------------------------------------------------------------------------------------------
def _write(folder, docs):
    folder.mkdir(exist_ok=True)
    paths = []
    for i, doc in enumerate(docs):
        p = folder / f"2026-01-{i + 1:02d}.json"
        p.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
        paths.append(p)
    return paths


def _diff(*args):
    return CliRunner().invoke(cli, ["diff", *map(str, args)])


DAMAGES = {
    "nan waste": lambda d: json.dumps(d).replace('"wasted_gpu_h": 0.5', '"wasted_gpu_h": NaN'),
    "text waste": lambda d: json.dumps(d).replace('"wasted_gpu_h": 0.5', '"wasted_gpu_h": "0.5"'),
    "huge number": lambda d: json.dumps(d).replace('"span_h": 10.0', '"span_h": 1e999'),
    "unknown major": lambda d: json.dumps(dict(d, schema_version="2.0")),
    "bad window time": lambda d: json.dumps(d).replace("T00:00:00+00:00", "at midnight"),
    "null": lambda d: "null",
    "nested deep": lambda d: "[" * 100_000 + "]" * 100_000,
    "not json": lambda d: "{not json",
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_bad_tonight_is_refused_naming_the_file(tmp_path, damage):
    docs = [telemetry_doc(0.5, day=d) for d in range(1, 5)]
    paths = _write(tmp_path, [*docs[:3], DAMAGES[damage](docs[3])])
    res = _diff(*paths)
    assert res.exit_code == 2 or isinstance(res.exception, RidgelineError), res.output
    message = str(res.exception) if res.exception else res.output
    assert "2026-01-04.json" in message and "\n" not in message.strip()


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_bad_past_night_is_left_out_and_counted(tmp_path, damage):
    docs = [telemetry_doc(0.5, day=d) for d in range(1, 6)]
    # the bad night would hide tonight's regression if it were judged (NaN is in no band; 9.5 h
    # of waste would widen it): left out, the regression stands
    paths = _write(tmp_path, [DAMAGES[damage](docs[0]), *docs[1:4], telemetry_doc(5.0, day=5)])
    res = _diff(*paths)
    assert res.exit_code == 1, res.output
    text = " ".join(res.stdout.split())
    assert "judged on 3 of 4 past nights: 1 left out" in text and "2026-01-01.json" in "".join(text.split())
    js = _diff(*paths, "--format", "json")
    out = json.loads(js.stdout)
    assert [x["label"] for x in out["left_out"]] == [str(paths[0])] and len(out["baselines"]) == 3


def test_every_night_bad_is_one_line(tmp_path):
    docs = [telemetry_doc(0.5, day=d) for d in range(1, 4)]
    paths = _write(tmp_path, [DAMAGES["null"](docs[0]), DAMAGES["nan waste"](docs[1]), json.dumps(docs[2])])
    res = _diff(*paths)
    assert isinstance(res.exception, InputError) and "at least one valid baseline" in str(res.exception)


def test_the_pairwise_diff_refuses_either_bad_document(tmp_path):
    good, bad = _write(tmp_path, [telemetry_doc(), DAMAGES["nan waste"](telemetry_doc())])
    for pair in ((good, bad), (bad, good)):
        res = _diff(*pair)
        assert isinstance(res.exception, InputError) and "wasted_gpu_h" in str(res.exception)


@pytest.mark.parametrize("flag", ["fleet_waste_share=nan", "trend_window=inf", "trend_k=-inf", "kernel_time_rel=1e999",
                                  "host_waste_share=2", "trend_min_baselines=1.5", "new_finding_severity=loud"])
def test_nan_and_infinite_thresholds_are_refused_naming_the_key(tmp_path, flag):
    paths = _write(tmp_path, [telemetry_doc(day=d) for d in range(1, 5)])
    res = _diff(*paths, "--threshold", flag)
    assert isinstance(res.exception, RidgelineError), res.output
    assert flag.split("=")[0] in str(res.exception) and "--threshold" in str(res.exception)


@pytest.mark.parametrize("line", ["trend_window = inf", "fleet_waste_share = nan", "trend_k = -inf", "host_waste_share = 1e300"])
def test_bad_thresholds_in_the_config_are_refused_naming_file_and_key(tmp_path, line):
    paths = _write(tmp_path / "n", [telemetry_doc(day=d) for d in range(1, 5)])
    cfg = tmp_path / "ridgeline.toml"
    cfg.write_text(f"[tool.ridgeline.diff]\n{line}\n", encoding="utf-8")
    res = _diff(*paths, "--config", cfg)
    text = str(res.exception)
    assert isinstance(res.exception, RidgelineError) and str(cfg) in text and line.split()[0] in text


# ------------------------------------------------------------------------------------------
# property: any JSON is judged or one line
# ------------------------------------------------------------------------------------------
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20,
)


def _mutate(doc: dict, data) -> dict:
    """A valid document with one value somewhere replaced by any JSON value."""
    doc = copy.deepcopy(doc)
    node, path = doc, []
    for _ in range(data.draw(st.integers(0, 5))):
        if isinstance(node, dict) and node:
            key = data.draw(st.sampled_from(sorted(node)))
        elif isinstance(node, list) and node:
            key = data.draw(st.integers(0, len(node) - 1))
        else:
            break
        path.append((node, key))
        node = node[key]
    if path:
        parent, key = path[-1]
        parent[key] = data.draw(JSON)
    return doc


def _judge(docs: list) -> str:
    """Validated, compared and rendered as JSON (allow_nan=False: a NaN judged would raise there)."""
    for i, d in enumerate(docs):
        check_document(d, f"n{i}.json")
    if len(docs) == 2:
        from ridgeline.render.nightly.diff import format_diff, render_diff_json

        cmp = compare(docs[0], docs[1], base_label="a", new_label="b")
        return render_diff_json(cmp) + format_diff(cmp)
    from ridgeline.render.nightly.trend import format_trend, render_trend_json

    tr = trend([Night(f"n{i}", d) for i, d in enumerate(docs[:-1])], Night("t", docs[-1]))
    return render_trend_json(tr) + format_trend(tr)


@settings(max_examples=int(os.environ.get("RIDGELINE_DOC_EXAMPLES", 60)), deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_any_document_is_judged_or_one_line(data):
    kind = data.draw(st.sampled_from(["telemetry", "analyze"]))
    make = (lambda i: telemetry_doc(0.5, day=i + 1)) if kind == "telemetry" else (lambda i: analyze_doc(1.0 + i))
    n = data.draw(st.integers(2, 4))
    docs = [make(i) for i in range(n)]
    k = data.draw(st.integers(0, n - 1))
    docs[k] = data.draw(JSON) if data.draw(st.integers(0, 3)) == 0 else _mutate(docs[k], data)
    try:
        out = _judge(docs)
    except RidgelineError as err:
        assert "\n" not in str(err)
        return
    assert "NaN" not in out and "Infinity" not in out and " nan" not in out and " inf" not in out


def test_the_reader_refuses_json_nested_too_deep(tmp_path):
    from ridgeline.commands.diff import _read_json_document

    p = tmp_path / "deep.json"
    p.write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(InputError, match="nested too deep"):
        _read_json_document(str(p))


def test_known_majors_are_the_writers():
    from ridgeline.result import JSON_SCHEMA_VERSION

    assert int(JSON_SCHEMA_VERSION.split(".")[0]) in docshape.KNOWN_MAJORS


def test_a_kernel_and_a_total_that_grew_from_zero_are_regressions_not_a_bug():
    """Found by fuzz/fuzz_nightly.py: a base of 0 s made the regression message divide by zero."""
    base, new = analyze_doc(0.0), analyze_doc(1.0)
    cmp = compare(base, new, base_label="a", new_label="b")
    assert cmp.regressed and any("from none" in r for r in cmp.regressions)
