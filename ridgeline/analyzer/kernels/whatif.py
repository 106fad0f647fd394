"""What-if: the same measured kernels on another GPU, or at another decode batch.

Pure functions from the finished ROOFLINE table (one row per launch, see
:mod:`ridgeline.analyzer.kernels.roofline`) and catalogue entries to :class:`Projection` objects.
Nothing is re-measured: every launch keeps the FLOPs and bytes ncu counted and the **fraction
of the roof that bounds it** it reached; only the roofs (``--what-if GPU``) or the work
(``--what-if batch=N``) change.

The model, written down once:

* **Time at the roof.** ``t_roof = max(flops / compute_peak, dram_bytes / dram_bw,
  l2_bytes / l2_bw, l1_bytes / l1_bw)`` (levels without bytes or roof left out), with the peak
  of the launch's dominant precision and tensor path, as the classifier uses them. A memory- or
  compute-bound launch is projected to ``duration x t_roof' / t_roof`` (same achieved
  fraction), never below the launch floor; a projection that lands on the floor is
  ``latency``. The bound may flip where the ridge moves: the projected bound compares
  ``flops / peak'`` with ``dram_bytes' / bw'`` exactly as the classifier does.
* **Latency-bound launches** (no roof explains their time) keep their measured duration, unless
  their projected work at the roof takes longer (a slower GPU, a bigger batch); they then take
  that time (optimistic: 100% of the roof) and are bound by it.
* **Unknown launches** keep their measured duration and stay ``unknown``.

``--what-if GPU`` (a catalogue or configured GPU):

* **Compute.** The target's datasheet peak of the launch's precision, at the same fraction of
  its datasheet clock as the profiled launches ran (``same clocks policy``: the profiled roof
  over the profiled GPU's datasheet peak, the instruction-path factor divided out), times the
  target's path factor: on Hopper (CC 9.x) a legacy ``mma.sync`` (``hmma``) kernel reaches
  360,448 / 540,672 = 2/3 of the warpgroup (``hgmma``) peak the datasheet gives (ncu's own
  per-path peaks), so an ``hmma`` kernel keeps that ratio on a Hopper target and loses it
  elsewhere. A precision the target lacks (fp8 on an A100) cannot be projected: those launches
  keep their measured time, with a note.
* **Memory.** The target's datasheet DRAM bandwidth at the same fraction of the datasheet the
  profiled roof was (1.0 when ncu's roof equals the datasheet). Cache roofs (L2/L1) have no
  datasheet figure: they scale with the SM count.

``--what-if batch=N`` (a decode step at batch ``B`` -> ``N``, same GPU, same context length):

* ``B`` is ``--batch`` when given, else the launch shapes' count (the median grid of the
  normalization launches, one block per token row in vLLM, SGLang and FlashInfer), else the
  tokens per weight read that the weight GEMMs' intensity gives (``intensity x bytes per
  weight / 2``), as RL101 reads them.
* Weight GEMMs (families ``gemm``, ``grouped_gemm``) keep their bytes (the weights) and scale
  their FLOPs by ``N / B``. When the launch shapes say fewer tokens ran than the FLOPs count
  (tile padding: cuBLAS pads skinny GEMMs to 8 rows), the FLOPs are those of ``R`` rows
  (``R``: the FLOPs' token count) and scale by ``max(N, R) / R``. Activation bytes (``(k +
  n) / (n k)`` of the weights per token) are left out, so a large ``N`` is optimistic; a MoE's
  grouped GEMM reads more experts as the batch grows, which is not modelled either.
* Attention (family ``attention``) reads the KV cache of every sequence: FLOPs and bytes scale
  with ``N / B`` at the same context length.
* ``fill`` and ``other`` launches keep their work; every other family (norms, element-wise,
  activations, RoPE, KV writes, combines, sampling, copies, collectives...) works per token and
  scales FLOPs and bytes with ``N / B``.
* The batch that reaches the ridge is where the weight GEMMs' intensity (their FLOPs over their
  bytes, all launches together) meets their time-weighted ridge. Memory stops the batch where
  ``weights + N x KV bytes per sequence`` fills the GPU (weights: the bytes the weight GEMMs
  read in the profile; KV per sequence: the attention launches' bytes / ``B``); both read as if
  the profile holds one whole decode step, so a partial profile gives an optimistic limit.
* **LLM or not.** Tokens, tokens per second, decode step and KV cache are words for a profile
  that looks like LLM work (:mod:`ridgeline.analyzer.kernels.workload`: attention, RoPE, RMSNorm, MoE
  routing or sampling kernels, or an LLM library's kernels). For any other profile (a GEMM
  benchmark, a CUTLASS microbenchmark) the same projection is of the GEMMs' M dimension (rows
  per weight read): ``tokens_per_s`` stays null and the assumptions and notes say rows.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from ridgeline.analyzer.kernels.gpus import GPU, try_lookup
from ridgeline.analyzer.kernels.latency import LAUNCH_BOUND_MAX_S
from ridgeline.errors import UsageError

#: Hopper's dense mma.sync (HMMA) rate over its warpgroup wgmma (HGMMA) rate, per SM and cycle
#: (ncu ``sm__ops_path_tensor_op_hmma..._sparsity_off`` vs ``..._hgmma...`` peaks, H100/H200)
HOPPER_HMMA_OVER_HGMMA = 360448 / 540672
#: bytes per weight element by the GEMM's input precision (decode: intensity ~ 2 x tokens / this)
WEIGHT_BYTES = {"fp64": 8.0, "fp64_tensor": 8.0, "fp32": 4.0, "tf32_tensor": 4.0, "fp16": 2.0, "fp16_tensor": 2.0,
                "fp8_tensor": 1.0, "int8_tensor": 1.0}
WEIGHT_GEMM_FAMILIES = ("gemm", "grouped_gemm")
KV_FAMILIES = ("attention",)
FIXED_FAMILIES = ("fill", "other")
BATCH_RE = re.compile(r"^\s*batch\s*=\s*([0-9]+)\s*$", re.IGNORECASE)

GPU_ASSUMPTIONS = (
    "same kernels, same FLOPs and bytes per launch (as counted on the profiled GPU)",
    "each launch keeps its achieved fraction of the roof that bounds it",
    "same clocks policy: the target runs at the same fraction of its datasheet clock and bandwidth as the profile",
    "Hopper mma.sync (hmma) kernels reach 2/3 of the wgmma peak on a Hopper target, the full peak elsewhere",
    "L2/L1 roofs scale with the SM count (no datasheet figure); latency-bound launches keep their time",
)
BATCH_ASSUMPTIONS = (
    "same GPU, same context length, same kernels at the same achieved fraction of their roofs",
    "weight GEMMs keep their bytes (the weights) and scale FLOPs with the batch; activation bytes left out",
    "attention scales its KV-cache bytes and FLOPs with the batch; per-token kernels scale with the batch",
    "latency-bound launches keep their time until their work at the roof takes longer",
    "tokens per second assume the profile holds one whole decode step",
)
#: the batch model's assumptions for a profile that is not LLM work: the GEMMs' M dimension
ROWS_ASSUMPTIONS = (
    "same GPU, same kernels at the same achieved fraction of their roofs",
    "GEMMs keep their bytes (the weights, the B operand) and scale FLOPs with their rows per weight read (M); "
    "activation bytes left out",
    "other kernels scale their FLOPs and bytes with the rows; latency-bound launches keep their time until their work "
    "at the roof takes longer",
)


@dataclasses.dataclass
class Projection:
    """One ``--what-if`` scenario: the measured run and its projection, per kernel name."""

    scenario: str  # "H200", "batch=64"
    kind: str  # "gpu" | "batch"
    target_gpu: str | None  # GPU the projection runs on
    duration_s: float | None  # measured total GPU time
    projected_duration_s: float | None
    kernels: Any  # polars DataFrame: one row per kernel name (KERNEL_KEYS)
    launches: Any = None  # polars DataFrame: one row per launch (for plots), not serialized
    assumptions: list[str] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)
    batch: float | None = None  # decode batch of the profile
    batch_source: str | None = None  # how it was found
    projected_batch: int | None = None
    tokens_per_s: float | None = None
    projected_tokens_per_s: float | None = None
    ridge_batch: float | None = None  # batch at which the weight GEMMs reach the ridge
    max_batch_by_memory: float | None = None  # batch at which weights + KV cache fill the GPU
    memory_bytes: float | None = None
    llm_evidence: str | None = None  # why the profile reads as LLM work (tokens words); None: GEMM words

    @property
    def speedup(self) -> float | None:
        if not self.duration_s or not self.projected_duration_s:
            return None
        return self.duration_s / self.projected_duration_s


# keys of one ``kernels[]`` row of a projection, in order (documented in docs/json-schema.md)
KERNEL_KEYS: dict[str, str] = {
    "kernel_name": "kernel name exactly as ncu printed it",
    "kernel_label": "display label (see the ROOFLINE table)",
    "kernel_family": "kernel family (see the ROOFLINE table)",
    "launches": "launches of this kernel name",
    "duration_s": "measured GPU time of its launches (s)",
    "projected_duration_s": "projected GPU time of its launches (s)",
    "bound": "bound holding most of its measured time, as every view shows it: memory, compute, launch, stall "
    "(the two kinds of latency-bound launch, docs/latency.md) or unknown",
    "projected_bound": "bound holding most of its projected time, in the same words (a projected latency-bound "
    "launch is launch- or stall-bound by its projected duration)",
}


def parse_spec(spec: str) -> tuple[str, Any]:
    """``"batch=64"`` -> ``("batch", 64)``; anything else -> ``("gpu", name)`` (resolved later)."""
    text = str(spec).strip()
    if not text:
        raise UsageError("--what-if: empty scenario; give a GPU name (--what-if H200) or batch=N (--what-if batch=64)")
    if text.lower().startswith("batch"):
        m = BATCH_RE.match(text)
        digits = (m.group(1).lstrip("0") or "0") if m else ""
        if not m or digits == "0":
            raise UsageError(f"--what-if {spec!r}: expected batch=N with N a whole number >= 1, e.g. batch=64")
        from ridgeline import bounds  # at most BOUNDS["what_if_batch"]; a 10,000-digit N is not read as a number

        n = int(digits) if len(digits) <= 20 else digits[:20] + "..."
        return "batch", bounds.check("what_if_batch", n, where=f"--what-if {text[:40]}", name="N")
    return "gpu", text


def path_factor(cc: str | None, path: str | None) -> float:
    """Reachable tensor peak of an instruction path as a fraction of the datasheet (wgmma) peak."""
    if cc and str(cc).startswith("9") and (path or "").split("-")[0] == "hmma":
        return HOPPER_HMMA_OVER_HGMMA
    return 1.0


def _roof_time(flops, dram, l2, l1, peak, bw, l2bw, l1bw):
    """Polars expression: time at the roof, the longest of the levels that have bytes and a roof."""
    import polars as pl

    def part(num, den):
        return pl.when((den > 0) & num.is_not_null()).then(num / den).otherwise(0.0).fill_null(0.0)

    return pl.max_horizontal(part(flops, peak), part(dram, bw), part(l2, l2bw), part(l1, l1bw))


def _project(df, *, floor_s: float):
    """Add ``projected_duration_s`` and ``projected_bound`` to a launch frame holding the source
    terms (``_flops``... ``_l1bw``) and the projected ones (``_flops2``... ``_l1bw2``)."""
    import polars as pl

    c = pl.col
    t0 = _roof_time(c("_flops"), c("_dram"), c("_l2"), c("_l1"), c("_peak"), c("_bw"), c("_l2bw"), c("_l1bw"))
    # cache bytes scale like DRAM bytes
    t1 = _roof_time(c("_flops2"), c("_dram2"), c("_l2") * c("_bscale"), c("_l1") * c("_bscale"), c("_peak2"), c("_bw2"),
                    c("_l2bw2"), c("_l1bw2"))
    df = df.with_columns(t0.alias("_t0"), t1.alias("_t1"))
    dur = c("duration_s")
    ok = c("_projectable") & (c("_t0") > 0) & dur.is_not_null()
    roofed = c("bound").is_in(["memory", "compute"])
    proj = (
        pl.when(~ok).then(dur)
        .when(roofed).then(pl.max_horizontal(dur * c("_t1") / c("_t0"), pl.lit(floor_s)))
        .when(c("bound") == "latency").then(pl.max_horizontal(dur, c("_t1")))
        .otherwise(dur)
    )
    compute_side = (c("_flops2").fill_null(0.0) / c("_peak2")) >= (c("_dram2").fill_null(0.0) / c("_bw2"))
    side = pl.when(c("_flops2").fill_null(0.0) > 0).then(
        pl.when(compute_side).then(pl.lit("compute")).otherwise(pl.lit("memory"))
    ).otherwise(pl.lit("memory"))
    df = df.with_columns(proj.alias("projected_duration_s"))
    pbound = (
        pl.when(~ok).then(pl.lit("unknown"))
        .when(roofed & (c("projected_duration_s") <= floor_s)).then(pl.lit("latency"))
        .when(roofed).then(side)
        .when((c("bound") == "latency") & (c("_t1") > dur)).then(side)
        .otherwise(c("bound"))
    )
    return df.with_columns(pbound.alias("projected_bound"))


def _base(roofline):
    """The source terms of every launch (nulls where a level has no bytes or roof)."""
    import polars as pl

    c = pl.col
    cols = roofline.columns

    def col(name, dtype=pl.Float64):
        return c(name) if name in cols else pl.lit(None, dtype=dtype).alias(name)

    df = roofline.select(
        col("kernel_name", pl.String), col("kernel_label", pl.String), col("kernel_family", pl.String),
        col("short_name", pl.String), col("duration_s"), col("flops"), col("dram_bytes"), col("l2_bytes"),
        col("l1_bytes"), col("peak_flops_per_s"), col("peak_bw_bytes_per_s"), col("peak_l2_bw_bytes_per_s"),
        col("peak_l1_bw_bytes_per_s"), col("precision", pl.String), col("tensor_path", pl.String),
        col("bound", pl.String), col("latency_kind", pl.String), col("gpu", pl.String), col("cc", pl.String),
        col("peak_flops_source", pl.String), col("bound_source", pl.String),
        col("grid_blocks", pl.Int64), col("intensity_dram"), col("ridge_flop_per_byte"),
    )
    return df.with_columns(
        c("bound").fill_null("unknown"),
        c("flops").alias("_flops"), c("dram_bytes").alias("_dram"), c("l2_bytes").alias("_l2"),
        c("l1_bytes").alias("_l1"), c("peak_flops_per_s").alias("_peak"), c("peak_bw_bytes_per_s").alias("_bw"),
        c("peak_l2_bw_bytes_per_s").alias("_l2bw"), c("peak_l1_bw_bytes_per_s").alias("_l1bw"),
        c("kernel_label").fill_null(pl.coalesce(c("short_name"), c("kernel_name"))).alias("kernel_label"),
    )


def _per_kernel(df, max_s: float = LAUNCH_BOUND_MAX_S):
    """One row per kernel name: measured and projected time, the bound holding most of each, in the
    words every view uses (latency split into launch/stall; projected kind by projected duration)."""
    import polars as pl

    from ridgeline.analyzer.kernels.latency import latency_kind_expr

    c = pl.col
    measured_kind = pl.coalesce(c("latency_kind"), latency_kind_expr(c("bound") == "latency", max_s=max_s))
    projected_kind = (pl.when(c("projected_duration_s") <= max_s).then(pl.lit("launch")).otherwise(pl.lit("stall")))
    df = df.with_columns(
        pl.when(c("bound") == "latency").then(measured_kind).otherwise(c("bound")).alias("bound"),
        pl.when(c("projected_bound") == "latency").then(projected_kind).otherwise(c("projected_bound"))
        .alias("projected_bound"),
    )

    def top_bound(col: str, time: str):
        return (
            df.group_by("kernel_name", col)
            .agg(pl.col(time).fill_null(0.0).sum().alias("_t"))
            .sort(["kernel_name", "_t", col], descending=[False, True, False])
            .group_by("kernel_name", maintain_order=True)
            .agg(pl.col(col).first())
        )

    g = df.group_by("kernel_name").agg(
        pl.col("kernel_label").drop_nulls().first(),
        pl.col("kernel_family").drop_nulls().first(),
        pl.len().cast(pl.Int64).alias("launches"),
        pl.col("duration_s").sum().alias("duration_s"),
        pl.col("projected_duration_s").sum().alias("projected_duration_s"),
    )
    g = g.join(top_bound("bound", "duration_s"), on="kernel_name", how="left")
    g = g.join(top_bound("projected_bound", "projected_duration_s"), on="kernel_name", how="left")
    return g.sort(["duration_s", "kernel_name"], descending=[True, False], nulls_last=True).select(list(KERNEL_KEYS))


def _total(df, col: str) -> float | None:
    v = df.get_column(col).sum() if df.height else None
    return float(v) if v else None


# --------------------------------------------------------------------------------------
# another GPU
# --------------------------------------------------------------------------------------
def project_gpu(roofline, target: GPU, *, launch_floor_s: float = 2.0e-6,
                launch_bound_max_s: float = LAUNCH_BOUND_MAX_S) -> Projection:
    """Each launch re-timed on ``target`` at its achieved fraction of its roof (module docstring)."""
    import polars as pl

    df = _base(roofline)
    notes: list[str] = []
    keys = df.select("gpu", "cc", "precision", "tensor_path", "peak_flops_source", "_peak", "_bw").unique()
    rows = {k: [] for k in ("gpu", "cc", "precision", "tensor_path", "peak_flops_source", "_peak", "_bw",
                            "_peak2", "_bw2", "_cache2", "_projectable")}
    lacking: set[str] = set()
    unknown_source: set[str] = set()
    for r in keys.iter_rows(named=True):
        src, _why = try_lookup(r["gpu"]) if r["gpu"] else (None, "")
        prec, path = r["precision"], r["tensor_path"]
        # clock ratio: the roof used over the source datasheet peak, the path factor it embeds divided out
        spf = path_factor(r["cc"] or (src.cc if src else None), path)
        embedded = spf if r["peak_flops_source"] == "ncu" else 1.0
        clock = 1.0
        if src is not None and prec and src.peak(prec) and r["_peak"]:
            clock = r["_peak"] / (src.peak(prec) * embedded)
        elif prec and r["_peak"]:
            unknown_source.add(r["gpu"] or "unnamed device")
        peak2 = None
        projectable = True
        if prec:
            ds = target.peak(prec)
            if ds is None:
                projectable = False
                lacking.add(prec)
            else:
                peak2 = ds * clock * embedded * path_factor(target.cc, path) / spf
        bw_ratio = (r["_bw"] / src.dram_bw_bytes_per_s) if (src is not None and r["_bw"]) else 1.0
        bw2 = target.dram_bw_bytes_per_s * bw_ratio
        cache = (target.sm_count / src.sm_count) if (src is not None and src.sm_count) else 1.0
        for k, v in (("gpu", r["gpu"]), ("cc", r["cc"]), ("precision", prec), ("tensor_path", path),
                     ("peak_flops_source", r["peak_flops_source"]), ("_peak", r["_peak"]), ("_bw", r["_bw"]),
                     ("_peak2", peak2), ("_bw2", bw2), ("_cache2", cache), ("_projectable", projectable)):
            rows[k].append(v)
    schema = {"gpu": pl.String, "cc": pl.String, "precision": pl.String, "tensor_path": pl.String,
              "peak_flops_source": pl.String, "_peak": pl.Float64, "_bw": pl.Float64, "_peak2": pl.Float64,
              "_bw2": pl.Float64, "_cache2": pl.Float64, "_projectable": pl.Boolean}
    on = ["gpu", "cc", "precision", "tensor_path", "peak_flops_source", "_peak", "_bw"]
    df = df.join(pl.DataFrame(rows, schema=schema), on=on, how="left", nulls_equal=True, maintain_order="left")
    c = pl.col
    df = df.with_columns(
        c("_flops").alias("_flops2"), c("_dram").alias("_dram2"), pl.lit(1.0).alias("_bscale"),
        (c("_l2bw") * c("_cache2")).alias("_l2bw2"), (c("_l1bw") * c("_cache2")).alias("_l1bw2"),
        c("_projectable").fill_null(False),
    )
    df = _project(df, floor_s=launch_floor_s)
    for prec in sorted(lacking):
        n = df.filter((c("precision") == prec) & c("bound").is_in(["memory", "compute", "latency"])).height
        notes.append(f"{target.name} has no {prec} peak: {n} launch{'es' if n != 1 else ''} of that precision "
                     "kept at their measured time")
    for name in sorted(unknown_source):
        notes.append(f"{name} is not in the catalogue: its roofs are taken as datasheet roofs at the datasheet clock")
    same = {g for g in df.get_column("gpu").drop_nulls().unique().to_list()}
    if same == {target.name}:
        notes.append(f"the profile already ran on {target.name}: the projection repeats the measured times")
    # not on the roofline (unknown, or bound by ncu's speed of light only): no FLOPs/bytes to project
    off = (c("bound") == "unknown") | (c("bound_source") == "ncu-speed-of-light").fill_null(False)
    n_unknown = df.filter(off).height
    if n_unknown:
        notes.append(f"{n_unknown} launch{'es' if n_unknown != 1 else ''} off the roofline kept at their measured time")
    return Projection(
        scenario=target.name, kind="gpu", target_gpu=target.name,
        duration_s=_total(df, "duration_s"), projected_duration_s=_total(df, "projected_duration_s"),
        kernels=_per_kernel(df, launch_bound_max_s), launches=_launch_frame(df), assumptions=list(GPU_ASSUMPTIONS),
        notes=notes,
        memory_bytes=float(target.memory_bytes) if target.memory_bytes else None,
    )


def _launch_frame(df):
    """Per-launch projected placement (plots): intensity and FLOP/s on the projection's roofline."""
    import polars as pl

    c = pl.col
    pd = c("projected_duration_s")
    return df.select(
        "kernel_name", "kernel_label", "kernel_family", "duration_s", "projected_duration_s", "bound",
        "projected_bound",
        pl.when(c("_dram2") > 0).then(c("_flops2") / c("_dram2")).alias("projected_intensity_dram"),
        pl.when(pd > 0).then(c("_flops2") / pd).alias("projected_flops_per_s"),
        c("_flops2").alias("projected_flops"), c("_dram2").alias("projected_dram_bytes"),
        c("_peak2").alias("projected_peak_flops_per_s"), c("_bw2").alias("projected_peak_bw_bytes_per_s"),
    )


