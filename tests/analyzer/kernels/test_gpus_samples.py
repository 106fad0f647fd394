"""Every GPU the shared real samples name resolves to a catalogue entry.

Device names are read from the files themselves with ridgeline's own readers (ncu device
attribute, telemetry ``model``, timeline device names), never from a per-file list, so a
sample added later is covered too. Skipped when ``../shared/samples`` is absent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ridgeline.analyzer.kernels.gpus import try_lookup
from ridgeline.errors import InputError, UsageError

SAMPLES = Path(__file__).resolve().parents[4] / "shared" / "samples"
pytestmark = pytest.mark.skipif(not SAMPLES.is_dir(), reason="../shared/samples is absent")


def _files():
    if not SAMPLES.is_dir():
        return []
    return sorted(p for p in SAMPLES.rglob("*") if p.is_file() and p.name != "MANIFEST.md"
                  and not any(part.startswith(".") or part == "docs" for part in p.relative_to(SAMPLES).parts))


def _names(path: Path) -> list[tuple[str, str | None]]:
    """(device name, recorded compute capability or None) pairs the file records."""
    from ridgeline.pipeline import detect

    found = detect(path)
    if found is None:
        return []
    kind, _fmt = found
    if kind == "ncu":
        from ridgeline.pipeline import read_kernel_files

        parsed, _rules = read_kernel_files([path], strict=False)
        k = parsed.kernels
        pairs = k.select("device_name", "cc").drop_nulls("device_name").unique().rows()
        return [(n, cc) for n, cc in pairs if n]
    if kind == "telemetry":
        from ridgeline.parsers.telemetry.reader import read_telemetry

        df, _inputs, _skipped = read_telemetry([path])
        df = df.collect() if hasattr(df, "collect") else df
        if "model" not in df.columns:
            return []
        return [(m, None) for m in df.get_column("model").drop_nulls().unique().to_list() if m]
    from ridgeline.parsers.timeline.reader import read_timeline

    tl = read_timeline(path)
    names = set(tl.devices.values())
    for table in (tl.activities, tl.totals):
        if table is not None and "device_name" in table.columns:
            names.update(table.get_column("device_name").drop_nulls().unique().to_list())
    return [(n, None) for n in sorted(names) if n]


def _all_names():
    out = {}
    for path in _files():
        try:
            pairs = _names(path)
        except (InputError, UsageError):  # refused files are other tests' concern
            continue
        for name, cc in pairs:
            out.setdefault(name, (path.name, cc))
    return out


@pytest.fixture(scope="module")
def recorded():
    return _all_names()


def test_samples_name_gpus(recorded):
    # the readers find names in every format family (guards against a reader change hiding them)
    assert len(recorded) >= 8, recorded


def test_every_recorded_device_name_resolves(recorded):
    unresolved = {n: f for n, (f, _cc) in recorded.items() if try_lookup(n)[0] is None}
    assert not unresolved, f"device names not in the catalogue: {unresolved}"


def test_resolved_entry_has_the_recorded_compute_capability(recorded):
    wrong = {}
    for name, (f, cc) in recorded.items():
        g = try_lookup(name)[0]
        if cc and g is not None and g.cc != cc:
            wrong[name] = (f, cc, g.name, g.cc)
    assert not wrong, wrong


def test_per_sm_rates_agree_with_the_peaks_ncu_recorded():
    """Where a real export recorded a CUDA-core peak, its SM count and SM clock, the peak per SM
    per clock is the archrates table's figure for the recorded compute capability."""
    import polars as pl

    from ridgeline.analyzer.kernels.archrates import per_sm_rate
    from ridgeline.pipeline import detect, read_kernel_files

    checked = 0
    for path in _files():
        found = detect(path)
        if not found or found[0] != "ncu":
            continue
        try:
            parsed, _rules = read_kernel_files([path], strict=False)
        except (InputError, UsageError):
            continue
        k = parsed.kernels
        for p in ("fp64", "fp32", "fp16"):
            col = f"peak_flops_{p}_per_s"
            rows = k.filter(pl.col(col).is_not_null() & pl.col("sm_clock_hz").is_not_null()
                            & pl.col("sm_count").is_not_null() & pl.col("cc").is_not_null())
            for peak, clk, sms, cc in rows.select(col, "sm_clock_hz", "sm_count", "cc").unique().rows():
                rate = per_sm_rate(cc, p)
                if rate is None:
                    continue
                assert peak / (sms * clk) == pytest.approx(rate, rel=0.01), (path.name, p, cc)
                checked += 1
    assert checked >= 2  # the shared reports include such launches (H100 PCIe, H200)
