"""The roofs each launch is measured against, and the roofs a result draws.

Split out of :mod:`ridgeline.analyzer.kernels.roofline` (which states the rules in its docstring).

* **Per launch.** A peak ncu recorded is a per-cycle peak times *that launch's* clock
  (``dram__bytes.sum.peak_sustained x dram__cycles_elapsed.avg.per_second``); the clock moves from
  launch to launch (boost, power and thermal limits, ``--clock-control``), so each launch's roof
  fractions are taken against its own peaks, as ncu's own percentages are. A launch without a
  recorded peak gets the median of the launches of its device that have one, then the catalogue
  entry (a datasheet FLOP/s scaled to the launch's own SM clock where both are known).
* **Per device.** The roofs a result lists and draws (:func:`roofs_used`) are one per device and
  level (compute: per precision and tensor path): the median over the device's launches, the
  figure the terminal prints with its provenance. A launch's own roof can differ from it by its
  clock; its fractions never do (they are the launch's own).
"""

from __future__ import annotations

from ridgeline.analyzer.kernels.gpus import PRECISIONS
from ridgeline.result import Roof

# KERNEL column holding the peak ncu recorded for a precision
MEASURED_PEAK_COLUMNS = {
    "fp64": "peak_flops_fp64_per_s",
    "fp32": "peak_flops_fp32_per_s",
    "fp16": "peak_flops_fp16_per_s",
}
# KERNEL column holding the cache bandwidth peak ncu recorded -> memory level of the roof
CACHE_PEAK_COLUMNS = {"peak_l2_bytes_per_s": "l2", "peak_l1_bytes_per_s": "l1"}


