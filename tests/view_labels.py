"""Every headline label and count a view prints equals the JSON document's (issue 37's done-when).

The companion of :mod:`view_consistency` (which holds the numbers of the tables): called by
:func:`view_consistency.view_mismatches` for the same ``{view: text}``, so every sample of the
real-data sweep and every scenario gets these checks from the analysis it already made.

* **GPU**: the report's title, ``<h1>`` and summary card, the Markdown title and ``**GPU:**``
  line, the terminal's ``GPU:`` line name ``gpu.label`` (or "unknown GPU" when it is null); a
  timeline's per-device ``GPU:`` line names only devices of that label;
* **counts**: findings (terminal, Markdown, HTML heading and card, its severity split), launches and
  kernel names (terminal header, HTML card), telemetry GPUs / hosts / windows (terminal, Markdown,
  HTML card) against ``findings``, ``kernels``, ``summary`` and ``telemetry.windows``;
* **kernel table labels**: each row's bound and precision against its ``summary`` record;
* **telemetry columns** (terminal per-GPU table and the "other measures" block): util, gract, tens,
  dram, power, samples, temperature, NVLink and PCIe rates against the JSON windows' means weighted
  by ``span_s`` ("-" exactly where no window holds the field: never another field under its label);
* **budget**: the Markdown job summary stays under :data:`MARKDOWN_BUDGET` bytes.
"""

from __future__ import annotations

from ridgeline.analyzer.kernels.speed_of_light import mark as sol_mark

import html as _html
import math
import re

from view_consistency import Printed, _cells, _md_table, _summary_rows, _table_rows, _unmd, count, number, percent

#: GitHub job summaries: the Markdown view stays under this many bytes (issue 37 item 11)
MARKDOWN_BUDGET = 6 * 1024
UNKNOWN = "unknown GPU"


def _label(doc: dict) -> str:
    return (doc.get("gpu") or {}).get("label") or UNKNOWN


def _same(out, view: str, what: str, printed: str | None, want: str) -> None:
    key = f"{view}:{what}"
    out.checked[key] = out.checked.get(key, 0) + 1
    if printed is None:
        out.append(f"{view}: {what}: not printed, JSON has {want!r}")
    elif " ".join(printed.split()) != " ".join(want.split()):
        out.append(f"{view}: {what}: printed {printed!r}, JSON has {want!r}")


def _title_gpu(title: str) -> str | None:
    """'ridgeline report — GPU — inputs' -> GPU (the inputs part is the last ' — ')."""
    parts = title.split(" \u2014 ")
    return " \u2014 ".join(parts[1:-1]) if len(parts) >= 3 else None


def _severities(doc: dict) -> dict[str, int]:
    out: dict[str, int] = {}
    for f in doc.get("findings") or []:
        out[f["severity"]] = out.get(f["severity"], 0) + 1
    return out


def _windows(doc: dict) -> list[dict]:
    return ((doc.get("telemetry") or {}).get("windows")) or []


def _tel_counts(doc: dict) -> tuple[int, int, int]:
    w = _windows(doc)
    return (len({(r.get("host"), r.get("gpu"), r.get("gpu_instance")) for r in w}), len({r.get("host") for r in w}),
            len(w))


# ------------------------------------------------------------------------------------------
# terminal
# ------------------------------------------------------------------------------------------
def terminal(doc: dict, text: str, out) -> None:
    view = "terminal"
    lines = text.splitlines()
    label = _label(doc)
    names = set(label.split(", "))
    for i, line in enumerate(lines):
        if not line.startswith("GPU: "):
            continue
        j = i + 1  # a long line wraps without indent: join its continuation
        while j < len(lines) and j < i + 4 and lines[j] and not lines[j].startswith(("Roofs", "GPU vendor", " ")):
            j += 1
        value = " ".join(lines[i:j])[5:]
        if j < len(lines) and lines[j].startswith("Roofs"):  # the GPU block: the label, then how it was chosen
            _same(out, view, "GPU", label if value == label or value.startswith(label + " (") else value, label)
        elif (doc.get("gpu") or {}).get("name") is None:  # a timeline's devices, by name
            out.checked[f"{view}:GPU"] = out.checked.get(f"{view}:GPU", 0) + 1
            for n in value.split(", "):
                if n not in names:
                    out.append(f"{view}: timeline GPU {n!r} is not in the JSON's gpu.label {label!r}")
    # findings count
    m = re.search(r"^Findings \((\d+)\)", text, re.M)
    if m or re.search(r"^Findings: none", text, re.M):
        out.check(view, "findings count", Printed(m.group(1) if m else "0"), len(doc.get("findings") or []))
    # header: launches and kernel names ("..., 455 launches of 18 kernels, ...")
    m = re.search(r"(\d[\d,]*) launch(?:es)? of (\d[\d,]*) kernel", " ".join(lines[:2]))
    if m:
        out.check(view, "launches count", Printed(m.group(1)), len(doc.get("kernels") or []))
        out.check(view, "kernel names count", Printed(m.group(2)), len(doc.get("summary") or []))
    # telemetry counts
    m = re.search(r"^Telemetry: (\d+) GPU\(s\) on (\d+) host\(s\), (\d+) window\(s\)", text, re.M)
    if m:
        for got, want, what in zip(m.groups(), _tel_counts(doc), ("GPUs", "hosts", "windows")):
            out.check(view, f"telemetry {what} count", Printed(got), want)
    _terminal_kernel_labels(doc, lines, out)
    _terminal_telemetry(doc, lines, out)
    _terminal_messages(doc, lines, out)


