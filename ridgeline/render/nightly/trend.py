"""A :class:`ridgeline.analyzer.nightly.trend.Trend` as text (terminal), Markdown or JSON: the verdict,
what was named (missing hosts, model changes), then per scope the subjects outside their band,
missing, new or with too few nights (those within their band are counted, not listed)."""

from __future__ import annotations

import json
import textwrap
from typing import Any

from ridgeline.analyzer.nightly.trend import FIGURE, fmt_value
from ridgeline.render.markdown import _table, md
from ridgeline.render.text import shorten

WIDTH = 80
TITLES = (("group", "Groups"), ("host", "Hosts"), ("gpu", "GPUs"), ("kernel", "Kernels"))
MARK = {"regression": "!", "better": "+", "missing": "-"}


def _items(lines: list[str], width: int) -> list[str]:
    out = []
    for r in lines:
        out += textwrap.wrap(r, width=width, initial_indent="  - ", subsequent_indent="    ",
                             break_long_words=True, break_on_hyphens=False)
    return out


def _span(tr) -> str:
    times = [b["time"][:10] for b in tr.baselines if b.get("time")]
    dates = f", {times[0]} .. {times[-1]}" if times else ""
    how = "ordered by document time" if tr.order == "document time" else "in the order given"
    left = f"; {len(tr.left_out)} more left out, not valid" if tr.left_out else ""
    return f"{len(tr.baselines)} nights ({how}{dates}{left})"


def _band(row: dict) -> str:
    if row["low"] is None:
        return "-"
    return (f"{fmt_value(row['scope'], max(row['low'], 0.0), row['figure'])}-"
            f"{fmt_value(row['scope'], row['high'], row['figure'])}")


def _rule(tr) -> str:
    th = tr.thresholds
    return (f"Band: median of the nights +/- max({th['trend_k']:g} x 1.4826 x MAD, the pairwise threshold); "
            f"a subject needs {th['trend_min_baselines']} nights.")


def _listed(tr, scope: str) -> tuple[list[dict], int, int]:
    rows = [r for r in tr.rows if r["scope"] == scope]
    shown = [r for r in rows if r["status"] != "within"]
    return shown, len(rows) - len(shown), len(rows)


def format_trend(tr, *, top: int = 15, width: int = WIDTH) -> str:
    head = f"ridgeline diff ({tr.kind}, trend): {tr.tonight} against {_span(tr)}"
    out = textwrap.wrap(head, width=width, subsequent_indent="  ", break_long_words=True, break_on_hyphens=False)
    if tr.regressions:
        out += textwrap.wrap(f"REGRESSION: {len(tr.regressions)} figure(s) outside their band (waste above, work "
                             "below) or new finding(s)", width=width, subsequent_indent="  ") \
            + _items(tr.regressions, width)
    else:
        out.append("No regression: every figure within its band or on its better side, no new finding past the "
                   "threshold.")
    if tr.notices:
        out += ["Note:"] + _items(tr.notices, width)
    out += textwrap.wrap(_rule(tr), width=width, subsequent_indent="  ")
    for r in tr.rows:
        if r["scope"] in ("fleet", "total"):
            label = f"Fleet {r['figure']}" if r["scope"] == "fleet" else "Total GPU time"
            line = (f"{label}: {fmt_value(r['scope'], r['tonight'], r['figure'])} tonight; median "
                    f"{fmt_value(r['scope'], r['median'], r['figure'])}, band {_band(r)} ({r['nights']} nights): "
                    f"{r['status']}")
            out += [""] + textwrap.wrap(line, width=width, subsequent_indent="  ")
    for scope, title in TITLES:
        shown, within, total = _listed(tr, scope)
        if not total:
            continue
        if not shown:
            out += ["", f"{title}: all {total} within their band"]
            continue
        rows = shown[:top]
        note = (f"top {len(rows)} of {len(shown)}" if len(rows) < len(shown) else f"{len(rows)}") + " listed" \
            + (f", {within} within their band" if within else "")
        out += [""] + textwrap.wrap(f"{title} ({note}; ! regression, + better, - missing)", width=width,
                                    subsequent_indent="  ")
        out.append(f"  {'':<30}{'nights':>6}{'median':>8}{'band':>14}{'tonight':>8} status")
        for r in rows:
            subject = r["subject"] if r["figure"] == FIGURE[scope] else f"{r['subject']}: {r['figure']}"
            if len(subject) > 30:  # its own line, never cut (two hosts must not look alike)
                out += textwrap.wrap(f"{MARK.get(r['status'], ' ')} {subject}", width=width, subsequent_indent="    ",
                                     break_long_words=True, break_on_hyphens=False)
                subject = ""
            out.append(f"{MARK.get(r['status'], ' ') if subject else ' '} {subject:<30}{r['nights']:>6}"
                       f"{fmt_value(scope, r['median'], r['figure']):>8}{_band(r):>14}"
                       f"{fmt_value(scope, r['tonight'], r['figure']):>8} "
                       f"{shorten(r['status'], width - 69)}")
    if tr.findings:
        out += ["", f"Findings new tonight (in none of the nights): {len(tr.findings)}"]
        for f in tr.findings[:top]:
            out.append(shorten(f"{'!' if f['regression'] else ' '} {f['code']} {f['severity']:<8} {f['subject']}", width))
    return "\n".join(out) + "\n"


