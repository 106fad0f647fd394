"""Metric frames -> KERNEL columns: FLOPs, bytes, durations and peaks from the recipes in
:mod:`ridgeline.parsers.ncu.metrics` (each figure with the counters it came from), tensor FLOPs
and the dense tensor roof per instruction path, the HFMA2.MMA idiom. The third of the ncu
parser's three jobs (:mod:`ridgeline.parsers.ncu.csv_reader`)."""

from __future__ import annotations

import re
from typing import Any

from ridgeline.errors import InputError
from ridgeline.parsers.ncu import metrics as V
from ridgeline.parsers.ncu.checks import is_measured_counter
from ridgeline.result import Skipped, path_label

from ridgeline.parsers.ncu.blocks import _Block  # noqa: F401
from ridgeline.parsers.ncu.frames import _Ctx, _dims_product, _short_name  # noqa: F401


# --------------------------------------------------------------------------------------
# recipes -> KERNEL columns
# --------------------------------------------------------------------------------------
_PSEUDO = {V.DURATION: "duration_s", V.CYCLES: "__cycles", "@sm_clock_hz": "sm_clock_hz"}


def _col(name: str):
    import polars as pl

    return pl.col(_PSEUDO.get(name, name))


def _recipe(alts: list[V.Alt], present: set[str]):
    """-> (value expr, source expr) or (None, None) when no alternative can apply."""
    import polars as pl

    chain = None
    src_chain = None
    for alt in alts:
        required = [t.metric for t in alt.terms if not t.optional] + [m for m in (alt.scale, alt.divide) if m]
        if not all(m in present or m in _PSEUDO for m in required):
            continue
        cond = pl.all_horizontal([_col(m).is_not_null() for m in required])
        total = None
        src_parts = []
        base_terms = [t for t in alt.terms if not t.optional]
        src_parts.append(pl.lit(V.Alt(tuple(base_terms)).label()))
        for t in alt.terms:
            if t.optional and t.metric not in present:
                continue
            e = _col(t.metric)
            if t.optional:
                e = e.fill_null(0.0)
                f = "" if t.factor == 1 else f"{t.factor:g}*"
                src_parts.append(pl.when(_col(t.metric).is_not_null()).then(pl.lit(f" + {f}{t.metric}")))
            e = e * t.factor if t.factor != 1 else e
            total = e if total is None else total + e
        if alt.scale:
            total = total * _col(alt.scale)
            scale = "duration" if alt.scale == V.DURATION else alt.scale.lstrip("@")
            if len(alt.terms) > 1:  # "(a + b + 2*c) x cycles"
                src_parts = [pl.lit("("), *src_parts, pl.lit(")")]
            src_parts.append(pl.lit(f" x {scale}"))
            if alt.scale == V.CYCLES:  # which spelling of the cycle count: "x cycles (smsp__...)"
                src_parts.append(pl.concat_str([pl.lit(" ("), pl.col("__cycles_src"), pl.lit(")")]))
        if alt.divide:
            total = total / _col(alt.divide)
            src_parts.append(pl.lit(f" / {alt.divide}"))
        src = pl.concat_str(src_parts, ignore_nulls=True)
        if chain is None:
            chain, src_chain = pl.when(cond).then(total), pl.when(cond).then(src)
        else:
            chain, src_chain = chain.when(cond).then(total), src_chain.when(cond).then(src)
    if chain is None:
        return None, None
    return chain.otherwise(None), src_chain.otherwise(None)


