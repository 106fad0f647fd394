"""Per-input accounting: what was read, what was used, what was left out and why.

Every run ends with one record per input (``AnalysisResult.accounting``, the JSON's
``accounting`` key, and an ``Accounting`` block in the text when something was not used):

* ncu exports, in launches: ``read = used + skipped`` (skipped launches and lines with their
  reasons, from the readers' skipped list and the boundary checks);
* timelines (nsys sqlite/CSV, Kineto), in records (GPU kernels, copies, memsets; the rows of an
  ``nsys stats`` summary): ``read = used + skipped``, where ``read`` counts the damaged records a
  ``--lenient`` run skipped (one ``skipped`` entry each, naming the table/event and row;
  ``TimelineTables.records_read``);
* telemetry, in samples of the long table: ``used`` (a number) + ``missing`` (NaN, ``[N/A]``,
  DCGM blank sentinels: kept as null, never 0) = samples taken from the file; ``skipped`` counts
  the items the reader left out (lines, series), each listed with its reason in ``skipped``.

``balanced`` says whether the counts add up; the text shows the block when an input is not
trivially clean (something skipped or missing, or the counts do not add up).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ridgeline.result import path_label


def sample_counts(lf) -> dict[str, tuple[int, int]]:
    """``{source: (samples, null values)}`` from a TELEMETRY LazyFrame, one streaming pass."""
    import polars as pl

    df = lf.group_by("source").agg(pl.len().alias("n"), pl.col("value").null_count().alias("nulls")) \
        .collect(engine="streaming")
    return {str(s): (int(n), int(z)) for s, n, z in df.iter_rows()}


def _reason_key(reason: str) -> str:
    """Reasons grouped without their per-item values (``..., got 'x'``)."""
    return reason.split(", got ")[0].strip()


def accounting(result) -> list[dict[str, Any]]:
    """One record per input (see the module docstring)."""
    import polars as pl

    skipped_by_source: dict[str, list] = {}
    for s in result.skipped:
        skipped_by_source.setdefault(path_label(s.source), []).append(s)
    kernels = result.kernels
    used_launches: dict[str, int] = {}
    if kernels is not None and getattr(kernels, "height", 0) and "source" in kernels.columns:
        for src, n in kernels.group_by("source").agg(pl.len()).iter_rows():
            used_launches[str(src)] = int(n)
    samples = getattr(result, "sample_counts", None) or {}
    timeline_used = _timeline_used(getattr(result, "timeline", None))
    out = []
    for info in result.inputs:
        key = path_label(info.path)  # as the tables name it (a file name that is not UTF-8, escaped)
        items = [s for s in skipped_by_source.get(key, []) if s.item != "file"]
        reasons: Counter = Counter()
        for s in items:  # an entry may stand for several ("N more like this": ridgeline.skiplog)
            reasons[_reason_key(s.reason)] += getattr(s, "count", 1)
        n_items = sum(getattr(s, "count", 1) for s in items)
        rec: dict[str, Any] = {"path": info.path, "kind": info.kind}
        if info.kind.startswith("ncu"):
            used = used_launches.get(key, 0)
            rec.update(unit="launches", read=used + n_items, used=used, missing=0, skipped=n_items)
            rec["balanced"] = True
        elif key in timeline_used:
            used = timeline_used[key]
            rec.update(unit="records", read=info.rows, used=used, missing=0, skipped=n_items)
            rec["balanced"] = info.rows == used + n_items
        else:
            n, nulls = samples.get(key, (None, None))
            rec.update(unit="samples", read=n, used=None if n is None else n - nulls, missing=nulls,
                       skipped=n_items)
            rec["balanced"] = n is not None
        rec["skipped_reasons"] = dict(reasons.most_common())
        out.append(rec)
    return out


def _timeline_used(tl) -> dict[str, int]:
    """``{source: records used}`` for timeline inputs: the kernels, copies and sets a trace's
    devices were built from, or the rows of an ``nsys stats`` summary."""
    if tl is None:
        return {}
    used: dict[str, int] = {str(s): 0 for s in getattr(tl, "inputs", []) or []}
    dev = getattr(tl, "devices", None)
    if dev is not None and getattr(dev, "height", 0):
        cols = [c for c in ("kernels", "memcpys", "memsets") if c in dev.columns]
        for row in dev.select("source", *cols).iter_rows():
            used[str(row[0])] = used.get(str(row[0]), 0) + sum(int(v or 0) for v in row[1:])
    totals = getattr(tl, "totals", None)
    if totals is not None and getattr(totals, "height", 0) and "source" in totals.columns:
        for src, n in totals.group_by("source").len().iter_rows():
            used[str(src)] = used.get(str(src), 0) + int(n)
    return used


def nontrivial(records: list[dict[str, Any]]) -> bool:
    return any(r["skipped"] or r["missing"] or not r["balanced"] for r in records)


def accounting_lines(records: list[dict[str, Any]], width: int = 80) -> list[str]:
    """The ``Accounting`` text block (empty when every input was used whole)."""
    import textwrap

    if not records or not nontrivial(records):
        return []
    lines = ["Accounting (inputs not used whole; read = used + missing + skipped):"]
    for r in records:
        if not (r["skipped"] or r["missing"] or not r["balanced"]):
            continue
        if r["unit"] in ("launches", "records"):
            text = f"{r['path']}: {r['read']} {r['unit']} read = {r['used']} used + {r['skipped']} skipped"
        elif r["read"] is None:
            text = f"{r['path']}: samples not counted (lazy input); {r['skipped']} item(s) skipped"
        else:
            text = (f"{r['path']}: {r['read']} samples = {r['used']} used + {r['missing']} missing (null)"
                    + (f"; {r['skipped']} line(s)/series skipped" if r["skipped"] else ""))
        if r["skipped_reasons"]:
            shown = [(why if len(why) <= 60 else why[:57] + "...", n) for why, n in r["skipped_reasons"].items()]
            text += " (" + "; ".join(f"{n} x {why}" for why, n in shown[:3]) + ("; ..." if len(shown) > 3 else "") + ")"
        lines += textwrap.wrap(text, width=width, initial_indent="  ", subsequent_indent="      ",
                               break_long_words=False, break_on_hyphens=False) or ["  " + text]
    return lines