# --------------------------------------------------------------------------------------
# another batch
# --------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class BatchEstimate:
    """The decode batch of a profile, and the tokens per weight read its GEMM FLOPs say."""

    batch: float | None  # the batch used (given, launch shapes, or FLOPs)
    source: str | None  # how it was found, in words
    flop_tokens: float | None  # tokens per weight read by the weight GEMMs' FLOPs (upper bound when padded)
    shape_tokens: float | None  # tokens by the normalization launches' grids
    padded: bool  # the FLOPs count more rows than the launch shapes say ran (tile padding)


def tokens_from_launch_shapes(roofline) -> tuple[float | None, str | None]:
    """Tokens per step by the launch shapes: the median grid of the normalization launches (one
    block per token row in vLLM, SGLang/FlashInfer); ``(None, None)`` without such launches."""
    import polars as pl

    if roofline is None or "kernel_family" not in roofline.columns or "grid_blocks" not in roofline.columns:
        return None, None
    norms = roofline.filter((pl.col("kernel_family") == "norm") & (pl.col("grid_blocks") > 0))
    if not norms.height:
        return None, None
    tokens = float(norms["grid_blocks"].median())
    n = norms.height
    return tokens, f"median grid of {n} norm launch{'es' if n != 1 else ''} = {tokens:,.0f} blocks, one per token"


