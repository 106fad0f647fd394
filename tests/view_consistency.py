"""Every number a view prints equals the JSON document's, to the view's rounding (issue 20, item 10).

Usage (the render tests and the real-data sweep)::

    from view_consistency import assert_views_match_json, render_views_for
    doc, texts = render_views_for([path], tmp_path)          # or render_views(result)
    assert_views_match_json(doc, texts)

``texts`` maps a view name to its text: ``terminal`` (``ridgeline analyze``), ``markdown`` and
``html`` (``ridgeline report``), ``sarif`` and ``github`` (``--format sarif|github``), ``expect``
(a ``check --write`` file). Views left out are not checked.

What is compared, per view (each printed figure is parsed with the precision it was printed to,
and must lie within half a unit of its last printed digit of the JSON value):

* ridges: every compute roof's ridge point (terminal "Roofs", Markdown/HTML "Roofs used") against
  ``roofs[].ridge_flop_per_byte`` of the roof with the printed value;
* kernel tables: GPU time, share, intensity, launches, % of roof and gap to roof (HTML) against
  ``summary`` (terminal rows by position, Markdown by label, HTML by full kernel name, whose
  ``data-v`` raw values must equal the JSON's exactly);
* where the time goes: the shares per bound against ``time_by_bound``;
* findings: impact and impact share (Markdown/HTML per finding, the terminal's "up to" figures as a
  finding's or one rule's total), SARIF's ``impact_s``/``impact_share`` and message, the GitHub
  annotation messages;
* ``check --write``: each ``[[expect]]``'s roof_fraction, intensity and time_share against the
  kernel's ``summary`` row;
* the profiled GPU time (terminal header, Markdown, HTML card) against ``total_gpu_time_s``;
* the labels and counts of :mod:`view_labels`: the GPU each view names, findings / launches /
  telemetry counts, kernel rows' bound and precision, the telemetry columns, the Markdown budget.
"""

from __future__ import annotations

import html as _html
import json
import math
import re
from typing import Any

_DUR = {"ns": 1e-9, "us": 1e-6, "\u00b5s": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}
_SI = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
_NUM = r"[-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?"


class Printed:
    """A number as printed: its value and the half-unit of its last digit (the rounding)."""

    def __init__(self, text: str, scale: float = 1.0):
        t = text.replace(",", "")
        self.text = text
        self.value = float(t) * scale
        mant = t.split("e")[0]
        decimals = len(mant.split(".")[1]) if "." in mant else 0
        exp = int(t.split("e")[1]) if "e" in t else 0
        # g3 formatting may print 3 significant figures without decimals (e.g. 295): half a unit
        self.tol = 0.5 * 10 ** (exp - decimals) * abs(scale) * (1 + 1e-9) + 1e-300

    @classmethod
    def significant(cls, value: float, digits: int) -> "Printed":
        """A number written with ``digits`` significant figures (``%.4g``; ``check --write``)."""
        p = cls(repr(float(value)))
        if value:
            p.tol = 0.5 * 10 ** (math.floor(math.log10(abs(value))) - digits + 1) * (1 + 1e-9)
        return p

    def matches(self, value: float | None) -> bool:
        if value is None or (isinstance(value, float) and not math.isfinite(value)):
            return False
        return abs(self.value - value) <= self.tol + 1e-9 * abs(value)

    def __repr__(self) -> str:
        return f"{self.text!r}"


def duration(text: str) -> Printed | None:
    m = re.fullmatch(rf"\s*({_NUM}) (ns|us|\u00b5s|ms|s|min|h)\s*", text)
    return Printed(m.group(1), _DUR[m.group(2)]) if m else None


def percent(text: str) -> Printed | None:
    m = re.fullmatch(rf"\s*({_NUM})%\s*", text)
    return Printed(m.group(1), 0.01) if m else None


def number(text: str) -> Printed | None:
    m = re.fullmatch(rf"\s*({_NUM})\s*", text)
    return Printed(m.group(1)) if m else None


