"""A :class:`ridgeline.analyzer.nightly.diff.Comparison` as text (terminal), Markdown (a CI job summary or
a pull-request comment) or JSON (tools). Each shows the verdict first, then what changed."""

from __future__ import annotations

import json
import math
from typing import Any

from ridgeline.render.markdown import _table, md
from ridgeline.render.text import fmt_num, fmt_pct, fmt_seconds, shorten

WIDTH = 80


def _hours(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def _arrow(a: str, b: str, sep: str = " -> ") -> str:
    return a if a == b else f"{a}{sep}{b}"


def _md_change(row: dict, base: str, new: str) -> str:
    """Markdown cell: the value that exists for appeared/vanished rows, else base → new."""
    if row.get("status") == "appeared":
        return md(new)
    if row.get("status") in ("vanished", "missing"):
        return md(base)
    return md(_arrow(base, new, " → "))


def _rel(row: dict) -> str:
    if row["status"] == "appeared":
        return "appeared"
    if row["status"] == "vanished":
        return "vanished"
    rel = row.get("time_delta_rel")
    if rel is None or not math.isfinite(rel):
        return "-"
    return f"{rel:+.0%}"


def _mark(row: dict) -> str:
    if row.get("regression"):
        return "!"
    return {"appeared": "+", "vanished": "-"}.get(row.get("status"), " ")


def _dims(text) -> str:
    """'(1, 2048, 1)' -> '1x2048' (trailing 1s dropped)."""
    parts = [p.strip() for p in str(text).strip("()[] ").split(",") if p.strip()]
    while len(parts) > 1 and parts[-1] == "1":
        parts.pop()
    return "x".join(parts)


def _shape(grid, block) -> str:
    """' 1x2048/128' (grid/block), '' without a launch shape; at most 17 characters."""
    if not grid and not block:
        return ""
    return " " + shorten(f"{_dims(grid) if grid else '?'}/{_dims(block) if block else '?'}", 16)


def _scope(fleet: dict) -> str:
    """' (the 3 hosts in both runs)' when a host is missing or new, else ''."""
    if fleet.get("hosts_missing") or fleet.get("hosts_appeared"):
        n = fleet.get("hosts_compared")
        return f" (the {n} host{'' if n == 1 else 's'} in both runs)"
    return ""


def _identity_note(totals: dict) -> str:
    n = totals.get("matched_by_identity") or 0
    return f", {n} matched by kernel identity" if n else ""


def _shapes(keys: list[dict]) -> str:
    """Launch shapes of identity-matched groups: '8/1024' (grid/block), or 'N groups'."""
    if len(keys) == 1:
        k = keys[0]
        return _shape(k["grid"], k["block"]).strip() or str(k["kernel"])
    return f"{len(keys)} groups"


def _verdict(cmp) -> list[str]:
    head = (f"ridgeline diff ({cmp.kind}): {cmp.base} -> {cmp.new}"
            + (f" (schema {cmp.schema_versions[0]} -> {cmp.schema_versions[1]})"
               if cmp.schema_versions[0] != cmp.schema_versions[1] else ""))
    import textwrap

    def items(lines):
        out = []
        for r in lines:
            out += textwrap.wrap(r, width=WIDTH, initial_indent="  - ", subsequent_indent="    ",
                                 break_long_words=True, break_on_hyphens=False)
        return out

    notices = (["Note:"] + items(cmp.notices)) if getattr(cmp, "notices", None) else []
    if not cmp.regressions:
        return [head, "No regression past the thresholds."] + notices
    return [head, f"REGRESSION: {len(cmp.regressions)} change(s) past the thresholds"] + items(cmp.regressions) + notices


def _kernel_rows(cmp, top: int) -> list[dict]:
    """Rows that changed: appeared, vanished, time, or bound (largest time change first)."""
    rows = [r for r in cmp.kernels if r["status"] != "both" or abs(r["time_delta_s"]) > 0 or r["regression"]
            or r["bound_base"] != r["bound_new"]]
    return rows[:top]


def _finding_lines(cmp, width: int) -> list[str]:
    f = cmp.findings or {}
    new, resolved, changed = f.get("new", []), f.get("resolved", []), f.get("changed", [])
    missing = f.get("missing", [])
    lines = [f"Findings: {len(new)} new, {len(resolved)} resolved, {len(changed)} changed severity"
             + (f", {len(missing)} on missing hosts" if missing else "")]
    for tag, items in (("new", new), ("resolved", resolved), ("changed", changed), ("missing", missing)):
        for x in items:
            sev = _arrow(x.get("severity_base") or x["severity"], x["severity"]) if tag == "changed" else x["severity"]
            mark = "!" if x.get("regression") else " "
            lines.append(shorten(f"{mark} {tag:<8} {x['code']} {sev:<8} {x['subject']}", width))
            if x.get("message"):
                lines.append("    " + shorten(x["message"], width - 4))
    return lines


def _wrapped(text: str, width: int = WIDTH) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width=width, subsequent_indent="  ", break_long_words=True,
                         break_on_hyphens=False) or [""]


