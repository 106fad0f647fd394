"""Place every launch on the roofline of the GPU it ran on.

:func:`classify` turns the KERNEL table into the ROOFLINE table (one row per launch) and
returns the roofs it used; :func:`summarize` aggregates launches per kernel name.

Decisions, written down once:

* **Roofs.** Peaks the export recorded (KERNEL columns ``peak_*``) win over the catalogue.
  Each launch is measured against its own (a per-cycle peak x that launch's own clock, as
  ncu's percentages are); a launch that recorded none gets its device's median (the tensor
  peak per device, tensor precision and path), and the roofs listed and drawn are those
  medians (:mod:`ridgeline.analyzer.kernels.peaks`). The catalogue entry comes from
  ``--gpu`` when given, else from each launch's ``device_name``. A device the catalogue
  does not know gets a GPU *derived* from the attributes ncu recorded (SM count x per-SM rate of its compute capability x maximum SM
  clock, :mod:`ridgeline.analyzer.kernels.archrates`): measured > catalogue > derived. Every roof
  carries its source: ``ncu``, ``ncu-device-attributes`` (DRAM peak computed from recorded
  memory clock and bus width), ``catalogue`` or ``derived-from-device-attributes`` (the
  formula in the roof's detail). ``--gpu`` naming a GPU of another compute capability than
  the export records is an error naming both (docs/gpus.md).
* **Cache roofs (hierarchical roofline).** L2 and L1 bandwidth roofs exist only when the
  export recorded them (KERNEL ``peak_l2_bytes_per_s`` / ``peak_l1_bytes_per_s``: a
  per-cycle peak x the cache clock); like the DRAM peak they are per launch, listed per
  device (median over the launches that recorded one) as ``Roof(kind="bandwidth",
  level="l2"|"l1", source="ncu")``. The catalogue has no cache bandwidths and none is
  assumed. The roof's ``detail`` names the counters: ``lts2xbar``/``lsu_writeback`` there
  means ncu's own definition (bytes toward the SM). When the export also has
  ``lts__t_bytes`` / ``l1tex__t_bytes`` the cache intensities are counted with those (all
  traffic through the tag stage): the peaks per cycle agree closely, the traffic need not,
  so read such a placement as indicative. An export with only ncu's roofline sections
  counts bytes and peaks in ncu's definition (``l2_bytes_source`` says so).
* **Binding level.** ``roof_level`` is the roof the launch meets first: at each level the
  attainable FLOP/s is ``intensity_level x bandwidth_level`` (and the compute peak), and
  the lowest wins; equivalently the largest of ``bytes_level / bandwidth_level`` and
  ``flops / peak``, which also covers launches with zero FLOPs. Values ``"dram"``,
  ``"l2"``, ``"l1"`` or ``"compute"`` (compute roof below every memory roof); levels
  without bytes or roof are left out; null when ``bound`` is unknown. DRAM against compute
  follows ``bound`` (intensity == ridge is compute); a cache level binds only when its time
  is strictly longer; L2 wins a tie with L1. ``bound``, ``roof_flops_per_s``,
  ``roof_fraction`` and ``time_to_roof_s`` stay the DRAM roofline's, unchanged: a launch
  can be ``bound = "compute"`` at DRAM and ``roof_level = "l2"`` (the L2 wall is what it
  meets first).
* **Several devices in one input.** Each launch is classified against the roofs of its
  own device (measured peaks per ``device_name``; catalogue entry per ``device_name``).
  ``--gpu`` forces one catalogue entry for every launch.
* **Dominant precision.** The precision with the most FLOPs; tensor precisions win ties.
  Tensor FLOPs without a per-precision split (Volta-style ``pipe_tensor`` counts) are
  taken as ``fp16_tensor``. The compute roof is that precision's peak; all FLOPs of the
  launch are measured against it.
* **Unknown, never guessed.** A launch whose FLOP counters, DRAM bytes or duration are
  null (or duration is zero), or whose roofs cannot be found (no measured peak and no
  catalogue match), is ``bound = "unknown"``; ``missing`` names what is absent and
  ``missing_hint`` the ncu option (or ``--gpu``) that fixes it. A launch with FLOPs
  counted as **zero** and DRAM bytes measured is a legitimate memory-bound kernel
  (intensity 0; copies, memsets, gathers): its fraction of roof is its DRAM bandwidth
  over the bandwidth roof. A launch with zero FLOPs *and* zero DRAM bytes has nothing the
  roofline describes and is ``unknown`` with an explanatory hint (``missing`` empty).
  FLOPs measured but zero DRAM bytes gives intensity ``inf``: compute side. Where the
  export holds ncu's Speed-of-Light throughputs (SM against memory), they decide the bound of
  a launch the roofline cannot place (:mod:`ridgeline.analyzer.kernels.speed_of_light`);
  ``bound_source`` says which decided (``roofline``, ``ncu-speed-of-light``, null), and
  ``missing`` still names what the roofline lacked.
* **Partial FLOP counters: zero is zero, not collected is unknown.** A counter collected as 0
  means the launch ran no such instruction (integer-only kernels: FLOPs 0, memory-bound by
  their bytes); a counter not collected (absent, ``n/a``) is unknown. The FP32 CUDA-core
  counters are the base every roofline set and section collects; half-precision and tensor
  counters come from their own sections. So a launch's FLOPs are known when its FP32 count is
  (precisions whose counters the file lacks then count as not executed: a lower bound, and the
  pipeline notes when no launch has tensor counters), or, without FP32 counters, when a
  collected precision counted work (> 0, a lower bound again). Otherwise FLOPs, intensity and
  precision are null and ``bound`` is ``unknown`` (never intensity 0 from counters nobody
  collected). One exception: when the tensor-pipe counters (``tensor_pipe_*``, collected by
  the default sets) show an instruction family active but no tensor FLOP counter was
  collected, the tensor work is real and uncounted: FLOPs are unknown whatever the CUDA-core
  counters say, the precision is the family's (IMMA -> ``int8_tensor``, HMMA/HGMMA ->
  ``fp16_tensor``, DMMA -> ``fp64_tensor``, QGMMA -> ``fp8_tensor``), and ``missing`` names the
  tensor counters. "Active" is above :data:`TENSOR_PIPE_MIN_ACTIVE` (5% for HMMA, whose
  counters include the compiler's HFMA2.MMA register moves; > 0 for the others). The pipe
  counters measure activity, not FLOPs: ``flops_tensor`` stays null without tensor FLOP
  counters, and a pipe measured idle (``tensor_pipe_active_ratio`` 0) tells rules (RL905) that
  no tensor work went uncounted.
* **Placement by rate.** A section export (``ncu --csv --section SpeedOfLight_RooflineChart``,
  human labels) holds peaks per cycle, clocks and achieved rates per cycle but no duration: its
  FLOP and byte totals are unknown, its place on the roofline is not. For a launch without a
  duration whose FLOP totals are unknown, the parser's recorded rates (``flops_fp32_per_s``,
  ``flops_fp64_per_s``, ``dram_bytes_per_s``) give the precision, the achieved FLOP/s and
  bytes/s, and intensity = FLOP/s over bytes/s; ``bound`` and ``roof_fraction`` follow as for
  any launch. ``duration_s`` stays null and ``missing`` keeps ``gpu__time_duration.sum`` (with
  its hint), so the time share, ``time_to_roof_s`` and every saving stay unknown and RL901
  says plainly what the file lacks.
* **Latency class.** A launch is ``bound = "latency"`` when every roof it has is far away
  (``busiest_roof_fraction``, the largest of achieved FLOP/s over the compute peak of its
  precision and bytes/s over the DRAM, L2 and L1 roofs where measured, is below
  ``latency_fraction``, default 10%) or when it lasts no longer than the launch floor
  (``launch_floor_s``, default 2 us: an empty kernel's duration as ncu times it on recent
  GPUs). Neither the compute nor the memory system explains such a launch's time: launch
  overhead, tiny grids, memory latency and uncounted work do (``latency_kind`` below says
  which side), not a lack of batch or bandwidth. ncu's own SpeedOfLight rule
  calls a kernel latency-limited when compute and memory throughput are both under 60% of
  peak, measured on its busiest unit; ridgeline keeps 10-60% on the memory/compute side
  (RL103/RL105 report them as inefficient) and reserves ``latency`` for launches no roof
  explains. Both values are RL112's thresholds (``--threshold RL112.max_roof_fraction=0.2``).
  ``time_to_roof_s`` never goes below the floor, so no saving counts it.
* **Launch-bound or stall-bound.** The latency class holds two different problems, told apart
  by duration alone (``latency_kind``, :mod:`ridgeline.analyzer.kernels.latency`): ``"launch"`` when
  the launch lasts no longer than ``launch_bound_max_s`` (default 20 us, RL112's threshold),
  where launch overhead is a large part of its cost and fewer launches are the remedy;
  ``"stall"`` when it is longer, where overhead is a small part and the warps themselves stall
  (occupancy, memory latency, work the FLOP counters do not count). Null for other bounds.
* **Numbers.** ``roof_flops_per_s = min(peak, intensity x bandwidth)``;
  ``roof_fraction`` = achieved FLOP/s / roof FLOP/s (equal to achieved DRAM B/s /
  bandwidth roof on the memory side); ``ridge_distance = intensity / ridge``;
  ``time_to_roof_s = max(flops / peak_flops, dram_bytes / bandwidth)``, the duration the
  launch would have at 100% of its roof, so ``duration_s - time_to_roof_s`` is an upper
  bound on the time a better kernel could save (same FLOPs, same DRAM bytes).
"""

