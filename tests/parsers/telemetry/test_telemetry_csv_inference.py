"""A long telemetry CSV whose value column reads as integers for more than the first 10,000 rows
(GPU-Util percent from an exporter: "95", "0") and holds a decimal later: read, not refused.
The file is generated here."""

from __future__ import annotations

import polars as pl
import pytest

from ridgeline.parsers.telemetry.reader import scan_telemetry


def test_integers_first_then_decimals(tmp_path):
    path = tmp_path / "long.csv"
    lines = ["timestamp,host,gpu,field,value"]
    lines += [f"{1767571200 + k},n1,0,DCGM_FI_DEV_GPU_UTIL,{95 if k % 2 else 0}" for k in range(12_000)]
    lines += [f"{1767571200 + 12_000},n1,0,DCGM_FI_DEV_POWER_USAGE,505.464"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    lf, inputs, skipped = scan_telemetry([path])
    df = lf.collect()
    assert inputs[0].rows == 12_001 and not skipped
    assert df.filter(pl.col("field") == "power_w").get_column("value").to_list() == [505.464]
    assert df.filter(pl.col("field") == "gpu_util_ratio").get_column("value").max() == pytest.approx(0.95)
