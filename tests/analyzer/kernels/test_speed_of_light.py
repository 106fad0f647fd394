"""The bound from ncu's Speed-of-Light throughputs where the roofline cannot place a launch
(ridgeline.analyzer.kernels.speed_of_light, docs/speed-of-light.md): hand-built KERNEL tables."""

import polars as pl
import pytest

from ridgeline.analyzer.kernels.roofline import classify, summarize
from ridgeline.analyzer.schema import KERNEL_COLUMNS, polars_schema

DUR = 50e-6  # well above the 2 us launch floor


def kernels(*rows):
    return pl.DataFrame(list(rows), schema=polars_schema(KERNEL_COLUMNS))


def basic(id, *, sm=None, mem=None, dram=None, pipe=None, dur=DUR, name="k", **kw):
    """A launch as ncu's basic set records it: duration and throughputs, no FLOP counter, no device name."""
    return dict(id=str(id), kernel_name=name, short_name=name, duration_s=dur, sm_throughput_pct=sm,
                memory_throughput_pct=mem, dram_throughput_pct=dram, tensor_pipe_active_ratio=pipe, **kw)


def placed(*rows):
    df, _roofs = classify(kernels(*rows))
    return {r["id"]: r for r in df.iter_rows(named=True)}


@pytest.mark.parametrize("launch, bound", [
    (dict(sm=50.0, mem=81.0), "memory"),  # RTX 3050 Laptop in issue 32: memory 81%, SM 50%
    (dict(sm=85.0, mem=0.6), "compute"),  # RTX 4070 Ti SUPER: SM 85%, memory 0.6%
    (dict(sm=40.0, mem=67.0, pipe=0.32), "memory"),  # A40: tensor pipe 32% (FLOPs uncounted), memory 67%
    (dict(sm=55.0, mem=55.0), "compute"),  # a tie is compute, as intensity == ridge is
    (dict(sm=3.0, mem=8.0), "latency"),  # both under RL112's 10%: no unit explains the time
    (dict(sm=30.0, dram=45.0), "memory"),  # DRAM alone above the complete SM side
    (dict(sm=30.0, dram=20.0), "unknown"),  # L1 or L2 may be busier than SM: not decided
    (dict(sm=85.0), "unknown"),  # one side only
    (dict(mem=90.0, pipe=0.2), "unknown"),  # the SM side incomplete and below: not decided
    (dict(sm=5.0, dram=8.0), "unknown"),  # under 10% but memory incomplete: memory or latency
    (dict(sm=30.0, mem=70.0, dur=1.5e-6), "latency"),  # within the launch floor
], ids=lambda v: str(v))
def test_the_throughputs_decide_the_bound(launch, bound):
    r = placed(basic(1, **launch))["1"]
    assert r["bound"] == bound
    assert r["bound_source"] == (None if bound == "unknown" else "ncu-speed-of-light")
    # FLOPs are still missing, and no roof placed it: no fraction, no saving
    assert r["missing"] and r["roof_fraction"] is None and r["time_to_roof_s"] is None and r["roof_level"] is None
    if bound != "unknown":
        sides = [x for x in (launch.get("sm"), launch.get("mem"), launch.get("dram")) if x is not None]
        sides += [launch["pipe"] * 100] if launch.get("pipe") is not None else []
        assert r["busiest_roof_fraction"] == pytest.approx(max(sides) / 100)
    if bound == "latency":  # split by duration, as on the roofline: 20 us and shorter is launch-bound
        assert r["latency_kind"] == ("launch" if launch.get("dur", DUR) <= 20e-6 else "stall")
    else:
        assert r["latency_kind"] is None


def test_the_roofline_keeps_the_launches_it_places():
    # FLOPs, bytes, duration and an H100: the roofline decides, whatever ncu's throughputs say
    r = placed(basic(1, sm=90.0, mem=5.0, device_name="NVIDIA H100 80GB HBM3", flops_fp32=1e6, dram_bytes=1e9))["1"]
    assert r["bound"] == "memory" and r["bound_source"] == "roofline" and r["roof_fraction"] is not None


def test_summary_says_what_decided_the_bound_it_shows():
    df, _ = classify(kernels(basic(1, sm=50.0, mem=81.0, name="a"), basic(2, sm=50.0, mem=81.0, name="a"),
                             basic(3, sm=20.0, name="b")))
    s = {r["kernel_name"]: r for r in summarize(df).iter_rows(named=True)}
    assert (s["a"]["bound"], s["a"]["bound_source"]) == ("memory", "ncu-speed-of-light")
    assert (s["b"]["bound"], s["b"]["bound_source"]) == ("unknown", None)


def test_rl901_is_never_critical_for_launches_the_throughputs_bound():
    from ridgeline.rules.base import Context
    from ridgeline.rules.engine import run_rules

    df, _roofs = classify(kernels(*[basic(i, sm=50.0, mem=81.0) for i in range(4)]))
    ctx = Context(kernels=df, summary=summarize(df), total_gpu_time_s=4 * DUR)
    f = next(f for f in run_rules(ctx, select=["RL901"]) if f.code == "RL901")
    assert f.severity != "critical"
    assert "bound by ncu's Speed-of-Light" in f.message  # the FLOP counters are still named missing
    assert "sm__sass_thread_inst_executed_op" in f.message


def test_terminal_marks_a_speed_of_light_bound():
    from ridgeline.render.terminal import _top_kernels
    from ridgeline.result import AnalysisResult

    df, roofs = classify(kernels(basic(1, sm=50.0, mem=81.0, name="copy_kernel")))
    result = AnalysisResult(kernels=df, roofs=roofs, summary=summarize(df), total_gpu_time_s=DUR)
    text = "\n".join(_top_kernels(result, 10))
    assert "memory*" in text and "Speed-of-Light" in text


def test_each_launch_is_measured_at_its_own_clock_and_agrees_with_ncus_percentage():
    """Issue 32's A40: 43.3 MB in 70.5 us at a 7.07 GHz DRAM clock is 90.6% of 96 B/cycle x 7.07 GHz
    (ncu's own figure), not 112% of a 547 GB/s peak another launch's clock gave."""
    from ridgeline.rules.base import Context
    from ridgeline.rules.engine import run_rules

    def launch(id, clock, nbytes):
        return dict(id=str(id), kernel_name="copy", short_name="copy", device_name="NVIDIA A40", duration_s=70.5e-6,
                    flops_fp32=0.0, dram_bytes=nbytes, dram_clock_hz=clock, peak_dram_bytes_per_s=96 * clock,
                    peak_dram_bytes_per_s_source="dram__bytes.sum.peak_sustained x dram__cycles_elapsed.avg.per_second")

    df, roofs = classify(kernels(launch(1, 7.07e9, 43.3e6), launch(2, 5.7e9, 30e6), launch(3, 5.7e9, 30e6)))
    r = {x["id"]: x for x in df.iter_rows(named=True)}
    assert r["1"]["roof_fraction"] == pytest.approx(43.3e6 / 70.5e-6 / (96 * 7.07e9))  # 90.5%
    assert r["1"]["roof_fraction"] == pytest.approx(0.906, abs=0.002)
    assert r["2"]["roof_fraction"] == pytest.approx(30e6 / 70.5e-6 / (96 * 5.7e9))
    assert [x.value for x in roofs if x.kind == "bandwidth"] == [96 * 5.7e9]  # the drawn roof: the device median
    ctx = Context(kernels=df, summary=summarize(df), total_gpu_time_s=3 * 70.5e-6)
    assert not [f for f in run_rules(ctx, select=["RL902"]) if f.code == "RL902"]  # nothing above its own roof