from __future__ import annotations

from typing import Any

from ridgeline.analyzer.kernels.families import family_columns
# the launch-bound / stall-bound split of the latency class (RL112.launch_bound_max_s)
from ridgeline.analyzer.kernels.latency import LAUNCH_BOUND_MAX_S, latency_kind_expr
from ridgeline.analyzer.kernels.gpus import GPU, PRECISIONS, lookup, try_lookup
from ridgeline.analyzer.kernels.peaks import launch_peaks, roofs_used
from ridgeline.analyzer.kernels import speed_of_light
from ridgeline.errors import UsageError
from ridgeline.analyzer.schema import KERNEL_COLUMNS, ROOFLINE_COLUMNS, SUMMARY_COLUMNS, polars_schema

# KERNEL column holding the per-precision FLOP count used to pick the dominant precision
PRECISION_FLOP_COLUMNS = {
    "fp8_tensor": "flops_tensor_fp8",
    "fp16_tensor": "flops_tensor_fp16",
    "tf32_tensor": "flops_tensor_tf32",
    "int8_tensor": "flops_tensor_int8",
    "fp64_tensor": "flops_tensor_fp64",
    "fp64": "flops_fp64",
    "fp32": "flops_fp32",
    "fp16": "flops_fp16",
}
TENSOR_COMPONENTS = ("flops_tensor_fp16", "flops_tensor_tf32", "flops_tensor_fp8", "flops_tensor_int8", "flops_tensor_fp64")

