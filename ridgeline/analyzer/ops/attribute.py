"""Leaf-op attribution: every GPU kernel of a trace belongs to the CPU op that launched it.

A kernel's correlation id names the runtime call that launched it (``cudaLaunchKernel``, the
HOST_API row of the same ``correlation_id``); that call ran on a host thread, inside a stack of
CPU ops (``aten::linear`` > ``aten::addmm``). The kernel belongs to the **innermost** op open on
that thread at the call: the leaf, so a parent is never counted with its child. This holds for
every Kineto layout (older builds give GPU events the correlation id as ``External id``, so
``External id`` alone cannot be trusted) and for any host source with op ranges and thread ids.

The innermost op is found without a per-row loop: per thread, op starts (+1) and ends (-1) and
the launch calls (0) are put in time order (ends before starts before calls at one instant, so a
call at an op's end is outside it) and their running sum is the stack depth. An op's depth is
the sum at its start; a call at depth D lies in the op of depth D that started last before it
(ops nest, so the latest-started op of that depth is the open one): an as-of join by
(thread, depth). A match the call does not lie in (ops that overlap without nesting, clock
jitter) is dropped: the kernel has no op. Zero-length ops hold no call and are left out.

An op's GPU time is the union of its kernels' intervals (kernels of one op on two streams that
overlap count once). Kernels with no op (no launch record, launched outside any op, e.g. by a
CUDA graph replay or a library's own thread) are kept with a null ``op_id``.
"""

from __future__ import annotations

#: HOST_API kinds whose rows are launch calls (correlation id -> thread and time)
LAUNCH_KINDS = ("runtime", "driver")


def leaf_ops(api):
    """HOST_API -> one row per launch call that lies in a CPU op: ``correlation_id``, ``op_id``
    (the innermost op's row in :func:`cpu_ops`)."""
    import polars as pl

    ops = cpu_ops(api)
    calls = (api.filter(pl.col("kind").is_in(LAUNCH_KINDS) & pl.col("correlation_id").is_not_null()
                        & pl.col("thread_id").is_not_null())
             .group_by("correlation_id").agg(pl.col("thread_id").min(), pl.col("start_ns").min().alias("t")))
    if not ops.height or not calls.height:
        return pl.DataFrame(schema={"correlation_id": pl.Int64, "op_id": pl.Int64})
    # ties at one time broken by nesting, so two runs give one answer: of ops opening together the
    # longer (the parent) opens first; of ops closing together the later-started (the child) closes first
    marks = pl.concat([
        ops.select("thread_id", pl.col("start_ns").alias("t"), pl.lit(1, pl.Int8).alias("order"),
                   pl.lit(1, pl.Int64).alias("delta"), "op_id", pl.lit(None, pl.Int64).alias("correlation_id"),
                   (-pl.col("end_ns")).alias("_tie")),
        ops.select("thread_id", pl.col("end_ns").alias("t"), pl.lit(0, pl.Int8).alias("order"),
                   pl.lit(-1, pl.Int64).alias("delta"), pl.lit(None, pl.Int64).alias("op_id"),
                   pl.lit(None, pl.Int64).alias("correlation_id"), (-pl.col("start_ns")).alias("_tie")),
        calls.select("thread_id", "t", pl.lit(2, pl.Int8).alias("order"), pl.lit(0, pl.Int64).alias("delta"),
                     pl.lit(None, pl.Int64).alias("op_id"), "correlation_id", pl.lit(0, pl.Int64).alias("_tie")),
    ], how="vertical_relaxed").sort("thread_id", "t", "order", "_tie", "op_id", "correlation_id", maintain_order=True,
                                    nulls_last=True).with_columns(pl.col("delta").cum_sum().over("thread_id").alias("depth"))
    opened = (marks.filter(pl.col("order") == 1).select("thread_id", "depth", pl.col("t").alias("op_start"), "op_id")
              .sort("op_start", "op_id", maintain_order=True))
    at = marks.filter(pl.col("order") == 2).select("thread_id", "depth", "t", "correlation_id").sort("t", "correlation_id", maintain_order=True)
    got = at.join_asof(opened, left_on="t", right_on="op_start", by=["thread_id", "depth"], strategy="backward",
                      check_sortedness=False)  # sorted by t above; polars cannot check it within groups
    got = got.join(ops.select("op_id", "end_ns"), on="op_id", how="left")
    return got.filter(pl.col("op_id").is_not_null() & (pl.col("t") < pl.col("end_ns"))).select("correlation_id", "op_id")


def cpu_ops(api):
    """The CPU op rows of HOST_API that can hold a call (thread known, length > 0), numbered ``op_id``."""
    import polars as pl

    return (api.filter((pl.col("kind") == "cpu_op") & pl.col("thread_id").is_not_null()
                       & (pl.col("end_ns") > pl.col("start_ns")))
            .with_row_index("op_id").with_columns(pl.col("op_id").cast(pl.Int64)))


def op_kernels(activities, api):
    """TIMELINE kernels -> the same rows with ``op_id`` (null: no op) and the op's ``op``,
    ``op_input_dims``, ``op_input_types``, ``op_concrete_inputs``."""
    import polars as pl

    k = activities.filter(pl.col("kind") == "kernel")
    if api is None or not api.height:
        return k.with_columns(pl.lit(None, pl.Int64).alias("op_id"), pl.lit(None, pl.String).alias("op"),
                              *(pl.lit(None, pl.String).alias(c) for c in OP_TEXT))
    ops = cpu_ops(api).select("op_id", pl.col("name").alias("op"), *OP_TEXT)
    links = leaf_ops(api)
    return (k.join(links, on="correlation_id", how="left", maintain_order="left")
            .join(ops, on="op_id", how="left", maintain_order="left"))


OP_TEXT = ("op_input_dims", "op_input_types", "op_concrete_inputs")


def op_calls(kernels):
    """:func:`op_kernels` rows -> one row per op call with kernels (and one per device for the kernels
    with no op, ``op`` null): ``device``, ``op_id``, ``op``, the shape texts, ``kernels``,
    ``kernel_ns`` (sum of durations), ``gpu_ns`` (union of the intervals), ``kernel`` (the longest kernel's name)."""
    import polars as pl

    keys = ["device", "op_id"]
    k = kernels.sort(*keys, "start_ns")
    prev_end = pl.col("end_ns").cum_max().shift(1).over(keys)
    k = k.with_columns((pl.col("end_ns") - pl.max_horizontal("start_ns", prev_end.fill_null(pl.col("start_ns"))))
                       .clip(lower_bound=0).alias("_new_ns"))
    return (k.group_by(keys, maintain_order=True)
            .agg(pl.col("op").first(), *(pl.col(c).first() for c in OP_TEXT), pl.len().alias("kernels"),
                 (pl.col("end_ns") - pl.col("start_ns")).sum().alias("kernel_ns"), pl.col("_new_ns").sum().alias("gpu_ns"),
                 pl.col("name").sort_by(pl.col("end_ns") - pl.col("start_ns"), pl.col("name")).last().alias("kernel")))
