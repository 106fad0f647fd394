"""RL209 straggler-gpu: firing and quiet cases on SYNTHETIC fleets (ridgeline.synth and
tests/telemetry_cases.py; nothing here was captured on a GPU).

Expected numbers come from the synthetic setup: synth's ``power_cap`` straggler runs at
0.62 x the 1980 MHz clock of its peers (+-1% noise), its power limit is 0.45 x 700 W = 315 W,
and its throttle reasons mask is 0x4 (SW power cap) in every sample.
"""

from __future__ import annotations

import datetime as dt

from telemetry_cases import BUSY_TENSOR, gpu_series, table

from ridgeline.analyzer.fleet.telemetry import reduce_windows
from ridgeline.pipeline import reduce_telemetry
from ridgeline.rules.base import Context
from ridgeline.rules.engine import get_rule
from ridgeline.synth import write_telemetry


def _run(windows, **overrides):
    return get_rule("RL209")(overrides).check(Context(windows=windows))


def _host(host, clocks, n=900, power=None, mask=None, limit=None):
    """GPUs of one host, GPU i at SM clock clocks[i] MHz (busy with tensor work)."""
    parts = []
    for g, mhz in enumerate(clocks):
        extra = {}
        if power is not None:
            extra["power_w"] = power[g]
        if mask is not None:
            extra["clock_event_reasons_mask"] = mask[g]
        if limit is not None:
            extra["power_limit_w"] = limit[g]
        parts.append(gpu_series(host=host, gpu=g, n=n, **BUSY_TENSOR, sm_clock_hz=mhz * 1e6, **extra))
    return table(*parts)


def test_rl209_fires_on_the_power_capped_straggler_of_a_synth_fleet(tmp_path):
    a = write_telemetry(tmp_path / "node01.txt", ["training"] * 8, throttled={3: "power_cap"}, minutes=30)
    b = write_telemetry(tmp_path / "node02.txt", ["training"] * 8, clocks=True, minutes=30)  # a fine host
    _lf, _i, _s, w = reduce_telemetry([a, b], window="5m", interval_s=1.0,
                                    start=dt.datetime(2026, 1, 5, 8, tzinfo=dt.timezone.utc))
    (f,) = _run(w)
    assert f.code == "RL209" and f.subject == "host:node01 gpu:3" and f.severity == "warning"
    ev = {e.metric: e.value for e in f.evidence}
    # clock lag: 1 - 0.62 (the cause's clock factor), within the +-1% clock noise
    assert abs(ev["sm_clock_mean_hz_lag"] - 0.38) < 0.01
    assert ev["power_limit_w"] == 315.0 and ev["throttle_sw_power_cap_share"] == 1.0
    # what the group loses: 8 GPUs x 0.5 h x the clock lag
    assert abs(ev["lost_gpu_s"] - 8 * 1800 * ev["sm_clock_mean_hz_lag"]) < 1.0
    assert ev["group_gpu_s"] == 8 * 1800
    assert "clock event reasons: SW power cap 100% of samples; power limit 315 W (group median 700 W)" in f.message
    assert "lags the other 7 GPUs of host:node01 for 30.0 min" in f.message
    assert "nvidia-smi -i 3 -pl 700" in f.remedy


def test_rl209_thermal_and_hw_slowdown_name_their_reason(tmp_path):
    # 8 GPUs, two slow ones: the median and MAD stay those of the six others
    a = write_telemetry(tmp_path / "hot.prom", ["training"] * 8, throttled={1: "thermal", 2: "hw_slowdown"},
                        minutes=20, format="exporter", host="hot")
    _lf, _i, _s, w = reduce_telemetry([a], window="5m")
    by = {f.subject: f for f in _run(w)}
    assert set(by) == {"host:hot gpu:1", "host:hot gpu:2"}
    assert "SW thermal slowdown 100% of samples, HW thermal slowdown 100% of samples" in by["host:hot gpu:1"].message
    assert by["host:hot gpu:1"].remedy.startswith("Thermal slowdown")
    assert "HW slowdown 100% of samples" in by["host:hot gpu:2"].message
    assert by["host:hot gpu:2"].remedy.startswith("HW slowdown")