def render_trend_markdown(tr, *, top: int = 25) -> str:
    out = [f"## ridgeline diff ({md(tr.kind)}, trend): `{md(tr.tonight)}` against {md(_span(tr))}", ""]
    if tr.regressions:
        out += [f"**Regression**: {len(tr.regressions)} figure(s) outside their band (waste above, work below) or "
                "new finding(s)", ""]
        out += [f"- {md(r)}" for r in tr.regressions] + [""]
    else:
        out += ["**No regression**: every figure within its band or on its better side, no new finding past the "
                "threshold.", ""]
    if tr.notices:
        out += ["Note:", ""] + [f"- {md(r)}" for r in tr.notices] + [""]
    out += [md(_rule(tr)), ""]
    for scope, title in (("fleet", "Fleet"), ("total", "Total"), *TITLES):
        shown, within, total = _listed(tr, scope)
        if not total:
            continue
        if scope in ("fleet", "total"):
            shown = [r for r in tr.rows if r["scope"] == scope]
        elif not shown:
            out += [f"{title}: all {total} within their band.", ""]
            continue
        rows = shown[:top]
        extra = f" ({within} within their band not shown)" if within and scope not in ("fleet", "total") else ""
        out += [f"### {title}{extra}", ""]
        out += _table(["", "subject", "figure", "nights", "median", "band", "tonight", "status"],
                      [[MARK.get(r["status"], ""), md(r["subject"]), md(r["figure"]), str(r["nights"]),
                        fmt_value(scope, r["median"], r["figure"]), md(_band(r)),
                        fmt_value(scope, r["tonight"], r["figure"]), md(r["status"])]
                       for r in rows], ["l", "l", "l", "r", "r", "r", "r", "l"]) + [""]
    if tr.findings:
        out += ["### Findings new tonight (in none of the nights)", ""]
        out += _table(["", "code", "severity", "subject", "message"],
                      [["!" if f["regression"] else "", md(f["code"]), md(f["severity"]), md(f["subject"]),
                        md(f["message"])] for f in tr.findings[:top]], ["l", "l", "l", "l", "l"]) + [""]
    return "\n".join(out) + "\n"


def render_trend_json(tr, *, indent: int | None = 2) -> str:
    from ridgeline.render.jsonout import clean

    doc: dict[str, Any] = clean(tr.to_dict())
    return json.dumps(doc, indent=indent, allow_nan=False, ensure_ascii=False) + "\n"