def _terminal_messages(doc: dict, lines: list[str], out) -> None:
    """Each rule's findings print their messages (a group of more than GROUP_DETAIL_MAX: its first,
    as the example): each must be the JSON's, whatever the wrapping (compared without whitespace)."""
    from ridgeline.render.safe_text import inline
    from ridgeline.render.text import GROUP_DETAIL_MAX

    try:
        start = next(i for i, line in enumerate(lines) if line.startswith("Findings ("))
    except StopIteration:
        return
    body = re.sub(r"\s+", "", "".join(lines[start:]))
    groups: dict[tuple[str, str], list[dict]] = {}
    for f in doc.get("findings") or []:
        groups.setdefault((f["code"], f["severity"]), []).append(f)
    for items in groups.values():
        for f in items if len(items) <= GROUP_DETAIL_MAX else items[:1]:
            out.checked["terminal:message"] = out.checked.get("terminal:message", 0) + 1
            if re.sub(r"\s+", "", inline(f["message"])) not in body:
                out.append(f"terminal: {f['code']} {f['subject']}: message {f['message']!r} not printed as the JSON has it")


def _right_cells(header: str, row: str) -> dict[str, str]:
    """The one-word cells right of the start column, by name: a row read from its right end (a
    row excluded by RL205 ends in " x"), so a header a character off its cells still reads."""
    names = header.split()
    names = names[names.index("start") + 1:] if "start" in names else names[2:]
    words = row.split()
    if words and words[-1] == "x":
        words = words[:-1]
    return dict(zip(names, words[-len(names):])) if len(words) >= len(names) else {}


def _terminal_kernel_labels(doc: dict, lines: list[str], out) -> None:
    from ridgeline.analyzer.kernels.latency import view_bound
    from ridgeline.render.terminal import PRECISION_SHORT

    try:
        k = next(i for i, line in enumerate(lines) if line.startswith("Top kernels by GPU time"))
    except StopIteration:
        return
    header = lines[k + 1]
    p0 = header.index("prec")
    b0 = header.index("bound")
    summary = doc.get("summary") or []
    for line in lines[k + 2:]:
        if not line[:3].strip().isdigit():
            break
        i = int(line[:3]) - 1
        if i >= len(summary):
            break
        s = summary[i]
        _same(out, "terminal", "kernel precision", line[p0:p0 + 5].strip(), PRECISION_SHORT.get(s.get("precision") or "", "-"))
        _same(out, "terminal", "kernel bound", line[b0:b0 + 8].strip(), (view_bound(s.get("bound"), s.get("latency_kind")) or "-") + sol_mark(s.get("bound_source")))


def wmean(windows: list[dict], col: str) -> float | None:
    """Mean of ``col`` over the windows holding it, weighted by ``span_s`` (the telemetry tables' means)."""
    num = den = 0.0
    for w in windows:
        v, span = w.get(col), w.get("span_s") or 0.0
        if v is not None and span > 0:
            num += v * span
            den += span
    return num / den if den > 0 else None


def _gpu_groups(doc: dict) -> list[tuple[tuple, list[dict]]]:
    groups: dict[tuple, list[dict]] = {}
    for w in _windows(doc):
        groups.setdefault((w.get("host"), w.get("gpu"), w.get("gpu_instance")), []).append(w)

    def key(k):
        return tuple((v is None, v if v is not None else 0) if not isinstance(v, str) else (False, v) for v in k)

    return sorted(groups.items(), key=lambda kv: key(kv[0]))