def _tensor_exprs(m_cols: set[str], present: set[str], ctx: _Ctx):
    """-> (dict column -> expr for the five flops_tensor_* columns, flops_tensor, its source and
    peak_flops_tensor_per_s; whether a Volta counter is present; ``stage``).

    ``stages`` (temporary column -> expr, one dict after the other) must be added to the frame
    first: each tensor counter's total and its source, then each precision bucket's ops, time and
    source for the peak, then the largest bucket's ops, once, so the other expressions name them instead of repeating their
    trees (on a full-section Hopper page the peak's expression was ~0.5 MB of text and took 1 s
    to plan)."""
    import polars as pl

    counters: dict[str, dict[str, str]] = {}  # base counter -> {form suffix: column}
    kinds: dict[str, str] = {}  # base counter -> "total" | "family"
    for name in sorted(present):  # sorted: the source string must not depend on set order
        for kind, rx in (("total", V.TENSOR_TOTAL_RE), ("family", V.TENSOR_FAMILY_RE)):
            mt = rx.match(name)
            if mt:
                base = name[: len(name) - len(mt.group(2))]
                counters.setdefault(base, {})[mt.group(2)] = name
                kinds[base] = kind
    totals_expr: dict[str, Any] = {}
    src_expr: dict[str, Any] = {}
    stages: list[dict[str, Any]] = [{}, {}, {}]  # added to the frame in this order
    stage = stages[0]
    for base, forms in counters.items():
        alts = []
        if ".sum" in forms:
            alts.append((pl.col(forms[".sum"]), base + ".sum", [forms[".sum"]]))
        if ".sum.per_cycle_elapsed" in forms and "__cycles" in m_cols:  # cycles in any spelling
            c = forms[".sum.per_cycle_elapsed"]
            alts.append((pl.col(c) * pl.col("__cycles"), c + " x cycles", [c, "__cycles"]))
        if ".sum.per_second" in forms:
            c = forms[".sum.per_second"]
            alts.append((pl.col(c) * pl.col("duration_s"), c + " x duration", [c, "duration_s"]))
        if not alts:
            continue
        v = s = None
        for e, label, req in alts:
            cond = pl.all_horizontal([pl.col(r).is_not_null() for r in req])
            v = pl.when(cond).then(e) if v is None else v.when(cond).then(e)
            s = pl.when(cond).then(pl.lit(label)) if s is None else s.when(cond).then(pl.lit(label))
        stage[f"__tensor_total {base}"], stage[f"__tensor_src {base}"] = v.otherwise(None), s.otherwise(None)
        totals_expr[base], src_expr[base] = pl.col(f"__tensor_total {base}"), pl.col(f"__tensor_src {base}")

    unknown = sorted(b for b in totals_expr if V.tensor_bucket(b.split("_src_", 1)[1]) is None)
    if unknown:
        ctx.notes.append(
            f"{ctx.path}: tensor counter(s) with an input precision ridgeline does not know, not counted: "
            + ", ".join(unknown)
        )

    def bucket_sum(kind: str, bucket: str):
        items = [b for b in totals_expr if kinds[b] == kind and V.tensor_bucket(b.split("_src_", 1)[1]) == bucket]
        if not items:
            return None
        return pl.when(pl.any_horizontal([totals_expr[b].is_not_null() for b in items])).then(
            pl.sum_horizontal([totals_expr[b] for b in items])
        )

    total_bases = [b for b in totals_expr if kinds[b] == "total"]
    family_bases = [b for b in totals_expr if kinds[b] == "family"]
    any_total = pl.any_horizontal([totals_expr[b].is_not_null() for b in total_bases]) if total_bases else pl.lit(False)
    any_family = pl.any_horizontal([totals_expr[b].is_not_null() for b in family_bases]) if family_bases else pl.lit(False)
    volta = [c for c in V.VOLTA_TENSOR_COUNTERS if c in m_cols]
    pipe = pl.coalesce([pl.col(c) for c in volta]) if volta else pl.lit(None, dtype=pl.Float64)
    pipe_name = pl.coalesce([pl.when(pl.col(c).is_not_null()).then(pl.lit(c)) for c in volta]) if volta else pl.lit(None, dtype=pl.String)
    cc = pl.col("cc")
    is_volta = (cc == V.VOLTA_CC).fill_null(False) & pipe.is_not_null()
    pipe_zero = (pipe == 0).fill_null(False)

    out = {}
    for bucket, colname in V.TENSOR_COLUMNS.items():
        t = bucket_sum("total", bucket)
        f = bucket_sum("family", bucket)
        e = pl.when(any_total).then(t if t is not None else pl.lit(None, dtype=pl.Float64))
        e = e.when(any_family).then(f if f is not None else pl.lit(None, dtype=pl.Float64))
        if bucket == "fp16":
            e = e.when(is_volta).then(pipe * V.VOLTA_TENSOR_FLOPS_PER_INST)
            e = e.when(pipe_zero).then(pl.lit(0.0))
        else:
            e = e.when(is_volta).then(pl.lit(None, dtype=pl.Float64)).when(pipe_zero).then(pl.lit(0.0))
        out[colname] = e.otherwise(None).cast(pl.Float64)
    cols = list(V.TENSOR_COLUMNS.values())
    out["flops_tensor"] = pl.when(pl.any_horizontal([pl.col(c).is_not_null() for c in cols])).then(
        pl.sum_horizontal([pl.col(c) for c in cols])
    )
    # source: the counters actually used, per launch
    def used(bases):
        if not bases:
            return pl.lit(None, dtype=pl.String)
        return pl.concat_str([src_expr[b] for b in bases], separator=" + ", ignore_nulls=True)

    src = (
        pl.when(any_total)
        .then(used(total_bases))
        .when(any_family)
        .then(used(family_bases))
        .when(is_volta)
        .then(pl.concat_str([pl.lit(f"{V.VOLTA_TENSOR_FLOPS_PER_INST}*"), pipe_name, pl.lit(" (CC 7.0 HMMA.884)")]))
        .when(pipe_zero)
        .then(pl.concat_str([pipe_name, pl.lit(" = 0 (no tensor instructions)")]))
        .otherwise(None)
    )
    out["flops_tensor_source"] = pl.when(pl.col("flops_tensor").is_not_null()).then(src)
    # dense peak of what the launch executed (see _tensor_peak)
    peak, peak_src, path = _tensor_peak(kinds, totals_expr, m_cols, ctx, stages[1], stages[2])
    out["peak_flops_tensor_per_s"] = peak
    out["peak_flops_tensor_source"] = peak_src
    out["tensor_path"] = path
    sparse_bases = [b for b in totals_expr if "sparsity_on" in b]
    out["sparse_ops"] = pl.sum_horizontal([totals_expr[b].fill_null(0.0) for b in sparse_bases]) if sparse_bases else None
    return out, bool(volta), stages