def si(text: str, unit: str) -> Printed | None:
    m = re.fullmatch(rf"\s*({_NUM}) ([kMGTPE]?){re.escape(unit)}\s*", text)
    return Printed(m.group(1), _SI[m.group(2)]) if m else None


def count(text: str) -> Printed | None:
    m = re.fullmatch(rf"\s*({_NUM})([kM]?)\s*", text)
    return Printed(m.group(1), _SI[m.group(2)]) if m else None


class Mismatches(list):
    """Mismatch messages, and per view and kind how many numbers were compared (``checked``)."""

    def __init__(self):
        super().__init__()
        self.checked: dict[str, int] = {}

    def check(self, view: str, what: str, printed: Printed | None, value: Any, *, blank_ok: bool = False) -> None:
        """``printed`` (None: nothing or a dash printed) must match ``value`` (None: not measured)."""
        key = f"{view}:{what.rsplit(' ', 1)[-1] if ' ' in what else what}"
        self.checked[key] = self.checked.get(key, 0) + 1
        if printed is None:
            if value is None or blank_ok or (isinstance(value, float) and not math.isfinite(value)):
                return
            self.append(f"{view}: {what}: printed nothing, JSON has {value!r}")
        elif not printed.matches(value):
            self.append(f"{view}: {what}: printed {printed!r}, JSON has {value!r}")


# ------------------------------------------------------------------------------------------
# rendering every view of one result
# ------------------------------------------------------------------------------------------
def render_views(result, *, expect_text: str | None = None) -> tuple[dict, dict[str, str]]:
    """(JSON document, {view: text}) of one AnalysisResult, as the CLI writes them."""
    from ridgeline.render.ci import render_github, render_sarif
    from ridgeline.render.html import render_html
    from ridgeline.render.jsonout import render_json
    from ridgeline.render.markdown import render_markdown
    from ridgeline.render.terminal import render_terminal
    from ridgeline.rules.engine import catalogue_rows

    doc = json.loads(render_json(result))
    texts = {
        "terminal": render_terminal(result),
        "markdown": render_markdown(result),
        "html": render_html(result),
        "sarif": render_sarif(result, catalogue_rows()),
        "github": render_github(result),
    }
    if expect_text is not None:
        texts["expect"] = expect_text
    return doc, texts


def render_views_for(paths, tmp_dir, **analyze_kw) -> tuple[dict, dict[str, str]]:
    """(JSON document, {view: text}) for input files, ``check --write`` included when the input has
    launches (written under ``tmp_dir``); ``analyze_kw`` as for ridgeline.pipeline.analyze_paths
    (e.g. ``gpu="H200"``). InputError (a refused file) propagates."""
    from pathlib import Path

    from ridgeline.pipeline import analyze_paths

    paths = [Path(p) for p in ([paths] if isinstance(paths, (str, Path)) else paths)]
    return views_of(analyze_paths(paths, **analyze_kw), paths, tmp_dir)


def views_of(result, paths, tmp_dir) -> tuple[dict, dict[str, str]]:
    """:func:`render_views_for` of a result already made from ``paths``."""
    from pathlib import Path

    paths = [Path(p) for p in paths]
    expect_text = None
    if result.kernels is not None and result.kernels.height:
        from ridgeline.testing.expectations import render as render_expect

        expect_text = render_expect(result, expect_path=Path(tmp_dir) / "views.ridgeline.toml", profiles=paths)
    return render_views(result, expect_text=expect_text)


