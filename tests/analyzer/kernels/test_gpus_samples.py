"""Every GPU the shared real samples name resolves to a catalogue entry.

Device names are read from the files themselves with ridgeline's own readers (ncu device
attribute, telemetry ``model``, timeline device names), never from a per-file list, so a
sample added later is covered too. A name that names no model ("AMD Radeon Graphics", what ROCm
6.2 records for the MI250's GCDs) resolves the way ridgeline resolves it in an analysis: from the
device properties the same file records with it (Kineto ``deviceProperties``;
ridgeline.analyzer.kernels.identify). Skipped when ``../shared/samples`` is absent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ridgeline.analyzer.kernels.identify import identify
from ridgeline.errors import InputError, UsageError

SAMPLES = Path(__file__).resolve().parents[4] / "shared" / "samples"
pytestmark = [pytest.mark.skipif(not SAMPLES.is_dir(), reason="../shared/samples is absent"),
              pytest.mark.early]  # one worker reads every sample (the module's fixture): started first


def _files():
    if not SAMPLES.is_dir():
        return []
    return sorted(p for p in SAMPLES.rglob("*") if p.is_file() and p.name != "MANIFEST.md"
                  and not any(part.startswith(".") or part == "docs" for part in p.relative_to(SAMPLES).parts))


def _names(path: Path) -> list[tuple[str, str | None, dict]]:
    """(device name, recorded compute capability or None, recorded device properties) the file
    records."""
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
        return [(n, cc, {}) for n, cc in pairs if n]
    if kind == "telemetry":
        from ridgeline.parsers.telemetry.reader import read_telemetry

        df, _inputs, _skipped = read_telemetry([path])
        df = df.collect() if hasattr(df, "collect") else df
        if "model" not in df.columns:
            return []
        return [(m, None, {}) for m in df.get_column("model").drop_nulls().unique().to_list() if m]
    from ridgeline.parsers.timeline.reader import read_timeline

    tl = read_timeline(path)
    out = {(n, tuple(sorted((tl.device_properties.get(d) or {}).items()))) for d, n in tl.devices.items() if n}
    named = {n for n, _p in out}
    for table in (tl.activities, tl.totals):
        if table is not None and "device_name" in table.columns:
            out.update((n, ()) for n in table.get_column("device_name").drop_nulls().unique().to_list()
                       if n and n not in named)
    return [(n, dict(p).get("compute_capability"), dict(p)) for n, p in sorted(out)]


def _all_names():
    """{(device name, recorded properties): (file, recorded compute capability, properties)}"""
    out = {}
    for path in _files():
        try:
            found = _names(path)
        except (InputError, UsageError):  # refused files are other tests' concern
            continue
        for name, cc, props in found:
            out.setdefault((name, tuple(sorted(props.items()))), (path.name, cc, props))
    return out


@pytest.fixture(scope="module")
def recorded():
    return _all_names()


def test_samples_name_gpus(recorded):
    # the readers find names in every format family (guards against a reader change hiding them)
    assert len(recorded) >= 8, recorded


#: GPUs a shared sample names that the catalogue does not hold yet, each with why (compared without
#: spaces: rocprof's JSON writes the name with its spaces stripped)
NOT_YET = {"AMDRadeonAIPROR9700": "RDNA 4 Radeon parts are not in the catalogue yet (issue 33)"}


def test_every_recorded_device_name_resolves(recorded):
    unresolved = {n: (f, identify(n, props).note) for (n, _p), (f, _cc, props) in recorded.items()
                  if identify(n, props).gpu is None and n.replace(" ", "") not in NOT_YET}
    assert not unresolved, f"device names not in the catalogue: {unresolved}"


def test_resolved_entry_has_the_recorded_compute_capability(recorded):
    """ncu's compute capability, or the computeMajor/Minor a trace records (CUDA's, or the pair HIP
    reports for an AMD gfx target), is the resolved entry's."""
    wrong = {}
    for (name, _p), (f, cc, props) in recorded.items():
        g = identify(name, props).gpu
        expected = (g.hip_cc if g.vendor == "AMD" else g.cc) if g is not None else None
        if cc and g is not None and expected != cc:
            wrong[name] = (f, cc, g.name, expected)
    assert not wrong, wrong


def test_the_mi250_trace_is_identified_from_its_properties(recorded):
    """ROCm 6.2 names the MI250's GCDs "AMD Radeon Graphics"; the trace records 104 CUs, 64 GiB,
    HIP 9.0 and wavefronts of 64: one MI250 GCD, or an MI210, which has the same roofs."""
    amd = {k: v for k, v in recorded.items() if k[0] == "AMD Radeon Graphics"}
    if not amd:
        pytest.skip("the MI250 Kineto sample is absent")
    for (name, _p), (_f, _cc, props) in amd.items():
        found = identify(name, props)
        assert found.how == "properties" and found.gpu.name == "MI250 GCD"
        assert found.label == "MI250 GCD / MI210" and "not from its name" in found.note


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