def weight_gemm_tokens(roofline) -> float | None:
    """Tokens per weight read by the weight GEMMs' FLOPs: their intensity (all non-latency launches
    with FLOPs and bytes together) x bytes per weight of their dominant precision / 2."""
    import polars as pl

    c = pl.col
    if roofline is None or "kernel_family" not in roofline.columns:
        return None
    g = roofline.filter(c("kernel_family").is_in(list(WEIGHT_GEMM_FAMILIES)) & c("flops").is_not_null()
                        & (c("dram_bytes").fill_null(0.0) > 0) & (c("flops") > 0))
    if not g.height:
        return None
    by = g.group_by("precision").agg(c("flops").sum(), c("dram_bytes").sum(), c("duration_s").sum())
    # bytes per weight of the precision holding most time
    prec = by.sort("duration_s", descending=True, nulls_last=True).get_column("precision")[0]
    bpw = WEIGHT_BYTES.get(prec or "", 2.0)
    return float(g["flops"].sum() / g["dram_bytes"].sum()) * bpw / 2.0


def estimate_batch(roofline, *, batch: float | None = None) -> BatchEstimate:
    """The profile's decode batch: ``batch`` when given, else the launch shapes, else the FLOPs."""
    shape, shape_from = tokens_from_launch_shapes(roofline)
    flop = weight_gemm_tokens(roofline)
    if batch is not None:
        b, src = float(batch), "given (--batch)"
    elif shape is not None:
        b, src = shape, f"launch shapes: {shape_from}"
    elif flop is not None:
        b, src = flop, "weight GEMM intensity x bytes per weight / 2 (tokens per weight read)"
    else:
        b, src = None, None
    padded = b is not None and flop is not None and b * 1.5 < flop
    return BatchEstimate(batch=b, source=src, flop_tokens=flop, shape_tokens=shape, padded=padded)


