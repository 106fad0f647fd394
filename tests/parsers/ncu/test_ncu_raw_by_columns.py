"""Raw pages read by columns (the fast path for big files keeps only the counters the recipes
read; NcuResult.metrics reads the full table from the file when first looked up).

Files are synthetic, written in tmp_path. NARROW_MIN_BYTES is lowered so small files take the
by-columns path, and LOCALE_SAMPLE_ROWS so the locale sample boundary is a few rows in.
"""

from __future__ import annotations

import pytest

from ridgeline.errors import InputError
from ridgeline.parsers.ncu import csv_reader as ncu, blocks as ncu_blocks

HEADER = ["ID", "Kernel Name", "Device", "CC", "dram__bytes.sum", "gpu__time_duration.sum",
          "launch__func_cache_config", "smsp__filler_a.avg.pct_of_peak_sustained_active"]
UNITS = ["", "", "", "", "Kbyte", "usecond", "", "%"]


def q(*fields):
    return ",".join('"' + str(f) + '"' for f in fields)


def rows(n, *, filler=lambda i: f"{i}.5"):
    return [q(i, f"kernel_{i % 3}", 0, "9.0", 2 * (i + 1), 10 + i, "CachePreferNone", filler(i)) for i in range(n)]


def write(tmp_path, lines, name="raw.csv"):
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return p


@pytest.fixture
def by_columns(monkeypatch):
    monkeypatch.setattr(ncu_blocks, "NARROW_MIN_BYTES", 0)
    monkeypatch.setattr(ncu_blocks, "LOCALE_SAMPLE_ROWS", 3)


def test_values_from_the_needed_columns_and_full_table_on_first_access(tmp_path, by_columns):
    lines = ["==PROF== Connected to process 7", q(*HEADER), q(*UNITS)] + rows(6)
    lines.insert(5, "==PROF== a message between rows")
    res = ncu.read_ncu([write(tmp_path, lines)])
    k = res.kernels
    # Kbyte = 1,000 bytes, usecond = 1e-6 s, from the units row
    assert k["dram_bytes"].to_list() == [2000.0, 4000.0, 6000.0, 8000.0, 10000.0, 12000.0]
    assert k["duration_s"].to_list() == pytest.approx([10e-6, 11e-6, 12e-6, 13e-6, 14e-6, 15e-6])
    assert any("1 non-CSV line(s) ignored" in n for n in res.notes)
    assert res.units[str(tmp_path / "raw.csv")]["smsp__filler_a.avg.pct_of_peak_sustained_active"] == "%"
    metrics = res.metrics
    assert isinstance(metrics, ncu.MetricsTables)
    key = str(tmp_path / "raw.csv")
    assert key in metrics._loaders  # not read yet
    wide = metrics[key]
    assert key not in metrics._loaders
    # every column, as printed, launches only (no units row, no ==PROF== line)
    assert wide.columns == ["id", *HEADER]
    assert wide["id"].to_list() == ["0", "1", "2", "3", "4", "5"]
    assert wide["smsp__filler_a.avg.pct_of_peak_sustained_active"].to_list() == ["0.5", "1.5", "2.5", "3.5", "4.5", "5.5"]
    assert dict(metrics)[key].equals(wide) and list(metrics.values())[0].equals(wide)


def test_same_result_as_reading_every_column(tmp_path, by_columns, monkeypatch):
    lines = [q(*HEADER), q(*UNITS)] + rows(8)
    lines.insert(4, "")  # a blank line inside the block
    path = write(tmp_path, lines)
    narrow = ncu.read_ncu([path])
    monkeypatch.setattr(ncu_blocks, "NARROW_MIN_BYTES", 1 << 60)
    full = ncu.read_ncu([path])
    assert not full.metrics._loaders and narrow.metrics._loaders
    assert narrow.kernels.equals(full.kernels)
    assert narrow.metrics[str(path)].equals(full.metrics[str(path)])
    assert narrow.units == full.units and narrow.notes == full.notes and narrow.skipped == full.skipped


def test_locale_sample_covers_unneeded_columns_of_the_first_launches(tmp_path, by_columns):
    # launch 2 (the third, inside the 3-launch sample) has a decimal comma in a column no recipe reads
    bad = write(tmp_path, [q(*HEADER), q(*UNITS)] + rows(6, filler=lambda i: "1,5" if i == 2 else "1.5"), "bad.csv")
    with pytest.raises(InputError) as err:
        ncu.read_ncu([bad])
    assert err.value.line == 5  # header line 1, units line 2, launches from line 3
    assert "decimal comma" in str(err.value)
    # launch 4 is past the sample: not looked at, as when every column is read
    late = write(tmp_path, [q(*HEADER), q(*UNITS)] + rows(6, filler=lambda i: "1,5" if i == 4 else "1.5"), "late.csv")
    assert ncu.read_ncu([late]).kernels.height == 6
