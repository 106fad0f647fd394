"""The rule catalogue as text: docstring sections, the one-line summaries, ``ridgeline rules``'
listing and one rule's documentation, and the reference page ``docs/rules.md``.

Every view of a rule's severity reads :func:`severity_range`: the severities the rule may emit
(``Rule.severity`` and ``Rule.severities``), which the engine enforces on every finding
(``engine._check_finding``), so the catalogue and the runs agree by construction.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Iterable, Mapping
from typing import Any

from ridgeline.rules.base import DOC_SECTIONS, SEVERITIES, Rule


def severity_range(cls: type[Rule]) -> tuple[str, ...]:
    """The severities ``cls`` may emit, mildest first: its default and its declared ``severities``."""
    declared = {cls.severity, *getattr(cls, "severities", ())}
    return tuple(s for s in SEVERITIES if s in declared)


def severity_label(cls: type[Rule]) -> str:
    """``warning`` or ``warning..critical``: the default, or the range the rule's findings span."""
    levels = severity_range(cls)
    return levels[0] if len(levels) == 1 else f"{levels[0]}..{levels[-1]}"


def _doc_text(obj: Any) -> str:
    return inspect.cleandoc(obj.__doc__) if obj.__doc__ else ""


def _parse_sections(text: str) -> dict[str, str]:
    heads = {s.lower(): s for s in DOC_SECTIONS}
    out: dict[str, list[str]] = {"summary": []}
    current = "summary"
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        key = line.strip().lstrip("#").strip().rstrip(":").strip().lower()
        if key in heads:
            current = heads[key]
            out[current] = []
            if i + 1 < len(lines) and re.match(r"^\s*[-=~]{3,}\s*$", lines[i + 1]):
                i += 1
        else:
            out[current].append(line)
        i += 1
    return {k: inspect.cleandoc("\n".join(v)) if any(x.strip() for x in v) else "" for k, v in out.items()}


def rule_doc_sections(cls: type[Rule]) -> dict[str, str]:
    """``{"summary": ..., "What it finds": ..., ...}`` from the class docstring (else the module's)."""
    sections = _parse_sections(_doc_text(cls))
    if not all(sections.get(s) for s in DOC_SECTIONS):
        module = sys.modules.get(cls.__module__)
        if module is not None and module.__doc__:
            mod_sections = _parse_sections(_doc_text(module))
            if all(mod_sections.get(s) for s in DOC_SECTIONS):
                if not sections.get("summary"):
                    return mod_sections
                return {**mod_sections, "summary": sections["summary"]}
    return sections


def summary_line(cls: type[Rule]) -> str:
    """The docstring's first line (the one-line description in listings)."""
    summary = rule_doc_sections(cls).get("summary", "")
    return summary.splitlines()[0].strip() if summary else ""


def _fmt_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if value is None:
        return "unset"
    return repr(value)


def catalogue_rows(rules: Iterable[type[Rule]]) -> list[dict[str, Any]]:
    """One dict per rule: code, name, severity (the default), severities (every one it may emit), family,
    summary, thresholds, aliases."""
    return [
        {
            "code": cls.code,
            "name": cls.name,
            "severity": cls.severity,
            "severities": list(severity_range(cls)),
            "family": cls.family,
            "summary": summary_line(cls),
            "aliases": list(cls.aliases),
            "thresholds": {k: {"default": v, "description": d} for k, (v, d) in cls.thresholds.items()},
        }
        for cls in rules
    ]