#: weights read below this share of the GPU's memory: the profile is taken for part of a step
PARTIAL_STEP_SHARE = 0.01


def memory_batch_limit(roofline, batch: float, gpu: GPU | None) -> tuple[float | None, str | None]:
    """The batch at which weights + KV cache fill ``gpu``'s memory, as if the profile held one
    decode step: weights = the weight GEMMs' DRAM bytes, KV per sequence = the attention
    launches' DRAM bytes / ``batch``. ``(limit, None)``, or ``(None, why not)``."""
    import polars as pl

    if gpu is None or not gpu.memory_bytes:
        return None, "GPU memory unknown: where memory stops the batch is not estimated"
    fam = pl.col("kernel_family")
    weights = float(roofline.filter(fam.is_in(list(WEIGHT_GEMM_FAMILIES)))["dram_bytes"].fill_null(0.0).sum())
    kv = float(roofline.filter(fam.is_in(list(KV_FAMILIES)))["dram_bytes"].fill_null(0.0).sum())
    if kv <= 0 or not batch:
        return None, "no attention launch with DRAM bytes: KV-cache bytes per sequence unknown, memory limit not estimated"
    if weights >= gpu.memory_bytes:
        return None, f"the weights read in the profile ({weights / 1e9:.3g} GB) exceed {gpu.name}'s memory"
    if weights < PARTIAL_STEP_SHARE * gpu.memory_bytes:
        return None, (f"the weight GEMMs read {weights / 1e9:.3g} GB, under {PARTIAL_STEP_SHARE:.0%} of {gpu.name}'s "
                      "memory: the profile looks like part of a step, so where memory stops the batch is not estimated")
    return (gpu.memory_bytes - weights) / (kv / batch), None


