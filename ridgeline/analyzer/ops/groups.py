"""Op groups on the roofline: op calls with the same (op, input shapes, dtypes) on a device are one
group, the unit an engineer acts on (one GEMM shape, one attention geometry).

Per group: ``calls``, ``gpu_time_s`` (the sum over calls of each call's kernel-interval union,
:func:`ridgeline.analyzer.ops.attribute.op_calls`), ``share`` of the device's kernel time, the
modelled ``flops`` and ``bytes`` (:mod:`ridgeline.analyzer.ops.models`; bytes a lower bound),
achieved FLOP/s and bytes/s, and under the device GPU's datasheet roofs: ``roof_time_s`` =
max(FLOPs / peak of the group's precision, bytes / DRAM bandwidth), ``bound`` (which term is
larger: ``compute`` or ``memory``), ``roof_fraction`` = roof time / GPU time and ``saving_s`` =
GPU time - roof time (what reaching the roof would save). Ranked by saving, then by GPU time.

Kernels with no op are a group of their own (``op`` null); ops with no model keep their time,
with null model figures. Per device, ``model_coverage`` = share of kernel time in groups with a
model (:func:`coverage`). A group whose roof fraction is above 1 is kept as it is (the model or
the peak is wrong there): the caller names it, never clips it.
"""

from __future__ import annotations

from ridgeline.analyzer.schema import OP_GROUP_COLUMNS as _COLUMNS

OP_GROUP_COLUMNS = tuple(c for c in _COLUMNS if c != "source")
#: the columns :func:`roofed` computes from the GPU's roofs
ROOF_COLUMNS = ("achieved_flops_per_s", "achieved_bytes_per_s", "roof_time_s", "bound", "roof_fraction", "saving_s")


def op_groups(activities, api, gpus: dict | None = None):
    """TIMELINE + HOST_API of one trace -> the op-group table (:data:`OP_GROUP_COLUMNS`), or None
    where the trace has no kernel. ``gpus``: device index -> GPU catalogue entry (None, or a device
    not in it: no roof figures)."""
    import polars as pl

    from ridgeline.analyzer.ops.attribute import op_calls, op_kernels
    from ridgeline.analyzer.ops.models import with_models

    if activities is None or not activities.height:
        return None
    kernels = op_kernels(activities, api)
    if not kernels.height:
        return None
    calls = with_models(op_calls(kernels))
    keys = ["device", "op", "op_input_dims", "op_input_types"]
    g = (calls.group_by(keys, maintain_order=True)
         .agg(pl.len().alias("calls"), pl.col("kernels").sum(), pl.col("gpu_ns").sum().alias("_ns"),
              pl.col("flops").sum().cast(pl.Float64).alias("flops"), pl.col("bytes").sum().cast(pl.Float64).alias("bytes"),
              pl.col("flops").is_null().any().alias("_unmodelled"),
              pl.col("precision").drop_nulls().mode().sort().first().alias("precision"),
              pl.col("model").first(), pl.col("kernel").mode().sort().first().alias("kernel"))
         .with_columns(pl.when(pl.col("_unmodelled")).then(None).otherwise(pl.col(c)).alias(c)
                       for c in ("flops", "bytes", "precision", "model")))
    # from whole nanoseconds: a float sum's order (threads) would change the last digit between runs
    g = g.with_columns((pl.col("_ns") / 1e9).alias("gpu_time_s"),
                       (pl.col("_ns") / pl.col("_ns").sum().over("device")).alias("share")).drop("_ns")
    g = g.rename({"op_input_dims": "input_dims", "op_input_types": "input_types"})
    return roofed(g, gpus)


#: the order of op groups, every tie broken (two runs print the same document): most saving, most time
ORDER = (["saving_s", "gpu_time_s", "device", "op", "input_dims", "input_types"],)
ORDER_KW = {"descending": [True, True, False, False, False, False], "nulls_last": True}


