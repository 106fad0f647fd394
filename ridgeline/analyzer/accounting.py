"""Per-input accounting: what was read, what was used, what was left out and why.

Every run ends with one record per input (``AnalysisResult.accounting``, the JSON's
``accounting`` key, and an ``Accounting`` block in the text when something was not used):

* ncu exports, in launches: ``read = used + skipped`` (skipped launches and lines with their
  reasons, from the readers' skipped list and the boundary checks);
* telemetry, in samples of the long table: ``used`` (a number) + ``missing`` (NaN, ``[N/A]``,
  DCGM blank sentinels: kept as null, never 0) = samples taken from the file; ``skipped`` counts
  the items the reader left out (lines, series), each listed with its reason in ``skipped``.

``balanced`` says whether the counts add up; the text shows the block when an input is not
trivially clean (something skipped or missing, or the counts do not add up).
"""

from __future__ import annotations

from collections import Counter
from typing import Any


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
        skipped_by_source.setdefault(str(s.source), []).append(s)
    kernels = result.kernels
    used_launches: dict[str, int] = {}
    if kernels is not None and getattr(kernels, "height", 0) and "source" in kernels.columns:
        for src, n in kernels.group_by("source").agg(pl.len()).iter_rows():
            used_launches[str(src)] = int(n)
    samples = getattr(result, "sample_counts", None) or {}
    out = []
    for info in result.inputs:
        items = [s for s in skipped_by_source.get(str(info.path), []) if s.item != "file"]
        reasons = Counter(_reason_key(s.reason) for s in items)
        rec: dict[str, Any] = {"path": info.path, "kind": info.kind}
        if info.kind.startswith("ncu"):
            used = used_launches.get(str(info.path), 0)
            rec.update(unit="launches", read=used + len(items), used=used, missing=0, skipped=len(items))
            rec["balanced"] = True
        else:
            n, nulls = samples.get(str(info.path), (None, None))
            rec.update(unit="samples", read=n, used=None if n is None else n - nulls, missing=nulls,
                       skipped=len(items))
            rec["balanced"] = n is not None
        rec["skipped_reasons"] = dict(reasons.most_common())
        out.append(rec)
    return out


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
        if r["unit"] == "launches":
            text = f"{r['path']}: {r['read']} launches read = {r['used']} used + {r['skipped']} skipped"
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