# ------------------------------------------------------------------------------------------
# per view
# ------------------------------------------------------------------------------------------
def _roof_check(view: str, doc: dict, printed: list[tuple[Printed, Printed | None]], out: Mismatches) -> None:
    out.checked[f"{view}:ridge"] = out.checked.get(f"{view}:ridge", 0) + sum(1 for _v, r in printed if r is not None)
    compute = [r for r in doc.get("roofs") or [] if r["kind"] == "compute"]
    for value, ridge in printed:
        same = [r for r in compute if value.matches(r["value"])]
        if not same:
            out.append(f"{view}: compute roof {value!r} is not among the JSON roofs")
            continue
        if ridge is None:
            if all(r.get("ridge_flop_per_byte") is not None for r in same):
                out.append(f"{view}: roof {value!r} printed without a ridge, JSON has "
                           f"{[r.get('ridge_flop_per_byte') for r in same]}")
        elif not any(ridge.matches(r.get("ridge_flop_per_byte")) for r in same):
            out.append(f"{view}: roof {value!r} ridge printed {ridge!r}, JSON has "
                       f"{[r.get('ridge_flop_per_byte') for r in same]}")
    n_json = sum(1 for r in compute)
    if len(printed) != n_json:
        out.append(f"{view}: {len(printed)} compute roofs printed, JSON has {n_json}")


def _bound_shares(text: str, *, share_first: bool) -> dict[str, Printed]:
    """'91% memory-bound, 9% launch-bound, 0% unknown' (terminal: share first) or 'memory-bound
    91.0%, unknown 0.0%' (Markdown) -> {bound: printed share}."""
    bound, share = r"(memory|compute|latency|launch|stall|unknown)(?:-bound)?", rf"({_NUM}%)"
    if share_first:
        return {b: percent(p) for p, b in re.findall(rf"{share} {bound}", text)}
    return {b: percent(p) for b, p in re.findall(rf"{bound} {share}", text)}


def _bound_check(view: str, doc: dict, shares: dict[str, Printed], out: Mismatches) -> None:
    tbb = doc.get("time_by_bound") or {}
    for bound, printed in shares.items():
        out.check(view, f"time {bound}-bound", printed, tbb.get(bound, 0.0))
    for bound, share in tbb.items():
        if bound not in shares and share >= 0.005:
            out.append(f"{view}: {bound}-bound share {share!r} not printed")