def _gpu_cell(k: tuple) -> str:
    g = "?" if k[1] is None else str(k[1])
    return g + (f"/i{k[2]}" if k[2] is not None else "")


def _table_rows_after(lines: list[str], start: int) -> list[str]:
    """Data rows below a header and its dashes: rows with a GPU cell; a host printed alone above
    its rows (too long for the column) is not a row."""
    rows = []
    for line in lines[start + 2:]:
        if not line.strip() or line.startswith(("util =", "temp =", "nvl ", "pcie ", "...", "x =")):
            break
        rows.append(line)
    return rows


TEL_COLS = (("util", "gpu_util_mean_ratio", percent), ("gract", "gr_engine_active_mean_ratio", percent),
            ("tens", "tensor_active_mean_ratio", percent), ("dram", "dram_active_mean_ratio", percent),
            ("power", "power_mean_w", number))


def _terminal_telemetry(doc: dict, lines: list[str], out) -> None:
    view = "terminal"
    groups = _gpu_groups(doc)
    if not groups:
        return
    try:
        t = next(i for i, line in enumerate(lines) if line.startswith("Per GPU, whole run ("))
    except StopIteration:
        t = None
    if t is not None:
        h = next(i for i in range(t, len(lines)) if lines[i].startswith("host"))
        rows = [r for r in _table_rows_after(lines, h) if len(r.split()) > 1]  # not a host alone above its rows
        if len(rows) != len(groups):
            out.append(f"{view}: {len(rows)} per-GPU telemetry rows, JSON windows have {len(groups)} GPUs")
        gpu_end = lines[h].index(" gpu") + 4
        for (key, ws), row in zip(groups, rows):
            where = f"telemetry gpu {key}"
            gpu = row[:gpu_end].split()[-1] if row[:gpu_end].strip() else ""
            _same(out, view, "telemetry gpu", gpu, _gpu_cell(key) if len(_gpu_cell(key)) <= 5 else gpu)
            cells = _right_cells(lines[h], row)
            if "~" not in cells.get("n", "~"):
                out.check(view, f"{where} samples", count(cells["n"]), sum(w.get("samples") or 0 for w in ws))
            for name, col, parse in TEL_COLS:
                cell = cells.get(name)
                out.check(view, f"{where} {name} column", None if cell in (None, "-") else parse(cell), wmean(ws, col))
    _terminal_measures(doc, lines, groups, out)


def _terminal_measures(doc: dict, lines: list[str], groups, out) -> None:
    from ridgeline.render.fleet.measures import MEASURES, TITLE
    from view_consistency import si

    held = [m for m in MEASURES if any(w.get(m[0]) is not None for w in _windows(doc))]
    try:
        t = lines.index(TITLE)
    except ValueError:
        if held:
            out.append(f"terminal: {[m[0] for m in held]} in the JSON windows, printed nowhere")
        return
    header = lines[t + 1]
    shown = [m for m in MEASURES if re.search(rf"(?<!\S){re.escape(m[1])}(?!\S)", header)]
    if [m[0] for m in shown] != [m[0] for m in held]:
        out.append(f"terminal: other measures printed {[m[0] for m in shown]}, JSON windows hold {[m[0] for m in held]}")
    ends = {m[0]: header.index(m[1]) + len(m[1]) for m in shown}
    rows = [r for r in _table_rows_after(lines, t + 1) if len(r.split()) > 1]
    for (key, ws), row in zip(groups, rows):
        for col, head, unit in shown:
            cell = " ".join(row[ends[col] - 11:ends[col]].split())
            printed = None if cell == "-" else (number(cell) if unit == "C" else si(cell, unit))
            out.check("terminal", f"measure {key} {head} column", printed, wmean(ws, col))


