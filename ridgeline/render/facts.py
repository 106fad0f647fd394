"""The derived numbers the views print, computed once (issue 20, item 10: one number per fact).

Every view -- the terminal, Markdown, HTML, SARIF/GitHub annotations, ``check --write`` -- renders
the one analysis result, and the JSON document (``ridgeline.render.jsonout``) is that result written
down. Numbers that are not already a column of a table or a field of a finding are computed here,
the JSON document records them, and the renderers call the same functions: a view formats a
number, it never recomputes it in its own way.

Decisions:

* **Ridge per roof.** A compute roof's ridge point is its value over the DRAM bandwidth roof *of
  the same device* (an input mixing GPUs has one set of roofs per device; the device is the one
  the roof's provenance names, ``... on NVIDIA H200: ...``). Two compute roofs of one precision
  (Hopper's wgmma and mma.sync paths) each have their own ridge: the ridge of ``BF16 TC
  mma.sync`` is the mma.sync roof over the bandwidth, never the first BF16 roof's. A catalogue
  roof names no device and is set against the input's DRAM roof when there is just one (a
  measured one beside a datasheet compute peak, as the classifier does per launch). A device with
  no DRAM roof, or with several different ones, has no ridge (null).
* **Time by bound.** Share of the profiled GPU time (the sum of launch durations, the same
  denominator as every share) per bound; a launch without a bound counts as ``unknown``.
* **Kernel table figures** are the SUMMARY table's (``ridgeline.analyzer.kernels.roofline.summarize``):
  ``roof_fraction`` is the duration-weighted mean of the launches' roof fractions and
  ``saving_upper_bound_s`` the gap to the roof (GPU time minus time at the roof, summed over the
  name's launches). A finding's ``impact_s`` is what its remedy buys and can be larger than that gap
  when the remedy changes the work (RL101's batching: the same tokens at a larger batch); views
  label the two differently and never print one as the other.
"""

from __future__ import annotations

from typing import Any

from ridgeline.result import roof_device  # noqa: F401  (re-exported: the renderers' import)
from ridgeline.result import roof_ridges as _ridges


def roof_ridges(result) -> list[float | None]:
    """Ridge point (FLOP/B) of each roof in ``result.roofs``, in order (ridgeline.result.roof_ridges)."""
    return _ridges(result.roofs or ())


def roof_records(result) -> list[dict[str, Any]]:
    """The JSON document's ``roofs``: each Roof's fields plus its ``ridge_flop_per_byte``."""
    return [dict(r.to_dict(), ridge_flop_per_byte=ridge) for r, ridge in zip(result.roofs or (), roof_ridges(result))]


def time_by_bound(result) -> dict[str, float]:
    """Share of the profiled GPU time per bound as every view shows it (memory, compute, launch,
    stall, unknown: the latency class split by kind, :func:`ridgeline.analyzer.kernels.latency.view_bound_expr`),
    from the launches; {} without launch durations."""
    import polars as pl

    from ridgeline.analyzer.kernels.latency import view_bound_expr

    def with_kind(df):
        return df if "latency_kind" in df.columns else df.with_columns(pl.lit(None, dtype=pl.String).alias("latency_kind"))

    k = getattr(result, "kernels", None)
    if k is not None and k.height:
        total = k.get_column("duration_s").sum() or 0.0
        if not total:
            return {}
        agg = with_kind(k).group_by(view_bound_expr().fill_null("unknown").alias("bound")).agg(
            pl.col("duration_s").sum().alias("t"))
        return {b: float(t) / total for b, t in agg.sort("bound").iter_rows() if t}
    s = getattr(result, "summary", None)  # a result without its launches: the names' shares
    if s is not None and s.height:
        agg = with_kind(s).group_by(view_bound_expr().fill_null("unknown").alias("bound")).agg(
            pl.col("time_share").sum().alias("t"))
        return {b: float(t) for b, t in agg.sort("bound").iter_rows() if t}
    return {}


