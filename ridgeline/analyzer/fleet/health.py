"""GPU health as evidence: XID codes, ECC errors, row remapping, NVLink and PCIe replays per window.

Called from the per-partition reduction (:func:`ridgeline.analyzer.fleet.telemetry._window_query`),
so it runs wherever the reduction runs (local threads or Dask) and gives the same rows. The
input rows are one per GPU and timestamp, sorted by (GPU, time); the health fields
(:data:`ridgeline.analyzer.schema.HEALTH_FIELDS`) are columns of it like any other field.

How each window column is reached (only for fields the input carries; a GPU whose input has
no health series gets nulls and ``health_fields`` 0: nothing is said about its health, never
"healthy"):

* ``xid_codes``: DCGM's ``XID_ERRORS`` holds the code of the *last* XID seen (0 = none). A new
  XID is a sample whose value is non-zero and differs from the GPU's previous reported value
  (a rising edge, so a code held over many scrapes counts once). The codes are listed in the
  order they first appeared in the window; ``xid_first_seen`` is the time of the first one.
* ``xid_at_start_code``: a non-zero code already held at the GPU's first sample. It may predate
  the capture (the gauge keeps the last code until the driver reloads), so it is not "new".
* ``*_increase_count``: the counters are cumulative. Per sample the increase is the difference
  from the GPU's previous reported value; a decrease is a reset (driver reload for volatile
  ECC counts, an exporter restart) and counts the new value from zero. The window's increase
  sums its samples' increases (the first sample of a GPU has no previous value: none). ECC
  single/double-bit increases take the larger of the volatile and aggregate counters (both count
  the same errors); NVLink CRC adds the flit and data CRC counters. ``counter_resets``: the
  decreases seen in the window.
* ``ecc_dbe_first_seen``: first sample whose double-bit count increased.
* ``row_remap_pending`` / ``row_remap_failure``: any sample in the window with the flag set;
  ``row_remap_first_seen``: the first such sample.

The rule RL208 (``gpu-health-events``) turns these into findings.
"""

from __future__ import annotations

from ridgeline.analyzer.schema import HEALTH_FIELDS

COUNTERS = (
    "ecc_sbe_volatile_count", "ecc_dbe_volatile_count", "ecc_sbe_aggregate_count", "ecc_dbe_aggregate_count",
    "remapped_rows_correctable_count", "remapped_rows_uncorrectable_count",
    "nvlink_crc_flit_error_count", "nvlink_crc_data_error_count", "nvlink_replay_error_count",
    "pcie_replay_count",
)
# window column -> the counters whose increases it combines, and how ("max": the same errors
# counted twice; "sum": distinct errors)
INCREASES: dict[str, tuple[tuple[str, ...], str]] = {
    "ecc_sbe_increase_count": (("ecc_sbe_volatile_count", "ecc_sbe_aggregate_count"), "max"),
    "ecc_dbe_increase_count": (("ecc_dbe_volatile_count", "ecc_dbe_aggregate_count"), "max"),
    "remapped_rows_correctable_increase_count": (("remapped_rows_correctable_count",), "sum"),
    "remapped_rows_uncorrectable_increase_count": (("remapped_rows_uncorrectable_count",), "sum"),
    "nvlink_crc_increase_count": (("nvlink_crc_flit_error_count", "nvlink_crc_data_error_count"), "sum"),
    "nvlink_replay_increase_count": (("nvlink_replay_error_count",), "sum"),
    "pcie_replay_increase_count": (("pcie_replay_count",), "sum"),
}

assert set(COUNTERS) | {"xid_last_code", "row_remap_pending_flag", "row_remap_failure_flag"} == set(HEALTH_FIELDS)