def _batch_frame(roofline, new_batch: int, est: BatchEstimate, launch_floor_s: float):
    """Every launch with its FLOPs and bytes at batch ``new_batch`` and its projected time (the model)."""
    import polars as pl

    c = pl.col
    b = est.batch
    scale = new_batch / b
    gemm_rows = est.flop_tokens if est.padded else b
    gemm_scale = (max(new_batch, gemm_rows) / gemm_rows) if est.padded else scale
    df = _base(roofline)
    fam = c("kernel_family").fill_null("other")
    is_w = fam.is_in(list(WEIGHT_GEMM_FAMILIES))
    fixed = fam.is_in(list(FIXED_FAMILIES))
    gemm_f = pl.lit(gemm_scale)
    if est.padded:
        # each padded GEMM computes its own tile's rows (nvjet 64x8: 8, fused_moe: its block): the FLOPs' rows
        # by its intensity, never fewer than the batch; its FLOPs grow only past them
        bpw = c("precision").replace_strict(WEIGHT_BYTES, default=2.0, return_dtype=pl.Float64)
        rows = pl.max_horizontal(c("_flops") / c("_dram") * bpw / 2.0, pl.lit(float(b)))
        gemm_f = pl.when(rows.is_finite() & (rows > 0)).then(
            pl.max_horizontal(pl.lit(float(new_batch)), rows) / rows).otherwise(pl.lit(scale))
    fscale = pl.when(is_w).then(gemm_f).when(fixed).then(pl.lit(1.0)).otherwise(pl.lit(scale))
    bscale = pl.when(is_w | fixed).then(pl.lit(1.0)).otherwise(pl.lit(scale))
    df = df.with_columns(fscale.alias("_fscale"), bscale.alias("_bscale"))
    df = df.with_columns(
        (c("_flops") * c("_fscale")).alias("_flops2"), (c("_dram") * c("_bscale")).alias("_dram2"),
        c("_peak").alias("_peak2"), c("_bw").alias("_bw2"), c("_l2bw").alias("_l2bw2"), c("_l1bw").alias("_l1bw2"),
        pl.lit(True).alias("_projectable"),
    )
    return _project(df, floor_s=launch_floor_s)


