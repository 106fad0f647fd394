"""Collectives matched across ranks, split into transfer and wait (analyzer/timeline/collectives.py), on
generated per-rank traces (tests/comm_traces.py) whose waits are known by construction."""

from __future__ import annotations

import pytest

import comm_traces as C
from ridgeline.pipeline import analyze_paths


def _job(tmp_path, **kw):
    return analyze_paths(C.job_folder(tmp_path / "job", **kw)).timeline


def test_late_rank_transfer_and_wait_by_construction(tmp_path):
    # rank 2 computes 3000 us, the others 1000 us; the all-reduce moves bytes for 500 us once all are there
    tl = _job(tmp_path)
    c = tl.collectives
    assert c.height == 4 and set(c.get_column("matched_by")) == {"order"}
    assert set(c.get_column("name")) == {"all_reduce"}
    assert c.get_column("transfer_s").to_list() == pytest.approx([500e-6] * 4)
    assert c.get_column("wait_s").to_list() == pytest.approx([2000e-6] * 4)
    assert c.get_column("start_skew_s").to_list() == pytest.approx([2000e-6] * 4)
    assert c.get_column("end_skew_s").to_list() == pytest.approx([0.0] * 4)
    assert set(c.get_column("last_rank")) == {2}
    assert c.get_column("bytes").null_count() == 4  # not recorded: no bandwidth invented
    assert c.get_column("busbw_bytes_per_s").null_count() == 4
    w = {r["rank"]: r for r in tl.rank_waits.iter_rows(named=True)}
    assert w[2]["arrived_last"] == 4 and w[2]["comm_wait_s"] == pytest.approx(0.0)
    assert w[2]["imposed_wait_s"] == pytest.approx(3 * 4 * 2000e-6)
    assert w[0]["comm_wait_s"] == pytest.approx(4 * 2000e-6) and w[0]["arrived_last"] == 0


def test_slow_link_is_transfer_not_wait(tmp_path):
    # every rank computes alike; the all-reduce takes 5 ms on every rank: transfer, no wait, no late rank
    from ridgeline.analyzer.timeline.collectives import arrival_straggler

    tl = _job(tmp_path, compute_us=(1000, 1000, 1000, 1000), allreduce_us=5000)
    c = tl.collectives
    assert c.get_column("transfer_s").to_list() == pytest.approx([5000e-6] * 4)
    assert c.get_column("wait_s").to_list() == pytest.approx([0.0] * 4)
    assert arrival_straggler(tl.rank_waits) is None


def test_group_seq_bytes_and_bus_bandwidth_by_hand():
    import polars as pl

    from ridgeline.analyzer.timeline import collectives as K

    # two groups on 4 ranks; group "3" all_gather of 8 MB gathered output, recorded seq numbers out of kernel order
    rows = []
    for rank in range(4):
        late = 100 if rank == 1 else 0
        rows.append(("f", rank, "3", 7, K.collective_of("_allgather_base"), 1000 + late, 1400, 8_000_000, 4))
        rows.append(("f", rank, "0", 1, "all_reduce", 2000, 2600 + (rank == 3) * 50, 4_000_000, 4))
    ev = pl.DataFrame(
        {"source": [f"r{r[1]}" for r in rows], "device": [0] * len(rows), "stream": [7] * len(rows),
         "name": [r[4] for r in rows], "kernel": ["k"] * len(rows), "start_ns": [r[5] * 1000 for r in rows],
         "end_ns": [r[6] * 1000 for r in rows], "group": [r[2] for r in rows], "seq": [r[3] for r in rows],
         "bytes": [r[7] for r in rows], "group_size": [r[8] for r in rows]})
    devices = pl.DataFrame({"source": [f"r{r}" for r in range(4)], "device": [0] * 4, "rank": list(range(4)),
                            "capture_s": [1.0] * 4})
    c = K.match_collectives(ev, devices, link_peak_bytes_per_s=100e9)
    ag = c.filter(pl.col("group") == "3").row(0, named=True)
    assert ag["matched_by"] == "group+seq" and ag["seq"] == 7 and ag["name"] == "all_gather"
    assert ag["transfer_s"] == pytest.approx(300e-6) and ag["wait_s"] == pytest.approx(100e-6)
    assert ag["last_rank"] == 1
    # algbw = 8e6 B / 300 us; busbw = algbw x (n-1)/n with n = 4 (nccl-tests PERFORMANCE.md)
    assert ag["algbw_bytes_per_s"] == pytest.approx(8e6 / 300e-6)
    assert ag["busbw_bytes_per_s"] == pytest.approx(8e6 / 300e-6 * 3 / 4)
    assert ag["busbw_vs_peak"] == pytest.approx(8e6 / 300e-6 * 3 / 4 / 100e9)
    ar = c.filter(pl.col("group") == "0").row(0, named=True)
    assert ar["busbw_bytes_per_s"] == pytest.approx(4e6 / 600e-6 * 2 * 3 / 4)
    assert ar["end_skew_s"] == pytest.approx(50e-6) and ar["last_rank"] == 0  # all started together: the lowest


