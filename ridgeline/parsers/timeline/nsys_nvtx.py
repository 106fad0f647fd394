"""NVTX ranges of an ``nsys export --type sqlite`` database -> HOST_API rows of kind ``nvtx``.

``NVTX_EVENTS`` holds push/pop ranges (``eventType`` 59) and start/end ranges (60) with their
text either inline (``text``) or as a ``StringIds`` id (``textId``), both schema eras; marks and
domain/category definitions (34, 39, 75, ...) have no end and are not ranges. Every range is
kept, whatever ``host_calls`` says: the step view (:mod:`ridgeline.analyzer.timeline.steps`) reads ranges
named like a step or a data loader, the range view (:mod:`ridgeline.analyzer.timeline.ranges`) all of them
(an ``emit_nvtx`` capture holds about one range per PyTorch operator: a HOST_API row each).
"""

from __future__ import annotations

NVTX_RANGE_TYPES = (59, 60)  # NvtxPushPopRange, NvtxStartEndRange


def read_nvtx_ranges(con, tables: set[str], *, host_calls: str, select, as_int):  # noqa: ARG001
    """NVTX ranges as raw HOST_API columns (``_row``, ``_problem``, times, name, ids), or None.

    ``select``/``as_int``: the sqlite reader's batched SELECT and integer-cell helpers."""
    import polars as pl

    if "NVTX_EVENTS" not in tables:
        return None
    cols = {r[1] for r in con.execute("PRAGMA table_info(NVTX_EVENTS)")}
    if not {"start", "end", "eventType"} <= cols:
        return None
    text = "n.text" if "text" in cols else "NULL"
    join, sid = ("LEFT JOIN StringIds s ON s.id = n.textId", "s.value") if "textId" in cols and "StringIds" in tables \
        else ("", "NULL")
    tid = "n.globalTid" if "globalTid" in cols else "NULL"
    frame = select(con, f"""
        SELECT n.rowid AS _row, {as_int('n.start', 'start_ns')}, {as_int('n.end', 'end_ns')},
               CASE WHEN typeof(n.start) <> 'integer' THEN 'start is ' || substr(quote(n.start), 1, 40)
                    WHEN typeof(n.end) <> 'integer' THEN 'end is ' || substr(quote(n.end), 1, 40) END AS _problem,
               CAST(coalesce({text}, {sid}) AS TEXT) AS name,
               {tid} / 16777216 % 16777216 AS process_id, {tid} % 16777216 AS thread_id
        FROM NVTX_EVENTS n {join}
        WHERE n.eventType IN ({", ".join(str(t) for t in NVTX_RANGE_TYPES)})""")
    if not frame.height:
        return None
    frame = frame.with_columns(pl.col("name").cast(pl.String), kind=pl.lit("nvtx"),
                               correlation_id=pl.lit(None, dtype=pl.Int64))
    return frame