MISSING_FLOPS = "sm__sass_thread_inst_executed_op_*_pred_on.sum"
MISSING_DRAM = "dram__bytes.sum"
MISSING_TIME = "gpu__time_duration.sum"
MISSING_BW_ROOF = "DRAM bandwidth roof"
MISSING_FLOP_ROOF = "compute roof"
HINT_ROOFLINE = "--set roofline (or --section SpeedOfLight_RooflineChart)"
#: tensor-pipe activity above which uncounted tensor work is real. HMMA (fp16_tensor) activity
#: also counts the compiler's HFMA2.MMA register moves: elementwise kernels with zero tensor
#: FLOPs show up to 2.7% on real H200 exports, so it needs 5%; other families need > 0.
TENSOR_PIPE_MIN_ACTIVE = {"fp16_tensor": 0.05}
MISSING_TENSOR_FLOPS = "sm__ops_path_tensor_*.sum (tensor pipe active, its FLOPs not counted)"
HINT_TENSOR = "--section SpeedOfLight_HierarchicalTensorRooflineChart"
HINT_DRAM = "--metrics dram__bytes.sum"
HINT_TIME = "--metrics gpu__time_duration.sum"
HINT_GPU = "--gpu NAME (GPU not identified from the export; see 'ridgeline gpus')"
HINT_NOTHING = "no FLOPs and no DRAM bytes counted: integer or latency-bound work the roofline does not describe"


def conform_kernels(kernels: Any):
    """Return ``kernels`` with exactly the KERNEL columns, in schema order, typed; absent ones null."""
    import polars as pl

    schema = polars_schema(KERNEL_COLUMNS)
    have = set(kernels.columns)
    exprs = []
    for name, dtype in schema.items():
        if name in have:
            exprs.append(pl.col(name).cast(dtype, strict=False))
        else:
            exprs.append(pl.lit(None, dtype=dtype).alias(name))
    return kernels.select(exprs)


def resolve_gpu(gpu: GPU | str | None) -> tuple[GPU | None, str | None]:
    """``--gpu`` value -> (catalogue entry, note); ``(None, None)`` when not given."""
    if gpu is None:
        return None, None
    if isinstance(gpu, GPU):
        return gpu, f"{gpu.name} (given)"
    found, note = lookup(gpu)
    return found, f"--gpu {note}"


def match_devices(device_names, *, gpu: GPU | str | None = None,
                  ccs: dict | None = None) -> list[tuple[str | None, GPU | None, str]]:
    """Catalogue entry for each distinct device name: ``[(device_name, GPU or None, note)]``.

    ``ccs`` maps a device name (None: unnamed) to the compute capability the export recorded for
    it: ``--gpu`` naming a GPU of another compute capability is a UsageError naming both."""
    forced, forced_note = resolve_gpu(gpu)
    out = []
    for name in device_names:
        if forced is not None:
            # --gpu names the GPU when the export does not; it never relabels one the export names
            recorded, _why = try_lookup(name) if name else (None, "")
            if recorded is not None and recorded.name != forced.name:
                raise UsageError(
                    f"--gpu {gpu if isinstance(gpu, str) else forced.name!s} ({forced.name}) contradicts the export, which "
                    f"names its device {name!r} ({recorded.name}): drop --gpu and the export's own GPU is used; "
                    f"to see these kernels on {forced.name}, use --what-if \"{forced.name}\""
                )
            cc = (ccs or {}).get(name)
            if cc and cc != forced.cc:
                shown = f"device {name!r}" if name else "the device"
                # an AMD entry has no CUDA compute capability: never the GPU of an export that records one
                what = f"AMD {forced.gfx}, no CUDA compute capability" if forced.vendor == "AMD" else \
                    f"compute capability {forced.cc}"
                raise UsageError(
                    f"--gpu {gpu if isinstance(gpu, str) else forced.name!s} ({forced.name}, {what}) "
                    f"contradicts the export, which records compute capability {cc} for {shown}: drop --gpu, or name "
                    f"a CC {cc} GPU (see 'ridgeline gpus'); to see these kernels on {forced.name}, use --what-if \"{forced.name}\""
                )
            note = forced_note
            if name and recorded is None:
                note += f"; the export names {name!r}, which the catalogue does not know"
            out.append((name, forced, note))
        else:
            found, note = try_lookup(name)
            out.append((name, found, f"device name {note}" if found is not None else note))
    return out


