"""reduce_windows in chunks: hosts larger than chunk_rows are cut into chunks of their GPUs,
reduced two at a time; the result must not depend on the cut (synthetic series from
tests/telemetry_cases.py, expected numbers worked out by hand)."""

from __future__ import annotations

import polars as pl

from ridgeline.analyzer.fleet.telemetry import reduce_windows
from telemetry_cases import BUSY_NO_TENSOR, BUSY_TENSOR, IDLE_ALLOCATED, gpu_series, table


def fleet():
    # host a: GPUs 0, 1, 2 (120 s each, 6 fields -> 720 rows per GPU); host b: two MIG
    # instances of GPU 0 and a GPU without an index; host c: one small GPU
    return table(
        gpu_series(host="a", gpu=0, n=120, **BUSY_NO_TENSOR),
        gpu_series(host="a", gpu=1, n=120, **BUSY_TENSOR),
        gpu_series(host="a", gpu=2, n=120, **IDLE_ALLOCATED),
        gpu_series(host="b", gpu=0, gpu_instance="1", n=60, gr_engine_active_ratio=0.9),
        gpu_series(host="b", gpu=0, gpu_instance="2", n=60, gr_engine_active_ratio=0.2),
        gpu_series(host="b", gpu=None, n=60, gpu_util_ratio=0.5),
        gpu_series(host="c", gpu=3, n=30, gpu_util_ratio=0.3),
    )


def test_gpu_chunks_equal_one_pass():
    df = fleet()
    whole = reduce_windows(df.lazy(), window="1m")
    # 720 rows per GPU of host a: chunk_rows=800 puts each of its GPUs in a chunk of its own
    for rows in (800, 1500, 100):
        assert reduce_windows(df.lazy(), window="1m", chunk_rows=rows).equals(whole), rows
    # 3 GPUs x 2 windows on a; 2 instances + 1 index-less GPU x 1 window on b; 1 window on c
    assert whole.height == 3 * 2 + 3 + 1
    a = whole.filter(pl.col("host") == "a").sort("gpu", "window_start")
    assert a["gpu"].to_list() == [0, 0, 1, 1, 2, 2]
    assert a["samples"].to_list() == [60] * 6
    assert a["busy_share"].to_list() == [1.0, 1.0, 1.0, 1.0, 0.0, 0.0]
    assert a["busy_tensor_idle_share"].to_list() == [1.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    assert a["allocated_idle_share"].to_list() == [0.0, 0.0, 0.0, 0.0, 1.0, 1.0]
    b = whole.filter(pl.col("host") == "b").sort("gpu_instance", nulls_last=True)
    assert b["gpu_instance"].to_list() == ["1", "2", None]
    assert b["gpu"].to_list() == [0, 0, None]
    assert b["busy_share"].to_list() == [1.0, 0.0, 0.0]  # GR_ENGINE 0.9 stands in for GPU-Util; 0.5 < 0.8


def test_rows_out_of_order_across_gpu_chunks():
    df = fleet()
    shuffled = df.sample(fraction=1.0, shuffle=True, seed=11)
    ref = reduce_windows(df, window="1m")
    got = reduce_windows(shuffled, window="1m", chunk_rows=800)
    assert got.select("host", "gpu", "gpu_instance", "window_start", "samples").equals(
        ref.select("host", "gpu", "gpu_instance", "window_start", "samples"))
    assert got["busy_share"].to_list() == ref["busy_share"].to_list()