def roofed(groups, gpus: dict | None):
    """Op groups (with or without roof figures) -> the same placed under ``gpus`` (device index ->
    catalogue entry; ``--gpu`` re-places a trace's groups under the GPU it names)."""
    import polars as pl

    g = groups.drop([c for c in ROOF_COLUMNS if c in groups.columns])
    extra = [c for c in g.columns if c not in OP_GROUP_COLUMNS]  # e.g. source
    peaks = _peaks(gpus or {})
    g = g.join(peaks, on=["device", "precision"], how="left")
    safe_t = pl.when(pl.col("gpu_time_s") > 0).then(pl.col("gpu_time_s"))
    compute_t = pl.col("flops") / pl.col("_peak")
    memory_t = pl.col("bytes") / pl.col("_bw")
    roof = pl.max_horizontal(compute_t, memory_t)
    g = g.with_columns(
        (pl.col("flops") / safe_t).alias("achieved_flops_per_s"), (pl.col("bytes") / safe_t).alias("achieved_bytes_per_s"),
        pl.when(compute_t.is_not_null() & memory_t.is_not_null()).then(roof).alias("roof_time_s"),
        pl.when(compute_t.is_not_null() & memory_t.is_not_null())
        .then(pl.when(compute_t >= memory_t).then(pl.lit("compute")).otherwise(pl.lit("memory"))).alias("bound"),
    ).with_columns(
        (pl.col("roof_time_s") / safe_t).alias("roof_fraction"),
        (pl.col("gpu_time_s") - pl.col("roof_time_s")).clip(lower_bound=0).alias("saving_s"),
    )
    return g.sort(*ORDER, **ORDER_KW).select(*extra, *OP_GROUP_COLUMNS)


def place_timeline_ops(timeline, entry) -> None:
    """A TimelineAnalysis' op groups placed under one GPU (``--gpu``'s entry) for every device."""
    g = getattr(timeline, "op_groups", None)
    if g is not None:
        timeline.op_groups = roofed(g, {d: entry for d in g.get_column("device").unique().to_list()})


def _peaks(gpus: dict):
    """device -> (precision, peak FLOP/s, DRAM bytes/s) rows of each device's catalogue entry."""
    import polars as pl

    from ridgeline.analyzer.kernels.gpus import PRECISIONS

    rows = [(d, p, float(e.peak(p)), float(e.dram_bw_bytes_per_s))
            for d, e in gpus.items() if e is not None and e.dram_bw_bytes_per_s for p in PRECISIONS if e.peak(p)]
    return pl.DataFrame(rows, schema={"device": pl.Int64, "precision": pl.String, "_peak": pl.Float64, "_bw": pl.Float64},
                        orient="row")


def device_gpus(devices: dict[int, str], forced=None) -> dict:
    """device index -> catalogue entry: ``forced`` (``--gpu``'s resolved entry) for every device, else
    each recorded name looked up (unknown names: no entry)."""
    from ridgeline.analyzer.kernels.gpus import try_lookup

    if forced is not None:
        return {d: forced for d in devices}
    return {d: try_lookup(n)[0] for d, n in devices.items()}


def trace_op_groups(tl):
    """One trace's TimelineTables -> its op groups with a ``source`` column, under the GPUs its devices
    name; None where the trace records no CPU op (nsys exports, traces without ops)."""
    import polars as pl

    api = tl.api
    if api is None or not api.height or tl.activities is None or not tl.activities.height \
            or not api.filter(pl.col("kind") == "cpu_op").height:
        return None
    g = op_groups(tl.activities, api, device_gpus(tl.devices))
    return None if g is None else g.with_columns(pl.lit(tl.source).alias("source")).select("source", *OP_GROUP_COLUMNS)


def coverage(groups):
    """Per device: ``kernel_time_s`` (sum of the groups' GPU time) and ``model_coverage`` (the share
    in groups with a model), between 0 and 1."""
    import polars as pl

    keys = [c for c in ("source", "device") if c in groups.columns]
    return (groups.group_by(keys, maintain_order=True)
            .agg(pl.col("gpu_time_s").sum().alias("kernel_time_s"),
                 pl.col("gpu_time_s").filter(pl.col("model").is_not_null()).sum().alias("_modelled"))
            .with_columns(pl.when(pl.col("kernel_time_s") > 0).then(pl.col("_modelled") / pl.col("kernel_time_s"))
                          .otherwise(0.0).alias("model_coverage")).drop("_modelled"))