def test_rl209_quiet_below_min_lag_and_for_short_episodes():
    # 9% below the median of 4 GPUs at 1980 MHz: under min_lag (10%) -> quiet; 12% -> fires
    quiet = reduce_windows(_host("h", [1980, 1980, 1980, 1980 * 0.91]), window="5m")
    assert _run(quiet) == []
    loud = reduce_windows(_host("h", [1980, 1980, 1980, 1980 * 0.88]), window="5m")
    (f,) = _run(loud)
    assert f.subject == "host:h gpu:3" and "SM clock 1.74 GHz vs median 1.98 GHz (-12%)" in f.message
    # no throttle reasons series: nothing said about them; no reason -> the links/host remedy
    assert "clock event reasons" not in f.message and f.remedy.startswith("No clock event reason")
    # 900 s = 3 windows of 5 min: min_windows 4 -> quiet
    assert _run(loud, min_windows=4) == []


def test_rl209_needs_peers_and_work():
    # two GPUs: no median to lag (min_group_gpus 3)
    assert _run(reduce_windows(_host("h", [1980, 1000]), window="5m")) == []
    # an idle group: a low clock is no straggler
    idle = table(*[gpu_series(host="h", gpu=g, n=900, gpu_util_ratio=0.0, gr_engine_active_ratio=0.0,
                              sm_clock_hz=(1980 if g else 300) * 1e6) for g in range(4)])
    assert _run(reduce_windows(idle, window="5m")) == []


def test_rl209_mad_guard_ignores_a_group_that_scatters():
    # clocks scatter widely (MAD large): GPU 0 at 15% below the median is within the group's noise
    clocks = [1700, 1850, 2000, 2150, 2300]
    assert _run(reduce_windows(_host("h", clocks), window="5m")) == []
    assert _run(reduce_windows(_host("h", clocks), window="5m"), mad_k=0.1) != []


def test_rl209_on_a_host_only_the_clock_compares_unless_asked():
    # a decode server (little tensor work, less power) next to three training GPUs, all at full clock:
    # different jobs, not a straggler; a host known to run one job can compare tensor and power too
    from telemetry_cases import MEMORY_BOUND

    parts = [gpu_series(host="h", gpu=g, n=900, **BUSY_TENSOR, sm_clock_hz=1980e6, power_w=600.0) for g in range(3)]
    parts.append(gpu_series(host="h", gpu=3, n=900, **MEMORY_BOUND, sm_clock_hz=1980e6, power_w=350.0))
    w = reduce_windows(table(*parts), window="5m")
    assert _run(w) == []
    (f,) = _run(w, host_all_metrics=1)
    assert f.subject == "host:h gpu:3" and "power 350 W vs median 600 W (-42%)" in f.message


def test_rl209_mig_instances_are_not_compared():
    parts = [gpu_series(host="m", gpu=None, gpu_instance=str(i), n=900, **BUSY_TENSOR,
                        sm_clock_hz=(1000 if i == 3 else 1980) * 1e6) for i in range(4)]
    assert _run(reduce_windows(table(*parts), window="5m")) == []


def test_rl209_compares_the_gpus_of_a_pod_across_hosts_with_by_pod(tmp_path):
    """--by pod: a pod's GPUs on two hosts are one group (a synchronous job runs at its slowest
    GPU's pace); GPUs in no pod are nobody's peers. The throttled GPU is named in its pod."""
    import json

    from click.testing import CliRunner

    from ridgeline.cli import cli

    pod = {"namespace": "ml", "pod": "train-0"}
    # host a: GPUs 0-3 in the pod, GPU 3 power-capped; host b: GPUs 0-3 in the pod; GPUs 4-5 of
    # each host in no pod
    a = write_telemetry(tmp_path / "node-a.prom", ["training"] * 6, throttled={3: "power_cap"}, clocks=True,
                        format="exporter", minutes=30, interval_s=5, labels=[pod] * 4 + [None, None])
    b = write_telemetry(tmp_path / "node-b.prom", ["training"] * 6, clocks=True, format="exporter", minutes=30,
                        interval_s=5, labels=[pod] * 4 + [None, None])
    r = CliRunner().invoke(cli, ["telemetry", str(a), str(b), "--by", "pod", "--format", "json", "-q",
                                 "--select", "RL209"], catch_exceptions=False)
    doc = json.loads(r.output)
    found = [f for f in doc["findings"] if f["code"] == "RL209"]
    assert [f["subject"] for f in found] == ["host:node-a gpu:3"]
    assert "lags the other 7 GPUs of pod:ml/train-0" in found[0]["message"]