def format_diff(cmp, *, top: int = 15, width: int = WIDTH) -> str:
    """The comparison for a terminal (80 columns)."""
    verdict = _verdict(cmp)
    out = _wrapped(verdict[0], width) + verdict[1:]
    if cmp.totals is not None:
        t = cmp.totals
        out += [""] + _wrapped(f"Total GPU time: {_arrow(fmt_seconds(t['time_base_s']), fmt_seconds(t['time_new_s']))}; "
                               f"kernel groups {t['kernels_base']} -> {t['kernels_new']} ({t['appeared']} appeared, "
                               f"{t['vanished']} vanished{_identity_note(t)})", width)
        out += ["", "Share of GPU time by bound", f"  {'bound':<10}{'base':>8}{'new':>8}"]
        out += [f"  {h['bound']:<10}{fmt_pct(h['share_base'], 1):>8}{fmt_pct(h['share_new'], 1):>8}" for h in cmp.headline]
        rows = _kernel_rows(cmp, top)
        if rows:
            out += ["", f"Kernels that changed (top {len(rows)}; ! regression, + appeared, - vanished)",
                    f"  {'kernel grid/block':<34}{'base':>9}{'new':>9}{'change':>9} {'bound':<8}{'roof':>5}"]
            for r in rows:
                shape = _shape(r["grid"], r["block"])
                label = shorten(r["kernel"], 33 - len(shape)) + shape
                bound = r["bound_new"] or r["bound_base"] or "-"  # a change is spelled out on the detail line
                roof = fmt_pct(r["roof_fraction_new"] if r["status"] != "vanished" else r["roof_fraction_base"])
                out.append(f"{_mark(r)} {label:<34}{fmt_seconds(r['time_base_s']):>9}{fmt_seconds(r['time_new_s']):>9}"
                           f"{_rel(r):>9} {shorten(bound, 8):<8}{roof:>5}")
                if r["status"] == "both":
                    detail = (f"    share {_arrow(fmt_pct(r['share_base'], 1), fmt_pct(r['share_new'], 1))}, "
                              f"intensity {_arrow(fmt_num(r['intensity_base']), fmt_num(r['intensity_new']))} FLOP/B, "
                              f"roof {_arrow(fmt_pct(r['roof_fraction_base']), fmt_pct(r['roof_fraction_new']))}")
                    if r["bound_base"] != r["bound_new"]:
                        detail += f", bound {r['bound_base']} -> {r['bound_new']}"
                    out.append(shorten(detail, width))
                    if r.get("matched_by"):
                        out.append(shorten(f"    same kernel, {r['matched_by']} changed: "
                                           f"{_shapes(r['shapes_base'])} -> {_shapes(r['shapes_new'])}", width))
    if cmp.fleet is not None:
        f = cmp.fleet
        out += [""] + _wrapped(f"Fleet{_scope(f)}: wasted {_arrow(_hours(f['wasted_gpu_h_base']), _hours(f['wasted_gpu_h_new']))} "
                               f"GPU-h of {_arrow(_hours(f['span_h_base']), _hours(f['span_h_new']))} GPU-h observed "
                               f"({_arrow(fmt_pct(f['wasted_share_base']), fmt_pct(f['wasted_share_new']))}); "
                               f"coverage {_arrow(fmt_pct(f['coverage_base']), fmt_pct(f['coverage_new']))}", width)
        out += _waste_table(cmp.hosts, ("host",), "Hosts", top, width)
        out += _waste_table(cmp.gpus, ("host", "gpu", "gpu_instance"), "GPUs", top, width)
    out += [""] + _finding_lines(cmp, width)
    return "\n".join(out) + "\n"


def _who(row, keys) -> str:
    parts = [str(row["host"])]
    if "gpu" in keys and row.get("gpu") is not None:
        parts.append(f"gpu{row['gpu']}")
    if row.get("gpu_instance") is not None:
        parts.append(f"i{row['gpu_instance']}")
    return " ".join(parts)


def _round_diff(a, b, scale: float) -> bool:
    """a and b differ once shown (``scale``: the displayed resolution)."""
    if a is None or b is None:
        return (a is None) != (b is None)
    return round(a / scale) != round(b / scale)


