"""Findings for CI systems: SARIF 2.1.0 (code-scanning uploads) and GitHub Actions workflow commands.

* :func:`render_sarif`: one ``run`` whose ``tool.driver.rules`` is the whole rule catalogue
  (name, short and full description, help text, ``helpUri`` to the rule's anchor in
  ``docs/rules.md``, default level) and one ``result`` per finding: ``ruleId``, ``level``
  (critical -> error, warning -> warning, info -> note), ``message.text`` (measured value and
  the remedy), a location naming the input file (``artifactLocation``) and the kernel, GPU or
  host the finding is about (``logicalLocations``).
* :func:`render_github`: ``::error file=...,title=...::message`` / ``::warning`` / ``::notice``,
  one line per finding, which GitHub Actions turns into annotations.

Renderers only: they take a finished AnalysisResult and the rule catalogue rows.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
RULES_DOC = "docs/rules.md"
LEVELS = {"critical": "error", "warning": "warning", "info": "note"}
GITHUB_COMMANDS = {"critical": "error", "warning": "warning", "info": "notice"}


def rule_anchor(code: str, name: str) -> str:
    """GitHub's anchor for the heading ``## RL101 decode-gemm-memory-bound``."""
    text = f"{code} {name}".lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _rule_entry(row: dict[str, Any], doc: str | None) -> dict[str, Any]:
    anchor = rule_anchor(row["code"], row["name"])
    thresholds = ", ".join(f"{k} = {v['default']}" for k, v in row.get("thresholds", {}).items())
    help_text = (doc or row["summary"]).strip()
    entry: dict[str, Any] = {
        "id": row["code"],
        "name": row["name"],
        "shortDescription": {"text": row["summary"]},
        "fullDescription": {"text": row["summary"] + (f" (thresholds: {thresholds})" if thresholds else "")},
        "help": {"text": help_text, "markdown": help_text},
        "helpUri": f"{RULES_DOC}#{anchor}",
        "defaultConfiguration": {"level": LEVELS.get(row["severity"], "warning")},
        "properties": {"family": row.get("family"), "tags": [row.get("family") or "ridgeline"]},
    }
    if row.get("aliases"):
        entry["deprecatedIds"] = list(row["aliases"])
    return entry


def _input_for(finding, result) -> str | None:
    """The input file a finding is about: the file holding the kernel's launches, else the
    first input of the same side (ncu for kernels and profiles, telemetry otherwise)."""
    inputs = list(getattr(result, "inputs", None) or [])
    kernels = getattr(result, "kernels", None)
    if finding.subject_kind == "kernel" and kernels is not None and kernels.height and "source" in kernels.columns:
        import polars as pl

        for col in ("kernel_name", "short_name", "kernel_label"):
            if col in kernels.columns:
                hit = kernels.filter(pl.col(col) == finding.subject).get_column("source").drop_nulls()
                if hit.len():
                    return str(hit[0])
    want_ncu = finding.subject_kind in ("kernel", "profile")
    for info in inputs:
        if info.kind.startswith("ncu") == want_ncu:
            return info.path
    return inputs[0].path if inputs else None


def _message(finding) -> str:
    text = finding.message.strip()
    if finding.remedy:
        text += f" -> {finding.remedy.strip()}"
    return text


def to_sarif(result, rule_rows: Iterable[dict[str, Any]], *, docs: dict[str, str] | None = None,
             version: str = "") -> dict[str, Any]:
    """The SARIF 2.1.0 log as a dict (see the module docstring)."""
    rows = list(rule_rows)
    docs = docs or {}
    rules = [_rule_entry(r, docs.get(r["code"])) for r in rows]
    index = {r["code"]: i for i, r in enumerate(rows)}
    alias = {a: r["code"] for r in rows for a in r.get("aliases", [])}
    results = []
    artifacts: dict[str, int] = {}
    for f in result.findings:
        code = alias.get(f.code, f.code)
        res: dict[str, Any] = {
            "ruleId": code,
            "level": LEVELS.get(f.severity, "warning"),
            "message": {"text": _message(f)},
        }
        if code in index:
            res["ruleIndex"] = index[code]
        location: dict[str, Any] = {}
        path = _input_for(f, result)
        if path:
            artifacts.setdefault(path, len(artifacts))
            location["physicalLocation"] = {"artifactLocation": {"uri": _uri(path), "index": artifacts[path]}}
        location["logicalLocations"] = [{
            "name": f.subject,
            "fullyQualifiedName": f.subject,
            "kind": "function" if f.subject_kind == "kernel" else "resource",
        }]
        res["locations"] = [location]
        props = {"subject_kind": f.subject_kind, "confidence": f.confidence}
        if f.impact_s is not None:
            props["impact_s"] = f.impact_s
        if f.impact_share is not None:
            props["impact_share"] = f.impact_share
        res["properties"] = props
        res["partialFingerprints"] = {"ridgeline/v1": f"{code}:{f.subject}"}
        results.append(res)
    run: dict[str, Any] = {
        "tool": {"driver": {
            "name": "ridgeline",
            "informationUri": RULES_DOC,
            "rules": rules,
        }},
        "results": results,
        "artifacts": [{"location": {"uri": _uri(p)}} for p in artifacts],
        "columnKind": "unicodeCodePoints",
    }
    if version:
        run["tool"]["driver"]["version"] = version
        run["tool"]["driver"]["semanticVersion"] = version
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def _uri(path: str) -> str:
    """A relative or absolute file path as a URI reference (forward slashes, spaces escaped). A
    file name that is not UTF-8 (held as lone surrogates) is percent-encoded as its real bytes, so
    the URI names the file on disk (``\\udce9`` -> ``%E9``)."""
    import os
    from urllib.parse import quote

    text = str(path).replace("\\", "/")
    try:
        raw = os.fsencode(text)
    except UnicodeEncodeError:  # a surrogate no file system gave: its escape's text
        raw = text.encode("utf-8", "backslashreplace")
    return quote(raw, safe="/:._-~")


def render_sarif(result, rule_rows, *, docs=None, version: str = "") -> str:
    return json.dumps(to_sarif(result, rule_rows, docs=docs, version=version), indent=2, ensure_ascii=False,
                      default=str) + "\n"


def _escape_data(text: str) -> str:
    """Workflow-command message escaping (%, CR, LF; other control characters shown escaped)."""
    from ridgeline.render.safe_text import github_data

    return github_data(text)


def _escape_property(text: str) -> str:
    """Workflow-command property escaping (also ':' and ',')."""
    from ridgeline.render.safe_text import github_property

    return github_property(text)


def render_github(result) -> str:
    """One ``::warning file=...,title=CODE name::message`` line per finding."""
    lines = []
    for f in result.findings:
        cmd = GITHUB_COMMANDS.get(f.severity, "warning")
        props = []
        path = _input_for(f, result)
        if path:
            props.append(f"file={_escape_property(path)}")
        props.append(f"title={_escape_property(f'{f.code} {f.name}: {f.subject}')}")
        lines.append(f"::{cmd} {','.join(props)}::{_escape_data(_message(f))}")
    return "\n".join(lines) + ("\n" if lines else "")