def device_attributes(kernels: Any) -> dict:
    """Per distinct device name (None: unnamed): the compute capability, SM count, maximum SM clock
    and DRAM peak the export recorded (first CC seen; medians of the numbers)."""
    import polars as pl

    cols = set(kernels.columns)
    if not kernels.height or "device_name" not in cols:
        return {}
    num = {c: (pl.col(c).median() if c in cols else pl.lit(None)) for c in ("sm_count", "max_sm_clock_hz", "peak_dram_bytes_per_s")}
    agg = kernels.group_by("device_name", maintain_order=True).agg(
        (pl.col("cc").drop_nulls().first() if "cc" in cols else pl.lit(None)).alias("cc"),
        *[e.alias(c) for c, e in num.items()],
    )
    return {r["device_name"] or None: r for r in agg.iter_rows(named=True)}


def device_entries(kernels: Any, *, gpu: GPU | str | None = None) -> list[tuple[str | None, GPU | None, str]]:
    """:func:`match_devices` over the distinct device names of a KERNEL (or ROOFLINE) table, with
    the fallback for a device the catalogue does not know: a GPU derived from the device attributes
    ncu recorded (:func:`ridgeline.analyzer.kernels.archrates.derive_gpu`). Order: measured peaks win over
    every entry (in :func:`classify`), a catalogue entry over a derived one, except when the export
    records another SM count than the entry's (a MIG slice, a cut-down variant, another part with a
    similar name): then the derived GPU is used and the note says why. ``--gpu`` is never
    overridden, and contradicts an export that records another compute capability."""
    from ridgeline.analyzer.kernels.archrates import derive_gpu

    attrs = device_attributes(kernels)
    names = list(attrs) or [None]
    ccs = {n: a.get("cc") for n, a in attrs.items()}
    out = []
    for name, found, note in match_devices(names, gpu=gpu, ccs=ccs):
        a = attrs.get(name) or {}
        recorded_sms = a.get("sm_count")
        mismatch = (found is not None and gpu is None and found.origin == "catalogue" and recorded_sms
                    and int(recorded_sms) != found.sm_count)
        if mismatch:  # a cut-down variant, a MIG slice or another part than the name matched
            derived = derive_gpu(name, cc=a.get("cc"), sm_count=recorded_sms, clock_hz=a.get("max_sm_clock_hz"),
                                 dram_bw_bytes_per_s=a.get("peak_dram_bytes_per_s"))
            if derived is not None:
                note = (f"{note}, but the export records {int(recorded_sms)} SMs where {found.name} has "
                        f"{found.sm_count} (a MIG slice, a cut-down variant or another part): roofs derived from "
                        f"its device attributes (CC {derived.cc} {derived.arch}, max SM clock "
                        f"{derived.datasheet_clock('fp32') / 1e9:.4g} GHz)")
                found = derived
        if found is None and gpu is None:
            derived = derive_gpu(name, cc=a.get("cc"), sm_count=a.get("sm_count"), clock_hz=a.get("max_sm_clock_hz"),
                                 dram_bw_bytes_per_s=a.get("peak_dram_bytes_per_s"))
            if derived is not None:
                found = derived
                note = (f"{note}: roofs derived from its device attributes (CC {derived.cc} {derived.arch}, "
                        f"{derived.sm_count} SMs, max SM clock {derived.datasheet_clock('fp32') / 1e9:.4g} GHz)")
        out.append((name, found, note))
    return out


def _catalogue_frame(entries: list[tuple[str | None, GPU | None, str]]):
    import polars as pl

    rows = {"_dev": [], "gpu": [], "_cat_bw": [], "_cat_src": []}
    for p in PRECISIONS:
        rows[f"_cat_{p}"] = []
        rows[f"_catclk_{p}"] = []
    for name, gpu, _note in entries:
        rows["_dev"].append(name if name is not None else "")
        rows["gpu"].append(gpu.name if gpu else None)
        rows["_cat_bw"].append((gpu.dram_bw_bytes_per_s or None) if gpu else None)
        rows["_cat_src"].append(gpu.origin if gpu else None)
        for p in PRECISIONS:
            rows[f"_cat_{p}"].append(gpu.peak(p) if gpu else None)
            rows[f"_catclk_{p}"].append(gpu.datasheet_clock(p) if gpu and gpu.peak(p) else None)
    schema = {"_dev": pl.String, "gpu": pl.String, "_cat_bw": pl.Float64, "_cat_src": pl.String}
    schema.update({f"_cat_{p}": pl.Float64 for p in PRECISIONS})
    schema.update({f"_catclk_{p}": pl.Float64 for p in PRECISIONS})
    return pl.DataFrame(rows, schema=schema)