def _terminal(doc: dict, text: str, out: Mismatches) -> None:
    view = "terminal"
    lines = text.splitlines()
    # header: "..., 132 us GPU time"
    m = re.search(r", (\S+ \S+) GPU time$", lines[0]) if lines else None
    if m and doc.get("total_gpu_time_s") is not None:
        out.check(view, "GPU time", duration(m.group(1)), doc["total_gpu_time_s"])
    # roofs
    printed = []
    in_roofs = False
    for line in lines:
        if line.startswith("Roofs"):
            in_roofs = True
            continue
        if in_roofs and not line.startswith(" "):
            break
        if in_roofs:
            r = re.search(rf"({_NUM}) ([kMGTPE]?)FLOP/s(?:\s+({_NUM}))?\s+[A-Za-z(]", line)
            if r:
                printed.append((Printed(r.group(1), _SI[r.group(2)]), Printed(r.group(3)) if r.group(3) else None))
    if in_roofs:
        _roof_check(view, doc, printed, out)
    # top kernels: rows by position in the summary
    summary = doc.get("summary") or []
    try:
        start = next(i for i, line in enumerate(lines) if line.startswith("Top kernels by GPU time")) + 2
    except StopIteration:
        start = None
    if start is not None:
        row_re = re.compile(r"^\s*(\d+) .*?(\S+)\s+(\S+ \S+|-)\s+(\S+%|-)\s+(\S+)\s+(\S+)\s+(\S+%|-)\s*$")
        for line in lines[start:]:
            m = row_re.match(line)
            if not m or not line[:3].strip().isdigit():
                break
            i = int(m.group(1)) - 1
            if i >= len(summary):
                out.append(f"{view}: kernel row {i + 1} beyond the JSON summary")
                break
            s = summary[i]
            what = f"kernel row {i + 1} ({s.get('kernel_label')})"
            out.check(view, what + " launches", count(m.group(2)), s.get("launches"))
            out.check(view, what + " time", duration(m.group(3)), s.get("total_duration_s"))
            out.check(view, what + " share", percent(m.group(4)), s.get("time_share"))
            out.check(view, what + " FLOP/B", number(m.group(5)), s.get("intensity_dram"))
            out.check(view, what + " % of roof", percent(m.group(7)), s.get("roof_fraction"))
    # where the time goes (wrapped over lines)
    joined = " ".join(line.strip() for line in lines)
    m = re.search(r"Where the time goes: (.*?)(?: Findings| Skipped|$)", joined)
    if m:
        _bound_check(view, doc, _bound_shares(m.group(1), share_first=True), out)
    _terminal_timeline(doc, lines, out)
    # findings: every "up to X (Y%)" is one finding's impact or one rule's total
    findings = doc.get("findings") or []
    totals: dict[str, list[float]] = {}
    for f in findings:
        if f.get("impact_s") is not None:
            totals.setdefault(f["code"], []).append(f["impact_s"])
    candidates = [f["impact_s"] for f in findings if f.get("impact_s") is not None] + [sum(v) for v in totals.values()]
    share_cand = [f["impact_share"] for f in findings if f.get("impact_share") is not None]
    share_tot: dict[str, float] = {}
    for f in findings:
        if f.get("impact_share") is not None:
            share_tot[f["code"]] = share_tot.get(f["code"], 0.0) + f["impact_share"]
    share_cand += list(share_tot.values())
    try:
        fstart = next(i for i, line in enumerate(lines) if line.startswith("Findings ("))
    except StopIteration:
        fstart = None
    if fstart is not None:
        for line in lines[fstart:]:
            for dur, share in re.findall(rf"up to ({_NUM} (?:ns|us|ms|s|min|h))(?:,? \(?({_NUM}%))?", line):
                p = duration(dur)
                if not any(p.matches(c) for c in candidates):
                    out.append(f"{view}: finding impact {p!r} is no JSON finding's impact nor one rule's total")
                if share:
                    q = percent(share)
                    if not any(q.matches(c) for c in share_cand):
                        out.append(f"{view}: finding share {q!r} is no JSON finding's share nor one rule's total")


def _md_cells(line: str) -> list[str]:
    cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
    return [_unmd(c.strip()) for c in cells]