def rule_doc(cls: type[Rule], *, overrides: Mapping[str, Any] | None = None) -> str:
    """Plain-text documentation of one rule (what ``ridgeline rules RL101`` prints)."""
    doc = rule_doc_sections(cls)
    out = [f"{cls.code} {cls.name}  [{severity_label(cls)}, {cls.family}]"]
    if cls.aliases:
        out.append(f"aliases: {', '.join(cls.aliases)}")
    out += ["", doc["summary"], ""]
    for section in DOC_SECTIONS:
        out.append(section)
        out += ["    " + line if line else "" for line in doc[section].splitlines()]
        out.append("")
    out.append("Thresholds")
    if not cls.thresholds:
        out.append("    none")
    for key, (default, desc) in cls.thresholds.items():
        shown = _fmt_value(default)
        if overrides and key in overrides:
            shown = f"{_fmt_value(overrides[key])} (configured; default {_fmt_value(default)})"
        out.append(f"    {key} = {shown}")
        out.append(f"        {desc}")
    out += [
        "",
        "Override in ridgeline.toml or a --config file:",
        f"    [tool.ridgeline.rules.{cls.code}]",
    ]
    if cls.thresholds:
        key, (default, _d) = next(iter(cls.thresholds.items()))
        out.append(f"    {key} = {_fmt_value(default)}")
    out.append(f'    severity = "{cls.severity}"')
    if cls.thresholds:
        out.append(f"or on the command line: --threshold {cls.code}.{key}={_fmt_value(default)}")
    return "\n".join(out).rstrip() + "\n"


def rules_markdown(rules: Iterable[type[Rule]]) -> str:
    """The rules reference page (docs/rules.md), generated from the rule objects."""
    rules = tuple(rules)
    out = [
        "# Rule reference",
        "",
        "<!-- Generated by `python scripts/gen_rules_doc.py` from the rule classes; do not edit. -->",
        "",
        "Codes: `RL` + family digit + two digits: 1xx kernel/roofline, 2xx telemetry, 3xx run-to-run,",
        "9xx input and data quality. A published code is never reused; a renamed rule keeps its old code",
        "as an alias. Select rules with `--select`/`--ignore` (codes or prefixes such as `RL1`), override",
        "thresholds with `--threshold RL103.min_bandwidth_fraction=0.5` or in `ridgeline.toml`:",
        "",
        "```toml",
        "[tool.ridgeline]",
        'select = ["RL1", "RL9"]',
        'ignore = ["RL107"]',
        "",
        "[tool.ridgeline.rules.RL103]",
        "min_bandwidth_fraction = 0.5",
        'severity = "critical"',
        "```",
        "",
        "Every finding carries the measured value against the threshold, its evidence (each figure with",
        "its source: `measured: <counters>`, `derived`, `catalogue` or `ncu`), a remedy, and an impact:",
        "the GPU time saved if the subject reached its roof, an upper bound that is never summed across",
        "findings. Findings are sorted by impact.",
        "",
        "| code | name | severity | summary |",
        "|---|---|---|---|",
    ]
    for cls in rules:
        anchor = f"{cls.code.lower()}-{cls.name}"
        out.append(f"| [{cls.code}](#{anchor}) | `{cls.name}` | {severity_label(cls)} | {summary_line(cls)} |")
    for cls in rules:
        doc = rule_doc_sections(cls)
        out += ["", f"## {cls.code} {cls.name}", "", doc["summary"], ""]
        meta = f"Severity: **{cls.severity}**. Family: {cls.family}."
        if len(severity_range(cls)) > 1:
            meta = (f"Severity: **{cls.severity}** by default; findings range over {', '.join(severity_range(cls))}. "
                    f"Family: {cls.family}.")
        if cls.aliases:
            meta += f" Aliases: {', '.join(cls.aliases)}."
        out += [meta, ""]
        for section in DOC_SECTIONS:
            out += [f"### {section}", "", doc[section], ""]
        out += ["### Thresholds", ""]
        if cls.thresholds:
            out += ["| threshold | default | meaning |", "|---|---|---|"]
            for key, (default, desc) in cls.thresholds.items():
                out.append(f"| `{key}` | `{_fmt_value(default)}` | {desc} |")
        else:
            out.append("None.")
    return "\n".join(out).rstrip() + "\n"
