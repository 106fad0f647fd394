"""Who wastes which GPUs: the telemetry windows grouped by workload (``ridgeline telemetry --by``).

``--by`` names a dimension; repeated, the key is nested (``--by namespace --by pod``):

==================  ==========================================================================
``host``            the window's host
``pod``             Kubernetes pod, ``namespace/pod`` (labels ``exported_pod`` | ``pod``, with
                    ``exported_namespace`` | ``namespace``; the ``exported_*`` form first: when
                    Prometheus scrapes the exporter, ``pod`` is the exporter's own pod)
``namespace``       ``exported_namespace`` | ``namespace``
``container``       ``exported_container`` | ``container``
``job``             with ``--jobs FILE``: the Slurm job id; without: ``exported_job`` | ``job``
``user``            Slurm user (``--jobs``)
``account``         Slurm account (``--jobs``)
``label=NAME``      the label NAME as written (any label the exporter carries)
==================  ==========================================================================

Where the labels come from: the readers keep each series' workload labels per row (the
``labels`` column of the TELEMETRY table: dcgm-exporter text, Prometheus JSON and pulls, and
the Parquet stores saved from them, which keep it per row (:mod:`ridgeline.sources.store`);
``dcgmi dmon``, nvidia-smi and stores written before labels were kept carry none). :func:`label_runs` turns them into
runs: per GPU, consecutive samples with the same label set, ``[first sample, next run's first
sample)`` (the last run ends one sample interval after its last sample). Slurm jobs
(:mod:`ridgeline.parsers.telemetry.sacct`) are spans per node: ``[Start, End)``, on the GPUs the file
names (``IDX``) or else on every GPU of the node; node names match hosts by their first
dot-separated part (``gpu01`` matches ``gpu01.cluster.local``).

Attribution: each window of a GPU is split over the runs / jobs that overlap it, in proportion
to the overlap (a pod that took over the GPU mid-window gets the part of the window after it
started); a window no run or job overlaps goes to the group ``(no pod)`` / ``(no job)``...
Every window's share sums to 1, so the groups partition the windows: the groups' GPU-hours add up
to the fleet's, and so do their wasted hours. Two jobs on one node at once, without GPU indices,
each get half of every GPU's time (said in a note).

Per group (:func:`group_summary`): ``gpus`` (distinct GPUs with time in the group),
``gpu_hours`` observed (span_s x share); ``gpu_hours_by_class`` (``h:<class>`` columns) from each
window's ``class`` (:mod:`ridgeline.analyzer.fleet.classes`); ``wasted_gpu_hours`` = idle_allocated
+ unavailable hours (time thrown away); ``underused_gpu_hours`` = memory_bound + io_bound +
busy_low_throughput + busy hours (busy, far from the tensor/FP roofs: work done badly, with the
remedy of its largest class), never waste. ``allocated_idle_h``, ``tensor_idle_h``,
``memory_bound_h``: the per-sample states of :func:`ridgeline.analyzer.fleet.summary.waste_columns`,
kept as evidence. ``tensor_active`` / ``dram_active``: means weighted by GPU
time (windows with profiling data). ``notes``: short sentences a person can forward.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

KEYS = ("host", "gpu", "gpu_instance")
SLURM_DIMS = ("job", "user", "account")
# dimension -> label names tried in order
LABEL_DIMS = {
    "pod": ("exported_pod", "pod"),
    "namespace": ("exported_namespace", "namespace"),
    "container": ("exported_container", "container"),
    "job": ("exported_job", "job"),
}
DIMS = ("host", "pod", "namespace", "container", "job", "user", "account", "label=NAME")
ZERO_TENSOR = 0.005  # a GPU whose mean tensor activity rounds to 0%
NOTE_SHARE = 0.25  # a cause worth a note: at least this share of the group's GPU time


@dataclasses.dataclass(frozen=True)
class Dim:
    """One ``--by`` dimension: ``name`` as given (``pod``, ``label=team``), ``source`` host, label
    or slurm, ``labels`` the label names tried (label dims)."""

    name: str
    source: str
    labels: tuple[str, ...] = ()

    @property
    def col(self) -> str:
        return f"by:{self.name}"

    @property
    def noun(self) -> str:
        return self.name.split("=", 1)[1] if self.name.startswith("label=") else self.name


def parse_by(values, *, have_jobs: bool) -> list[Dim]:
    """``--by`` values -> dimensions; UsageError for an unknown one (or user/account without jobs)."""
    from ridgeline.errors import UsageError

    dims: list[Dim] = []
    for raw in values or ():
        v = str(raw).strip()
        low = v.lower()
        if low.startswith("label="):
            name = v.split("=", 1)[1].strip()
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                raise UsageError(f"--by {v}: expected label=NAME with a Prometheus label name")
            dim = Dim(f"label={name}", "label", (name,))
        elif low == "host":
            dim = Dim("host", "host")
        elif low in SLURM_DIMS and have_jobs:
            dim = Dim(low, "slurm")
        elif low in ("user", "account"):
            raise UsageError(f"--by {v}: needs --jobs FILE (sacct --parsable2 output)")
        elif low in LABEL_DIMS:
            dim = Dim(low, "label", LABEL_DIMS[low])
        else:
            raise UsageError(f"--by {v}: expected one of {', '.join(DIMS)}")
        if dim in dims:
            raise UsageError(f"--by {v} given twice")
        dims.append(dim)
    return dims


def _label_expr(names: tuple[str, ...]):
    import polars as pl

    exprs = [pl.col("labels").str.extract(r'(?:^|,)' + re.escape(n) + r'="((?:[^"\\]|\\.)*)"', 1) for n in names]
    e = pl.coalesce([pl.when(x == "").then(None).otherwise(x) for x in exprs])
    return e


def _dim_expr(dim: Dim):
    import polars as pl

    if dim.name == "pod":
        pod, ns = _label_expr(LABEL_DIMS["pod"]), _label_expr(LABEL_DIMS["namespace"])
        return pl.when(ns.is_null()).then(pod).otherwise(ns + "/" + pod).alias(dim.col)
    return _label_expr(dim.labels).alias(dim.col)


def label_runs(long):
    """TELEMETRY long rows (Lazy- or DataFrame) -> runs of one label set per GPU: host, gpu,
    gpu_instance, ``_s`` (first sample), ``_e`` (next run's first sample, or last sample + the
    GPU's median sample gap), ``labels``. Rows without labels are runs too (labels null)."""
    import polars as pl

    lf = long.lazy() if isinstance(long, pl.DataFrame) else long
    # labels as categories: a row's largest set is picked by its code (Categorical order is the
    # text's) and runs are told apart by codes, so no row's text is copied (75,000 rows of 300 KB
    # labels took the text times the rows: out of memory); the runs get their text back at the end
    df = (lf.select(*KEYS, "timestamp", pl.col("labels").cast(pl.Categorical))
          .group_by(*KEYS, "timestamp").agg(pl.col("labels").max())
          .collect(engine="streaming")
          .sort([*KEYS, "timestamp"], nulls_last=True))
    if not df.height:
        return df.select(*KEYS, pl.col("timestamp").alias("_s"), pl.col("timestamp").alias("_e"),
                         pl.col("labels").cast(pl.String))
    gap = pl.col("timestamp").diff().over(list(KEYS)).median().over(list(KEYS))
    df = df.with_columns(pl.struct(*KEYS, "labels").rle_id().alias("_run"), gap.alias("_gap"))
    runs = df.group_by("_run", maintain_order=True).agg(
        *[pl.col(k).first() for k in KEYS], pl.col("timestamp").min().alias("_s"),
        pl.col("timestamp").max().alias("_last"), pl.col("labels").first(), pl.col("_gap").first())
    nxt = pl.col("_s").shift(-1).over(list(KEYS), order_by="_s")
    return runs.with_columns(
        pl.coalesce(nxt, pl.col("_last") + pl.col("_gap").fill_null(pl.duration(seconds=1)))
        .alias("_e")).select(*KEYS, "_s", "_e", pl.col("labels").cast(pl.String))


def label_runs_in_chunks(chunks):
    """:func:`label_runs` of rows read one chunk at a time (a store's files, one UTC day of one
    host each), in memory bounded by one chunk plus the runs: the same runs, value for value,
    as :func:`label_runs` over all the chunks' rows at once, when no GPU's samples interleave
    between chunks (a store's day files do not).

    ``chunks``: Lazy- or DataFrames of ``host, gpu, gpu_instance, timestamp, labels``. Each is
    folded to its own runs, first and last sample time per run, and the histogram of each GPU's
    gaps between samples (the gap from its previous chunk's last sample included), so the
    median gap that ends a GPU's last run is the median over all its samples; runs that meet
    across chunks with the same labels are then merged, and each run ends at the next one's
    first sample."""
    import polars as pl

    keys = list(KEYS)
    runs, hists, last = [], [], None
    first_row = pl.int_range(pl.len()) == 0
    same_gpu = ~first_row & pl.all_horizontal([pl.col(k).eq_missing(pl.col(k).shift(1)) for k in KEYS])
    ts, prev = pl.col("timestamp"), pl.col("timestamp").shift(1)
    for chunk in chunks:
        lf = chunk.lazy() if isinstance(chunk, pl.DataFrame) else chunk
        # labels as categories: each row holds a small code, compared without reading the text
        df = lf.select(*KEYS, "timestamp", pl.col("labels").cast(pl.Categorical)).collect()
        if not df.height:
            continue
        # a store's file: each GPU's rows together, in time order, once each (then no sort)
        tidy = df.select(((~same_gpu).sum() == pl.struct(*KEYS).n_unique()).alias("together"),
                         (~same_gpu | (ts > prev)).all().alias("in_order")).row(0)
        if not all(tidy):
            # else sorted, and a (GPU, time) given twice keeps its largest label set, as label_runs
            # (by code: Categorical order is the text's, and no row's text is copied)
            df = (df.group_by(*KEYS, "timestamp").agg(pl.col("labels").max())
                  .sort([*KEYS, "timestamp"], nulls_last=True))
        marks = df.select(same_gpu.alias("same"), (~same_gpu).alias("gpu_start"),
                          (~same_gpu).shift(-1).fill_null(True).alias("gpu_end"),
                          (~(same_gpu & pl.col("labels").eq_missing(pl.col("labels").shift(1)))).alias("run_start"))
        marks = marks.with_columns(pl.col("run_start").shift(-1).fill_null(True).alias("run_end"))
        # gaps between samples of a GPU, and from its last sample in the chunks before
        inner = df.select(*KEYS, pl.when(marks.get_column("same")).then(ts - prev).alias("gap")).drop_nulls("gap")
        # (rows picked by index, not by filter: polars' filter result holds on to the whole
        # chunk's buffers, which the kept runs and tails would carry from file to file)
        starts = df[marks.get_column("gpu_start").arg_true()].select(*KEYS, "timestamp")
        if last is not None:
            edge = starts.join(last.rename({"timestamp": "_prev"}), on=keys, how="inner", nulls_equal=True)
            inner = pl.concat([inner, edge.select(*KEYS, (ts - pl.col("_prev")).alias("gap"))], how="vertical_relaxed")
        hists.append(inner.group_by(*KEYS, "gap").agg(pl.len().alias("n")))
        tail = df[marks.get_column("gpu_end").arg_true()].select(*KEYS, "timestamp")
        last = tail if last is None else pl.concat([last, tail], how="vertical_relaxed").group_by(keys).agg(
            pl.col("timestamp").max())
        # a run starts where the GPU or its labels change
        firsts = df[marks.get_column("run_start").arg_true()].select(*KEYS, pl.col("timestamp").alias("_s"), "labels")
        lasts = df[marks.get_column("run_end").arg_true()].select(pl.col("timestamp").alias("_last"))
        runs.append(pl.concat([firsts, lasts], how="horizontal"))
        del df, marks, inner
    if not runs:
        return pl.DataFrame(schema={"host": pl.String, "gpu": pl.Int64, "gpu_instance": pl.String,
                                    "_s": pl.Datetime("us", "UTC"), "_e": pl.Datetime("us", "UTC"),
                                    "labels": pl.String})
    # runs that meet across chunks with the same labels are one run
    allruns = (pl.concat(runs, how="vertical_relaxed").with_columns(pl.col("labels").cast(pl.String))
               .sort([*KEYS, "_s"], nulls_last=True))
    allruns = allruns.with_columns(pl.struct(*KEYS, "labels").rle_id().alias("_run")).group_by(
        "_run", maintain_order=True).agg(*[pl.col(k).first() for k in KEYS], pl.col("_s").min(),
                                         pl.col("_last").max(), pl.col("labels").first())
    # the median gap per GPU from the histogram (as polars' median over the gaps: the midpoint of
    # the two middle ones)
    h = (pl.concat(hists, how="vertical_relaxed").group_by(*KEYS, "gap").agg(pl.col("n").sum())
         .sort([*KEYS, "gap"], nulls_last=True))
    h = h.with_columns(pl.col("n").cum_sum().over(keys).alias("_to"), pl.col("n").sum().over(keys).alias("_total"))
    h = h.with_columns((pl.col("_to") - pl.col("n")).alias("_from"))
    lo, hi = (pl.col("_total") - 1) // 2, pl.col("_total") // 2
    lower = h.filter((pl.col("_from") <= lo) & (lo < pl.col("_to"))).select(*KEYS, pl.col("gap").alias("_lo"))
    upper = h.filter((pl.col("_from") <= hi) & (hi < pl.col("_to"))).select(*KEYS, pl.col("gap").alias("_hi"))
    gap = lower.join(upper, on=keys, nulls_equal=True).select(
        *KEYS, (pl.col("_lo") + (pl.col("_hi") - pl.col("_lo")) / 2).alias("_gap"))
    allruns = allruns.join(gap, on=keys, how="left", nulls_equal=True, maintain_order="left")
    nxt = pl.col("_s").shift(-1).over(keys, order_by="_s")
    return allruns.with_columns(
        pl.coalesce(nxt, pl.col("_last") + pl.col("_gap").fill_null(pl.duration(seconds=1)))
        .alias("_e")).select(*KEYS, "_s", "_e", "labels")


def _short_host(expr):
    return expr.str.split(".").list.first()


def _gpus_not_reported(w, jobs) -> str | None:
    """A note naming the jobs whose GPU indices the telemetry of their node does not report (GPU 9
    on a node reporting 0-7): none of the node's windows is theirs on that GPU, which would
    otherwise go unsaid. Nodes without telemetry are not named here."""
    import polars as pl

    named = (jobs.select("job", "line", _short_host(pl.col("host")).alias("_host"), pl.col("gpus").alias("_gpu"))
             .explode("_gpu").filter(pl.col("_gpu").is_not_null()))
    if not named.height:
        return None
    seen = w.select("_host", pl.col("gpu").cast(pl.Int64).alias("_gpu")).unique()
    missing = (named.join(seen.select("_host").unique(), on="_host", how="semi")
               .join(seen, on=["_host", "_gpu"], how="anti").sort("line", "_gpu"))
    if not missing.height:
        return None
    jobs_missing = missing.group_by("job", "line", "_host", maintain_order=True).agg(pl.col("_gpu"))
    shown = []
    for job, line, host, gpus in jobs_missing.head(3).iter_rows():
        reported = sorted(seen.filter(pl.col("_host") == host).get_column("_gpu").drop_nulls().to_list())
        shown.append(f"job {job} (line {line}) names GPU {', '.join(map(str, gpus))} on {host}, whose telemetry "
                     f"reports GPU {_index_ranges(reported)}")
    more = f"; {jobs_missing.height - 3} more" if jobs_missing.height > 3 else ""
    return (f"{jobs_missing.height} job row(s) name GPU indices their node's telemetry does not report ("
            + "; ".join(shown) + more + "): no window of those GPUs is theirs")


def _index_ranges(values: list[int]) -> str:
    """[0, 1, 2, 3, 5] -> '0-3,5'."""
    out, start = [], None
    for i, v in enumerate(values):
        if start is None:
            start = v
        if i + 1 == len(values) or values[i + 1] != v + 1:
            out.append(str(start) if start == v else f"{start}-{v}")
            start = None
    return ",".join(out) or "none"


def _split(w, spans, *, on: list[str], cols: list[str], any_gpu: bool = False):
    """Windows ``w`` (``_wid``, ``_f`` = share so far) split over the ``spans`` overlapping them.
    ``spans``: ``on`` columns, ``_s``, ``_e`` (null: open), ``cols``; ``any_gpu``: spans carry
    ``_gpu`` (null = every GPU of the host). Windows no span overlaps keep their share, cols null."""
    import polars as pl

    j = w.join(spans, on=on, how="inner", nulls_equal=True)
    if any_gpu:
        j = j.filter(pl.col("_gpu").is_null() | (pl.col("_gpu") == pl.col("gpu")))
    end = pl.min_horizontal(pl.col("window_end"), pl.col("_e").fill_null(pl.col("window_end")))
    start = pl.max_horizontal(pl.col("window_start"), pl.col("_s"))
    j = j.with_columns((end - start).dt.total_microseconds().alias("_ov")).filter(pl.col("_ov") > 0)
    j = j.with_columns((pl.col("_f") * pl.col("_ov") / pl.col("_ov").sum().over("_wid")).alias("_f"),
                       pl.len().over("_wid").alias("_n"))
    drop = [c for c in spans.columns if c not in on and c not in cols]
    matched = j.drop([c for c in drop if c in j.columns] + ["_ov"])
    rest = w.join(j.select("_wid").unique(), on="_wid", how="anti").with_columns(
        *[pl.lit(None, spans.schema[c]).alias(c) for c in cols], pl.lit(1, pl.UInt32).alias("_n"))
    return pl.concat([matched, rest.select(matched.columns)], how="vertical_relaxed")


@dataclasses.dataclass
class GroupReport:
    """What ``--by`` produced: the dimensions, the group table (:func:`group_summary`, worst
    first) and notes about the attribution itself."""

    by: list[str]
    table: Any
    notes: list[str] = dataclasses.field(default_factory=list)
    #: the window table with a ``by:<dim>`` column per dimension: the group holding most of each
    #: window (what RL209 compares GPUs within: a pod's or a job's GPUs, not a host's)
    windows: Any = None

    @property
    def key_columns(self) -> tuple[str, ...]:
        return tuple(f"by:{d}" for d in self.by)

    def rows(self) -> list[dict]:
        """One dict per group, worst first: what the table, the JSON and the HTML report show."""
        return group_rows(self)


def attribute(windows, dims: list[Dim], *, runs=None, jobs=None, notes: list[str] | None = None):
    """The windows with one row per (window, group): the dims' key columns (``by:<name>``) and
    ``_f``, the window's share in that group (summing to 1 per window)."""
    import polars as pl

    w = windows.with_row_index("_wid").with_columns(pl.lit(1.0).alias("_f"))
    label_dims = [d for d in dims if d.source == "label"]
    if label_dims:
        if runs is None or not runs.height:
            w = w.with_columns([pl.lit(None, pl.String).alias(d.col) for d in label_dims])
        else:
            spans = runs.with_columns([_dim_expr(d) for d in label_dims]).drop("labels")
            w = _split(w, spans, on=list(KEYS), cols=[d.col for d in label_dims])
    slurm = [d for d in dims if d.source == "slurm"]
    if slurm:
        cols = {"job": "job", "user": "user", "account": "account"}
        spans = (jobs.explode("gpus") if jobs is not None and jobs.height else None)
        if spans is None:
            w = w.with_columns([pl.lit(None, pl.String).alias(d.col) for d in slurm])
        else:
            spans = spans.select(_short_host(pl.col("host")).alias("_host"), pl.col("gpus").alias("_gpu"),
                                 pl.col("start").alias("_s"), pl.col("end").alias("_e"),
                                 *[pl.col(cols[d.name]).alias(d.col) for d in slurm])
            w = w.with_columns(_short_host(pl.col("host")).alias("_host"))
            if notes is not None:
                note = _gpus_not_reported(w, jobs)
                if note:
                    notes.append(note)
            w = _split(w, spans, on=["_host"], cols=[d.col for d in slurm], any_gpu=True)
            shared = w.filter(pl.col("_n") > 1)
            if notes is not None and shared.height:
                hosts = sorted(set(shared.get_column("host").drop_nulls().to_list()))
                notes.append(f"{len(hosts)} host(s) ran several jobs at once ({', '.join(hosts[:3])}"
                             f"{', ...' if len(hosts) > 3 else ''}); where the jobs file gives no GPU index, "
                             "each job gets a share of every GPU of the node (by time overlap)")
            w = w.drop("_host")
    if any(d.source == "host" for d in dims):
        w = w.with_columns(pl.col("host").alias("by:host"))
    return w


def main_groups(windows, dims: list[Dim], *, runs=None, jobs=None):
    """``windows`` with a ``by:<dim>`` column per dimension: for each window the group that holds
    the largest share of it (ties: the first in :func:`attribute`'s order; a window no group holds
    keeps the "(no ...)" key as null). One row per window, in the windows' order."""
    if windows is None or not windows.height:
        return windows
    cols = [d.col for d in dims]
    w = attribute(windows, dims, runs=runs, jobs=jobs)
    best = (w.sort(["_wid", "_f"], descending=[False, True], maintain_order=True)
            .unique("_wid", keep="first", maintain_order=True).sort("_wid"))
    return best.select([c for c in windows.columns] + [c for c in cols if c not in windows.columns])


def group_summary(windows, dims: list[Dim], *, runs=None, jobs=None, notes: list[str] | None = None):
    """One row per group, worst (most wasted GPU-hours) first. See the module docstring."""
    import polars as pl

    from ridgeline.analyzer.fleet.classes import CLASS_ORDER, UNDERUSED_CLASSES, WASTED_CLASSES
    from ridgeline.analyzer.fleet.summary import waste_columns

    cols = [d.col for d in dims]
    w = attribute(windows, dims, runs=runs, jobs=jobs, notes=notes).with_columns(*waste_columns())
    f = pl.col("_f")
    span = pl.col("span_s").fill_null(0.0) * f
    prof = pl.col("has_profiling").fill_null(False) & pl.col("excluded").is_null()

    def wsum(c):  # share-weighted GPU-time sum of a mean column, over windows that have it
        ok = prof & pl.col(c).is_not_null()
        return (pl.when(ok).then(pl.col(c) * span).otherwise(0.0).sum().alias(c + ":n"),
                pl.when(ok).then(span).otherwise(0.0).sum().alias(c + ":d"))

    w = w.with_columns(pl.concat_str([pl.col("host").fill_null("?"), pl.col("gpu").cast(pl.String).fill_null("?"),
                                      pl.col("gpu_instance").fill_null("")], separator="/").alias("_gpu_id"))
    klass = pl.col("class") if "class" in w.columns else pl.lit(None, pl.String)
    per_gpu = w.group_by([*cols, "_gpu_id"]).agg(
        *[pl.when(klass == c).then(span).otherwise(0.0).sum().alias(f"h:{c}") for c in CLASS_ORDER],
        span.sum().alias("_span"), (pl.col("_ai") * f).sum().alias("_ai"),
        ((pl.col("_bti") - pl.col("_mb")) * f).sum().alias("_ti"), (pl.col("_mb") * f).sum().alias("_mb"),
        *wsum("tensor_active_mean_ratio"), *wsum("dram_active_mean_ratio"),
        pl.col("window_start").min(), pl.col("window_end").max(),
    ).filter(pl.col("_span") > 0)
    tensor = pl.col("tensor_active_mean_ratio:n") / pl.col("tensor_active_mean_ratio:d")
    per_gpu = per_gpu.with_columns(
        (pl.col("tensor_active_mean_ratio:d") > 0).alias("_prof"),
        ((pl.col("tensor_active_mean_ratio:d") > 0) & (tensor < ZERO_TENSOR)).alias("_zero"))

    def mean(c):
        d = pl.col(c + ":d").sum()
        return pl.when(d > 0).then(pl.col(c + ":n").sum() / d).otherwise(None).alias(c.replace("_mean_ratio", ""))

    out = per_gpu.group_by(cols).agg(
        pl.len().alias("gpus"),
        (pl.col("_span").sum() / 3600).alias("gpu_hours"),
        (pl.col("_ai").sum() / 3600).alias("allocated_idle_h"),
        (pl.col("_ti").sum() / 3600).alias("tensor_idle_h"),
        (pl.col("_mb").sum() / 3600).alias("memory_bound_h"),
        mean("tensor_active_mean_ratio"), mean("dram_active_mean_ratio"),
        *[(pl.col(f"h:{c}").sum() / 3600).alias(f"h:{c}") for c in CLASS_ORDER],
        pl.col("_prof").sum().alias("gpus_profiled"), pl.col("_zero").sum().alias("gpus_tensor_zero"),
        pl.col("window_start").min().alias("first"), pl.col("window_end").max().alias("last"),
    ).with_columns(
        # waste is time thrown away (idle with memory held, or the GPU unavailable); busy time far
        # from every roof is underuse (work done badly), never waste
        pl.sum_horizontal([pl.col(f"h:{c}") for c in WASTED_CLASSES]).alias("wasted_gpu_hours"),
        pl.sum_horizontal([pl.col(f"h:{c}") for c in UNDERUSED_CLASSES]).alias("underused_gpu_hours"),
    ).with_columns(
        pl.when(pl.col("gpu_hours") > 0).then(pl.col("wasted_gpu_hours") / pl.col("gpu_hours")).alias("wasted_share"),
        pl.when(pl.col("gpu_hours") > 0).then(pl.col("underused_gpu_hours") / pl.col("gpu_hours")).alias("underused_share"),
    )
    if jobs is not None and any(d.name == "job" and d.source == "slurm" for d in dims):
        alloc = jobs.group_by("job").agg(pl.col("alloc_gpus").first())
        out = out.join(alloc.rename({"job": "by:job"}), on="by:job", how="left")
    out = out.sort(["wasted_gpu_hours", "underused_gpu_hours", *cols], descending=[True, True] + [False] * len(cols),
                   nulls_last=True)
    none = {d.col: f"(no {d.noun})" for d in dims}
    out = out.with_columns([pl.col(c).fill_null(v) for c, v in none.items()])
    parts = [pl.col(c) for c in cols]
    names = [d.name for d in dims]
    if "namespace" in names and "pod" in names and names.index("namespace") < names.index("pod"):
        # the pod's namespace is in the key already: "team-a / train-0", not "team-a / team-a/train-0"
        parts[names.index("pod")] = pl.col("by:pod").str.strip_prefix(pl.col("by:namespace") + "/")
    return out.with_columns(pl.concat_str(parts, separator=" / ").alias("key"))


def _hours(h: float) -> str:
    if h >= 48:
        return f"{h / 24:.1f} days"
    if h >= 1:
        return f"{h:.1f} h"
    return f"{h * 60:.0f} min"


def group_notes(row: dict, noun: str) -> list[str]:
    """Short sentences about one group a person can forward (most telling first)."""
    out = []
    n, hours = row["gpus"], row["gpu_hours"] or 0.0
    each = hours / n if n else 0.0
    what = "both GPUs" if n == 2 else f"all {n} GPUs" if n > 1 else "its GPU"
    if row["gpus_profiled"] == 0:
        out.append("no DCGM profiling fields: busy time is of class unknown, only idle-with-memory-allocated time counted")
    elif row["gpus_tensor_zero"] == n:
        out.append(f"Tensor Core activity was 0% on {what} of this {noun} for {_hours(each)}")
    elif row["gpus_tensor_zero"]:
        out.append(f"Tensor Core activity was 0% on {row['gpus_tensor_zero']} of its {n} GPUs")
    held = row.get("h:idle_allocated") or 0.0
    if hours > 0 and held >= NOTE_SHARE * hours:
        out.append(f"idle with memory allocated for {held:.1f} of {hours:.1f} GPU-h: "
                   "release the GPUs when not in use")
    mb = row.get("h:memory_bound") or 0.0
    if hours > 0 and mb >= NOTE_SHARE * hours:
        out.append(f"memory-bound (DRAM busy, tensor cores idle) for {mb:.1f} GPU-h: underused, not wasted: "
                   "batch more or move fewer bytes")
    alloc = row.get("alloc_gpus")
    if alloc is not None and alloc < n:
        out.append(f"the job allocated {alloc} GPU(s); telemetry attributed {n} to it "
                   "(the jobs file names no GPU indices: every GPU of its nodes counts)")
    elif alloc is not None and alloc > n:
        out.append(f"the job allocated {alloc} GPU(s); the telemetry saw {n} of them (nodes or GPUs not in "
                   "the telemetry)")
    return out


def group_rows(report: GroupReport) -> list[dict]:
    """Rows of the group table as plain dicts, worst first: key, keys ({dim: value}), gpus,
    gpu_hours, wasted_gpu_hours, wasted_share, wasted_split, tensor_active, dram_active, notes."""
    from ridgeline.analyzer.fleet.classes import CLASS_ORDER, UNDERUSED_CLASSES, WASTED_CLASSES

    dims = report.by
    rows = []
    noun = _noun(dims[-1]) if dims else "group"
    for r in report.table.iter_rows(named=True):
        rows.append({
            "key": r["key"],
            "keys": {d: r[f"by:{d}"] for d in dims},
            "gpus": r["gpus"],
            "gpu_hours": r["gpu_hours"],
            "wasted_gpu_hours": r["wasted_gpu_hours"],
            "wasted_share": r["wasted_share"],
            "wasted_split": {f"{c}_h": r[f"h:{c}"] for c in WASTED_CLASSES},
            "underused_gpu_hours": r["underused_gpu_hours"],
            "underused_share": r["underused_share"],
            "underused_split": {f"{c}_h": r[f"h:{c}"] for c in UNDERUSED_CLASSES},
            "underused_remedy": _remedy(r),
            "gpu_hours_by_class": {c: r[f"h:{c}"] for c in CLASS_ORDER},
            # the per-sample states, kept as evidence (busy with idle tensor cores is not waste)
            "states_h": {"allocated_idle_h": r["allocated_idle_h"], "tensor_idle_h": r["tensor_idle_h"],
                         "memory_bound_h": r["memory_bound_h"]},
            "tensor_active": r["tensor_active"],
            "dram_active": r["dram_active"],
            "first": r["first"],
            "last": r["last"],
            "alloc_gpus": r.get("alloc_gpus"),
            "notes": group_notes(r, noun),
        })
    return rows


def _remedy(row: dict) -> str | None:
    """The remedy of the group's largest underused class ("memory_bound: raise the batch ..."), or None."""
    from ridgeline.analyzer.fleet.classes import REMEDIES, UNDERUSED_CLASSES

    hours = {c: row.get(f"h:{c}") or 0.0 for c in UNDERUSED_CLASSES}
    top = max(hours, key=lambda c: hours[c])
    return f"{top}: {REMEDIES[top]}" if hours[top] > 0 else None


def _noun(name: str) -> str:
    return name.split("=", 1)[1] if name.startswith("label=") else name


def group_report(windows, by, *, runs=None, jobs=None, have_labels: bool = True) -> GroupReport:
    """``--by`` values -> :class:`GroupReport` (``runs``: :func:`label_runs` of the inputs, None
    when none carries labels; ``jobs``: the JOBS table of ``--jobs``)."""
    dims = parse_by(by or (["job"] if jobs is not None else []), have_jobs=jobs is not None)
    notes: list[str] = []
    label_dims = [d.name for d in dims if d.source == "label"]
    if label_dims and not have_labels:
        notes.append(f"--by {', '.join(label_dims)}: the inputs carry no workload labels (dcgm-exporter text, "
                     "Prometheus JSON, Prometheus pulls and stores saved from them do; dcgmi dmon, nvidia-smi and "
                     "stores written before ridgeline kept labels do not): every GPU is in the group "
                     + ", ".join(f"(no {_noun(n)})" for n in label_dims))
    table = group_summary(windows, dims, runs=runs, jobs=jobs, notes=notes)
    main = main_groups(windows, dims, runs=runs, jobs=jobs)
    if "pod" in label_dims:
        exporter = [k for k in table.get_column("by:pod").to_list() if "dcgm-exporter" in str(k)]
        if exporter:
            notes.append(f"pod {exporter[0]!r} looks like the exporter's own pod (the scrape's labels), not the "
                         "workload's: set honorLabels or read exported_pod (dcgm-exporter's Kubernetes mapping)")
    return GroupReport([d.name for d in dims], table, notes, windows=main)