def row_columns(has: set) -> list:
    """Per-row temporaries (rows sorted by ``_gid``, ``timestamp``) for the health fields in ``has``."""
    import polars as pl

    out = []
    if "xid_last_code" in has:
        x = pl.col("xid_last_code")
        prev = x.forward_fill().shift(1).over("_gid")
        first = pl.col("timestamp") == pl.col("timestamp").min().over("_gid")
        new = x.is_not_null() & (x != 0) & prev.is_not_null() & (x != prev)
        out += [
            pl.when(new).then(x.cast(pl.Int64)).otherwise(None).alias("_xid_new"),
            pl.when(first & x.is_not_null() & (x != 0)).then(x.cast(pl.Int64)).otherwise(None).alias("_xid_start"),
        ]
    for c in COUNTERS:
        if c in has:
            v = pl.col(c)
            d = v - v.forward_fill().shift(1).over("_gid")
            out += [
                pl.when(d >= 0).then(d).when(d < 0).then(v).otherwise(None).alias(f"_inc_{c}"),
                (d < 0).fill_null(False).cast(pl.Int64).alias(f"_reset_{c}"),
            ]
    return out


def window_aggs(has: set) -> list:
    """Aggregations per (GPU, window) of the temporaries from :func:`row_columns`."""
    import polars as pl

    present = [f for f in HEALTH_FIELDS if f in has]
    if not present:
        return []
    t = pl.col("timestamp")
    aggs = [pl.sum_horizontal([(pl.col(f).count() > 0).cast(pl.Int64) for f in present]).cast(pl.Int64).alias("health_fields")]
    if "xid_last_code" in has:
        new = pl.col("_xid_new")
        aggs += [
            new.drop_nulls().unique(maintain_order=True).cast(pl.String).str.join(",").alias("xid_codes"),
            t.filter(new.is_not_null()).min().alias("xid_first_seen"),
            pl.col("_xid_start").drop_nulls().first().alias("xid_at_start_code"),
        ]
    for name, (fields, how) in INCREASES.items():
        sums = [pl.when(pl.col(f).count() > 0).then(pl.col(f"_inc_{f}").sum()).otherwise(None)
                for f in fields if f in has]
        if sums:
            combined = pl.max_horizontal(sums) if how == "max" else pl.sum_horizontal(sums)
            seen = pl.any_horizontal([s.is_not_null() for s in sums])
            aggs.append(pl.when(seen).then(combined).otherwise(None).alias(name))
    dbe = [f for f in INCREASES["ecc_dbe_increase_count"][0] if f in has]
    if dbe:
        aggs.append(t.filter(pl.any_horizontal([pl.col(f"_inc_{f}") > 0 for f in dbe])).min().alias("ecc_dbe_first_seen"))
    flags = []
    for f, name in (("row_remap_pending_flag", "row_remap_pending"), ("row_remap_failure_flag", "row_remap_failure")):
        if f in has:
            aggs.append(pl.when(pl.col(f).count() > 0).then((pl.col(f) > 0).any()).otherwise(None).alias(name))
            flags.append(pl.col(f) > 0)
    if flags:
        aggs.append(t.filter(pl.any_horizontal(flags)).min().alias("row_remap_first_seen"))
    resets = [pl.col(f"_reset_{c}") for c in COUNTERS if c in has]
    if resets:
        seen = pl.any_horizontal([pl.col(c).count() > 0 for c in COUNTERS if c in has])
        aggs.append(pl.when(seen).then(pl.sum_horizontal(resets).sum()).otherwise(None).cast(pl.Int64).alias("counter_resets"))
    return aggs


def finish(df):
    """After the group-by: an empty XID list is null (no new XID in the window)."""
    import polars as pl

    if "xid_codes" in df.collect_schema().names():
        return df.with_columns(pl.when(pl.col("xid_codes") == "").then(None).otherwise(pl.col("xid_codes")).alias("xid_codes"))
    return df


# XIDs with NVIDIA's documented meaning, kind, severity and action: ridgeline.analyzer.fleet.xids
# (its docstring says what the XID gauge can and cannot show: a repeat of the same XID is invisible)
def _meanings() -> dict[int, str]:
    from ridgeline.analyzer.fleet.xids import XIDS

    return {code: row[0] for code, row in XIDS.items()}


XID_MEANINGS: dict[int, str] = _meanings()


def xid_meaning(code: int) -> str:
    from ridgeline.analyzer.fleet.xids import meaning

    return meaning(code)