def test_unmatched_orders_and_point_to_point_are_said(tmp_path):
    import polars as pl

    from ridgeline.analyzer.timeline import collectives as K

    ev = pl.DataFrame({"source": ["a", "a", "b", "a", "b"], "device": [0] * 5, "stream": [1] * 5,
                       "name": ["all_reduce", "all_reduce", "all_reduce", "send_recv", "send_recv"],
                       "kernel": ["k"] * 5, "start_ns": [0, 10, 0, 20, 20], "end_ns": [5, 15, 5, 25, 25],
                       "group": [None] * 5, "seq": [None] * 5, "bytes": [None] * 5, "group_size": [None] * 5},
                      schema_overrides={"group": pl.String, "seq": pl.Int64, "bytes": pl.Int64, "group_size": pl.Int64})
    devices = pl.DataFrame({"source": ["a", "b"], "device": [0, 0], "rank": [0, 1], "capture_s": [1.0, 1.0]})
    notes: list[str] = []
    assert K.match_collectives(ev, devices, notes).height == 0
    assert any("all_reduce not matched" in n and "1 to 2 kernels" in n for n in notes)
    assert any("point-to-point" in n for n in notes)


@pytest.mark.parametrize("text,want", [
    ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "all_reduce"),
    ("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", "send_recv"),
    ("ncclDevKernel_ReduceScatter_Sum_f32_RING_LL", "reduce_scatter"),
    ("ncclKernel_Reduce_RING_LL_Sum_half", "reduce"), ("_allgather_base", "all_gather"),
    ("all_to_all", "all_to_all"), ("broadcast", "broadcast"), ("cross_device_reduce_2stage<half, 8>", "all_reduce"),
    ("ampere_sgemm", None)])
def test_collective_of(text, want):
    from ridgeline.analyzer.timeline.collectives import collective_of

    assert collective_of(text) == want


def test_bus_factors():
    from ridgeline.analyzer.timeline.collectives import bus_factor

    assert bus_factor("all_reduce", 8) == pytest.approx(1.75)
    assert bus_factor("all_gather", 8) == bus_factor("reduce_scatter", 8) == bus_factor("all_to_all", 8) == 0.875
    assert bus_factor("broadcast", 8) == bus_factor("reduce", 8) == 1.0
    assert bus_factor("all_reduce", None) is None


def _rl411(result):
    return [f for f in result.findings if f.code == "RL411"]


def test_rl411_names_the_arrival_straggler_beside_the_compute_one(tmp_path):
    r = analyze_paths(C.job_folder(tmp_path / "job"))
    (f,) = _rl411(r)
    assert "rank 2 arrived last at 4 of 4 matched collectives" in f.message
    assert "yet" not in f.message


def test_rl411_data_loader_stall_is_a_late_arrival_not_compute(tmp_path):
    # every rank computes 1000 us; rank 1 starts 2000 us late each step (a host stall): no compute
    # straggler, but the collectives wait for rank 1
    r = analyze_paths(C.job_folder(tmp_path / "job", compute_us=(1000,) * 4, delay_us=(0, 2000, 0, 0)))
    (f,) = _rl411(r)
    assert f.subject == "rank 1"
    assert "rank 1 arrived last at 4 of 4" in f.message and "before its kernels" in f.message
    assert f.impact_s == pytest.approx(4 * 2000e-6)  # per other rank: 4 steps x 2 ms


def test_rl411_quiet_on_a_slow_link(tmp_path):
    r = analyze_paths(C.job_folder(tmp_path / "job", compute_us=(1000,) * 4, allreduce_us=5000))
    assert _rl411(r) == []


@pytest.mark.parametrize("fast", [True, False])
def test_kineto_collective_args_match_by_group_and_seq(tmp_path, monkeypatch, fast):
    """The Kineto reader keeps the collective args (both its paths): instances matched by group and
    Seq, bytes = 1M bf16 elements, bus bandwidth = bytes / 500 us x 2(n-1)/n."""
    if not fast:  # the standard path (the fast one declines)
        monkeypatch.setattr("ridgeline.parsers.timeline.kineto_fast.decode_document", lambda *a, **k: None)
    tl = _job(tmp_path, nccl_args=True)
    c = tl.collectives
    assert c.height == 4 and set(c.get_column("matched_by")) == {"group+seq"}
    assert set(c.get_column("group")) == {"0"} and sorted(c.get_column("seq")) == [0, 1, 2, 3]
    assert set(c.get_column("bytes")) == {2 << 20} and set(c.get_column("group_size")) == {4}
    assert c.get_column("busbw_bytes_per_s").to_list() == pytest.approx([(2 << 20) / 500e-6 * 1.5] * 4)
    assert set(c.get_column("last_rank")) == {2}


def test_one_rank_of_a_job_says_its_coverage(tmp_path):
    doc = C.trace(C.rank_events([1000, 3000], 500, 2, 200, 0), 0, 16)
    tl = analyze_paths([C.write(tmp_path / "rank0.json", doc)]).timeline
    assert tl.collectives.height == 0
    assert any("1 of 16 ranks captured" in n and "no collective is matched" in n for n in tl.notes)


def test_real_kineto_sample_keeps_collective_args():
    """The shared B200 vLLM trace (skipped when absent) records the collective args on its one NCCL
    kernel: an _allgather_base of 201,088 bf16 elements out, in group 3 of 8; the reader keeps them."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[3] / ".." / "shared" / "samples" / "kineto" / \
        "tracelens-b200x8-vllm-eager_trace.json.gz"
    if not path.exists():
        pytest.skip("shared samples absent")
    import polars as pl

    from ridgeline.analyzer.timeline.collectives import comm_events
    from ridgeline.parsers.timeline.kineto import read_kineto

    tl = read_kineto(str(path), host_calls="sync")
    ev = comm_events(tl.activities, tl.source)
    assert ev.filter(pl.col("name") == "all_gather").select("group", "bytes", "group_size").rows() == [("3", 201088 * 2, 8)]
    assert ev.filter(pl.col("name") == "all_reduce").get_column("group").null_count() == 73  # vLLM's custom all-reduce