def _unmd(text: str) -> str:
    text = re.sub(r"\\(.)", r"\1", text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _md_table(lines: list[str], heading: str) -> list[list[str]]:
    try:
        i = next(k for k, line in enumerate(lines) if line.startswith(heading))
    except StopIteration:
        return []
    rows = []
    for line in lines[i + 1:]:
        if line.startswith("#"):
            break
        if line.startswith("|") and not re.match(r"^\|\s*-", line):
            rows.append(_md_cells(line))
    return rows[1:]  # without the header


def _split_impact(text: str) -> tuple[Printed | None, Printed | None]:
    m = re.fullmatch(r"(.+?)(?: \((\S+%)\))?", text.strip())
    if not m or m.group(1) in ("\u2014", "-", "n/a"):
        return None, None
    return duration(m.group(1)), percent(m.group(2)) if m.group(2) else None


def _finding_for(doc: dict, code: str, subject: str, used: set[int]) -> dict | None:
    for i, f in enumerate(doc.get("findings") or []):
        if i not in used and f["code"] == code and " ".join(f["subject"].split()) == subject:
            used.add(i)
            return f
    return None


def _summary_rows(doc: dict, *, label: str | None = None, kernel_name: str | None = None) -> list[dict]:
    rows = doc.get("summary") or []
    if kernel_name is not None:
        return [r for r in rows if r.get("kernel_name") == kernel_name]
    norm = " ".join((label or "").split())
    return [r for r in rows if " ".join((r.get("kernel_label") or r.get("short_name") or r.get("kernel_name") or "")
                                        .split()) == norm]


def _markdown(doc: dict, text: str, out: Mismatches) -> None:
    view = "markdown"
    lines = text.splitlines()
    m = re.search(r"\*\*GPU time profiled:\*\* (.+?)\s*$", text, re.M)
    if m:
        out.check(view, "GPU time", duration(m.group(1)), doc.get("total_gpu_time_s"))
    printed = []
    for cells in _md_table(lines, "### Roofs used"):
        v = si(cells[1], "FLOP/s")
        if v is not None:
            printed.append((v, si(cells[2], "FLOP/B") if cells[2] else None))
    if any(line.startswith("### Roofs used") for line in lines):
        _roof_check(view, doc, printed, out)
    m = re.search(r"\*\*Where the time goes:\*\* (.+)$", text, re.M)
    if m:
        _bound_check(view, doc, _bound_shares(m.group(1), share_first=False), out)
    used: set[int] = set()
    for cells in _md_table(lines, "### Findings"):
        if len(cells) < 7:
            continue
        code = cells[2].split(" ")[0]
        f = _finding_for(doc, code, " ".join(cells[3].split()), used)
        if f is None:
            out.append(f"{view}: finding {code} on {cells[3]!r} not in the JSON")
            continue
        dur, share = _split_impact(cells[5])
        out.check(view, f"{code} {cells[3]} impact", dur, f.get("impact_s"))
        out.check(view, f"{code} {cells[3]} impact share", share, f.get("impact_share"), blank_ok=dur is None)
    _markdown_timeline(doc, lines, out)
    for cells in _md_table(lines, "### Kernels"):
        if len(cells) < 8:
            continue
        rows = _summary_rows(doc, label=cells[0])
        if not rows:
            out.append(f"{view}: kernel {cells[0]!r} not in the JSON summary")
            continue
        s = rows[0]
        out.check(view, f"{cells[0]} launches", count(cells[1]), s.get("launches"))
        out.check(view, f"{cells[0]} time", duration(cells[2]), s.get("total_duration_s"))
        out.check(view, f"{cells[0]} share", percent(cells[3]), s.get("time_share"))
        out.check(view, f"{cells[0]} intensity", number(cells[4]), s.get("intensity_dram"))
        out.check(view, f"{cells[0]} % of roof", percent(cells[7]), s.get("roof_fraction"))


_TAG = re.compile(r"<[^>]+>")


def _cells(row: str) -> list[tuple[str | None, str, str]]:
    """(data-v, title, text) of each <td> of one table row."""
    out = []
    for attrs, body in re.findall(r"<td([^>]*)>(.*?)</td>", row, re.S):
        dv = re.search(r'data-v="([^"]*)"', attrs)
        title = re.search(r'title="([^"]*)"', attrs)
        out.append((_html.unescape(dv.group(1)) if dv else None, _html.unescape(title.group(1)) if title else "",
                    " ".join(_html.unescape(_TAG.sub(" ", body)).split())))
    return out


def _table_rows(text: str, table_id: str) -> list[str]:
    m = re.search(rf'<table id="{table_id}"[^>]*>(.*?)</table>', text, re.S)
    if not m:
        return []
    body = m.group(1).split("<tbody>", 1)[-1]
    return re.findall(r"<tr>(.*?)</tr>", body, re.S)


def _raw(out: Mismatches, view: str, what: str, dv: str | None, value: Any) -> None:
    """An HTML data-v attribute (the value the table sorts by) must be the JSON value itself."""
    if dv is None:
        return
    if dv == "":
        if value is not None:
            out.append(f"{view}: {what}: data-v empty, JSON has {value!r}")
    elif value is None or not math.isclose(float(dv), float(value), rel_tol=1e-12, abs_tol=1e-300):
        out.append(f"{view}: {what}: data-v {dv}, JSON has {value!r}")


def _html_view(doc: dict, text: str, out: Mismatches) -> None:
    view = "html"
    m = re.search(r'<div class="k">GPU time profiled</div><div class="v">([^<]*)</div>', text)
    if m:
        out.check(view, "GPU time", duration(_html.unescape(m.group(1))), doc.get("total_gpu_time_s"))
    printed = []
    for row in _table_rows(text, "roofs"):
        cells = _cells(row)
        v = si(cells[1][2], "FLOP/s")
        if v is not None:
            printed.append((v, si(cells[2][2], "FLOP/B") if cells[2][2] else None))
    if '<table id="roofs"' in text:
        _roof_check(view, doc, printed, out)
    # 'memory-bound: <b>91%</b>', and the launches without a bound as 'unknown: <b>9%</b>'
    shares = {b: percent(p) for b, p in re.findall(rf"(\w+-bound|unknown): <b>({_NUM}%)</b>", text)}
    shares = {b.removesuffix("-bound"): p for b, p in shares.items()}
    if shares:
        _bound_check(view, doc, shares, out)
    used: set[int] = set()
    for row in _table_rows(text, "findings-table"):
        cells = _cells(row)
        code = cells[2][2].split(" ")[0]
        f = _finding_for(doc, code, cells[3][2], used)
        if f is None:
            out.append(f"{view}: finding {code} on {cells[3][2]!r} not in the JSON")
            continue
        dur, share = _split_impact(cells[5][2])
        out.check(view, f"{code} {cells[3][2]} impact", dur, f.get("impact_s"))
        out.check(view, f"{code} {cells[3][2]} impact share", share, f.get("impact_share"), blank_ok=dur is None)
        _raw(out, view, f"{code} impact", cells[5][0], f.get("impact_s"))
    _html_timeline(doc, text, out)
    for row in _table_rows(text, "kernel-table"):
        cells = _cells(row)
        rows = _summary_rows(doc, kernel_name=cells[0][1])
        if not rows:
            out.append(f"{view}: kernel {cells[0][1]!r} not in the JSON summary")
            continue
        s = rows[0]
        name = cells[0][2]
        for (dv, _t, txt), key, parse in zip(
            cells[1:], ("launches", "total_duration_s", "time_share", "intensity_dram", None, None, "roof_fraction",
                        "saving_upper_bound_s"),
            (count, duration, percent, number, None, None, percent, duration),
        ):
            if key is None:
                continue
            _raw(out, view, f"{name} {key}", dv, s.get(key))
            out.check(view, f"{name} {key}", parse(txt) if txt not in ("n/a", "-") else None, s.get(key))


def _sarif(doc: dict, text: str, out: Mismatches) -> None:
    view = "sarif"
    results = json.loads(text)["runs"][0]["results"]
    findings = doc.get("findings") or []
    if len(results) != len(findings):
        out.append(f"{view}: {len(results)} results, JSON has {len(findings)} findings")
    for r, f in zip(results, findings):
        props = r.get("properties", {})
        if props.get("impact_s") != f.get("impact_s") or props.get("impact_share") != f.get("impact_share"):
            out.append(f"{view}: {f['code']} {f['subject']}: impact {props.get('impact_s')}/{props.get('impact_share')}, "
                       f"JSON {f.get('impact_s')}/{f.get('impact_share')}")
        want = f["message"].strip() + (f" -> {f['remedy'].strip()}" if f.get("remedy") else "")
        if r["message"]["text"] != want:
            out.append(f"{view}: {f['code']} {f['subject']}: message differs from the JSON's")


def _github(doc: dict, text: str, out: Mismatches) -> None:
    view = "github"
    lines = [line for line in text.splitlines() if line.startswith("::")]
    findings = doc.get("findings") or []
    if len(lines) != len(findings):
        out.append(f"{view}: {len(lines)} annotations, JSON has {len(findings)} findings")
    for line, f in zip(lines, findings):
        msg = line.split("::", 2)[2].replace("%0A", "\n").replace("%0D", "\r").replace("%25", "%")
        want = f["message"].strip() + (f" -> {f['remedy'].strip()}" if f.get("remedy") else "")
        if msg != want:
            out.append(f"{view}: {f['code']} {f['subject']}: message differs from the JSON's")


def _expect(doc: dict, text: str, out: Mismatches) -> None:
    import tomllib

    view = "expect"
    spec = tomllib.loads(text)
    for e in spec.get("expect", []):
        if "precision" in e:  # one name at several precisions: a sub-group the summary does not hold
            continue
        rows = _summary_rows(doc, kernel_name=e["kernel"])
        if not rows:
            out.append(f"{view}: kernel {e['kernel']!r} not in the JSON summary")
            continue
        s = rows[0]
        for key, col in (("roof_fraction", "roof_fraction"), ("intensity", "intensity_dram"), ("time_share", "time_share")):
            if key in e:
                out.check(view, f"{e.get('name', e['kernel'])} {key}", Printed.significant(e[key], 4)
                          if isinstance(e[key], float) else None, s.get(col))
            elif s.get(col) is not None and math.isfinite(s[col]):
                out.append(f"{view}: {e.get('name', e['kernel'])}: {key} not recorded, JSON has {s[col]!r}")



# ------------------------------------------------------------------------------------------
# timeline (Nsight Systems, Kineto): per device shares of the capture, kernels by timeline time
# ------------------------------------------------------------------------------------------
_DEVICE_SHARES = ("busy_s", "kernel_busy_s", "idle_s", "idle_launch_s", "idle_sync_s", "idle_host_s", "idle_queued_s",
                  "idle_other_s")


def _timeline(doc: dict) -> dict:
    return doc.get("timeline") or {}


def _device_check(view: str, dev: dict, cap_text: str, shares: list[str], out: Mismatches) -> None:
    """One device row: the capture and each share of it (printed share = JSON seconds / capture_s)."""
    cap = dev.get("capture_s")
    where = f"timeline {dev.get('source', '?').rsplit('/', 1)[-1]} gpu:{dev.get('device')}"
    out.check(view, f"{where} capture", duration(cap_text) if cap_text not in ("-", "n/a") else None, cap)
    for key, text in zip(_DEVICE_SHARES, shares):
        if text == "n/a":  # the format has no host calls: sync, host-late and queued cannot be told
            if key not in ("idle_sync_s", "idle_host_s", "idle_queued_s") or dev.get("host_calls"):
                out.append(f"{view}: {where} {key}: printed n/a, JSON has host calls")
            continue
        value = dev.get(key)
        want = value / cap if cap and value is not None else None
        out.check(view, f"{where} {key} share", percent(text) if text != "-" else None, want)


def _timeline_kernel_check(view: str, row: dict, launches: str, time: str, wall: str, busy: str, out: Mismatches):
    where = f"timeline kernel {row.get('short_name')}"
    out.check(view, f"{where} launches", count(launches), row.get("launches"))
    out.check(view, f"{where} time", duration(time), row.get("total_s"))
    out.check(view, f"{where} wall share", percent(wall) if wall != "-" else None, row.get("wall_share"))
    out.check(view, f"{where} busy share", percent(busy) if busy != "-" else None, row.get("busy_share"))


def _terminal_timeline(doc: dict, lines: list[str], out: Mismatches) -> None:
    view = "terminal"
    tl = _timeline(doc)
    devices, kernels = tl.get("devices") or [], tl.get("kernels") or []
    share = r"(\S+%|-|n/a)"
    dev_re = re.compile(rf"(\S+ \S+|-)" + rf"\s+{share}" * len(_DEVICE_SHARES) + r"\s*$")
    ker_re = re.compile(r"^\s*(\d+) .*?(\S+)\s+(\S+ \S+)\s+(\S+%|-)\s+(\S+%|-)\s*$")
    for k, line in enumerate(lines):
        if line.startswith("Timeline: GPU busy vs idle"):
            rows = []
            for row in lines[k + 2:]:
                if row.startswith("shares of capture"):
                    break
                m = dev_re.search(row)
                if m:
                    rows.append(m.groups())
            if len(rows) != len(devices):
                out.append(f"{view}: {len(rows)} timeline device rows, JSON has {len(devices)}")
            for dev, g in zip(devices, rows):
                _device_check(view, dev, g[0], list(g[1:]), out)
        if line.startswith("Kernels by timeline time"):
            for row in lines[k + 2:]:
                m = ker_re.match(row)
                if not m:
                    break
                i = int(m.group(1)) - 1
                if i >= len(kernels):
                    out.append(f"{view}: timeline kernel row {i + 1} beyond the JSON's")
                    break
                _timeline_kernel_check(view, kernels[i], *m.groups()[1:], out)


def _markdown_timeline(doc: dict, lines: list[str], out: Mismatches) -> None:
    devices = _timeline(doc).get("devices") or []
    rows = [c for c in _md_table(lines, "### Timeline") if len(c) == 3 + len(_DEVICE_SHARES)]
    if any(line.startswith("### Timeline") for line in lines) and len(rows) != len(devices):
        out.append(f"markdown: {len(rows)} timeline device rows, JSON has {len(devices)}")
    for dev, cells in zip(devices, rows):
        _device_check("markdown", dev, cells[2], cells[3:3 + len(_DEVICE_SHARES)], out)


def _html_timeline(doc: dict, text: str, out: Mismatches) -> None:
    view = "html"
    m = re.search(r'<section id="timeline">(.*?)</section>', text, re.S)
    if not m:
        return
    tl = _timeline(doc)
    tables = re.findall(r"<table[^>]*>(.*?)</table>", m.group(1), re.S)
    devices, kernels = tl.get("devices") or [], tl.get("kernels") or []
    heads = [re.sub(r"<[^>]+>", " ", t.split("</thead>", 1)[0]) for t in tables]
    for t, head in zip(tables, heads):
        rows = re.findall(r"<tr>(.*?)</tr>", t.split("<tbody>", 1)[-1], re.S)
        if "capture" in head:
            if len(rows) != len(devices):
                out.append(f"{view}: {len(rows)} timeline device rows, JSON has {len(devices)}")
            for dev, row in zip(devices, rows):
                cells = _cells(row)
                _raw(out, view, "timeline capture", cells[2][0], dev.get("capture_s"))
                _device_check(view, dev, cells[2][2], [c[2] for c in cells[3:3 + len(_DEVICE_SHARES)]], out)
        elif "wall share" in head:
            for r, row in zip(kernels, rows):
                cells = _cells(row)
                _raw(out, view, "timeline kernel time", cells[2][0], r.get("total_s"))
                _timeline_kernel_check(view, r, cells[1][2], cells[2][2], cells[3][2], cells[4][2], out)


VIEWS = {"terminal": _terminal, "markdown": _markdown, "html": _html_view, "sarif": _sarif, "github": _github,
         "expect": _expect}


def view_mismatches(doc: dict, texts: dict[str, str], *, checked: dict | None = None) -> list[str]:
    """Every mismatch; ``checked`` (a dict) receives how many numbers each view:kind compared."""
    from view_labels import VIEWS as LABELS  # the headline labels and counts (GPU, findings, telemetry)

    out = Mismatches()
    for name, text in texts.items():
        VIEWS[name](doc, text, out)
        if name in LABELS:
            LABELS[name](doc, text, out)
    if checked is not None:
        checked.update(out.checked)
    return list(out)


def assert_views_match_json(doc: dict, texts: dict[str, str]) -> None:
    """Fail with every mismatch between the views' printed numbers and the JSON document."""
    bad = view_mismatches(doc, texts)
    assert not bad, f"{len(bad)} view number(s) differ from the JSON:\n  " + "\n  ".join(bad[:40])