def _finite_or_null(expr):
    import polars as pl

    return pl.when(expr.is_nan()).then(None).otherwise(expr)


#: defaults of the latency class (the engine passes RL112's thresholds, so config and
#: ``--threshold RL112.max_roof_fraction=...`` change them in one place)
LATENCY_MAX_ROOF_FRACTION = 0.10
LAUNCH_FLOOR_S = 2.0e-6


def classify(
    kernels: Any,
    *,
    gpu: GPU | str | None = None,
    latency_fraction: float = LATENCY_MAX_ROOF_FRACTION,
    launch_floor_s: float = LAUNCH_FLOOR_S,
    launch_bound_max_s: float = LAUNCH_BOUND_MAX_S,
):
    """KERNEL table -> (ROOFLINE table, roofs used). See the module docstring for the rules."""
    import polars as pl

    df = conform_kernels(kernels)
    df = df.with_columns(pl.col("device_name").fill_null("").alias("_dev"))

    # catalogue entry per device name (or the forced --gpu)
    entries = device_entries(df, gpu=gpu)
    cat = _catalogue_frame(entries)
    derivations = {g.name: g.derivation for _n, g, _note in entries if g is not None and g.derivation}
    df = df.join(cat, on="_dev", how="left", maintain_order="left")

    # FLOPs: total and dominant precision
    components_known = pl.any_horizontal([pl.col(c).is_not_null() for c in TENSOR_COMPONENTS])
    tensor_total = pl.coalesce(
        pl.col("flops_tensor"),
        pl.when(components_known).then(pl.sum_horizontal(*TENSOR_COMPONENTS)),
    )
    df = df.with_columns(tensor_total.alias("_tensor"))
    # FLOPs known: see "Partial FLOP counters" in the module docstring
    flop_cols = ("flops_fp64", "flops_fp32", "flops_fp16", "_tensor")
    some_work = pl.any_horizontal([(pl.col(c) > 0).fill_null(False) for c in flop_cols])
    pipe_floor = pl.col("tensor_pipe_precision").replace_strict(
        TENSOR_PIPE_MIN_ACTIVE, default=0.0, return_dtype=pl.Float64
    )
    tensor_uncounted = (
        pl.col("_tensor").is_null()
        & pl.col("tensor_pipe_precision").is_not_null()
        & (pl.col("tensor_pipe_active_ratio") > pipe_floor).fill_null(False)
    )
    flops_known = ~tensor_uncounted & (pl.col("flops_fp32").is_not_null() | some_work)
    # section exports without a duration: placed by rate (see "Placement by rate")
    rate_cols = ("flops_fp32_per_s", "flops_fp64_per_s")
    rate_flops = pl.when(pl.any_horizontal([pl.col(c).is_not_null() for c in rate_cols])).then(pl.sum_horizontal(*rate_cols))
    df = df.with_columns(
        rate_flops.alias("_rate_flops"),
        (~tensor_uncounted & ~flops_known & rate_flops.is_not_null() & pl.col("dram_bytes_per_s").is_not_null()).alias("_by_rate"),
        tensor_uncounted.alias("_tensor_uncounted"),
        pl.when(flops_known)
        .then(pl.sum_horizontal(*flop_cols))
        .alias("flops"),
        # tensor FLOPs without a per-precision split count as fp16_tensor
        pl.when(components_known)
        .then(pl.col("flops_tensor_fp16"))
        .otherwise(pl.col("_tensor"))
        .alias("_cand_fp16_tensor"),
    )
    cand = {p: (f"_cand_{p}" if p == "fp16_tensor" else c) for p, c in PRECISION_FLOP_COLUMNS.items()}
    by_rate = {"fp32": "flops_fp32_per_s", "fp64": "flops_fp64_per_s"}  # a rate stands for its total there
    val = {p: pl.when(pl.col("_by_rate")).then(pl.col(by_rate[p])).otherwise(pl.col(c)) if p in by_rate else pl.col(c)
           for p, c in cand.items()}
    top = pl.max_horizontal([v.fill_null(0.0) for v in val.values()])
    prec = pl.when(top <= 0).then(pl.lit(None, dtype=pl.String))
    for p, v in val.items():
        prec = prec.when(v.fill_null(0.0) == top).then(pl.lit(p))
    # tensor work no FLOP counter saw: the pipe's instruction family names the precision
    prec = pl.when(pl.col("_tensor_uncounted")).then(pl.col("tensor_pipe_precision")).otherwise(prec.otherwise(None))
    df = df.with_columns(prec.alias("precision"))

    # each launch's roofs (its own recorded peaks at its own clock) and its device's
    df, meas = launch_peaks(df)

    # intensities and achieved rates
    dur_ok = pl.col("duration_s").fill_null(0.0) > 0
    df = df.with_columns(
        pl.when(pl.col("_by_rate"))
        .then(_finite_or_null(pl.col("_rate_flops") / pl.col("dram_bytes_per_s")))
        .otherwise(_finite_or_null(pl.col("flops") / pl.col("dram_bytes")))
        .alias("intensity_dram"),
        _finite_or_null(pl.col("flops") / pl.col("l2_bytes")).alias("intensity_l2"),
        _finite_or_null(pl.col("flops") / pl.col("l1_bytes")).alias("intensity_l1"),
        pl.when(dur_ok).then(pl.col("flops") / pl.col("duration_s"))
        .when(pl.col("_by_rate")).then(pl.col("_rate_flops")).alias("achieved_flops_per_s"),
        pl.when(dur_ok).then(pl.col("dram_bytes") / pl.col("duration_s"))
        .when(pl.col("_by_rate")).then(pl.col("dram_bytes_per_s")).alias("achieved_dram_bytes_per_s"),
        (pl.col("peak_flops_per_s") / pl.col("peak_bw_bytes_per_s")).alias("ridge_flop_per_byte"),
    )

    # what is missing, and how to get it
    tensor_missing = pl.col("_tensor_uncounted")
    flops_missing = pl.col("flops").is_null() & ~tensor_missing & ~pl.col("_by_rate")
    dram_missing = pl.col("dram_bytes").is_null() & ~pl.col("_by_rate")
    time_missing = ~dur_ok
    bw_roof_missing = pl.col("peak_bw_bytes_per_s").is_null()
    work = pl.coalesce(pl.col("flops"), pl.col("_rate_flops"))  # FLOPs, or FLOP/s where placed by rate
    flop_roof_missing = (work.fill_null(0.0) > 0) & pl.col("peak_flops_per_s").is_null()
    nothing = (work == 0) & (pl.coalesce(pl.col("dram_bytes"), pl.col("dram_bytes_per_s")) == 0)

    # one bit per problem; the (at most 64) distinct combinations are spelled out once in
    # Python and joined back, far cheaper than building lists row by row
    flags = [
        (flops_missing, MISSING_FLOPS, HINT_ROOFLINE),
        (dram_missing, MISSING_DRAM, None),
        (time_missing, MISSING_TIME, HINT_TIME),
        (bw_roof_missing, MISSING_BW_ROOF, HINT_GPU),
        (flop_roof_missing, MISSING_FLOP_ROOF, HINT_GPU),
        (nothing.fill_null(False), None, HINT_NOTHING),
        (tensor_missing, MISSING_TENSOR_FLOPS, HINT_TENSOR),
    ]
    code = pl.sum_horizontal([cond.cast(pl.Int64) * (1 << i) for i, (cond, _m, _h) in enumerate(flags)])
    df = df.with_columns(code.alias("_code"))
    codes = sorted(df.get_column("_code").unique().to_list())
    table = {"_code": [], "missing": [], "missing_hint": []}
    for c in codes:
        on = [i for i in range(len(flags)) if c >> i & 1]
        missing = [flags[i][1] for i in on if flags[i][1]]
        hints = [flags[i][2] for i in on if flags[i][2]]
        if 1 in on and 0 not in on:  # DRAM bytes missing but FLOPs there: ask for just the bytes
            hints.insert(0, HINT_DRAM)
        hints = list(dict.fromkeys(hints))
        table["_code"].append(c)
        table["missing"].append(missing)
        table["missing_hint"].append("; ".join(hints) or None)
    lookup_frame = pl.DataFrame(
        table, schema={"_code": pl.Int64, "missing": pl.List(pl.String), "missing_hint": pl.String}
    )
    df = df.join(lookup_frame, on="_code", how="left", maintain_order="left")

    # placed by rate: only the duration is missing (it stays in `missing`: the time share is unknown)
    known = (pl.col("_code") == 0) | (pl.col("_by_rate") & (pl.col("_code") == 1 << 2))
    zero_flops = pl.coalesce(pl.col("flops"), pl.col("_rate_flops")) == 0
    memory_side = zero_flops | (pl.col("intensity_dram") < pl.col("ridge_flop_per_byte"))
    df = df.with_columns(
        pl.when(~known)
        .then(pl.lit("unknown"))
        .when(memory_side)
        .then(pl.lit("memory"))
        .otherwise(pl.lit("compute"))
        .alias("bound"),
        pl.when(known)
        .then(
            pl.min_horizontal(
                pl.col("peak_flops_per_s"),
                pl.col("intensity_dram").fill_null(float("inf")) * pl.col("peak_bw_bytes_per_s"),
            )
        )
        .alias("roof_flops_per_s"),
        pl.when(known & zero_flops)
        .then(pl.lit(0.0))
        .when(known)
        .then(pl.col("intensity_dram") / pl.col("ridge_flop_per_byte"))
        .alias("ridge_distance"),
        pl.when(known)
        .then(
            pl.max_horizontal(
                pl.col("flops") / pl.col("peak_flops_per_s"),
                pl.col("dram_bytes") / pl.col("peak_bw_bytes_per_s"),
            )
        )
        .alias("time_to_roof_s"),
    )
    df = df.with_columns(
        pl.when(known & zero_flops)
        .then(pl.col("achieved_dram_bytes_per_s") / pl.col("peak_bw_bytes_per_s"))
        .when(known)
        .then(pl.col("achieved_flops_per_s") / pl.col("roof_flops_per_s"))
        .alias("roof_fraction"),
    )

    # latency class: far below every roof it has (compute of its precision, DRAM, and the cache
    # levels where measured), or no longer than the launch floor; the floor is never a saving
    dur = pl.col("duration_s")
    fractions = [
        pl.col("achieved_flops_per_s") / pl.col("peak_flops_per_s"),
        pl.col("achieved_dram_bytes_per_s") / pl.col("peak_bw_bytes_per_s"),
        pl.col("l2_bytes") / dur / pl.col("peak_l2_bw_bytes_per_s"),
        pl.col("l1_bytes") / dur / pl.col("peak_l1_bw_bytes_per_s"),
    ]
    busiest = pl.max_horizontal([_finite_or_null(f).fill_null(0.0) for f in fractions])
    df = df.with_columns(pl.when(known).then(busiest).alias("busiest_roof_fraction"))
    latency = known & ((pl.col("busiest_roof_fraction") < latency_fraction) | (dur <= launch_floor_s))
    df = df.with_columns(pl.when(latency).then(pl.lit("latency")).otherwise(pl.col("bound")).alias("bound"))
    # not placed: ncu's own Speed-of-Light throughputs decide where they can (speed_of_light)
    sol_bound, sol_busiest = speed_of_light.decide(latency_fraction=latency_fraction, launch_floor_s=launch_floor_s)
    df = df.with_columns(pl.when(known).then(None).otherwise(sol_bound).alias("_sol"),
                         pl.when(known).then(None).otherwise(sol_busiest).alias("_sol_busiest"))
    by_sol = pl.col("_sol").is_not_null()
    latency = latency | (pl.col("_sol") == "latency").fill_null(False)
    df = df.with_columns(
        pl.when(by_sol).then(pl.col("_sol")).otherwise(pl.col("bound")).alias("bound"),
        pl.when(known).then(pl.lit(speed_of_light.ROOFLINE)).when(by_sol).then(pl.lit(speed_of_light.SPEED_OF_LIGHT))
        .otherwise(pl.lit(None, dtype=pl.String)).alias("bound_source"),
        pl.when(by_sol).then(pl.col("_sol_busiest")).otherwise(pl.col("busiest_roof_fraction")).alias("busiest_roof_fraction"),
    )
    df = df.with_columns(
        pl.when(known & pl.col("time_to_roof_s").is_not_null())  # null when placed by rate
        .then(pl.max_horizontal(pl.col("time_to_roof_s"), pl.lit(launch_floor_s))).alias("time_to_roof_s"),
        latency_kind_expr(latency, max_s=launch_bound_max_s).alias("latency_kind"),
    )

    df = df.with_columns(_roof_level(known).alias("roof_level"))

    roofs = roofs_used(df, meas, derivations)
    df = family_columns(df)  # what each kernel is: family, library, display label
    out_schema = polars_schema(KERNEL_COLUMNS) | polars_schema(ROOFLINE_COLUMNS)
    df = df.select([pl.col(c).cast(t) for c, t in out_schema.items()])
    return df, roofs


