"""The rules engine: registry contract, selection, configuration, ordering, generated docs."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest


from rule_cases import label, context, launch  # noqa: E402

from ridgeline.errors import InputError, UsageError  # noqa: E402
from ridgeline.rules import engine  # noqa: E402
from ridgeline.rules.base import CODE_RE, DOC_SECTIONS, NAME_RE, Context, Finding, Rule  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CODES = [r.code for r in engine.all_rules()]


def codes(rules):
    return [r.code for r in rules]


# ---------------------------------------------------------------- registry
def test_registry_codes_unique_regex_valid_names_kebab():
    rules = engine.all_rules()
    assert len(rules) >= 4
    all_codes = [c for r in rules for c in (r.code, *r.aliases)]
    assert len(all_codes) == len(set(all_codes))
    assert all(CODE_RE.match(c) for c in all_codes)
    assert all(NAME_RE.match(r.name) for r in rules)
    assert len({r.name for r in rules}) == len(rules)
    assert CODES == sorted(CODES)


def test_every_rule_module_matches_its_code_and_has_every_doc_section():
    for r in engine.all_rules():
        module = r.__module__.rsplit(".", 1)[1]
        assert module.startswith(r.code.lower() + "_"), (r.code, module)
        doc = engine.rule_doc_sections(r)
        for section in DOC_SECTIONS:
            assert doc.get(section, "").strip(), f"{r.code} lacks {section}"
        for key, (_default, desc) in r.thresholds.items():
            assert desc.strip(), f"{r.code}.{key} has no description"


def _dummy(**attrs):
    doc = "Summary.\n\nWhat it finds\n-------------\nx\n\nWhy it matters\ny\n\nWhat to do:\nz\n\n## Example\nw\n"
    base = {"code": "RL199", "name": "a-condition", "__doc__": doc, "check": lambda self, ctx: []}
    base.update(attrs)
    return type("Dummy", (Rule,), base)


def test_validate_rule_accepts_all_heading_styles():
    engine.validate_rule(_dummy())  # underlined, plain, colon and '##' headings


@pytest.mark.parametrize(
    "attrs, fragment",
    [
        ({"code": "RL0001"}, "does not match"),
        ({"code": "XX101"}, "does not match"),
        ({"name": "Raise_Batch"}, "kebab-case"),
        ({"severity": "error"}, "severity"),
        ({"__doc__": "Summary.\n\nWhat it finds\nx\n"}, "Why it matters"),
        ({"thresholds": {"limit": (1.0, "")}}, "description"),
        ({"aliases": ("R1",)}, "alias"),
    ],
)
def test_validate_rule_refuses_broken_rules(attrs, fragment):
    with pytest.raises(engine.RuleDefinitionError, match=fragment):
        engine.validate_rule(_dummy(**attrs))


def test_every_rule_meets_the_contract():
    """The whole contract, docstring sections included, for every rule the registry loads (which
    checks all but the docstrings itself, at every start)."""
    rules = engine.all_rules()
    assert len(rules) > 30
    for cls in rules:
        engine.validate_rule(cls, module_name=cls.__module__.rsplit(".", 1)[-1])


def test_validate_rule_checks_module_number():
    with pytest.raises(engine.RuleDefinitionError, match="module"):
        engine.validate_rule(_dummy(), module_name="rl198_a_condition")


def test_get_rule_is_case_insensitive_and_rejects_unknown():
    assert engine.get_rule("rl101").code == "RL101"
    with pytest.raises(UsageError, match="unknown rule code 'RL899'"):
        engine.get_rule("RL899")


# ---------------------------------------------------------------- selection
def test_default_selects_everything():
    assert codes(engine.select_rules()) == CODES


def test_select_prefix_and_ignore_more_specific():
    chosen = codes(engine.select_rules(["RL1"], ["RL102"]))
    assert chosen == [c for c in CODES if c.startswith("RL1") and c != "RL102"]
    assert "RL901" not in chosen


def test_more_specific_select_beats_broader_ignore():
    assert codes(engine.select_rules(["RL101"], ["RL1"])) == ["RL101"]
    # without select, an ignore prefix removes the whole family
    assert not [c for c in codes(engine.select_rules([], ["RL1"])) if c.startswith("RL1")]


def test_comma_lists_all_and_lowercase_selectors():
    assert codes(engine.select_rules(["rl101,RL901"])) == ["RL101", "RL901"]
    assert codes(engine.select_rules(["ALL"], ["RL9"])) == [c for c in CODES if not c.startswith("RL9")]


def test_family_filter():
    assert codes(engine.select_rules(family="data")) == [r.code for r in engine.all_rules() if r.family == "data"]
    with pytest.raises(UsageError, match="family"):
        engine.select_rules(family="gpu")


@pytest.mark.parametrize("bad", ["RL8", "RL1011", "E501", "RL10x"])
def test_unknown_or_malformed_selectors_are_usage_errors(bad):
    with pytest.raises(UsageError):
        engine.select_rules([bad])
    with pytest.raises(UsageError):
        engine.select_rules([], [bad])


# ---------------------------------------------------------------- config
def test_load_config_named_file_tool_table(tmp_path):
    p = tmp_path / "pyproject.toml"
    p.write_text(
        '[project]\nname = "x"\n[tool.ridgeline]\nselect = ["RL1"]\n'
        "[tool.ridgeline.rules.RL103]\nmin_bandwidth_fraction = 0.5\n"
    )
    cfg = engine.load_config(p)
    assert cfg == {"select": ["RL1"], "rules": {"RL103": {"min_bandwidth_fraction": 0.5}}}


def test_load_config_default_ridgeline_toml_top_level(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert engine.load_config() == {}
    (tmp_path / "ridgeline.toml").write_text('ignore = ["RL102"]\n')
    assert engine.load_config() == {"ignore": ["RL102"]}


def test_load_config_errors(tmp_path):
    with pytest.raises(UsageError, match="not found"):
        engine.load_config(tmp_path / "nope.toml")
    p = tmp_path / "pyproject.toml"
    p.write_text('[project]\nname = "x"\n')
    with pytest.raises(UsageError, match=r"no \[tool.ridgeline\]"):
        engine.load_config(p)
    bad = tmp_path / "ridgeline.toml"
    bad.write_text('select = ["RL1"]\nignore = [\n')
    with pytest.raises(InputError) as err:
        engine.load_config(bad)
    assert "ridgeline.toml:" in str(err.value) and "expected valid TOML" in str(err.value)


def test_threshold_flags_parse_types():
    got = engine.parse_threshold_flags(["RL103.min_bandwidth_fraction=0.5", "rl101.min_time_share = 1"])
    assert got == {"RL103": {"min_bandwidth_fraction": 0.5}, "RL101": {"min_time_share": 1}}
    for bad in ["RL103", "RL103.x", "RL103.x=", "min_bandwidth_fraction=0.5"]:
        with pytest.raises(UsageError, match="CODE.name=value"):
            engine.parse_threshold_flags([bad])


def test_rule_overrides_validate_codes_keys_and_types():
    ok = engine.rule_overrides({"rules": {"RL103": {"min_bandwidth_fraction": 1, "severity": "critical"}}})
    assert ok == {"RL103": {"min_bandwidth_fraction": 1.0, "severity": "critical"}}
    assert isinstance(ok["RL103"]["min_bandwidth_fraction"], float)
    with pytest.raises(UsageError, match="unknown rule code"):
        engine.rule_overrides({"rules": {"RL899": {"x": 1}}})
    with pytest.raises(UsageError, match="unknown threshold 'min_bw'"):
        engine.rule_overrides({"rules": {"RL103": {"min_bw": 0.5}}})
    with pytest.raises(UsageError, match="expected a number"):
        engine.rule_overrides({"rules": {"RL103": {"min_bandwidth_fraction": "half"}}})
    with pytest.raises(UsageError, match="severity"):
        engine.rule_overrides({"rules": {"RL103": {"severity": "fatal"}}})
    with pytest.raises(UsageError, match="one table per rule"):
        engine.rule_overrides({"rules": {"RL103": 0.5}})


def test_merge_config_flags_replace_select_extend_ignore_override_thresholds():
    cfg = {"select": ["RL9"], "ignore": ["RL102"], "rules": {"RL103": {"min_time_share": 0.2}}}
    out = engine.merge_config(cfg, select=["RL1"], ignore=["RL103"], thresholds=["RL103.min_time_share=0.3"])
    assert out["select"] == ["RL1"]
    assert out["ignore"] == ["RL102", "RL103"]
    assert out["rules"]["RL103"] == {"min_time_share": 0.3}
    assert cfg["rules"]["RL103"] == {"min_time_share": 0.2}  # input untouched


# ---------------------------------------------------------------- running
GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n"
ATTN = "flash_fwd_splitkv_kernel"


def _decode_ctx():
    # GEMM: 1 GB weights, 8e9 FLOP (AI 8), 1 ms -> 1 TB/s; bytes/bw = 1e9/3.35e12 = 0.2985 ms
    # attention: 0.5 GB, 1e9 FLOP (AI 2), 0.4 ms -> 1.25 TB/s; bytes/bw = 0.1493 ms
    return context(
        [
            launch(GEMM, duration_s=1e-3, flops=8e9, dram_bytes=1e9),
            launch(ATTN, duration_s=0.4e-3, flops=1e9, dram_bytes=0.5e9),
        ]
    )


def test_run_rules_sorts_by_impact_and_respects_selection():
    found = engine.run_rules(_decode_ctx())
    impacts = [f.impact_s or 0.0 for f in found]
    assert impacts == sorted(impacts, reverse=True)
    assert {(f.code, f.subject) for f in found} >= {("RL101", label(GEMM)), ("RL102", label(ATTN)), ("RL103", label(GEMM)), ("RL103", label(ATTN))}
    assert found[0].subject == label(GEMM)  # 1 ms - 0.2985 ms > 0.4 ms - 0.149 ms
    only = engine.run_rules(_decode_ctx(), select=["RL1"], ignore=["RL103"])
    got = {f.code for f in only}
    assert {"RL101", "RL102"} <= got
    assert all(c.startswith("RL1") and c != "RL103" for c in got)


def test_run_rules_config_thresholds_and_severity_override():
    ctx = _decode_ctx()
    # GEMM reaches 1e9/1e-3 / 3.35e12 = 29.9% of the bandwidth roof, attention 37.3%
    cfg = {"select": ["RL103"], "rules": {"RL103": {"min_bandwidth_fraction": 0.33, "severity": "critical"}}}
    found = engine.run_rules(ctx, config=cfg)
    assert [(f.subject, f.severity) for f in found] == [(label(GEMM), "critical")]
    flag = engine.run_rules(ctx, select=["RL103"], thresholds=["RL103.min_bandwidth_fraction=0.2"])
    assert flag == []
    with pytest.raises(UsageError):
        engine.run_rules(ctx, thresholds=["RL103.nope=1"])


def test_run_rules_without_kernels_is_quiet():
    from ridgeline.rules.base import Context

    assert [f for f in engine.run_rules(Context()) if f.code.startswith(("RL1", "RL9"))] == []


def test_a_raising_rule_propagates(monkeypatch):
    cls = engine.get_rule("RL101")

    def boom(self, ctx):
        raise ZeroDivisionError("bug")

    monkeypatch.setattr(cls, "check", boom)
    with pytest.raises(ZeroDivisionError):
        engine.run_rules(_decode_ctx(), select=["RL101"])


def test_sort_order_ties_by_severity_then_code():
    def f(code, sev, imp):
        return Finding(code=code, name="x", severity=sev, subject="s", message="m", remedy="r", impact_s=imp)

    got = engine.sort_findings([f("RL901", "info", None), f("RL102", "warning", 0.5), f("RL103", "critical", 0.5), f("RL101", "warning", 2.0)])
    assert [x.code for x in got] == ["RL101", "RL103", "RL102", "RL901"]


def test_severity_at_least():
    f = Finding(code="RL101", name="x", severity="warning", subject="s", message="m", remedy="r")
    assert engine.severity_at_least([f], "info")
    assert engine.severity_at_least([f], "warning")
    assert not engine.severity_at_least([f], "critical")
    assert not engine.severity_at_least([], "info")
    assert engine.severity_at_least([dataclasses.replace(f, severity="critical")], "critical")
    with pytest.raises(UsageError):
        engine.severity_at_least([f], "error")


# ---------------------------------------------------------------- docs
def test_docs_rules_md_is_current():
    doc = ROOT / "docs" / "rules.md"
    current = doc.read_text(encoding="utf-8") if doc.exists() else ""
    assert current == engine.rules_markdown(), "docs/rules.md is stale: run python scripts/gen_rules_doc.py"


def test_markdown_and_text_docs_name_every_rule_and_threshold():
    md = engine.rules_markdown()
    for r in engine.all_rules():
        assert f"## {r.code} {r.name}" in md
        text = engine.rule_doc(r)
        assert text.startswith(f"{r.code} {r.name}")
        for section in DOC_SECTIONS:
            assert section in text
        for key in r.thresholds:
            assert f"`{key}`" in md and f"{key} = " in text


def test_rule_doc_shows_configured_value():
    text = engine.rule_doc(engine.get_rule("RL103"), overrides={"min_bandwidth_fraction": 0.5})
    assert "min_bandwidth_fraction = 0.5 (configured; default 0.6)" in text


# ---------------------------------------------------------------- scaffold
def test_new_rule_scaffold_writes_a_valid_module_and_failing_test_stubs(tmp_path):
    import importlib.util
    import runpy

    (tmp_path / "ridgeline" / "rules").mkdir(parents=True)
    (tmp_path / "tests").mkdir()
    script = runpy.run_path(str(ROOT / "scripts" / "new_rule.py"))
    assert script["main"](["RL198", "example-condition", "--severity", "info", "--root", str(tmp_path)]) == 0
    module = tmp_path / "ridgeline" / "rules" / "kernel" / "rl198_example_condition.py"
    assert (module.parent / "__init__.py").exists()  # the family's package, made with its first rule
    spec = importlib.util.spec_from_file_location("rl198_example_condition", module)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    cls = mod.ExampleCondition
    engine.validate_rule(cls, module_name="rl198_example_condition")
    assert (cls.code, cls.name, cls.severity, cls.family) == ("RL198", "example-condition", "info", "kernel")
    assert cls().check(_decode_ctx()) == []  # the stub predicate never fires
    tests = (tmp_path / "tests" / "rules" / "kernel" / "test_rl198.py").read_text()
    compile(tests, "test_rl198.py", "exec")
    assert "def test_rl198_example_condition_fires" in tests and "def test_rl198_example_condition_quiet" in tests
    with pytest.raises(SystemExit):  # a code is never reused
        script["main"](["RL198", "other-condition", "--root", str(tmp_path)])
    with pytest.raises(SystemExit):
        script["main"](["RL197", "Not_Kebab", "--root", str(tmp_path)])


def test_no_published_rule_keeps_scaffold_todos():
    for r in engine.all_rules():
        doc = engine.rule_doc_sections(r)
        assert not any("TODO" in text for text in doc.values()), f"{r.code} still has TODO in its docstring"


def test_kernel_groups_are_computed_once_per_context_and_filters_still_apply():
    import polars as pl

    from ridgeline.rules import kernels as K

    ctx = _decode_ctx()
    a = K.kernel_groups(ctx)
    assert K.kernel_groups(ctx) is a  # cached
    gemm = K.kernel_groups(ctx, rows=pl.col("family") == "gemm")
    assert gemm["subject"].to_list() == [GEMM]
    # a filter on a launch column regroups instead of filtering groups
    long = K.kernel_groups(ctx, rows=pl.col("duration_s") > 0.5e-3)
    assert long["subject"].to_list() == [GEMM]
    assert long["launches"].to_list() == [1]
    # a new table invalidates the memo
    ctx.kernels = ctx.kernels.head(1)
    assert K.kernel_groups(ctx)["subject"].to_list() == [GEMM]


# ---------------------------------------------------------------- aliases
def test_aliases_resolve_in_lookup_selection_and_config(monkeypatch):
    renamed = _dummy(code="RL199", name="renamed-condition", aliases=("RL198",))
    monkeypatch.setattr(engine, "_registry", lambda: (renamed,))
    assert engine.get_rule("RL198") is renamed
    assert codes(engine.select_rules(["RL198"])) == ["RL199"]
    with pytest.raises(UsageError, match="unknown threshold"):
        engine.rule_overrides({"rules": {"RL198": {"nope": 1}}})
    assert engine.rule_overrides({"rules": {"RL198": {"severity": "info"}}}) == {"RL199": {"severity": "info"}}


# ---------------------------------------------------------------- on the classifier's output
def test_rules_run_on_classifier_output():
    """KERNEL rows -> classify() -> run_rules(): the contract columns the rules read exist and agree."""
    import polars as pl

    from ridgeline.analyzer.kernels.roofline import classify
    from ridgeline.analyzer.schema import KERNEL_COLUMNS, polars_schema

    schema = polars_schema(KERNEL_COLUMNS)
    # 4 launches of a decode GEMM: 1 GB of bf16 weights, batch 8 -> 8e9 tensor FLOP, 0.5 ms each
    rows = [
        {
            "id": str(i), "kernel_name": GEMM, "short_name": GEMM, "device_name": "NVIDIA H100 80GB HBM3",
            "duration_s": 0.5e-3, "flops_tensor_fp16": 8e9, "flops_tensor": 8e9, "flops_fp32": 0.0,
            "flops_tensor_source": "sm__ops_path_tensor_src_bf16_dst_fp32", "dram_bytes": 1e9,
            "dram_bytes_source": "dram__bytes.sum",
        }
        for i in range(4)
    ]
    # an LLM's RMSNorm: the decode words (tokens, batch) are for LLM work (ridgeline.analyzer.kernels.workload)
    rows.append({"id": "norm", "kernel_name": "vllm::rms_norm_kernel", "short_name": "rms_norm_kernel",
                 "device_name": "NVIDIA H100 80GB HBM3", "duration_s": 1e-12, "flops_fp32": 1e3, "dram_bytes": 1e3})
    kernels = pl.DataFrame([{c: r.get(c) for c in schema} for r in rows], schema=schema)
    roofline, roofs = classify(kernels)
    ctx = Context(kernels=roofline, total_gpu_time_s=2e-3, extra={"roofs": roofs})
    found = engine.run_rules(ctx, select=["RL101"])
    (f,) = found
    assert "arithmetic intensity 8 FLOP/B vs ridge 295 FLOP/B on H100 SXM (bf16/fp16)" in f.message
    # what raising the batch buys (catalogue roofs): the 8 tokens' share of the time these launches
    # take at the ridge batch ceil(8 x 295.2 / 8) = 296, each at its fraction of the roof
    n = 296
    t_mem = 1e9 / 3.35e12
    at_n = 4 * 0.5e-3 * max(n * 1e9 / 989e12, t_mem) / t_mem
    assert f.impact_s == pytest.approx(4 * 0.5e-3 - at_n * 8 / n)
    assert f.impact_share == pytest.approx(f.impact_s / 2e-3)
    assert {e.metric: e.source for e in f.evidence}["dram_bytes"] == "measured: dram__bytes.sum"


def test_unknown_top_level_config_keys_are_usage_errors():
    with pytest.raises(UsageError, match=r"unknown key 'RL103'.*\[tool.ridgeline.rules.RL103\]"):
        engine.run_rules(_decode_ctx(), config={"RL103": {"min_bandwidth_fraction": 0.5}})
    with pytest.raises(UsageError, match="unknown key 'selct'"):
        engine.run_rules(_decode_ctx(), config={"selct": ["RL1"]})


def test_one_saving_is_counted_once_per_subject_and_never_beyond_the_gpu_time():
    from ridgeline.rules.base import Finding
    from ridgeline.rules.engine import share_impacts

    def f(code, subject, impact, kind="kernel"):
        return Finding(code=code, name="n", severity="warning", subject=subject, message="m", remedy="r",
                       impact_s=impact, impact_share=impact / 10.0, subject_kind=kind)

    out = share_impacts([f("RL105", "gemm", 4.0), f("RL108", "gemm", 4.0), f("RL103", "copy", 1.0),
                         f("RL112", "profile", 9.0, "profile")], total_s=10.0)
    by = {(x.code, x.subject): x for x in out}
    # RL105 and RL108 claimed the same 4 s of the same kernel: counted once, on RL105 (tie: code order)
    assert by[("RL105", "gemm")].related == ("RL108",)
    assert by[("RL108", "gemm")].impact_s is None and by[("RL108", "gemm")].related == ("RL105",)
    # 9 + 4 + 1 > 10 s of profiled time: largest first, the later claims are capped to what is left
    assert by[("RL112", "profile")].impact_s == 9.0
    assert by[("RL105", "gemm")].impact_s == pytest.approx(1.0)
    assert by[("RL103", "copy")].impact_s == 0.0
    assert sum(x.impact_s or 0.0 for x in out) == pytest.approx(10.0)
    assert any(e.metric == "impact_capped_from_s" for e in by[("RL105", "gemm")].evidence)


def test_h200_decode_claims_no_more_than_its_gpu_time():
    from ridge_inputs import SAMPLES

    path = SAMPLES / "ncu" / "moeresearch-h200-sglang-qwen3-30b-R_short_decode-RAWPAGE-2232cols.csv"
    if not path.exists():
        pytest.skip("shared sample absent")
    from ridgeline.pipeline import analyze_paths

    res = analyze_paths([path])
    claimed = sum(x.impact_s or 0.0 for x in res.findings if x.subject_kind in ("kernel", "profile"))
    assert claimed <= res.total_gpu_time_s * (1 + 1e-9)
    seen = {}
    for x in res.findings:
        if x.impact_s is not None:
            assert (x.subject_kind, x.subject) not in seen, "one saving per subject"
            seen[(x.subject_kind, x.subject)] = x.code


def test_findings_are_ranked_within_their_own_source():
    """A telemetry finding with a larger share never ranks above a profile finding: microseconds
    of a profile and GPU-hours of a fleet are not one scale; each source is ranked on its own."""
    from ridgeline.rules.base import Finding

    fs = [
        Finding("RL201", "busy-gpu-idle-tensor-cores", "warning", "host:a gpu:0", "m", "r", impact_s=3600.0,
                impact_share=0.9, subject_kind="gpu"),
        Finding("RL101", "decode-gemm-memory-bound", "warning", "gemm", "m", "r", impact_s=1e-3, impact_share=0.4),
        Finding("RL102", "attention-memory-bound", "warning", "attn", "m", "r", impact_s=2e-3, impact_share=0.5),
        Finding("RL203", "idle-while-allocated", "warning", "host:b gpu:1", "m", "r", impact_s=60.0,
                impact_share=0.95, subject_kind="gpu"),
    ]
    assert [f.code for f in engine.sort_findings(fs)] == ["RL102", "RL101", "RL203", "RL201"]


# ---------------------------------------------------------------- severities: catalogue == runs
def test_a_finding_may_carry_only_the_severities_its_rule_declares():
    """The engine refuses a finding whose severity the rule's catalogue entry does not list, so
    ``ridgeline rules`` and every run agree by construction (RL901 was listed as a warning and
    emitted as critical)."""
    from ridgeline.rules.catalogue import severity_range

    quiet = _dummy(severity="warning")
    assert severity_range(quiet) == ("warning",)
    f = Finding(code="RL199", name="a-condition", severity="critical", subject="profile", message="m", remedy="r")
    with pytest.raises(engine.RuleDefinitionError, match="declares warning"):
        engine._check_finding(quiet, f)
    ranged = _dummy(severity="warning", severities=("critical",))
    assert severity_range(ranged) == ("warning", "critical")
    engine._check_finding(ranged, f)
    with pytest.raises(engine.RuleDefinitionError, match="severities"):
        engine.validate_rule(_dummy(severities=("error",)))


def test_every_rules_catalogue_entry_shows_the_severities_it_may_emit():
    from ridgeline.commands.rules import rule_list_lines
    from ridgeline.rules.catalogue import severity_label, severity_range

    rows = {r["code"]: r for r in engine.catalogue_rows()}
    lines = {line.split()[0]: line for line in rule_list_lines(list(rows.values()))}
    md = engine.rules_markdown()
    for cls in engine.all_rules():
        assert rows[cls.code]["severities"] == list(severity_range(cls)), cls.code
        assert cls.severity in rows[cls.code]["severities"]
        assert lines[cls.code].split()[2] == severity_label(cls), lines[cls.code]
        assert f"| `{cls.name}` | {severity_label(cls)} |" in md
        assert f"[{severity_label(cls)}, {cls.family}]" in engine.rule_doc(cls)
    # the rules that grade their findings say so
    assert rows["RL208"]["severities"] == ["info", "warning", "critical"]
    assert rows["RL901"]["severities"] == ["warning", "critical"] and rows["RL901"]["severity"] == "warning"