def launch_peaks(df):
    """Add the roofs of each launch (``peak_flops_per_s``, ``peak_bw_bytes_per_s``, their
    ``*_source``, ``peak_l2_bw_bytes_per_s``, ``peak_l1_bw_bytes_per_s``) and of its device
    (``_dev_flops``, ``_dev_flops_src``, ``_dev_bw``, ``_dev_bw_src``; what :func:`roofs_used`
    lists). ``df`` has ``_dev``, ``precision``, ``tensor_path`` and the catalogue columns
    (``_cat_<precision>``, ``_catclk_<precision>``, ``_cat_bw``, ``_cat_src``).
    -> (df, the per-device medians)."""
    import polars as pl

    meas = df.group_by("_dev").agg(
        *[pl.col(c).median().alias(f"_m_{p}") for p, c in MEASURED_PEAK_COLUMNS.items()],
        pl.col("peak_dram_bytes_per_s").median().alias("_m_bw"),
        pl.col("peak_dram_bytes_per_s_source").drop_nulls().first().alias("_m_bw_src"),
        *[pl.col(c).median().alias(f"_m_{lvl}") for c, lvl in CACHE_PEAK_COLUMNS.items()],
        *[pl.col(f"{c}_source").drop_nulls().first().alias(f"_m_{lvl}_src") for c, lvl in CACHE_PEAK_COLUMNS.items()],
        *[pl.col(c).count().alias(f"_n_{lvl}") for c, lvl in CACHE_PEAK_COLUMNS.items()],
        pl.len().alias("_n_dev"),
        pl.col("sm_clock_hz").median().alias("_sm_clk"),
        pl.col("dram_clock_hz").median().alias("_dram_clk"),
    )
    # tensor roofs: per device, precision and instruction path (a mma.sync kernel's roof is the
    # mma.sync rate); the clock stated with a roof is the median over the same launches
    is_tensor = pl.col("precision").str.ends_with("_tensor")
    has_peak = pl.col("peak_flops_tensor_per_s").is_not_null()
    meas_t = (
        df.filter(is_tensor)
        .group_by("_dev", "precision", "tensor_path")
        .agg(
            pl.col("peak_flops_tensor_per_s").median().alias("_m_tensor"),
            pl.col("sm_clock_hz").filter(has_peak).median().alias("_t_clk"),
            has_peak.sum().cast(pl.Int64).alias("_t_n"),
            pl.col("peak_flops_tensor_per_s_source").drop_nulls().first().alias("_t_src"),
        )
    )
    df = df.join(meas, on="_dev", how="left", maintain_order="left")
    df = df.join(meas_t, on=["_dev", "precision", "tensor_path"], how="left", maintain_order="left", nulls_equal=True)

    def per_precision(value):
        """One expression choosing ``value(p)`` by the launch's precision (null without one)."""
        e = None
        for p in PRECISIONS:
            cond = pl.col("precision") == p
            e = (pl.when(cond) if e is None else e.when(cond)).then(value(p))
        return e.otherwise(None)

    def own(p):  # the peak this launch recorded, at its own clock
        if p in MEASURED_PEAK_COLUMNS:
            return pl.col(MEASURED_PEAK_COLUMNS[p])
        return pl.col("peak_flops_tensor_per_s") if p.endswith("_tensor") else pl.lit(None, dtype=pl.Float64)

    def median(p):  # the device's (tensor: per precision and path)
        col = f"_m_{p}" if p in MEASURED_PEAK_COLUMNS else "_m_tensor" if p.endswith("_tensor") else None
        return pl.col(col) if col else pl.lit(None, dtype=pl.Float64)

    # a datasheet peak assumes a clock: scaled to the SM clock the export recorded (as ncu's own
    # peaks are), when the catalogue knows that clock; per launch its own, per device the median
    def catalogue(p, clock):
        return pl.col(f"_cat_{p}") * pl.coalesce(clock / pl.col(f"_catclk_{p}"), pl.lit(1.0))

    measured_own = per_precision(lambda p: pl.coalesce(own(p), median(p)))
    measured_dev = per_precision(median)
    cat_own = per_precision(lambda p: catalogue(p, pl.coalesce(pl.col("sm_clock_hz"), pl.col("_sm_clk"))))
    cat_dev = per_precision(lambda p: catalogue(p, pl.col("_sm_clk")))
    df = df.with_columns(
        per_precision(lambda p: pl.col(f"_catclk_{p}")).alias("_catclk"),
        per_precision(lambda p: pl.col(f"_cat_{p}")).alias("_cat_raw"),
    )

    def bw_source(src):
        return pl.when(src.fill_null("").str.contains("attribute")).then(pl.lit("ncu-device-attributes")).otherwise(pl.lit("ncu"))

    own_bw = pl.coalesce("peak_dram_bytes_per_s", "_m_bw")
    own_bw_src = pl.when(pl.col("peak_dram_bytes_per_s").is_not_null()).then(pl.col("peak_dram_bytes_per_s_source")) \
        .otherwise(pl.col("_m_bw_src"))

    def flops_source(measured):
        return pl.when(measured.is_not_null()).then(pl.lit("ncu")).when(pl.col("_cat_raw").is_not_null()).then(pl.col("_cat_src"))

    def source_bw(measured, src):
        return pl.when(measured.is_not_null()).then(bw_source(src)).when(pl.col("_cat_bw").is_not_null()).then(pl.col("_cat_src"))

    return df.with_columns(
        pl.coalesce(measured_own, cat_own).alias("peak_flops_per_s"),
        flops_source(measured_own).alias("peak_flops_source"),
        pl.coalesce(own_bw, "_cat_bw").alias("peak_bw_bytes_per_s"),
        source_bw(own_bw, own_bw_src).alias("peak_bw_source"),
        # cache roofs: measured only (the catalogue has no L2/L1 bandwidths)
        pl.coalesce("peak_l2_bytes_per_s", "_m_l2").alias("peak_l2_bw_bytes_per_s"),
        pl.coalesce("peak_l1_bytes_per_s", "_m_l1").alias("peak_l1_bw_bytes_per_s"),
        # the device's roofs, as listed and drawn
        pl.coalesce(measured_dev, cat_dev).alias("_dev_flops"),
        flops_source(measured_dev).alias("_dev_flops_src"),
        pl.coalesce("_m_bw", "_cat_bw").alias("_dev_bw"),
        source_bw(pl.col("_m_bw"), pl.col("_m_bw_src")).alias("_dev_bw_src"),
    ), meas