def _roof_level(known):
    """The binding roof: the level with the longest time at its roof (see the module docstring)."""
    import polars as pl

    # time at the roof the DRAM classification chose (ties between DRAM and compute follow
    # ``bound``: intensity == ridge is compute)
    memory_side = (pl.col("bound") == "memory") | ((pl.col("bound") == "latency") & (pl.col("ridge_distance") < 1))
    t_base = (
        pl.when(memory_side)
        .then(pl.col("dram_bytes") / pl.col("peak_bw_bytes_per_s"))
        .otherwise(pl.col("flops") / pl.col("peak_flops_per_s"))
    )
    t_l2 = (pl.col("l2_bytes") / pl.col("peak_l2_bw_bytes_per_s")).fill_nan(None).fill_null(-1.0)
    t_l1 = (pl.col("l1_bytes") / pl.col("peak_l1_bw_bytes_per_s")).fill_nan(None).fill_null(-1.0)
    base = pl.when(memory_side).then(pl.lit("dram")).otherwise(pl.lit("compute"))
    return (
        pl.when(~known)
        .then(pl.lit(None, dtype=pl.String))
        .when((t_l2 > t_base) & (t_l2 >= t_l1))  # a tie between the caches goes to the outer one
        .then(pl.lit("l2"))
        .when(t_l1 > t_base)
        .then(pl.lit("l1"))
        .otherwise(base)
    )