# ------------------------------------------------------------------------------------------
# Markdown
# ------------------------------------------------------------------------------------------
def markdown(doc: dict, text: str, out) -> None:
    view = "markdown"
    label = _label(doc)
    lines = text.splitlines()
    if lines and lines[0].startswith("## "):
        _same(out, view, "title GPU", _title_gpu(_unmd(lines[0][3:])), label)
    m = re.search(r"^\*\*GPU:\*\* (.+?)(?: \(chosen from .*\))?\s*$", text, re.M)
    _same(out, view, "GPU", _unmd(m.group(1)) if m else None, label)
    m = re.search(r"^### Findings \((\d+)\)", text, re.M)
    if m:
        out.check(view, "findings count", Printed(m.group(1)), len(doc.get("findings") or []))
    findings = doc.get("findings") or []
    for cells in _md_table(lines, "### Findings"):
        if len(cells) >= 7 and cells[0].isdigit() and int(cells[0]) <= len(findings):
            _message(out, view, f"finding #{cells[0]} message", cells[4], findings[int(cells[0]) - 1]["message"])
    m = re.search(r"^\*\*Top finding:\*\* (.+?)\s*$", text, re.M)
    if m and findings:
        f = findings[0]
        head = f"{f['code']} {f['name']} on {' '.join(f['subject'].split())}: "
        got = _unmd(m.group(1))
        _message(out, view, "top finding", got[len(head):] if got.startswith(head) else got, f["message"])
    m = re.search(r"^\*\*Telemetry:\*\* (\d+) GPUs? on (\d+) hosts?", text, re.M)
    if m:
        for got, want, what in zip(m.groups(), _tel_counts(doc), ("GPUs", "hosts")):
            out.check(view, f"telemetry {what} count", Printed(got), want)
    from ridgeline.analyzer.kernels.latency import view_bound
    from ridgeline.analyzer.kernels.precisions import label as precision_label

    for cells in _md_table(lines, "### Kernels"):
        if len(cells) < 8:
            continue
        rows = _summary_rows(doc, label=cells[0])
        if rows:
            s = rows[0]
            _same(out, view, "kernel precision", cells[5], precision_label(s.get("precision")))
            _same(out, view, "kernel bound", cells[6], (view_bound(s.get("bound"), s.get("latency_kind")) or "unknown") + sol_mark(s.get("bound_source")))
    size = len(text.encode("utf-8"))
    out.checked["markdown:bytes"] = out.checked.get("markdown:bytes", 0) + 1
    if size >= MARKDOWN_BUDGET:
        out.append(f"markdown: {size:,} bytes, over the {MARKDOWN_BUDGET:,}-byte job-summary budget")


# ------------------------------------------------------------------------------------------
# HTML
# ------------------------------------------------------------------------------------------
def _message(out, view: str, what: str, printed: str, message: str) -> None:
    """A finding's message as printed: the JSON's, or its start cut at a word and marked "…"
    (the Markdown budget)."""
    got, want = " ".join(printed.split()), " ".join(message.split())
    key = f"{view}:message"
    out.checked[key] = out.checked.get(key, 0) + 1
    if got != want and not (got.endswith("\u2026") and want.startswith(got[:-1].rstrip())):
        out.append(f"{view}: {what}: printed {printed!r}, JSON has {message!r}")


def _card(text: str, key: str) -> tuple[str | None, str | None]:
    m = re.search(rf'<div class="card"><div class="k">{re.escape(key)}</div><div class="v">(.*?)</div>'
                  r'(?:<div class="k">(.*?)</div>)?</div>', text, re.S)
    if not m:
        return None, None
    return _html.unescape(m.group(1)), _html.unescape(m.group(2)) if m.group(2) else None