def roofs_used(df, meas, derivations: dict | None = None) -> list[Roof]:
    """The distinct roofs of the devices the launches ran on (bandwidth first): per device the
    median roof, with the launches and clock it was taken over."""
    import polars as pl

    roofs: list[Roof] = []
    bw = (
        df.filter(pl.col("_dev_bw").is_not_null())
        .group_by("_dev", "gpu", "_dev_bw", "_dev_bw_src", "_m_bw_src", "_n_dev", "_dram_clk")
        .agg()
        .sort("_dev")
    )
    for row in bw.iter_rows(named=True):
        roofs.append(
            Roof(
                kind="bandwidth",
                value=float(row["_dev_bw"]),
                source=row["_dev_bw_src"],
                level="dram",
                detail=_detail(row, "peak_dram_bytes_per_s", row["_m_bw_src"]),
            )
        )
    for column, lvl in CACHE_PEAK_COLUMNS.items():
        used = f"peak_{lvl}_bw_bytes_per_s"
        # from the per-device medians (one row per device), not the launches
        cache = meas.filter(pl.col(f"_m_{lvl}").is_not_null()).rename({f"_m_{lvl}": used}).sort("_dev")
        for row in cache.iter_rows(named=True):
            n = row[f"_n_{lvl}"]
            device = row["_dev"] or "unnamed device"
            roofs.append(
                Roof(
                    kind="bandwidth",
                    value=float(row[used]),
                    source="ncu",
                    level=lvl,
                    detail=f"median of {n} launch{'es' if n != 1 else ''} on {device}: {column} = {row[f'_m_{lvl}_src']}",
                )
            )
    is_t = pl.col("precision").str.ends_with("_tensor") & pl.col("_m_tensor").is_not_null()
    comp = (
        df.filter(pl.col("_dev_flops").is_not_null() & pl.col("precision").is_not_null())
        .with_columns(
            pl.when(is_t).then(pl.col("tensor_path")).alias("_path"),
            pl.when(is_t).then(pl.col("_t_clk")).otherwise(pl.col("_sm_clk")).alias("_clk"),
            pl.when(is_t).then(pl.col("_t_n")).otherwise(pl.col("_n_dev")).alias("_n"),
            pl.when(is_t).then(pl.col("_t_src")).alias("_src"),
        )
        .group_by("_dev", "gpu", "precision", "_path", "_dev_flops", "_dev_flops_src", "_n", "_clk", "_src",
                  "_cat_raw", "_catclk")
        .agg()
    )
    order = {p: i for i, p in enumerate(PRECISIONS)}
    rows = sorted(comp.iter_rows(named=True), key=lambda r: (r["_dev"], order.get(r["precision"], 99), r["_path"] or ""))
    for row in rows:
        p = row["precision"]
        column = MEASURED_PEAK_COLUMNS.get(p, "peak_flops_tensor_per_s")
        roofs.append(
            Roof(
                kind="compute",
                value=float(row["_dev_flops"]),
                source=row["_dev_flops_src"],
                precision=p,
                path=row["_path"],
                detail=_compute_detail(row, column, (derivations or {}).get(row["gpu"], {}).get(p)),
            )
        )
    return list(dict.fromkeys(roofs))


def _compute_detail(row: dict, column: str, formula: str | None = None) -> str:
    """Provenance of a compute roof; the clock stated is the one the figure was computed at."""
    clk = row.get("_clk")
    source = row["_dev_flops_src"]
    if formula is not None and source != "ncu":
        text = f"derived from the device attributes ncu recorded on {row['_dev'] or 'unnamed device'}: {formula}"
        ds_clk = row.get("_catclk")
        if ds_clk and clk and abs(clk / ds_clk - 1) > 1e-9:
            n = row["_n"]
            text += (f", scaled to the recorded SM clock {clk / 1e9:.4g} GHz "
                     f"(median of {n} launch{'es' if n != 1 else ''})")
        return text
    if source == "catalogue":
        text = f"{row['gpu']} datasheet"
        ds_clk = row.get("_catclk")
        if ds_clk and clk:
            n = row["_n"]
            text += (
                f": {row['_cat_raw'] / 1e12:.4g} TFLOP/s at {ds_clk / 1e9:.3g} GHz, scaled to the recorded SM clock "
                f"{clk / 1e9:.3g} GHz (median of {n} launch{'es' if n != 1 else ''})"
            )
        elif clk:
            text += ": not scaled to the recorded SM clock (the catalogue does not know the clock its figure assumes)"
        return text
    n = row["_n"]
    device = row["_dev"] or "unnamed device"
    text = f"median of {n} launch{'es' if n != 1 else ''} on {device}: {column}"
    if row.get("_src"):
        text += f" = {row['_src']}"
    if row.get("_path"):
        text += f" (tensor path {row['_path']})"
    if clk:
        text += f", at SM clock {clk / 1e9:.3g} GHz"
    return text


def _detail(row: dict, column: str, recipe: str | None) -> str:
    source = row.get("_dev_bw_src")
    device = row["_dev"] or "unnamed device"
    if source == "catalogue":
        return f"{row['gpu']} datasheet"
    if source == "derived-from-device-attributes":
        return f"derived from the device attributes ncu recorded on {device}"
    n = row["_n_dev"]
    text = f"median of {n} launch{'es' if n != 1 else ''} on {device}: {column}"
    if recipe and recipe != source:
        text += f" = {recipe}"
    clock = row.get("_dram_clk")
    if clock:
        text += f", at DRAM clock {clock / 1e9:.3g} GHz"
    return text