def _tensor_pipe_exprs(present: set[str]) -> dict[str, Any]:
    """tensor_pipe_active_ratio / _precision / _source from the tensor-pipe activity counters.

    Per family (hmma, imma, dmma, hgmma...), the first of: pipe cycles active % of elapsed
    cycles, of active cycles, then instructions executed (same order); sm__ before smsp__. The
    busiest family that was active at all names the precision
    (:data:`~ridgeline.parsers.ncu.metrics.TENSOR_PIPE_PRECISION`; bmma names none) and gives the
    ratio. Without family counters, or with every family idle, the ratio is the whole pipe's
    (``sm__pipe_tensor_cycles_active``) or 0, and the precision null.
    """
    import polars as pl

    rank = {("pipe", "elapsed"): 0, ("pipe", "active"): 1, ("inst", "elapsed"): 2, ("inst", "active"): 3}
    forms: dict[str, list[tuple[int, str]]] = {}
    for name in sorted(present):
        mt = V.TENSOR_PIPE_RE.match(name)
        if not mt:
            continue
        family = mt.group(1) or mt.group(2) or ""  # "": the whole pipe
        kind = "inst" if mt.group(2) else "pipe"
        forms.setdefault(family, []).append((rank[(kind, mt.group(3))] * 2 + name.startswith("smsp__"), name))
    null_f, null_s = pl.lit(None, dtype=pl.Float64), pl.lit(None, dtype=pl.String)
    if not forms:
        return {"tensor_pipe_active_ratio": null_f, "tensor_pipe_precision": null_s, "tensor_pipe_source": null_s}

    def read(names):
        names = [n for _r, n in sorted(names)]
        return (pl.coalesce([pl.col(n) for n in names]) / 100.0,
                pl.coalesce([pl.when(pl.col(n).is_not_null()).then(pl.lit(n)) for n in names]))

    whole = read(forms.pop("")) if "" in forms else None
    per = [(family, *read(names)) for family, names in sorted(forms.items())]
    ratio = src = prec = None
    if per:
        top = pl.max_horizontal([r for _f, r, _s in per])
        for family, r, sr in per:
            cond = (r == top) & (top > 0)
            p = pl.lit(V.TENSOR_PIPE_PRECISION.get(family), dtype=pl.String)
            ratio = pl.when(cond).then(r) if ratio is None else ratio.when(cond).then(r)
            src = pl.when(cond).then(sr) if src is None else src.when(cond).then(sr)
            prec = pl.when(cond).then(p) if prec is None else prec.when(cond).then(p)
    # no family active (or none collected): the whole pipe's activity, else a family's 0
    rest_r = [e for e in ([whole[0]] if whole else []) + [r for _f, r, _s in per]]
    rest_s = [e for e in ([whole[1]] if whole else []) + [sr for _f, _r, sr in per]]
    fallback_r, fallback_s = pl.coalesce(rest_r), pl.coalesce(rest_s)
    if ratio is None:
        return {"tensor_pipe_active_ratio": fallback_r, "tensor_pipe_precision": null_s, "tensor_pipe_source": fallback_s}
    return {
        "tensor_pipe_active_ratio": ratio.otherwise(fallback_r),
        "tensor_pipe_precision": prec.otherwise(None),
        "tensor_pipe_source": src.otherwise(fallback_s),
    }


def _hfma2_mma_idiom(ctx: _Ctx, m, present: set[str]):
    """Launches whose only half-precision instructions are the compiler's HFMA2.MMA register moves.

    On Ampere and later the compiler initialises and moves registers with ``HFMA2.MMA`` (an HFMA2
    issued to the tensor pipe): such a launch counts ``hfma`` = exactly 32 x
    ``sm__inst_executed_pipe_tensor`` (one warp instruction, 32 threads) with zero ``hadd`` and
    ``hmul`` -- plain fp32 or integer kernels show it (``CUDAFunctorOnSelf_add<int>``). Those are
    not fp16 math and no MMA ran: their FP16 and tensor FLOPs are 0, with a note, so they never
    decide a precision label. CC 7.0 (Volta), where the pipe counter is real HMMA work, is left alone.
    """
    import polars as pl

    def first(op):
        return next((f"{u}{V.SASS.format(op=op)}.sum" for u in ("sm__", "smsp__")
                     if f"{u}{V.SASS.format(op=op)}.sum" in present), None)

    hf, ha, hm = first("hfma"), first("hadd"), first("hmul")
    pipe = next((c for c in V.VOLTA_TENSOR_COUNTERS if c in present), None)
    if not (hf and ha and hm and pipe):
        return m
    idiom = (
        (pl.col(ha) == 0) & (pl.col(hm) == 0) & (pl.col(hf) > 0) & (pl.col(hf) == 32 * pl.col(pipe))
        & (pl.col("cc").fill_null("") != V.VOLTA_CC)
    ).fill_null(False)
    n = m.select(idiom.sum()).item()
    if not n:
        return m
    ctx.notes.append(
        f"{ctx.path}: {n} launch(es) count hfma = 32 x {pipe} with no hadd/hmul: the compiler's HFMA2.MMA "
        "register moves, not fp16 math; their FP16 and tensor FLOPs are counted as 0 and do not set the precision"
    )
    why = f" = HFMA2.MMA register moves ({hf} = 32 x {pipe}, no hadd/hmul): 0"
    tensor_cols = [c for c in V.TENSOR_COLUMNS.values() if c in m.columns]
    return m.with_columns(
        pl.when(idiom).then(0.0).otherwise(pl.col("flops_fp16")).alias("flops_fp16"),
        pl.when(idiom).then(pl.lit(hf + why)).otherwise(pl.col("flops_fp16_source")).alias("flops_fp16_source"),
        *[pl.when(idiom).then(0.0).otherwise(pl.col(c)).alias(c) for c in tensor_cols],
        pl.when(idiom).then(0.0).otherwise(pl.col("flops_tensor")).alias("flops_tensor"),
        pl.when(idiom).then(pl.lit(pipe + why)).otherwise(pl.col("flops_tensor_source")).alias("flops_tensor_source"),
    )