def changed_rows(rows: list[dict]) -> list[dict]:
    """Host/GPU rows worth a line: missing or appeared, a regression, another GPU model, or a
    change visible at the shown precision (0.01 GPU-h of waste, 1 point of coverage or share)."""
    return [r for r in rows if r["status"] != "both" or r["regression"]
            or (r.get("model_base") or r.get("model_new")) and r.get("model_base") != r.get("model_new")
            or _round_diff(r["wasted_gpu_h_base"], r["wasted_gpu_h_new"], 0.01)
            or _round_diff(r["coverage_base"], r["coverage_new"], 0.01)
            or _round_diff(r["wasted_share_base"], r["wasted_share_new"], 0.01)]


STATUS_TAG = {"appeared": " (new)", "missing": " (missing)", "vanished": " (gone)"}


def _waste_table(rows, keys, title, top, width) -> list[str]:
    every = changed_rows(rows)
    changed = every[:top]
    if not changed:
        return ["", f"{title}: no change in wasted GPU-hours or coverage ({len(rows)} compared)"]
    rest = len(rows) - len(every)
    out = ["", f"{title} that changed (top {len(changed)} of {len(every)}; ! regression"
           + (f"; {rest} unchanged not shown)" if rest else ")"),
           f"  {'':<20}{'wasted GPU-h':>16}{'share':>12}{'busy-idle-tc':>14}{'alloc-idle':>12}{'cov':>6}"]
    for r in changed:
        wasted = f"{_hours(r['wasted_gpu_h_base'])}>{_hours(r['wasted_gpu_h_new'])}"
        share = f"{fmt_pct(r['wasted_share_base'])}>{fmt_pct(r['wasted_share_new'])}"
        bti = f"{_hours(r['busy_tensor_idle_h_base'])}>{_hours(r['busy_tensor_idle_h_new'])}"
        ai = f"{_hours(r['allocated_idle_h_base'])}>{_hours(r['allocated_idle_h_new'])}"
        tag = STATUS_TAG.get(r["status"], "")
        if r.get("model_base") and r.get("model_new") and r["model_base"] != r["model_new"]:
            tag += " (model)"
        label = _who(r, keys) + tag
        if len(label) > 20:  # a long host name gets its own line, never cut (two hosts must not look alike)
            out += _wrapped(f"{'!' if r['regression'] else ' '} {label}", width)
            label = ""
        out.append(f"{'!' if r['regression'] else ' '} {label:<20}{wasted:>16}{share:>12}"
                   f"{bti:>14}{ai:>12}{fmt_pct(r['coverage_new'] if r['status'] == 'both' or r['status'] == 'appeared' else r['coverage_base']):>6}")
    return out