def projected_batch_time(roofline, new_batch: int, estimate: BatchEstimate, *, launch_floor_s: float = 2.0e-6) -> float:
    """The GPU time of ``roofline``'s launches at batch ``new_batch`` (the :func:`project_batch`
    model, without its per-kernel tables): what a rule needs for one kernel group."""
    df = _batch_frame(roofline, new_batch, estimate, launch_floor_s)
    return float(df.get_column("projected_duration_s").fill_null(0.0).sum())


def remedy_time(roofline, *, dram_scale: float = 1.0, peak_scale: float = 1.0,
                launch_floor_s: float = 2.0e-6) -> float:
    """The GPU time of ``roofline``'s launches after a remedy that changes their bytes or their
    compute roof, each launch at its achieved fraction of the roof that bounds it (the model of
    this module): ``dram_scale`` multiplies every launch's DRAM bytes (cache bytes alike; an fp8
    KV cache in place of bf16: 0.5), ``peak_scale`` its compute peak (tf32 -> bf16 tensor cores:
    the ratio of the two datasheet peaks). FLOPs are unchanged; latency-bound and unknown launches
    keep their time unless their work at the new roof takes longer. What a rule's impact needs."""
    import polars as pl

    c = pl.col
    df = _base(roofline).with_columns(pl.lit(float(dram_scale)).alias("_bscale"))
    df = df.with_columns(
        c("_flops").alias("_flops2"), (c("_dram") * c("_bscale")).alias("_dram2"),
        (c("_peak") * float(peak_scale)).alias("_peak2"), c("_bw").alias("_bw2"), c("_l2bw").alias("_l2bw2"),
        c("_l1bw").alias("_l1bw2"), pl.lit(True).alias("_projectable"),
    )
    df = _project(df, floor_s=launch_floor_s)
    return float(df.get_column("projected_duration_s").fill_null(0.0).sum())