_FAMILY_OP_RE = re.compile(r"^sm__ops_path_tensor_op_([a-z0-9]+)_src_")


def _tensor_peak(kinds: dict, totals_expr: dict, m_cols: set[str], ctx: _Ctx, stage: dict | None = None,
                 top_stage: dict | None = None):
    """-> (peak FLOP/s expr, its source expr, tensor path expr): the DENSE roof of what ran.

    Per input-precision bucket, the counters that carried ops are weighed by time, each against
    its own ``.sum.peak_sustained`` x SM clock: ``peak = sum(ops) / sum(ops / peak)``; the bucket
    with the most ops decides. Per-instruction-family counters (``..._op_<family>_src_...``; on
    Hopper ``hgmma`` = warpgroup wgmma, ``hmma`` = legacy mma.sync, each split by sparsity) are
    used when the launch has non-zero ones, so dense ops meet the dense rate and an mma.sync
    kernel meets the mma.sync roof it could actually reach; the path is named in ``tensor_path``.
    Otherwise the precision totals: on CC 9.x a total not split by sparsity records the 2:4-sparse
    rate as its ``peak_sustained`` (the dense ``..._sparsity_off`` family rate is half of it), so
    it is halved and the source says so. Totals split by sparsity (Ampere/Ada) carry their own rate.
    """
    import polars as pl

    null_f = pl.lit(None, dtype=pl.Float64)
    null_s = pl.lit(None, dtype=pl.String)
    hopper = pl.col("cc").fill_null("").str.starts_with("9.")
    buckets: dict[str, dict[str, list[str]]] = {}
    for base in totals_expr:
        if base + V.TENSOR_PEAK_SUFFIX not in m_cols:
            continue
        bucket = V.tensor_bucket(base.split("_src_", 1)[1])
        if bucket is not None:
            buckets.setdefault(bucket, {"total": [], "family": []})[kinds[base]].append(base)
    if not buckets:
        return null_f, null_s, null_s

    def ops(base):
        return totals_expr[base].fill_null(0.0)

    per_bucket = []  # (ops, time in cycles, source, path)
    for bucket, groups in sorted(buckets.items()):
        parts = []
        for kind in ("family", "total"):
            bases = sorted(groups[kind])
            if not bases:
                continue
            terms_ops, terms_time, src_parts, path_parts = [], [], [], []
            for base in bases:
                peak = pl.col(base + V.TENSOR_PEAK_SUFFIX)
                halve = kind == "total" and "_sparsity_" not in base and bucket not in ("fp64",) and "int1" not in base
                label = base + V.TENSOR_PEAK_SUFFIX
                if halve:
                    peak = pl.when(hopper).then(peak / 2).otherwise(peak)
                    label_e = pl.when(hopper).then(pl.lit(label + " / 2 (CC 9.x totals record the 2:4-sparse rate)")).otherwise(pl.lit(label))
                else:
                    label_e = pl.lit(label)
                used = ops(base) > 0
                terms_ops.append(ops(base))
                terms_time.append(pl.when(used & (peak > 0)).then(ops(base) / peak).otherwise(0.0))
                src_parts.append(pl.when(used).then(label_e))
                mt = _FAMILY_OP_RE.match(base)
                if kind == "family" and mt:
                    op = mt.group(1) + ("-sparse" if "sparsity_on" in base else "")
                    path_parts.append(pl.when(used).then(pl.lit(op)))
            o = pl.sum_horizontal(terms_ops)
            t = pl.sum_horizontal(terms_time)
            src = pl.concat_str(src_parts, separator=" + ", ignore_nulls=True)
            path = pl.concat_list(path_parts).list.drop_nulls().list.unique().list.sort().list.join("+") if path_parts else null_s
            parts.append((o, t, src, path))
        # family counters win where they carried ops
        if len(parts) == 2:
            (fo, ft, fs, fp), (to, tt, ts, tp) = parts
            use_f = fo > 0
            parts = [(pl.when(use_f).then(fo).otherwise(to), pl.when(use_f).then(ft).otherwise(tt),
                      pl.when(use_f).then(fs).otherwise(ts), pl.when(use_f).then(fp).otherwise(null_s))]
        if stage is not None:  # each bucket's figures once, as columns (see _tensor_exprs)
            names = [f"__tensor_peak_{x} {bucket}" for x in ("ops", "time", "src", "path")]
            stage.update(zip(names, parts[0]))
            parts = [tuple(pl.col(n) for n in names)]
        per_bucket.append(parts[0])
    top = pl.max_horizontal([o for o, _t, _s, _p in per_bucket])
    if top_stage is not None:  # named by each bucket's test: once per row
        top_stage["__tensor_peak_top"] = top
        top = pl.col("__tensor_peak_top")
    peak = src = path = None
    for o, t, s_, p_ in per_bucket:
        cond = (o == top) & (top > 0) & (t > 0)
        value = o / t * pl.col("sm_clock_hz")
        source = pl.concat_str([s_, pl.lit(" x SM clock (sm_clock_hz)")])
        if peak is None:
            peak, src, path = pl.when(cond).then(value), pl.when(cond).then(source), pl.when(cond).then(p_)
        else:
            peak, src, path = peak.when(cond).then(value), src.when(cond).then(source), path.when(cond).then(p_)
    ok = pl.col("sm_clock_hz").is_not_null()
    peak = pl.when(ok).then(peak.otherwise(None))
    src = pl.when(ok).then(src.otherwise(None))
    path = path.otherwise(None)
    return peak, src, pl.when(path != "").then(path)