def off_roofline(result) -> tuple[Any, dict[str, Any]] | None:
    """The launches the roofline could not place (bound ``unknown``) that ncu's speed of light
    describes, as every view's "ncu utilization" table shows them.

    One row per kernel *name* (``kernel_name``, the kernel table's key, so FlashAttention-3 and
    another kernel sharing ``cutlass::device_kernel`` are two rows), with the kernel table's label,
    launches, GPU time (null when no launch has a duration, as in the kernel table: unknown, not
    0 s), and the median SM and DRAM throughput (% of peak). The second value says why the launches
    are off the roofline, from their ``missing`` list: ``no_roof`` launches have their FLOP/byte
    figures and lack only a roof (``roofs`` names them), ``no_counters`` launches lack a counter
    (``counters`` names them). None when there is no such launch.
    """
    import polars as pl

    k = getattr(result, "kernels", None)
    if k is None or not k.height or "bound" not in k.columns:
        return None
    # off the roofline: nothing placed them (a bound, if any, is ncu's speed of light: docs/speed-of-light.md)
    off = pl.col("bound") == "unknown"
    if "bound_source" in k.columns:
        off = off | (pl.col("bound_source") == "ncu-speed-of-light").fill_null(False)
    sol = k.filter(off & (pl.col("sm_throughput_pct").is_not_null() | pl.col("dram_throughput_pct").is_not_null()))
    if not sol.height:
        return None
    missing = (pl.col("missing") if "missing" in sol.columns else pl.lit([], dtype=pl.List(pl.String))).fill_null([])
    label = pl.col("kernel_label") if "kernel_label" in sol.columns else pl.col("short_name")
    sol = sol.with_columns(missing.alias("_missing"),
                           missing.list.eval(~pl.element().str.ends_with(" roof")).list.any().alias("_no_counters"))
    rows = (sol.group_by("kernel_name")
            .agg(label.drop_nulls().first().alias("kernel_label"), pl.col("short_name").first(),
                 pl.len().alias("launches"),
                 pl.when(pl.col("duration_s").count() > 0).then(pl.col("duration_s").sum()).alias("total_duration_s"),
                 pl.col("sm_throughput_pct").median().alias("sm_pct"),
                 pl.col("dram_throughput_pct").median().alias("dram_pct"))
            .sort(["total_duration_s", "kernel_name"], descending=[True, False], nulls_last=True))

    def names(df, roofs: bool) -> list[str]:
        items = df.get_column("_missing").explode().drop_nulls()
        items = items.filter(items.str.ends_with(" roof") == roofs)
        return sorted(set(items.to_list()))

    counters = sol.filter(pl.col("_no_counters"))
    why = {"launches": sol.height, "no_counters": counters.height, "no_roof": sol.height - counters.height,
           "counters": names(counters, False), "roofs": names(sol, True)}
    return rows, why


def off_roofline_reason(why: dict[str, Any]) -> str:
    """``26 launches off the roofline: 26 lack only a roof (DRAM bandwidth roof, compute roof)``."""
    parts = []
    if why["no_roof"]:
        parts.append(f"{why['no_roof']} {'has its' if why['no_roof'] == 1 else 'have their'} FLOP/byte counters but no roof ({', '.join(why['roofs']) or 'roof'})")
    if why["no_counters"]:
        parts.append(f"{why['no_counters']} {'lacks' if why['no_counters'] == 1 else 'lack'} FLOP/byte counters ({', '.join(why['counters'])})")
    n = why["launches"]
    return f"{n:,} launch{'' if n == 1 else 'es'} off the roofline: " + "; ".join(parts)


#: what every view prints where no GPU is named (the JSON's ``gpu.label`` is then null)
UNKNOWN_GPU = "unknown GPU"


def recorded_devices(result) -> list[str]:
    """The device names the inputs recorded, sorted: the profile's ``device_name``, the timeline
    devices' ``device_name`` and the telemetry's ``model`` (what the input says, not a catalogue match)."""
    names: set[str] = set()
    tl = getattr(result, "timeline", None)
    tel = getattr(result, "windows", None)
    if tel is None or not getattr(tel, "height", 0):
        tel = getattr(result, "telemetry", None)
    for frame, col in ((getattr(result, "kernels", None), "device_name"),
                       (getattr(tl, "devices", None) if tl is not None else None, "device_name"),
                       (tel, "model")):
        if frame is not None and getattr(frame, "height", 0) and col in frame.columns:
            names.update(str(v) for v in frame.get_column(col).unique().to_list() if v)
    return sorted(names)


def telemetry_gpu_count(result) -> int:
    """GPUs (and MIG instances) the telemetry saw: distinct host / gpu / gpu_instance."""
    for frame in (getattr(result, "windows", None), getattr(result, "telemetry", None)):
        if frame is not None and getattr(frame, "height", 0):
            keys = [c for c in ("host", "gpu", "gpu_instance") if c in frame.columns]
            return frame.select(keys).unique().height if keys else 0
    return 0


def gpu_label(result) -> str | None:
    """The GPU a run is about, as every view names it (report title and summary card, Markdown
    ``**GPU:**``, the terminal's ``GPU:`` line) and the JSON's ``gpu.label``: the catalogue GPU whose
    roofs were used; else the device names the inputs recorded (a timeline's or telemetry's GPU
    that no roof needs); else how many GPUs the telemetry saw, model not recorded; else None (the
    views print :data:`UNKNOWN_GPU`)."""
    if getattr(result, "gpu_name", None):
        return result.gpu_name
    names = recorded_devices(result)
    if names:
        return ", ".join(names)
    n = telemetry_gpu_count(result)
    if n:
        return f"{n} GPU{'s' if n != 1 else ''} (model not recorded)"
    return None


def gpu_title(result) -> str:
    """:func:`gpu_label`, or :data:`UNKNOWN_GPU`: the words every view prints."""
    return gpu_label(result) or UNKNOWN_GPU
