"""Classes of GPU time (ridgeline.analyzer.fleet.classes) on small generated fleets (issue 31).

The night of the issue in miniature: a decode service busy all night (GPU-Util 97%, DRAM 0.70,
tensor 0.03), a notebook holding memory with GR_ENGINE_ACTIVE jittering 0..0.012, a training pod,
a GPU without profiling fields, and GPUs with health events.
"""

from __future__ import annotations

import polars as pl
import pytest
import telemetry_cases as tc

from ridgeline import bounds
from ridgeline.analyzer.fleet import classes as C
from ridgeline.analyzer.fleet.summary import fleet_summary
from ridgeline.analyzer.fleet.telemetry import reduce_windows
from ridgeline.errors import UsageError

GIB = tc.GIB
DECODE = dict(gpu_util_ratio=0.97, gr_engine_active_ratio=0.95, sm_active_ratio=0.6, dram_active_ratio=0.70,
              tensor_active_ratio=0.03, fb_used_bytes=60 * GIB)
TRAIN = dict(gpu_util_ratio=0.99, gr_engine_active_ratio=0.9, sm_active_ratio=0.9, tensor_active_ratio=0.55,
             dram_active_ratio=0.4, fb_used_bytes=70 * GIB)
# GPU-Util and GR_ENGINE of an idle GPU jitter between 0 and a few hundredths: an == 0 test misses half
NOTEBOOK = dict(gpu_util_ratio=lambda i: (i % 2) * 0.02, gr_engine_active_ratio=lambda i: (i % 4) * 0.004,
                fb_used_bytes=70 * GIB, jitter=0)


def _fleet():
    return tc.table(
        tc.gpu_series(gpu=0, n=600, **DECODE),
        tc.gpu_series(gpu=1, n=600, **NOTEBOOK),
        tc.gpu_series(gpu=2, n=600, **TRAIN),
        tc.gpu_series(gpu=3, n=600, gpu_util_ratio=0.99, fb_used_bytes=70 * GIB),  # no profiling fields
        tc.gpu_series(gpu=4, n=600, gpu_util_ratio=0.0, gr_engine_active_ratio=0.0, fb_used_bytes=0.2 * GIB),
        tc.gpu_series(gpu=5, n=600, gpu_util_ratio=0.99, gr_engine_active_ratio=0.9, sm_active_ratio=0.1,
                      dram_active_ratio=0.05, tensor_active_ratio=0.0, fb_used_bytes=20 * GIB),
        tc.gpu_series(gpu=6, n=600, gpu_util_ratio=0.9, gr_engine_active_ratio=0.6, sm_active_ratio=0.1,
                      dram_active_ratio=0.05, tensor_active_ratio=0.0, fb_used_bytes=20 * GIB,
                      pcie_rx_bytes_per_s=20e9, pcie_tx_bytes_per_s=1e9),
    )


@pytest.fixture(scope="module")
def windows():
    return reduce_windows(_fleet(), window="5m")


def _classes(w) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for g, c in w.select("gpu", "class").iter_rows():
        out.setdefault(g, set()).add(c)
    return out


def test_each_window_gets_exactly_one_class(windows):
    assert windows.get_column("class").null_count() == 0
    assert set(windows.get_column("class").unique()) <= set(C.CLASS_ORDER)
    assert _classes(windows) == {0: {"memory_bound"}, 1: {"idle_allocated"}, 2: {"tensor_bound"}, 3: {"unknown"},
                                 4: {"idle"}, 5: {"busy_low_throughput"}, 6: {"io_bound"}}


def test_idle_is_a_noise_floor_not_zero(windows):
    # the notebook is idle-allocated for all its time, not the half of it an exact-zero test sees
    nb = windows.filter(pl.col("gpu") == 1)
    assert nb.get_column("allocated_idle_share").mean() < 0.9  # the per-sample `<= 0.01` state misses some
    assert C.hours_by_class(nb)["idle_allocated"] == pytest.approx(nb.get_column("span_s").sum() / 3600)


def test_decode_busy_all_night_is_underused_not_wasted(windows):
    gpus = {r["gpu"]: r for r in fleet_summary(windows).iter_rows(named=True)}
    assert gpus[0]["wasted_gpu_h"] == 0.0 and gpus[0]["underused_gpu_h"] == pytest.approx(600 / 3600)
    assert gpus[1]["wasted_gpu_h"] == pytest.approx(600 / 3600)  # the idle notebook tops the waste list
    assert fleet_summary(windows).row(0, named=True)["gpu"] == 1
    assert gpus[2]["wasted_gpu_h"] == 0.0 and gpus[2]["underused_gpu_h"] == 0.0  # training: neither


def test_hours_by_class_partition_the_time(windows):
    h = C.hours_by_class(windows)
    assert list(h) == list(C.CLASS_ORDER)
    assert sum(h.values()) == pytest.approx(windows.get_column("span_s").sum() / 3600)


def test_health_classes_by_xid_kind():
    # XID 13 is an application fault (the GPU is fine); 48 (double-bit ECC) makes the GPU unavailable
    w = reduce_windows(tc.table(
        tc.gpu_series(gpu=0, n=60, **TRAIN, xid_last_code=lambda i: 13 if i >= 30 else 0),
        tc.gpu_series(gpu=1, n=60, **TRAIN, xid_last_code=lambda i: 48 if i >= 30 else 0),
        tc.gpu_series(gpu=2, n=60, **TRAIN, ecc_dbe_volatile_count=lambda i: 1 if i >= 30 else 0),
    ), window="all")
    assert _classes(w) == {0: {"tensor_bound"}, 1: {"unavailable"}, 2: {"unavailable"}}
    assert C.hours_by_class(w)["unavailable"] == pytest.approx(2 * 60 / 3600)


def test_thresholds_are_configurable_and_bounded(windows):
    # a stricter tensor roof: the training pod (0.55) is no longer tensor-bound
    th = C.thresholds({"tensor_high": 0.6})
    w = C.classify(windows, th)
    assert _classes(w)[2] == {"busy"}
    with pytest.raises(UsageError, match=r"\[tool.ridgeline.classes\]: tensor_high must be"):
        C.thresholds({"tensor_high": 2.0})
    with pytest.raises(UsageError, match="unknown class threshold 'tensor_hi'"):
        C.thresholds({"tensor_hi": 0.5})
    assert C.reclassify(windows, None) is windows


def test_config_table_is_read_and_checked(tmp_path):
    from ridgeline.rules.engine import load_config

    (tmp_path / "ridgeline.toml").write_text("[tool.ridgeline.classes]\nidle_engine_floor = 0.02\n")
    assert load_config(tmp_path / "ridgeline.toml")["classes"] == {"idle_engine_floor": 0.02}
    (tmp_path / "bad.toml").write_text("[tool.ridgeline.classes]\nidle_engine_floor = -1\n")
    with pytest.raises(UsageError, match=r"bad.toml: \[tool.ridgeline.classes\]: idle_engine_floor must be"):
        load_config(tmp_path / "bad.toml")


def test_every_class_has_a_remedy_and_every_threshold_a_source():
    assert set(C.REMEDIES) == set(C.CLASS_ORDER)
    assert set(C.SOURCES) == set(C.CLASS_THRESHOLDS)
    assert set(C.WASTED_CLASSES) | set(C.UNDERUSED_CLASSES) <= set(C.CLASS_ORDER)
    assert not set(C.WASTED_CLASSES) & set(C.UNDERUSED_CLASSES)
    for key in C.CLASS_THRESHOLDS:
        assert f"class_{key}" in bounds.BOUNDS
