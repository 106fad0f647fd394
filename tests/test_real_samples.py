"""The real-data sweep: every file under ``../shared/samples/`` through ``analyze --format json``,
the table view, ``report`` (HTML and Markdown) and, for telemetry, ``telemetry --format json``,
checked against properties that hold for ANY file (issue 20's "done when"), never against
per-file expected values:

* no exit 3 (a bug); a refusal (exit 2) is one line naming the file;
* the accounting balances for every input;
* ``--gpu`` naming the GPU the run found changes no verdict into a bug (the RL107 ``float(None)``
  class of bug);
* every kernel has a bound from the documented vocabulary, and an ``unknown`` one says what is
  missing;
* no advice to collect a metric or a section the file already holds, in any spelling;
* FLOPs and DRAM bytes are null exactly when no spelling of their counters exists in the file;
* no launch-overhead remedy on a launch longer than the launch-bound threshold;
* distinct demangled kernel names get distinct displayed names;
* every view's numbers equal the JSON document's;
* nothing that yields no records exits 0 silently: an input read into no record is named by a note
  saying what it holds (or refused in one line);
* no rank verdict without its coverage: a straggler (RL411) is named among at least the documented
  minimum of ranks, and says how many of the job's ranks were captured when the traces record more;
* every ridge a finding quotes is one the Roofs list prints (issue 37);
* the bound is decided wherever ncu's own Speed-of-Light throughputs decide it, and agrees with them;
* every roof fraction printed agrees within 2 points with the percentage ncu recorded for the same
  unit (DRAM; the tensor path a tensor launch used) wherever the file holds one.

Skipped as a whole when ``../shared/samples`` is absent (a clean clone in CI). Each file is run
once per command (module-scoped cache), in process, so the sweep costs what the commands cost.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import re
from pathlib import Path

import pytest

from ridge_inputs import SAMPLES

FILES = sorted(p for p in SAMPLES.glob("*/*") if p.is_file() and p.name != "MANIFEST.md") if SAMPLES.is_dir() else []
pytestmark = pytest.mark.skipif(not FILES, reason="../shared/samples is absent (real-data sweep skipped)")
IDS = [f"{p.parent.name}/{p.name[:48]}" for p in FILES]


def _params(paths, ids):
    """One parameter per file, every check of a file in one xdist group: the file is analysed once
    (``analyzed``'s cache lives in a worker) and its checks share that run."""
    return [pytest.param(p, id=i, marks=pytest.mark.xdist_group(f"sample:{p.parent.name}/{p.name}"))
            for p, i in zip(paths, ids)]


PARAMS = _params(FILES, IDS)


def _ridgeline(*args) -> tuple[int, str, str]:
    from ridgeline.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    return code, out.getvalue(), err.getvalue()


#: the AnalysisResult each ``analyze --format json`` run of the sweep made, by (path, extra
#: options): the views are rendered from the very result the command printed, not from a second
#: analysis of the file (test_every_view_prints_the_json_numbers takes it)
_RESULTS: dict = {}


@functools.lru_cache(maxsize=None)
def analyzed(path: Path, *extra: str) -> tuple[int, dict | None, str]:
    import ridgeline.pipeline as pipeline

    real = pipeline.analyze_paths

    def kept(*args, **kw):  # the real analysis; its result is kept (the command imports it at call time)
        result = real(*args, **kw)
        _RESULTS[(path, extra)] = result
        return result

    pipeline.analyze_paths = kept
    try:
        code, out, err = _ridgeline("analyze", path, "--format", "json", *extra)
    finally:
        pipeline.analyze_paths = real
    return code, (json.loads(out) if code in (0, 1) else None), err


def _doc(path: Path) -> dict:
    code, doc, err = analyzed(path)
    assert code != 3, f"{path.name}: exit 3 (a bug): {err}"
    if code == 2:
        pytest.skip(f"refused in one line: {err.strip()}")
    return doc


def _assert_clean_refusal(path: Path, code: int, err: str) -> None:
    assert code != 3, f"{path.name}: exit 3 (a bug): {err}"
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and path.name in lines[0], err


@pytest.mark.parametrize("path", PARAMS)
def test_analyze_never_a_bug_and_accounting_balances(path):
    code, doc, err = analyzed(path)
    _assert_clean_refusal(path, code, err)
    if doc is None:
        return
    assert doc["accounting"], "every run accounts for its inputs"
    for rec in doc["accounting"]:
        assert rec["balanced"], rec


@contextlib.contextmanager
def _keeping_figures():
    """The figures the report draws (roofline, telemetry, timeline), kept for a look afterwards."""
    import ridgeline.render.plots as plots
    import ridgeline.render.timeline.plot as timeline_plot

    kept: list = []
    saved = {(plots, "roofline_figure"): plots.roofline_figure, (plots, "telemetry_figure"): plots.telemetry_figure,
             (timeline_plot, "timeline_figure"): timeline_plot.timeline_figure}

    def keeping(name, real):
        def draw(*args, **kw):
            fig = real(*args, **kw)
            if fig is not None:
                kept.append((name, fig))
            return fig
        return draw

    for (module, name), real in saved.items():
        setattr(module, name, keeping(name, real))
    try:
        yield kept
    finally:
        for (module, name), real in saved.items():
            setattr(module, name, real)


@pytest.mark.parametrize("path", PARAMS)
def test_views_never_a_bug(path, tmp_path):
    """The commands that write views, end to end: ``analyze --format json`` (``analyzed``) and
    ``report`` (the page, with its pictures), ``telemetry`` for telemetry. The terminal, Markdown,
    SARIF and GitHub views of the same file are rendered from one analysis, and their numbers held
    to the JSON's, by test_every_view_prints_the_json_numbers (a run per view would analyse the
    file once per view)."""
    doc = _doc(path)
    with _keeping_figures() as figures:
        code, out, err = _ridgeline("report", path, "-o", tmp_path / "r.html")
    _assert_clean_refusal(path, code, err)
    # the page's pictures keep their text readable: inside the figure, no two texts on each other
    from plot_text import text_problems

    assert [p for name, fig in figures for p in text_problems(fig, name=f"{path.name} {name}")] == []
    if doc.get("telemetry"):
        code, out, err = _ridgeline("telemetry", path, "--format", "json")
        _assert_clean_refusal(path, code, err)


@pytest.mark.parametrize("path", PARAMS)
def test_naming_the_gpu_found_is_never_a_bug(path):
    doc = _doc(path)
    gpu = (doc.get("gpu") or {}).get("name")
    if not gpu or not doc.get("kernels") or "," in gpu:
        pytest.skip("no single catalogue GPU, or no kernels")
    code, doc2, err = analyzed(path, "--gpu", gpu)
    assert code in (0, 1), f"{path.name} --gpu {gpu}: exit {code}: {err}"
    assert [k["bound"] for k in doc2["kernels"]] == [k["bound"] for k in doc["kernels"]]


@pytest.mark.parametrize("path", PARAMS)
def test_unknown_kernels_say_what_is_missing(path):
    doc = _doc(path)
    for k in doc.get("kernels") or []:
        if k["bound"] == "unknown":
            assert k.get("missing") or k.get("missing_hint"), k.get("kernel_name")


_METRIC = re.compile(r"\b[a-z0-9]+__[a-z0-9_]+(?:\.[a-z0-9_]+)*")


def _advice_texts(doc: dict) -> list[str]:
    texts = []
    for f in doc.get("findings") or []:
        texts += [str(f.get(k) or "") for k in ("remedy", "message", "evidence")]
    for k in doc.get("kernels") or []:
        texts.append(str(k.get("missing_hint") or ""))
    texts += [str(n) for n in doc.get("notes") or []]
    return texts


# --------------------------------------------------------------------------------------------
# profiles: what the file holds, in any spelling (ridgeline.parsers.ncu.spellings)
# --------------------------------------------------------------------------------------------
PROFILES = [p for p in FILES if p.parent.name in ("ncu", "ncu-rep")]
PROFILE_IDS = [f"{p.parent.name}/{p.name[:48]}" for p in PROFILES]
PROFILE_PARAMS = _params(PROFILES, PROFILE_IDS)
#: a roofline placement needs these; "--set roofline" advice is right only when one is absent
ROOFLINE_QUANTITIES = ("flops_fp32", "dram_bytes", "duration_s")
_COLLECT = re.compile(r"--metrics|--section|--set\b|re-?profile|collect", re.I)


@functools.lru_cache(maxsize=None)
def _metric_frames(path: Path) -> tuple:
    """The file's metric tables by ncu name (read once; empty when the file is refused)."""
    from ridgeline.errors import InputError

    try:
        if path.suffix == ".ncu-rep":
            from ridgeline.parsers.ncu.rep import read_ncu_rep

            res, _rules = read_ncu_rep([path])
        else:
            from ridgeline.parsers.ncu.csv_reader import read_ncu

            res = read_ncu([path])
    except InputError:
        return ()
    return tuple(res.metrics.values())


@functools.lru_cache(maxsize=None)
def metric_names(path: Path) -> frozenset:
    """Every metric the file holds, by its ncu name (details pages: (name, unit) pairs)."""
    names: set = set()
    for frame in _metric_frames(path):
        if frame is None:
            continue
        if "Metric Name" in frame.columns:  # details page: long
            cols = ["Metric Name", "Metric Unit"] if "Metric Unit" in frame.columns else ["Metric Name"]
            names |= {tuple(r) if len(r) == 2 else r[0] for r in frame.select(cols).unique().iter_rows()}
        else:
            names |= set(frame.columns)
    return frozenset(names)


def _held(path: Path) -> set[str]:
    from ridgeline.parsers.ncu.spellings import quantities_held

    return quantities_held(metric_names(path))


@pytest.mark.parametrize("path", PROFILE_PARAMS)
def test_no_advice_to_collect_what_the_file_holds(path):
    from ridgeline.parsers.ncu.spellings import quantity_of

    doc = _doc(path)
    held = _held(path)
    for text in _advice_texts(doc):
        m = _COLLECT.search(text)
        if not m:
            continue
        asked = text[m.start():]  # what the advice asks to collect (a metric quoted before it is evidence)
        for metric in _METRIC.findall(asked):
            q = quantity_of(metric)
            assert q is None or q not in held, f"advice names {metric} ({q}), which the file holds: {text[:160]}"
        if re.search(r"--set roofline|SpeedOfLight_RooflineChart", text):
            assert not all(q in held for q in ROOFLINE_QUANTITIES), f"advises the roofline section it holds: {text[:160]}"


@pytest.mark.parametrize("path", PROFILE_PARAMS)
def test_flops_and_bytes_null_only_without_a_spelling(path):
    doc = _doc(path)
    held = _held(path)
    kernels = doc.get("kernels") or []
    flop_held = {"flops_fp32", "flops_fp64", "flops_fp16", "flops_tensor"} & held
    if not flop_held:
        assert all(k.get("flops") is None for k in kernels), "FLOPs without any FLOP counter in the file"
    elif "flops_fp32" in held and kernels:  # FLOPs are known when the FP32 count is (zero is zero)
        assert any(k.get("flops") is not None for k in kernels), f"file holds {sorted(flop_held)}, every FLOPs null"
    if "dram_bytes" not in held:
        assert all(k.get("dram_bytes") is None for k in kernels), "DRAM bytes without a DRAM counter in the file"
    elif kernels:
        assert any(k.get("dram_bytes") is not None for k in kernels), "file holds DRAM bytes, every launch null"


# --------------------------------------------------------------------------------------------
# verdicts any file must respect
# --------------------------------------------------------------------------------------------
_LAUNCH_REMEDY = re.compile(r"CUDA graph|HIP graph|launch overhead|persistent kernel|fewer kernels|fewer launches", re.I)


@pytest.mark.parametrize("path", PARAMS)
def test_no_launch_remedy_on_long_launches(path):
    from ridgeline.analyzer.kernels.latency import LAUNCH_BOUND_MAX_S

    doc = _doc(path)
    kernels = doc.get("kernels") or []
    for f in doc.get("findings") or []:
        if not _LAUNCH_REMEDY.search(f.get("remedy") or "") or not kernels:
            continue  # (timeline-only findings: launch gaps are the timeline's own measure)
        ev = {e["metric"]: e["value"] for e in f.get("evidence") or []}
        limit = ev.get("launch_bound_max_s", LAUNCH_BOUND_MAX_S)
        if f.get("subject_kind") == "kernel":
            mine = [k for k in kernels if f["subject"] in (k.get("kernel_label"), k.get("short_name"), k.get("kernel_name"))]
            longest = max((k["duration_s"] for k in mine if k.get("duration_s") is not None), default=None)
        else:
            longest = ev.get("longest_launch_s")
        assert longest is not None, f"{f['code']} advises fewer launches without saying how long they are"
        assert longest <= limit, f"{f['code']} advises fewer launches for a {longest * 1e6:.0f} us launch"


@pytest.mark.parametrize("path", PARAMS)
def test_distinct_kernels_get_distinct_names(path):
    doc = _doc(path)
    for table in ("summary",):
        rows = doc.get(table) or []
        labels: dict[str, str] = {}
        for r in rows:
            label = r.get("kernel_label") or r.get("short_name")
            other = labels.setdefault(label, r["kernel_name"])
            assert other == r["kernel_name"], f"{label!r} names two kernels: {other[:80]!r} and {r['kernel_name'][:80]!r}"
    tl = doc.get("timeline") or {}
    rows = tl.get("kernels") or []
    seen: dict = {}
    for r in rows:
        key = (r.get("source"), r.get("device"))
        label, name = r.get("kernel_label"), r.get("name") or r.get("kernel_name")
        if label is None or name is None:
            continue
        other = seen.setdefault((key, label), name)
        assert other == name, f"timeline label {label!r} names two kernels"


@pytest.mark.parametrize("path", PARAMS)
def test_every_view_prints_the_json_numbers(path, tmp_path):
    from view_consistency import assert_views_match_json, views_of

    printed = _doc(path)
    result = _RESULTS.pop((path, ()), None)
    assert result is not None, "the analyze command's result was not kept (does it still call pipeline.analyze_paths?)"
    doc, texts = views_of(result, [path], tmp_path)
    assert doc == printed, "the views' JSON is not the document analyze --format json printed"
    assert_views_match_json(doc, texts)


@pytest.mark.parametrize("path", [p for p in PROFILE_PARAMS if p.values[0].suffix == ".ncu-rep"])
def test_the_page_is_the_same_on_every_run(path):
    # a group_by gives no order: every table a view prints must be sorted to the last tie
    _doc(path)
    runs = {_ridgeline("analyze", path)[1] for _ in range(4)}
    assert len(runs) == 1, "the table view differs between runs of the same input"


@pytest.mark.parametrize("path", PARAMS)
def test_communication_never_exceeds_the_busy_time(path):
    """Per timeline device: exposed communication <= communication <= kernel busy <= busy, the
    overlap share in [0, 1], and impacts of timeline findings within what they are a share of."""
    doc = _doc(path)
    for d in (doc.get("timeline") or {}).get("devices") or []:
        eps = 1e-12
        assert 0 <= d["comm_exposed_s"] <= d["comm_busy_s"] + eps <= d["kernel_busy_s"] + 2 * eps <= d["busy_s"] + 3 * eps, d
        assert d["compute_busy_s"] <= d["kernel_busy_s"] + eps
        share = d["comm_overlap_share"]
        assert (share is None) == (d["comm_busy_s"] == 0) and (share is None or 0 <= share <= 1)
    for f in doc.get("findings") or []:
        if f.get("subject_kind") == "timeline" and f.get("impact_share") is not None:
            assert 0 <= f["impact_share"] <= 1 + 1e-9, f


@pytest.mark.parametrize("path", PARAMS)
def test_nothing_that_yields_no_records_passes_silently(path):
    """An input that yields no record (no launch, no timeline record, no telemetry row) is named by
    a note that says so, never an empty analysis with "Findings: none" alone (issue 32 item 4)."""
    doc = _doc(path)
    for inp in doc["inputs"]:
        if inp["rows"]:
            continue
        said = [n for n in doc["notes"] if n.startswith(inp["path"] + ":")]
        assert said, f"{inp['path']} yielded no record and no note says why: {doc['notes']}"
        if inp["kind"].startswith(("kineto", "nsys")):
            # a timeline: what it holds instead, and the advice for that (ridgeline.parsers.timeline.holdings)
            assert any("nothing analysed on the GPU: " in n for n in said), said


@pytest.mark.parametrize("path", PARAMS)
def test_no_rank_verdict_without_its_coverage(path):
    """RL411 names a straggler only among at least its min_ranks ranks, and says how many of the
    job's ranks were captured when the traces record a larger world (issue 32 item 5); the rank
    table carries the world size its heading states."""
    from ridgeline.rules.timeline.rl411_straggler_rank import StragglerRank

    doc = _doc(path)
    ranks = (doc.get("timeline") or {}).get("ranks") or []
    assert all("world_size" in r for r in ranks)
    for f in doc["findings"]:
        if f["code"] != "RL411":
            continue
        ev = {e["metric"]: e["value"] for e in f["evidence"]}
        assert ev["ranks"] >= StragglerRank.thresholds["min_ranks"][0], f
        world = ev.get("world_size")
        if world and world > ev["ranks"]:
            assert f"{ev['ranks']} of {world} ranks captured" in f["message"], f


_RIDGE = re.compile(r"(?<!L2 )\bridges? ([\d,.]+)(?: (?:and|to) ([\d,.]+))? FLOP/B")


@pytest.mark.parametrize("path", PARAMS)
def test_every_ridge_a_rule_quotes_is_in_the_roofs_list(path):
    """Issue 37 item 3: RL107 quoted a ridge of 177 FLOP/B that no roof has (a median between the
    137 and 216 ridges of two tensor paths). A ridge a finding names is one the Roofs list prints."""
    from ridgeline.rules.kernels import fmt

    doc = _doc(path)
    shown = {fmt(r["ridge_flop_per_byte"]) for r in doc.get("roofs") or [] if r.get("ridge_flop_per_byte")}
    for f in doc.get("findings") or []:
        for m in _RIDGE.finditer(f["message"]):
            for value in (v for v in m.groups() if v):
                assert value in shown, f"{f['code']} quotes ridge {value} FLOP/B; the Roofs list has {sorted(shown)}"


# --------------------------------------------------------------------------------------------
# agreeing with the profiler's own figures (issue 32 items 1-2, docs/speed-of-light.md)
# --------------------------------------------------------------------------------------------
#: ncu's percentage of one tensor instruction family's own peak (dense or sparse path)
_TENSOR_PCT = re.compile(r"^sm__ops_path_tensor_op_[a-z0-9]+_src_[a-z0-9_]+\.(avg|sum)\.pct_of_peak_sustained_elapsed$")


@functools.lru_cache(maxsize=None)
def tensor_path_pcts(path: Path) -> dict:
    """launch ID -> the sum over tensor instruction families of ncu's percentage of each family's
    own peak (ridgeline's compute fraction of a tensor launch is that sum: its peak is the
    families' ops-weighted one); launches without such figures are absent."""
    import polars as pl

    out: dict = {}
    for frame in _metric_frames(path):
        if frame is None or "ID" not in frame.columns:
            continue
        if "Metric Name" in frame.columns:  # details page: long
            rows = frame.filter(pl.col("Metric Name").str.contains(_TENSOR_PCT.pattern))
            rows = rows.filter(pl.col("Metric Name").str.contains(r"\.avg\.") | ~pl.col("Metric Name").str.replace(
                r"\.sum\.", ".avg.").is_in(rows.get_column("Metric Name").implode()))
            values = rows.select(pl.col("ID").cast(pl.String), pl.col("Metric Value").cast(pl.String).str.replace_all(
                ",", "").cast(pl.Float64, strict=False).alias("v"))
        else:
            cols = [c for c in frame.columns if _TENSOR_PCT.match(c)]
            avg = {c.replace(".sum.", ".avg.") for c in cols if ".avg." in c.replace(".sum.", ".avg.")} & set(cols)
            cols = [c for c in cols if ".avg." in c or c.replace(".sum.", ".avg.") not in avg]
            if not cols:
                continue
            values = frame.select(pl.col("ID").cast(pl.String), *[pl.col(c) for c in cols]).unpivot(
                index="ID").select("ID", pl.col("value").cast(pl.String).str.replace_all(",", "")
                                   .cast(pl.Float64, strict=False).alias("v"))
        for launch, v in values.filter(pl.col("v").is_not_null()).group_by("ID").agg(pl.col("v").sum()).iter_rows():
            if launch:
                out[launch.split("/")[-1]] = v
    return out


def _sides(k: dict) -> tuple:
    """(compute %, memory %) as ncu recorded them, the larger of each side's figures."""
    pipe = k.get("tensor_pipe_active_ratio")
    comp = [x for x in (k.get("sm_throughput_pct"), pipe * 100 if pipe is not None else None) if x is not None]
    mem = [x for x in (k.get("memory_throughput_pct"), k.get("dram_throughput_pct")) if x is not None]
    return (max(comp) if comp else None), (max(mem) if mem else None)


@pytest.mark.parametrize("path", PROFILE_PARAMS)
def test_the_bound_is_decided_wherever_ncus_throughputs_decide_it(path):
    doc = _doc(path)
    for k in doc.get("kernels") or []:
        src, bound = k.get("bound_source"), k.get("bound")
        assert src in (None, "roofline", "ncu-speed-of-light"), src
        assert (src is None) == (bound == "unknown"), (src, bound)
        sm, mem = k.get("sm_throughput_pct"), k.get("memory_throughput_pct")
        if sm is not None and mem is not None:  # ncu's SpeedOfLight rule reads exactly these two
            assert bound != "unknown", f"launch {k['id']}: SM {sm}% and memory {mem}% recorded, bound unknown"
        if src != "ncu-speed-of-light":
            continue
        comp, memory = _sides(k)
        assert k.get("roof_fraction") is None and k.get("time_to_roof_s") is None, "no roof placed it: no fraction, no saving"
        short = k.get("duration_s") is not None and k["duration_s"] <= 2e-6
        if bound == "memory":
            assert memory is not None and (comp is None or memory > comp) and not short, k["id"]
        elif bound == "compute":
            assert comp is not None and (memory is None or comp >= memory) and not short, k["id"]
        else:
            assert bound == "latency" and (short or max(comp, memory) < 10.0), (k["id"], comp, memory)
    for s in doc.get("summary") or []:
        assert (s.get("bound_source") is None) == (s.get("bound") in (None, "unknown")), s


@pytest.mark.parametrize("path", PROFILE_PARAMS)
def test_roof_fractions_agree_with_ncus_own_percentages(path):
    doc = _doc(path)
    kernels = doc.get("kernels") or []
    tensor = tensor_path_pcts(path) if any((k.get("precision") or "").endswith("_tensor") for k in kernels) else {}
    for k in kernels:
        fraction = k.get("roof_fraction")
        if fraction is None:
            continue
        memory_side = k.get("flops") == 0 or (k.get("ridge_distance") is not None and k["ridge_distance"] < 1)
        if memory_side:  # achieved DRAM bytes/s over the DRAM roof
            unit, ncu = "DRAM", k.get("dram_throughput_pct")
        elif (k.get("precision") or "").endswith("_tensor") and k.get("flops") and (k.get("flops_tensor") or 0) >= 0.99 * k["flops"]:
            unit, ncu = "tensor path", tensor.get(str(k.get("launch_id")))
        else:  # CUDA-core FLOPs: ncu records no percentage of the same peak
            continue
        if ncu is None:
            continue
        assert abs(fraction * 100 - ncu) <= 2.0, (
            f"launch {k['id']} ({k.get('short_name')}): {unit} at {fraction:.1%} of roof, ncu recorded {ncu:.1f}%")


DCGM_PARAMS = [p for p in PARAMS if "/dcgm/" in str(p.values[0]).replace("\\", "/")]


@pytest.mark.parametrize("path", DCGM_PARAMS)
def test_every_telemetry_window_gets_one_class(path):
    """Issue 31: each window of every real DCGM file gets exactly one class; a busy class only where
    GR_ENGINE_ACTIVE was measured (never guessed from GPU-Util); the classes partition the time."""
    from ridgeline.analyzer.fleet.classes import CLASS_ORDER

    doc = _doc(path)
    windows = (doc.get("telemetry") or {}).get("windows") or []
    busy = set(CLASS_ORDER) - {"unavailable", "idle", "idle_allocated", "unknown"}
    for w in windows:
        assert w["class"] in CLASS_ORDER, w
        if w["class"] in busy:
            assert w["gr_engine_active_mean_ratio"] is not None and w["excluded"] is None, w
        if w["gr_engine_active_mean_ratio"] is None and w["class"] not in ("unavailable", "idle", "idle_allocated"):
            assert w["class"] == "unknown", w
