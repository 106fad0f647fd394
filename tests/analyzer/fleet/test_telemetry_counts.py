"""The samples per input that the reduction counts while it reads the partitions equal a pass
over the TELEMETRY long table (accounting.sample_counts), on every telemetry fixture, on wide
and long Parquet stores with blanks, and on the real DCGM samples when present."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = sorted(p for p in (ROOT / "fixtures" / "telemetry").iterdir()
                  if p.suffix not in (".md", ".py") and p.name != "__pycache__")  # (bytecode of the generators)
SAMPLES = ROOT.parent / "shared" / "samples" / "dcgm"


def _check(paths):
    from ridgeline.analyzer.accounting import sample_counts
    from ridgeline.pipeline import reduce_telemetry

    counts: dict = {}
    lf, _inputs, _skipped, _windows = reduce_telemetry([str(p) for p in paths], sample_counts=counts)
    expected = sample_counts(lf)
    assert counts == expected
    return counts


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_counts_match_the_long_table_on_fixtures(path):
    assert sum(n for n, _z in _check([path]).values()) > 0


def _store(tmp_path, layout):
    import polars as pl

    t0 = dt.datetime(2026, 1, 5, tzinfo=dt.timezone.utc)
    for h in ("a", "b"):
        rows = {"timestamp": [t0 + dt.timedelta(seconds=s) for s in range(40) for _g in range(2)],
                "gpu": [g for _s in range(40) for g in range(2)]}
        util = [None if i % 7 == 0 else float("nan") if i % 11 == 0 else 50.0 + i % 3 for i in range(80)]
        power = [1.5e14 if i % 13 == 0 else 200.0 for i in range(80)]  # a DCGM blank sentinel every 13th
        df = pl.DataFrame({**rows, "DCGM_FI_DEV_GPU_UTIL": util, "DCGM_FI_DEV_POWER_USAGE": power})
        if layout == "long":
            df = df.unpivot(index=["timestamp", "gpu"], variable_name="field", value_name="value")
        d = tmp_path / "store" / "date=2026-01-05" / f"host={h}"
        d.mkdir(parents=True)
        df.write_parquet(d / "part-0.parquet")
    return tmp_path / "store"


@pytest.mark.parametrize("layout", ["wide", "long"])
def test_counts_match_the_long_table_on_stores_with_blanks(tmp_path, layout):
    counts = _check([_store(tmp_path, layout)])
    (n, blanks), = counts.values()
    assert n == 2 * 80 * 2 and blanks > 0


def test_counts_match_the_long_table_on_real_samples():
    if not SAMPLES.is_dir():
        pytest.skip("../shared/samples/dcgm not present")
    files = sorted(p for p in SAMPLES.iterdir() if p.is_file() and p.name != "MANIFEST.md")
    for f in files:
        try:
            _check([f])
        except Exception as err:  # noqa: BLE001 - an unreadable sample is not this test's subject
            from ridgeline.errors import RidgelineError

            if not isinstance(err, RidgelineError):
                raise


# ------------------------------------------------------------------------------------------
# a folder's Parquet files: the page check runs only when reading them failed
# ------------------------------------------------------------------------------------------
def _corrupt(path: Path) -> None:
    """Overwrite page bytes in the middle of a Parquet file (the footer stays readable)."""
    data = bytearray(path.read_bytes())
    for i in range(8, min(len(data) - 200, 400)):
        data[i] = (data[i] * 7 + 13) % 256
    path.write_bytes(bytes(data))


def _count_page_checks(monkeypatch):
    from ridgeline.parsers import guard

    calls = []
    real = guard.check_parquet_pages

    def counted(path):
        calls.append(str(path))
        return real(path)

    monkeypatch.setattr(guard, "check_parquet_pages", counted)
    return calls


def test_a_good_store_is_read_once_without_the_page_check(tmp_path, monkeypatch):
    from ridgeline.pipeline import reduce_telemetry

    calls = _count_page_checks(monkeypatch)
    _lf, inputs, skipped, windows = reduce_telemetry([str(_store(tmp_path, "wide"))])
    assert calls == [] and len(inputs) == 1 and not skipped and windows.height > 0


@pytest.mark.parametrize("layout", ["wide", "long"])
def test_a_store_with_a_corrupt_file_lists_it_and_reads_the_rest(tmp_path, monkeypatch, layout):
    from ridgeline.pipeline import reduce_telemetry

    store = _store(tmp_path, layout)
    bad = store / "date=2026-01-05" / "host=b" / "part-0.parquet"
    _corrupt(bad)
    calls = _count_page_checks(monkeypatch)
    counts: dict = {}
    _lf, inputs, skipped, windows = reduce_telemetry([str(store)], sample_counts=counts)
    # reading failed, so the check ran: the bad file is listed and left out, the other host read
    assert str(bad) in calls
    assert [s.source for s in skipped] == [str(bad)] and "corrupt or truncated" in skipped[0].reason
    assert len(inputs) == 1 and set(windows.get_column("host")) == {"a"}
    assert counts == {str(store): (80 * 2, counts[str(store)][1])}


def test_a_store_with_a_corrupt_file_under_strict_names_it(tmp_path, capsys):
    from ridgeline.cli import main

    store = _store(tmp_path, "wide")
    bad = store / "date=2026-01-05" / "host=b" / "part-0.parquet"
    _corrupt(bad)
    with pytest.raises(SystemExit) as exc:
        main(["telemetry", str(store), "--strict", "--format", "json"])
    _out, err = capsys.readouterr()
    assert exc.value.code == 2 and len(err.strip().splitlines()) == 1, err
    assert str(bad) in err and "corrupt or truncated" in err