def project_batch(roofline, new_batch: int, *, batch: float | None = None, gpu: GPU | None = None,
                  launch_floor_s: float = 2.0e-6, estimate: BatchEstimate | None = None,
                  launch_bound_max_s: float = LAUNCH_BOUND_MAX_S) -> Projection:
    """The decode step re-timed at batch ``new_batch`` (module docstring); ``gpu`` gives memory.

    ``estimate``: the profile's :class:`BatchEstimate` when ``roofline`` holds only some of its
    launches (a rule projecting one kernel group); default: estimated from ``roofline``."""
    import polars as pl

    c = pl.col
    est = estimate if estimate is not None else estimate_batch(roofline, batch=batch)
    if est.batch is None or est.batch <= 0:
        raise UsageError(f"--what-if batch={new_batch}: cannot tell the profile's batch (no normalization launches "
                         "and no weight GEMM with FLOPs and bytes); give it with --batch B")
    b = est.batch
    gemm_rows = est.flop_tokens if est.padded else b
    df = _batch_frame(roofline, new_batch, est, launch_floor_s)
    fam = c("kernel_family").fill_null("other")
    is_w = fam.is_in(list(WEIGHT_GEMM_FAMILIES))
    notes: list[str] = []
    if est.padded:
        notes.append(f"the weight GEMMs' FLOPs count ~{est.flop_tokens:,.0f} rows per weight read where the launch "
                     f"shapes say {b:,.0f} token{'s' if b != 1 else ''} ran (tile padding): their FLOPs grow only "
                     f"past {est.flop_tokens:,.0f}")
    if df.filter(fam == "grouped_gemm").height and new_batch > b:
        notes.append("grouped (MoE) GEMMs: more tokens route to more experts, whose weights are read too; not "
                     "modelled, so the projected step is a lower bound")
    # where the weight GEMMs reach the ridge
    w = df.filter(is_w & c("_flops").is_not_null() & (c("_dram").fill_null(0.0) > 0) & (c("_peak") > 0) & (c("_bw") > 0))
    ridge_batch = None
    if w.height:
        ai = w["_flops"].sum() / w["_dram"].sum()
        ridge = float((w["_peak"] / w["_bw"] * w["duration_s"].fill_null(0.0)).sum() / max(w["duration_s"].sum(), 1e-30))
        if ai > 0:
            ridge_batch = gemm_rows * ridge / ai
    else:
        notes.append("no weight GEMM with FLOPs and bytes: the batch that reaches the ridge is not known")
    # where memory stops the batch
    mem = gpu.memory_bytes if gpu is not None else None
    max_batch, why = memory_batch_limit(roofline, b, gpu)
    if why:
        notes.append(why)
    if max_batch is not None and new_batch > max_batch:
        notes.append(f"batch {new_batch} needs more memory than {gpu.name} has: weights and KV cache fill it at "
                     f"~{max_batch:,.0f} sequences at this context length")
    step0, step1 = _total(df, "duration_s"), _total(df, "projected_duration_s")
    from ridgeline.analyzer.kernels.workload import llm_evidence

    llm = llm_evidence(roofline)
    if not llm:  # the same model in GEMM words: rows per weight read, no tokens, no decode step
        notes = [n.replace("tokens route to more experts", "rows route to more experts")
                 .replace(f"token{'s' if b != 1 else ''} ran", f"row{'s' if b != 1 else ''} ran") for n in notes]
    return Projection(
        scenario=f"batch={new_batch}", kind="batch", target_gpu=gpu.name if gpu is not None else None,
        duration_s=step0, projected_duration_s=step1, kernels=_per_kernel(df, launch_bound_max_s),
        launches=_launch_frame(df),
        assumptions=list(BATCH_ASSUMPTIONS if llm else ROWS_ASSUMPTIONS), notes=notes, batch=b,
        batch_source=est.source if llm else est.source.replace("tokens per weight read", "rows per weight read"),
        projected_batch=new_batch, tokens_per_s=(b / step0) if step0 and llm else None,
        projected_tokens_per_s=(new_batch / step1) if step1 and llm else None, ridge_batch=ridge_batch,
        max_batch_by_memory=max_batch, memory_bytes=float(mem) if mem else None, llm_evidence=llm,
    )