def html(doc: dict, text: str, out) -> None:
    view = "html"
    label = _label(doc)
    m = re.search(r"<title>(.*?)</title>", text, re.S)
    _same(out, view, "title GPU", _title_gpu(_html.unescape(m.group(1))) if m else None, label)
    m = re.search(r"<h1>(.*?)</h1>", text, re.S)
    _same(out, view, "h1 GPU", _title_gpu(_html.unescape(m.group(1))) if m else None, label)
    _same(out, view, "card GPU", _card(text, "GPU")[0], label)
    findings = doc.get("findings") or []
    v, sub = _card(text, "Findings")
    out.check(view, "findings count", number(v) if v else None, len(findings))
    sev = {s: int(n) for n, s in re.findall(r"(\d+) (critical|warning|info)", sub or "")}
    if sev != _severities(doc):
        out.append(f"{view}: findings card severities {sev}, JSON has {_severities(doc)}")
    m = re.search(r"<h2>Findings \((\d+)\)</h2>", text)
    if m:
        out.check(view, "findings heading count", Printed(m.group(1)), len(findings))
    for row in re.findall(r"<tr>(.*?)</tr>", (re.search(r'<table id="findings-table".*?<tbody>(.*?)</tbody>', text, re.S)
                                               or re.match("()", "")).group(1), re.S):
        num = re.match(r'<td class="num" data-v="(\d+)">', row)
        msg = re.search(r"<td>((?:(?!<td).)*?)<div class=\"remedy\">", row, re.S)
        if num and msg and int(num.group(1)) <= len(findings):
            _message(out, view, f"finding #{num.group(1)} message", _html.unescape(msg.group(1)),
                     findings[int(num.group(1)) - 1]["message"])
    v, sub = _card(text, "Launches")
    if v is not None:
        out.check(view, "launches count", Printed(v), len(doc.get("kernels") or []))
        if sub:
            out.check(view, "kernel names count", Printed(sub.split(" ")[0]), len(doc.get("summary") or []))
    v, _sub = _card(text, "Telemetry")
    if v is not None:
        m = re.match(r"(\d+) GPUs? on (\d+) hosts?", v)
        for got, want, what in zip(m.groups() if m else (), _tel_counts(doc), ("GPUs", "hosts")):
            out.check(view, f"telemetry {what} count", Printed(got), want)
    from ridgeline.analyzer.kernels.latency import view_bound
    from ridgeline.render.html import PRECISION_NAMES

    for row in _table_rows(text, "kernel-table"):
        cells = _cells(row)
        rows = _summary_rows(doc, kernel_name=cells[0][1])
        if rows:
            s = rows[0]
            prec = s.get("precision")
            _same(out, view, "kernel precision", cells[5][2], PRECISION_NAMES.get(prec, prec) if prec else "n/a")
            _same(out, view, "kernel bound", cells[6][2], (view_bound(s.get("bound"), s.get("latency_kind")) or "unknown") + sol_mark(s.get("bound_source")))
    _html_gpu_table(doc, text, out)


def _html_rows(text: str, table_id: str) -> list[list]:
    m = re.search(rf'<table[^>]*id="{table_id}"[^>]*>(.*?)</table>', text, re.S)
    return [_cells(row) for row in re.findall(r"<tr>(.*?)</tr>", m.group(1).split("<tbody>", 1)[-1], re.S)] if m else []


def _close(out, what: str, dv: str | None, want: float | None) -> None:
    out.checked["html:gpu table"] = out.checked.get("html:gpu table", 0) + 1
    got = None if dv in (None, "") else float(dv)
    if (got is None) != (want is None) or (got is not None and not math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12)):
        out.append(f"html: {what}: data-v {dv}, JSON windows give {want!r}")


def _html_measures(doc: dict, text: str, out) -> None:
    """The fleet section's "other measures" table: the columns the windows hold, each cell's
    data-v the span_s-weighted mean of the JSON windows."""
    from ridgeline.render.fleet.measures import MEASURES

    held = [m for m in MEASURES if any(w.get(m[0]) is not None for w in _windows(doc))]
    m = re.search(r'<table[^>]*id="measures-table"[^>]*><thead>(.*?)</thead>', text, re.S)
    if not held and not m:
        return
    heads = [_html.unescape(h) for h in re.findall(r"<th[^>]*>(.*?)</th>", m.group(1))][2:] if m else []
    if heads != [h for _c, h, _u in held]:
        out.append(f"html: other measures printed {heads}, JSON windows hold {[c for c, _h, _u in held]}")
        return
    for (key, ws), cells in zip(_gpu_groups(doc), _html_rows(text, "measures-table")):
        for (col, head, _u), (dv, _t, _txt) in zip(held, cells[2:]):
            _close(out, f"measure {key} {head}", dv, wmean(ws, col))


def _html_gpu_table(doc: dict, text: str, out) -> None:
    """The fleet GPU table's tensor activity and GPU-hours (data-v) against the JSON windows."""
    _html_measures(doc, text, out)
    groups = dict(_gpu_groups(doc))
    for cells in _html_rows(text, "gpu-table"):
        host, gpu = cells[0][2], cells[1][2]
        m = re.fullmatch(r"(\S+)(?: gi:(\S+))?", gpu)
        key = next((k for k in groups if str(k[0] if k[0] is not None else "?") == host
                    and ("?" if k[1] is None else str(k[1])) == m.group(1) and (k[2] or None) == m.group(2)), None)
        if key is None:
            out.append(f"html: GPU row {host} {gpu} not in the JSON windows")
            continue
        ws = groups[key]
        for (dv, _t, _txt), want, what in ((cells[3], sum(w.get("span_s") or 0.0 for w in ws) / 3600, "GPU-h"),
                                           (cells[5], wmean(ws, "tensor_active_mean_ratio"), "tensor active")):
            _close(out, f"GPU {key} {what}", dv, want)


VIEWS = {"terminal": terminal, "markdown": markdown, "html": html}