def render_diff_markdown(cmp, *, top: int = 25) -> str:
    """GitHub-flavoured Markdown: a job summary or a pull-request comment."""
    verdict = "**Regression**" if cmp.regressions else "**No regression**"
    out = [f"## ridgeline diff ({md(cmp.kind)}): `{md(cmp.base)}` → `{md(cmp.new)}`", "",
           f"{verdict} past the thresholds" + (f": {len(cmp.regressions)} change(s)" if cmp.regressions else "."), ""]
    out += [f"- {md(r.replace(' -> ', ' → '))}" for r in cmp.regressions]
    if cmp.regressions:
        out.append("")
    if cmp.notices:
        out += ["Note:", ""] + [f"- {md(r.replace(' -> ', ' → '))}" for r in cmp.notices] + [""]
    if cmp.totals is not None:
        t = cmp.totals
        out += [f"Total GPU time: {md(_arrow(fmt_seconds(t['time_base_s']), fmt_seconds(t['time_new_s']), ' → '))}; kernel "
                f"groups {t['kernels_base']} → {t['kernels_new']} ({t['appeared']} appeared, {t['vanished']} vanished"
                f"{_identity_note(t)}).", ""]
        out += _table(["bound", "base", "new"], [[md(h["bound"]), fmt_pct(h["share_base"], 1), fmt_pct(h["share_new"], 1)]
                                                 for h in cmp.headline], ["l", "r", "r"]) + [""]
        rows = _kernel_rows(cmp, top)
        if rows:
            out += ["### Kernels that changed", ""]
            out += _table(["", "kernel", "grid", "block", "time base", "time new", "change", "share", "intensity FLOP/B",
                           "bound", "roof"],
                          [[md(_mark(r).strip()), md(r["kernel"]),
                            md(f"{r['matched_by']} changed" if r.get("matched_by") else r["grid"]),
                            md(f"{_shapes(r['shapes_base'])} → {_shapes(r['shapes_new'])}" if r.get("matched_by") else r["block"]),
                            fmt_seconds(r["time_base_s"]),
                            fmt_seconds(r["time_new_s"]), md(_rel(r)),
                            _md_change(r, fmt_pct(r["share_base"], 1), fmt_pct(r["share_new"], 1)),
                            _md_change(r, fmt_num(r["intensity_base"]), fmt_num(r["intensity_new"])),
                            _md_change(r, r["bound_base"] or "-", r["bound_new"] or "-"),
                            _md_change(r, fmt_pct(r["roof_fraction_base"]), fmt_pct(r["roof_fraction_new"]))] for r in rows],
                          ["l", "l", "l", "l", "r", "r", "r", "r", "r", "l", "r"]) + [""]
    if cmp.fleet is not None:
        f = cmp.fleet
        out += [f"### Fleet{md(_scope(f))}", ""]
        out += _table(["", "base", "new"], [
            ["wasted GPU-h", _hours(f["wasted_gpu_h_base"]), _hours(f["wasted_gpu_h_new"])],
            ["observed GPU-h", _hours(f["span_h_base"]), _hours(f["span_h_new"])],
            ["wasted share", fmt_pct(f["wasted_share_base"]), fmt_pct(f["wasted_share_new"])],
            ["busy with idle tensor cores, GPU-h", _hours(f["busy_tensor_idle_h_base"]), _hours(f["busy_tensor_idle_h_new"])],
            ["idle while allocated, GPU-h", _hours(f["allocated_idle_h_base"]), _hours(f["allocated_idle_h_new"])],
            ["coverage", fmt_pct(f["coverage_base"]), fmt_pct(f["coverage_new"])],
        ], ["l", "r", "r"]) + [""]
        for title, every, keys in (("Hosts", cmp.hosts, ("host",)), ("GPUs", cmp.gpus, ("host", "gpu", "gpu_instance"))):
            changed = changed_rows(every)
            rows = changed[:top]
            if not rows:
                out += [f"{title}: no change in wasted GPU-hours or coverage ({len(every)} compared).", ""]
                continue
            rest = len(every) - len(changed)
            out += [f"### {title} that changed" + (f" ({rest} unchanged not shown)" if rest else ""), ""]
            out += _table(["", title[:-1].lower(), "wasted GPU-h", "wasted share", "busy idle-tensor GPU-h",
                           "idle allocated GPU-h", "coverage"],
                          [["!" if r["regression"] else {"appeared": "+", "vanished": "-", "missing": "-"}.get(r["status"], ""),
                            md(_who(r, keys) + STATUS_TAG.get(r["status"], "")
                               + (f" (model {r['model_base']} → {r['model_new']})" if r.get("model_base") and r.get("model_new")
                                  and r["model_base"] != r["model_new"] else "")),
                            _md_change(r, _hours(r["wasted_gpu_h_base"]), _hours(r["wasted_gpu_h_new"])),
                            _md_change(r, fmt_pct(r["wasted_share_base"]), fmt_pct(r["wasted_share_new"])),
                            _md_change(r, _hours(r["busy_tensor_idle_h_base"]), _hours(r["busy_tensor_idle_h_new"])),
                            _md_change(r, _hours(r["allocated_idle_h_base"]), _hours(r["allocated_idle_h_new"])),
                            _md_change(r, fmt_pct(r["coverage_base"]), fmt_pct(r["coverage_new"]))] for r in rows],
                          ["l", "l", "r", "r", "r", "r", "r"]) + [""]
    f = cmp.findings or {}
    items = [("new", x) for x in f.get("new", [])] + [("resolved", x) for x in f.get("resolved", [])] + [
        ("changed", x) for x in f.get("changed", [])] + [("host missing", x) for x in f.get("missing", [])]
    out += ["### Findings", ""]
    if items:
        out += _table(["", "change", "code", "severity", "subject", "message"],
                      [["!" if x.get("regression") else "", tag, md(x["code"]),
                        md(_arrow(x.get("severity_base") or x["severity"], x["severity"], " → ")), md(x["subject"]),
                        md(x.get("message"))] for tag, x in items], ["l", "l", "l", "l", "l", "l"])
    else:
        out.append("No finding appeared, was resolved or changed severity.")
    return "\n".join(out) + "\n"


def render_diff_json(cmp, *, indent: int | None = 2) -> str:
    from ridgeline.render.jsonout import clean

    doc: dict[str, Any] = clean(cmp.to_dict())
    return json.dumps(doc, indent=indent, allow_nan=False, ensure_ascii=False) + "\n"