def _skip_failed_replays(ctx: _Ctx, m):
    """Launches whose every counter is NaN or n/a (ncu could not replay them) -> skipped, with why.

    Counters are the metrics measured on the launch (:func:`~ridgeline.parsers.ncu.checks.is_measured_counter`:
    a rollup such as ``x__y.sum`` or ``.avg.per_second``); device attributes, launch dimensions and
    the hardware peaks (``.peak_sustained``) survive a failed replay and do not count. Such a launch
    has no figure at all: it is listed as skipped with how to profile it again, never analyzed as 0
    or as a launch lacking one counter (whose advice would name a section the file holds).
    """
    import polars as pl

    schema = m.schema  # once: each lookup builds the whole schema (O(columns) on 2,000-column pages)
    counters = [c for c, t in schema.items() if is_measured_counter(c) and t.is_numeric()]
    if not counters or not m.height:
        return m
    failed = pl.all_horizontal([pl.col(c).is_null() | pl.col(c).is_nan() for c in counters])
    bad = m.filter(failed)
    if not bad.height:
        return m
    names = bad.get_column("Kernel Name").to_list() if "Kernel Name" in bad.columns else [None] * bad.height
    for launch, name in zip(bad.get_column("ID").cast(pl.String).to_list(), names):
        ctx.skipped.append(Skipped(
            str(ctx.path), f"launch {launch}" + (f" (kernel {name})" if name else ""), failed_replay_reason(name)))
    return m.filter(~failed)


def failed_replay_reason(kernel_name: str | None) -> str:
    """Why a failed replay is skipped, and how to profile that kernel again."""
    short = _short_name(kernel_name) if kernel_name else None
    pick = f"--kernel-name regex:'{re.escape(short)}' --launch-count 1" if short else "--launch-skip/--launch-count"
    return (
        "ncu's replay of this launch failed: every counter it measures is NaN or n/a, so there is no "
        f"figure to analyze; profile that kernel again on its own (ncu {pick} with the same sections), "
        "adding --replay-mode application if kernel replay fails again"
    )