def summarize(roofline: Any):
    """ROOFLINE table -> SUMMARY table: one row per kernel name, most GPU time first.

    Intensity is total FLOPs over total bytes and the roof fraction is time-weighted; a kernel
    whose launches have no duration (placed by rate) gets FLOP/s over bytes/s and the mean
    fraction instead, every launch weighing the same.
    """
    import polars as pl

    df = roofline if "kernel_label" in roofline.columns else family_columns(roofline)
    grand = df.get_column("duration_s").sum() or 0.0
    both = pl.col("flops").is_not_null() & pl.col("dram_bytes").is_not_null()
    rf_known = pl.col("roof_fraction").is_not_null() & pl.col("duration_s").is_not_null()
    ttr_known = pl.col("time_to_roof_s").is_not_null() & pl.col("duration_s").is_not_null()
    by_rate = (pl.col("duration_s").is_null() & pl.col("achieved_flops_per_s").is_not_null()
               & pl.col("achieved_dram_bytes_per_s").is_not_null())
    base = df.group_by("kernel_name").agg(
        pl.col("short_name").drop_nulls().first().alias("short_name"),
        pl.col("kernel_family").drop_nulls().first().alias("kernel_family"),
        pl.col("kernel_label").drop_nulls().first().alias("kernel_label"),
        pl.len().cast(pl.Int64).alias("launches"),
        # no launch with a duration: null (shown empty), never 0 s
        pl.when(pl.col("duration_s").count() > 0).then(pl.col("duration_s").sum()).alias("total_duration_s"),
        pl.col("flops").filter(both).sum().alias("_f"),
        pl.col("dram_bytes").filter(both).sum().alias("_b"),
        both.any().alias("_any_both"),
        (pl.col("roof_fraction") * pl.col("duration_s")).filter(rf_known).sum().alias("_rfw"),
        pl.col("duration_s").filter(rf_known).sum().alias("_rfd"),
        (pl.col("duration_s") - pl.col("time_to_roof_s")).clip(lower_bound=0.0).filter(ttr_known).sum().alias("_save"),
        ttr_known.any().alias("_any_ttr"),
        # launches placed by rate (no duration): FLOP/s over bytes/s, each launch weighing the same
        pl.col("achieved_flops_per_s").filter(by_rate).sum().alias("_rf"),
        pl.col("achieved_dram_bytes_per_s").filter(by_rate).sum().alias("_rb"),
        by_rate.any().alias("_any_rate"),
        pl.col("roof_fraction").filter(by_rate).mean().alias("_rfm"),
    )

    def by_time(column: str):
        return (
            df.filter(pl.col(column).is_not_null())
            .group_by("kernel_name", column)
            .agg(pl.col("duration_s").fill_null(0.0).sum().alias("_t"))
            .sort(["kernel_name", "_t", column], descending=[False, True, False])
            .group_by("kernel_name", maintain_order=True)
            .agg(pl.col(column).first())
        )

    if "latency_kind" not in df.columns:
        df = df.with_columns(pl.lit(None, dtype=pl.String).alias("latency_kind"))
    out = base.join(by_time("precision"), on="kernel_name", how="left").join(by_time("bound"), on="kernel_name", how="left")
    if "bound_source" not in df.columns:
        df = df.with_columns(pl.lit(None, dtype=pl.String).alias("bound_source"))
    # what decided the bound shown: among the launches with that bound, the source holding most time
    chosen = df.join(out.select("kernel_name", pl.col("bound").alias("_shown")), on="kernel_name", how="left")
    source = (
        chosen.filter((pl.col("bound") == pl.col("_shown")) & pl.col("bound_source").is_not_null())
        .group_by("kernel_name", "bound_source")
        .agg(pl.col("duration_s").fill_null(0.0).sum().alias("_t"))
        .sort(["kernel_name", "_t", "bound_source"], descending=[False, True, False])
        .group_by("kernel_name", maintain_order=True)
        .agg(pl.col("bound_source").first())
    )
    out = out.join(source, on="kernel_name", how="left")
    out = out.join(by_time("latency_kind"), on="kernel_name", how="left").with_columns(
        pl.when(pl.col("bound") == "latency").then(pl.col("latency_kind")).alias("latency_kind")
    )
    out = out.with_columns(
        (pl.col("total_duration_s") / grand if grand > 0 else pl.lit(None, dtype=pl.Float64)).alias("time_share"),
        pl.when(pl.col("_any_both")).then(_finite_or_null(pl.col("_f") / pl.col("_b")))
        .when(pl.col("_any_rate")).then(_finite_or_null(pl.col("_rf") / pl.col("_rb"))).alias("intensity_dram"),
        pl.when(pl.col("_rfd") > 0).then(pl.col("_rfw") / pl.col("_rfd"))
        .when(pl.col("_any_rate")).then(pl.col("_rfm")).alias("roof_fraction"),
        pl.when(pl.col("_any_ttr")).then(pl.col("_save")).alias("saving_upper_bound_s"),
    )
    schema = polars_schema(SUMMARY_COLUMNS)
    return out.sort(["total_duration_s", "kernel_name"], descending=[True, False], nulls_last=True).select(
        [pl.col(c).cast(t) for c, t in schema.items()]
    )