def run_specs(roofline, specs, *, batch: float | None = None, gpu: GPU | None = None,
              resolve=None, launch_floor_s: float = 2.0e-6,
              launch_bound_max_s: float = LAUNCH_BOUND_MAX_S) -> list[Projection]:
    """One :class:`Projection` per ``--what-if`` spec, in order.

    ``resolve`` maps a GPU name to a catalogue entry (default :func:`ridgeline.analyzer.kernels.gpus.lookup`);
    ``gpu`` is the profiled GPU's entry (memory for batch scenarios)."""
    if resolve is None:
        from ridgeline.analyzer.kernels.gpus import lookup

        def resolve(name):
            return lookup(name)[0]

    if roofline is None or not roofline.height:
        if specs:
            raise UsageError("--what-if needs kernels from an Nsight Compute export; the input has none")
        return []
    out = []
    for spec in specs:
        kind, value = parse_spec(spec)
        if kind == "batch":
            out.append(project_batch(roofline, value, batch=batch, gpu=gpu, launch_floor_s=launch_floor_s,
                                     launch_bound_max_s=launch_bound_max_s))
        else:
            out.append(project_gpu(roofline, resolve(value), launch_floor_s=launch_floor_s,
                                   launch_bound_max_s=launch_bound_max_s))
    return out


# --------------------------------------------------------------------------------------
# the model run backwards, from telemetry: which smaller GPU holds the same step time
# --------------------------------------------------------------------------------------
#: the busiest a unit's activity counter gets in practice (NVIDIA puts DRAM_ACTIVE's achievable
#: peak near 0.8); a unit projected above it stretches the step
BUSY_CAP = 0.8


def telemetry_stretch(source: GPU, target: GPU, *, dram_active: float | None, tensor_active: float | None,
                      fp32_active: float | None = None, cap: float = BUSY_CAP) -> float | None:
    """How much longer the same work takes on ``target`` than on ``source``, from activity counters.

    Each unit's busy fraction scales by the ratio of the two GPUs' peaks for it: DRAM_ACTIVE by
    DRAM bandwidth, PIPE_TENSOR_ACTIVE by the dense BF16/FP16 tensor peak, PIPE_FP32_ACTIVE (when
    given) by the FP32 peak. SM_ACTIVE is not scaled: it counts cycles with a warp resident, which a
    memory-bound kernel's waiting warps fill too, not throughput. The step stretches by the
    busiest unit's excess over ``cap``: ``max(1, busy' / cap) / max(1, busy / cap)``; time no
    unit explains (latency, launches) is unchanged. None when DRAM or tensor activity, or a peak
    they need, is missing.
    """
    if dram_active is None or tensor_active is None:
        return None
    tc_s, tc_t = source.peak("fp16_tensor"), target.peak("fp16_tensor")
    if not (tc_s and tc_t and source.dram_bw_bytes_per_s and target.dram_bw_bytes_per_s):
        return None
    units = [(dram_active, source.dram_bw_bytes_per_s / target.dram_bw_bytes_per_s), (tensor_active, tc_s / tc_t)]
    f_s, f_t = source.peak("fp32"), target.peak("fp32")
    if f_s and f_t:
        units += [(a, f_s / f_t) for a in (fp32_active,) if a is not None]
    now = max([1.0] + [a / cap for a, _r in units])
    then = max([1.0] + [a * r / cap for a, r in units])
    return then / now


def smaller_gpus_holding(source: GPU, *, dram_active: float | None, tensor_active: float | None,
                         memory_used_bytes: float | None, margin: float, catalogue_gpus=None,
                         fp32_active: float | None = None, cap: float = BUSY_CAP) -> list[tuple[GPU, float]]:
    """Catalogue GPUs of ``source``'s vendor with a lower dense BF16/FP16 tensor peak than ``source``
    (ridgeline knows no prices: less tensor compute is what "smaller" means here) that hold the same
    step time within ``margin`` (stretch <= 1 + margin) and have the memory in use; smallest first.
    Another vendor's GPU is never offered: the same code does not run on it unchanged."""
    from ridgeline.analyzer.kernels.gpus import catalogue

    peak = source.peak("fp16_tensor")
    if not peak:
        return []
    out = []
    for g in catalogue_gpus if catalogue_gpus is not None else catalogue():
        if g.name == source.name or g.vendor != source.vendor or not g.peak("fp16_tensor") \
                or g.peak("fp16_tensor") >= peak:
            continue
        if memory_used_bytes and g.memory_bytes and g.memory_bytes < memory_used_bytes:
            continue
        s = telemetry_stretch(source, g, dram_active=dram_active, tensor_active=tensor_active,
                              fp32_active=fp32_active, cap=cap)
        if s is not None and s <= 1.0 + margin:
            out.append((g, s))
    return sorted(out, key=lambda gs: (gs[0].peak("fp16_tensor"), gs[1], gs[0].name))