def _derive(ctx: _Ctx, m, present: set[str], *, block: _Block, id_prefix: str, labels: dict[str, str] | None = None):
    """Wide metric frame (ncu names, base units) -> KERNEL columns in schema order."""
    import polars as pl

    from ridgeline.analyzer.schema import KERNEL_COLUMNS, polars_schema
    from ridgeline.units import needs_slow_expr, number_expr

    cols = set(m.columns)
    # derived__ section metrics stand for counters (fill the counter when it is missing)
    alias_exprs = []
    replacements: dict[str, str] = {f"{c}": f"'{lbl}' ({c})" for c, lbl in (labels or {}).items()}
    for dname, (target, f) in V.DERIVED_ALIASES.items():
        if dname in cols:
            e = pl.col(dname) / f
            if target in cols:
                alias_exprs.append(pl.coalesce([pl.col(target), e]).alias(target))
            else:  # the source columns name the derived metric actually read
                alias_exprs.append(e.alias(target))
                replacements[target] = f"{dname}/{f:g}"
            present.add(target)
    if alias_exprs:
        m = m.with_columns(alias_exprs)
    cols = set(m.columns)
    present = {p for p in present if p in cols}
    m = _skip_failed_replays(ctx, m)

    int_cols = [c for c in ("ID", "Process ID", "Context", "Stream", "Device") if c in cols]
    slow_ints = set()
    if int_cols and m.height:
        flags = m.select([needs_slow_expr(pl.col(c).cast(pl.String)).alias(c) for c in int_cols]).row(0)
        slow_ints = {c for c, f in zip(int_cols, flags) if f}

    def num_int(name):
        if name not in cols:
            return None
        col = pl.col(name).cast(pl.String)
        if name in slow_ints:  # grouping commas ("1,024") or blanks
            return number_expr(col).cast(pl.Int64, strict=False)
        return col.cast(pl.Int64, strict=False)

    def lit_null(dtype):
        return pl.lit(None, dtype=dtype)

    launch_id = num_int("ID")
    if launch_id is None:
        raise InputError(ctx.path, "expected an 'ID' column")
    id_str = pl.col("ID").cast(pl.String).str.replace_all(",", "", literal=True)
    if block.index > 0:
        id_str = pl.concat_str([pl.lit(f"{block.index}/"), id_str])
    if id_prefix:
        id_str = pl.concat_str([pl.lit(id_prefix), id_str])

    # ids: identity
    dev = num_int("Device")
    dev_alt = [pl.col(c).cast(pl.Int64, strict=False) for c in ("device__attribute_device_index", "launch__device_id") if c in cols]
    device = pl.coalesce([e for e in [dev, *dev_alt] if e is not None]) if (dev is not None or dev_alt) else lit_null(pl.Int64)
    if "CC" in cols:
        cc = pl.col("CC")
    elif {"device__attribute_compute_capability_major", "device__attribute_compute_capability_minor"} <= cols:
        cc = pl.concat_str(
            [
                pl.col("device__attribute_compute_capability_major").cast(pl.Int64, strict=False).cast(pl.String),
                pl.lit("."),
                pl.col("device__attribute_compute_capability_minor").cast(pl.Int64, strict=False).cast(pl.String),
            ]
        )
    else:
        cc = lit_null(pl.String)

    def dims(col_name, attr):
        printed = pl.col(col_name) if col_name in cols else None
        product = None
        if printed is not None:  # "(128, 2, 1)" -> 256, computed once per distinct string
            distinct = m.get_column(col_name).unique().drop_nulls().to_list()
            table = {d: _dims_product(d) for d in distinct}
            product = printed.replace_strict(table, default=None, return_dtype=pl.Int64)
        attr_v = pl.col(attr).cast(pl.Int64, strict=False) if attr in cols else None
        if printed is None and attr_v is not None:
            printed = pl.col(attr).cast(pl.Int64, strict=False).cast(pl.String)
        count = pl.coalesce([e for e in (product, attr_v) if e is not None]) if (product is not None or attr_v is not None) else lit_null(pl.Int64)
        return (printed if printed is not None else lit_null(pl.String)), count

    block_size, block_threads = dims("Block Size", "launch__block_size")
    grid_size, grid_blocks = dims("Grid Size", "launch__grid_size")

    stage1 = [
        id_str.alias("id"),
        launch_id.alias("launch_id"),
        pl.lit(path_label(ctx.path)).alias("source"),
        (num_int("Process ID") if "Process ID" in cols else lit_null(pl.Int64)).alias("process_id"),
        (pl.col("Process Name") if "Process Name" in cols else lit_null(pl.String)).alias("process_name"),
        (pl.col("Host Name") if "Host Name" in cols else lit_null(pl.String)).alias("host_name"),
        device.alias("device"),
        (pl.col("device__attribute_display_name") if "device__attribute_display_name" in cols else lit_null(pl.String)).alias("device_name"),
        cc.alias("cc"),
        _sm_count(cols).alias("sm_count"),
        _max_sm_clock(cols).alias("max_sm_clock_hz"),
        (num_int("Context") if "Context" in cols else lit_null(pl.Int64)).alias("context"),
        (num_int("Stream") if "Stream" in cols else lit_null(pl.Int64)).alias("stream"),
        (pl.col("Kernel Name") if "Kernel Name" in cols else lit_null(pl.String)).alias("kernel_name"),
        block_size.alias("block_size"),
        grid_size.alias("grid_size"),
        block_threads.alias("block_threads"),
        grid_blocks.alias("grid_blocks"),
    ]
    for out, names in V.CLOCKS.items():
        have = [pl.col(n) for n in names if n in present]
        stage1.append((pl.coalesce(have) if have else lit_null(pl.Float64)).alias(out))
    for out, names in V.PERCENT_METRICS.items():
        have = [pl.col(n) for n in names if n in present]
        stage1.append((pl.coalesce(have) if have else lit_null(pl.Float64)).alias(out))
    stall_top, stall = _top_stall(present)
    if stall_top is not None:
        m = m.with_columns(stall_top.alias("__stall_top"))
    stage1 += stall
    # duration
    dur, dur_src = _recipe(V.DURATION_RECIPE, present)
    if dur is None:
        dur, dur_src = lit_null(pl.Float64), lit_null(pl.String)
    stage1 += [dur.alias("__dur"), dur_src.alias("__dur_src")]
    m = m.with_columns(stage1)
    bad_dur = (pl.col("__dur") <= 0) | ~pl.col("__dur").is_finite()
    m = m.with_columns(
        pl.when(bad_dur.fill_null(False)).then(None).otherwise(pl.col("__dur")).alias("duration_s"),
        pl.when(bad_dur.fill_null(False))
        .then(pl.concat_str([pl.lit("rejected (non-positive duration): "), pl.col("__dur_src"), pl.lit(" = "), pl.col("__dur").cast(pl.String)]))
        .otherwise(pl.col("__dur_src"))
        .alias("duration_s_source"),
    )
    n_bad = m.select(bad_dur.fill_null(False).sum()).item()
    if n_bad:
        ctx.notes.append(f"{ctx.path}: {n_bad} launch(es) with zero or negative duration: duration_s left null")
    # elapsed SM cycles in whichever spelling the export has (every .per_cycle_elapsed rate is per it)
    cyc, cyc_src = _recipe(V.CYCLES_RECIPE, present)
    if cyc is None:
        cyc, cyc_src = lit_null(pl.Float64), lit_null(pl.String)
    m = m.with_columns(cyc.alias("__cycles"), cyc_src.alias("__cycles_src"))
    # FLOPs, bytes, peaks
    stage2 = []
    for out, alts in {**V.FLOP_RECIPES, **V.BYTE_RECIPES}.items():
        v, s = _recipe(alts, present)
        stage2 += [(v if v is not None else lit_null(pl.Float64)).alias(out), (s if s is not None else lit_null(pl.String)).alias(out + "_source")]
    for out, alts in V.PEAK_RECIPES.items():
        v, s = _recipe(alts, present)
        stage2.append((v if v is not None else lit_null(pl.Float64)).alias(out))
        if out == "peak_dram_bytes_per_s":
            stage2.append((s if s is not None else lit_null(pl.String)).alias("__peak_dram_src"))
        elif out in V.CACHE_PEAK_LEVELS:  # L2/L1 roofs: a non-positive peak is no roof (null)
            stage2[-1] = (pl.when(v > 0).then(v) if v is not None else lit_null(pl.Float64)).alias(out)
            stage2.append((pl.when(v > 0).then(s) if s is not None else lit_null(pl.String)).alias(out + "_source"))
    # achieved rates, for launches without a duration only (their totals are unknown)
    no_dur = pl.col("duration_s").is_null()
    for out, alts in V.RATE_RECIPES.items():
        v, s = _recipe(alts, present)
        src_name = "flops_per_s_source" if out == "flops_fp32_per_s" else (out + "_source" if out == "dram_bytes_per_s" else None)
        stage2.append((pl.when(no_dur).then(v) if v is not None else lit_null(pl.Float64)).alias(out))
        if src_name:
            stage2.append((pl.when(no_dur).then(s) if s is not None else lit_null(pl.String)).alias(src_name))
    m = m.with_columns(stage2)
    n_rate = m.select((no_dur & (pl.col("flops_fp32_per_s").is_not_null() | pl.col("flops_fp64_per_s").is_not_null())
                       & pl.col("dram_bytes_per_s").is_not_null()).sum()).item()
    if n_rate:
        ctx.notes.append(
            f"{ctx.path}: {n_rate} launch(es) have achieved rates and peaks but no duration (a section export "
            "such as --section SpeedOfLight_RooflineChart): placed on the roofline by rate (FLOP/s over "
            "bytes/s); their FLOP and byte totals and share of GPU time are unknown without gpu__time_duration.sum"
        )
    clk, bus = V.DEVICE_DRAM_PEAK
    if clk in present and bus in present:
        attr_peak = 2 * pl.col(clk) * pl.col(bus) / 8  # clock already in Hz
        m = m.with_columns(
            pl.when(pl.col("peak_dram_bytes_per_s").is_null() & attr_peak.is_not_null() & (attr_peak > 0))
            .then(pl.lit(V.DEVICE_DRAM_PEAK_SOURCE))
            .otherwise(pl.col("__peak_dram_src"))
            .alias("peak_dram_bytes_per_s_source"),
            pl.coalesce([pl.col("peak_dram_bytes_per_s"), pl.when(attr_peak > 0).then(attr_peak)]).alias("peak_dram_bytes_per_s"),
        )
    else:
        m = m.with_columns(pl.col("__peak_dram_src").alias("peak_dram_bytes_per_s_source"))
    tensor, has_volta, stages = _tensor_exprs(set(m.columns), present, ctx)
    for stage in stages:  # temporary columns, dropped by the final select
        m = m.with_columns(**stage)
    first = {k: v for k, v in tensor.items() if k in V.TENSOR_COLUMNS.values()}
    m = m.with_columns(**first)
    m = m.with_columns(
        flops_tensor=tensor["flops_tensor"],
        peak_flops_tensor_per_s=tensor["peak_flops_tensor_per_s"],
        peak_flops_tensor_per_s_source=tensor["peak_flops_tensor_source"],
        tensor_path=tensor["tensor_path"],
    )
    m = m.with_columns(flops_tensor_source=tensor["flops_tensor_source"])
    m = m.with_columns(**_tensor_pipe_exprs(present))
    m = _hfma2_mma_idiom(ctx, m, present)
    if has_volta:
        pipe_cols = [c for c in V.VOLTA_TENSOR_COUNTERS if c in m.columns]
        n_lost = m.select(
            (pl.col("flops_tensor").is_null() & (pl.coalesce([pl.col(c) for c in pipe_cols]) > 0)).sum()
        ).item()
        if n_lost:
            ctx.notes.append(
                f"{ctx.path}: {n_lost} launch(es) executed tensor instructions ({pipe_cols[0]} > 0) but "
                "x512 FLOPs per instruction holds only on CC 7.0 (Volta): tensor FLOPs left null; collect "
                "sm__ops_path_tensor_* (ncu --section SpeedOfLight_HierarchicalTensorRooflineChart)"
            )
    sparse = tensor["sparse_ops"]
    if sparse is not None:
        n_sparse = m.select((sparse > 0).fill_null(False).sum()).item()
        if n_sparse:
            ctx.notes.append(
                f"{ctx.path}: {n_sparse} launch(es) counted ops on sparse tensor paths (*_sparsity_on > 0): "
                "they are counted as ncu reports them and measured against the sparse rate; whether "
                "those ops are dense-equivalent is not documented"
            )
    # short names: on distinct kernel names only
    names = m.get_column("kernel_name").unique().drop_nulls().to_list()
    mapping = {n: _short_name(n) for n in names}
    m = m.with_columns(pl.col("kernel_name").replace_strict(mapping, default=None, return_dtype=pl.String).alias("short_name"))
    if replacements:  # section labels ("'Duration' (gpu__time_duration.sum)"), derived__ metrics
        # one pass per column through placeholders, so a replacement is never replaced again
        order = sorted(replacements, key=len, reverse=True)
        fix = []
        for c in KERNEL_COLUMNS:
            if c.endswith("_source"):
                e = pl.col(c)
                for i, canon in enumerate(order):
                    e = e.str.replace_all(canon, f"\x00{i}\x00", literal=True)
                for i, canon in enumerate(order):
                    e = e.str.replace_all(f"\x00{i}\x00", replacements[canon], literal=True)
                fix.append(e.alias(c))
        m = m.with_columns(fix)
    schema = polars_schema(KERNEL_COLUMNS)
    return m.select([pl.col(c).cast(t) for c, t in schema.items()])


def _sm_count(cols):
    """KERNEL ``sm_count``: device__attribute_multiprocessor_count (null when absent or not > 0)."""
    import polars as pl

    name = "device__attribute_multiprocessor_count"
    if name not in cols:
        return pl.lit(None, dtype=pl.Int64)
    v = pl.col(name).cast(pl.String).str.replace_all(",", "", literal=True).cast(pl.Float64, strict=False).cast(pl.Int64, strict=False)
    return pl.when(v > 0).then(v)


def _max_sm_clock(cols):
    """KERNEL ``max_sm_clock_hz``: max_gpu_frequency_khz, else clock_rate (already in Hz: the frame
    readers convert units, and read kHz where ncu printed none, see UNITS_WHEN_BLANK)."""
    import polars as pl

    have = [pl.col(n).cast(pl.Float64, strict=False) for n in ("device__attribute_max_gpu_frequency_khz", "device__attribute_clock_rate") if n in cols]
    if not have:
        return pl.lit(None, dtype=pl.Float64)
    return pl.coalesce([pl.when(h > 0).then(h) for h in have])


def _top_stall(present) -> tuple[Any, list]:
    """``stall_top_reason`` / ``stall_top_cycles_per_issue``: the recorded warp stall reason with the
    most cycles per issued instruction (ncu_metrics.STALL_REASONS; issuing is not a stall).

    -> (expression of the largest value, to be added first as the column ``__stall_top``, or None;
    the two columns' expressions, which name it: repeating it in each reason's test cost 0.5 s
    on 50,000 launches)."""
    import polars as pl

    cols = {r: V.STALL_METRIC.format(reason=r) for r in V.STALL_REASONS if r not in V.NOT_STALLS}
    cols = {r: c for r, c in cols.items() if c in present}
    if not cols:
        return None, [pl.lit(None, dtype=pl.String).alias("stall_top_reason"),
                      pl.lit(None, dtype=pl.Float64).alias("stall_top_cycles_per_issue")]
    first = pl.max_horizontal([pl.col(c) for c in cols.values()])
    top = pl.col("__stall_top")
    reason = pl.when(top.is_null() | (top <= 0)).then(pl.lit(None, dtype=pl.String))
    for r, c in cols.items():
        reason = reason.when(pl.col(c) == top).then(pl.lit(r))
    return first, [reason.otherwise(None).alias("stall_top_reason"), pl.when(top > 0).then(top).alias("stall_top_cycles_per_issue")]
