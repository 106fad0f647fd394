"""Text readers in pieces (issue 14, memory): ``dcgmi dmon``, dcgm-exporter and nvidia-smi CSV
files are read in pieces cut at line ends (``ridgeline.parsers.text_chunks``). Read in tiny
pieces, every fixture gives what it gives read in one piece (frames, rows, skipped items,
notes, errors), and a bad cell past the first piece is reported at its own line.

The files written here are made by the tests themselves (tmp_path), from the fixtures or by hand.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from ridgeline.errors import InputError
from ridgeline.parsers.telemetry import dcgm_dmon, dcgm_exporter, nvidia_smi
from ridgeline.parsers.telemetry.reader import Options
from ridgeline.parsers.text_chunks import line_chunks

ROOT = Path(__file__).resolve().parents[2]
WHOLE = 1 << 30  # one piece


def _dmon(path, cb):
    return dcgm_dmon.read_dmon_wide(path, opts=(o := Options()), chunk_bytes=cb), o.notes


def _smi(path, cb):
    return nvidia_smi.read_query_csv_wide(path, opts=(o := Options()), chunk_bytes=cb), o.notes


def _exporter(path, cb):
    frame, info, skipped = dcgm_exporter.read_exporter(path, opts=(o := Options()), chunk_bytes=cb)
    return (frame, None, info, skipped), o.notes


def _outcome(read, path, cb):
    try:
        (wide, long, info, skipped), notes = read(path, cb)
    except Exception as err:  # noqa: BLE001 - a library's error is translated by guard.read_guarded, as read whole
        return f"{type(err).__name__}: {err}"
    return wide, long, info, [(s.source, s.item, s.reason) for s in skipped], notes


def _assert_same(a, b):
    assert type(a) is type(b)
    if isinstance(a, str):
        assert a == b
        return
    for x, y in zip(a[:2], b[:2]):
        assert (x is None) == (y is None)
        if x is not None:
            assert_frame_equal(x, y)
    assert a[2:] == b[2:]


def _files(*patterns):
    found = []
    for pattern in patterns:
        found += sorted((ROOT / "fixtures").rglob(pattern)) + sorted((ROOT / "tests" / "corpus").glob(pattern))
    return [p for p in found if p.stat().st_size < 600_000]


READERS = [(_dmon, p) for p in _files("*.dmon", "dmon-*.txt")] \
    + [(_exporter, p) for p in _files("*.prom")] \
    + [(_smi, p) for p in _files("nvidia-smi-query*.csv", "smi-*.csv", "gpu_log*.csv")]


def test_line_chunks_cut_at_line_ends(tmp_path):
    text = b"a\r\nbb\n\nccc ccc ccc ccc\nd" + "\u00e9\u00e9\n".encode() + b"e"
    f = tmp_path / "t.txt"
    f.write_bytes(text)
    for size in (1, 2, 3, 5, 8, 64):
        pieces = list(line_chunks(f, size))
        assert b"".join(p for p, _last in pieces) == text
        assert [last for _p, last in pieces] == [False] * (len(pieces) - 1) + [True]
        assert all(p.endswith(b"\n") for p, _last in pieces[:-1])
        assert all(p.decode("utf-8") for p, _last in pieces)  # a UTF-8 sequence is never cut
    (tmp_path / "empty.txt").write_bytes(b"")
    assert list(line_chunks(tmp_path / "empty.txt", 4)) == []
    (tmp_path / "nl.txt").write_bytes(b"x\ny\n")
    assert list(line_chunks(tmp_path / "nl.txt", 2)) == [(b"x\n", False), (b"y\n", True)]


def test_fixtures_are_found():
    kinds = {read for read, _p in READERS}
    assert kinds == {_dmon, _exporter, _smi}
    assert len(READERS) >= 15


@pytest.mark.parametrize("read,path", READERS, ids=[str(p.relative_to(ROOT)) for _r, p in READERS])
def test_tiny_pieces_read_as_one(read, path):
    whole = _outcome(read, path, WHOLE)
    sizes = (1, 37, 500) if path.stat().st_size < 20_000 else (4096, 65536)
    for size in sizes:
        _assert_same(whole, _outcome(read, path, size))


DMON_HEAD = ("# dcgmi dmon -e 1001,1004,155 -d 1000\n"
             "#Entity   GRACT        TENSO        POWER\n"
             "ID                                  W\n")


def _dmon_text(ticks: int, bad: dict | None = None) -> str:
    """8 GPUs per tick, the header pair repeated every 14 ticks; ``bad``: {(tick, gpu): (column, text)}."""
    bad = bad or {}
    lines = [DMON_HEAD.rstrip("\n")]
    for t in range(ticks):
        if t and t % 14 == 0:
            lines += DMON_HEAD.splitlines()[1:]
        for g in range(8):
            cells = [f"{0.1 + 0.01 * g:.3f}", "0.020", f"{300 + t % 7:.3f}"]
            col, text = bad.get((t, g), (None, None))
            if col is not None:
                cells[col] = text
            lines.append(f"GPU {g}     " + "".join(c.ljust(13) for c in cells).rstrip())
    return "\n".join(lines) + "\n"


def _line_of(text: str, needle: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines(), start=1) if needle in ln)


def test_dmon_bad_cell_past_the_first_piece(tmp_path):
    text = _dmon_text(60, bad={(50, 3): (2, "12x.5")})
    f = tmp_path / "node.dmon"
    f.write_text(text)
    with pytest.raises(InputError) as err:
        dcgm_dmon.read_dmon_wide(f, opts=Options(), chunk_bytes=256)
    assert err.value.line == _line_of(text, "12x.5") > 200
    assert "POWER" in str(err.value) and "12x.5" in str(err.value)
    # the first bad cell by field (then row), as a read in one piece reports it
    text = _dmon_text(60, bad={(5, 1): (2, "oops"), (55, 6): (0, "0.1.2")})
    f.write_text(text)
    whole = _outcome(_dmon, f, WHOLE)
    assert isinstance(whole, str) and "0.1.2" in whole and "GRACT" in whole
    _assert_same(whole, _outcome(_dmon, f, 200))


def test_dmon_ticks_and_times_continue_across_pieces(tmp_path):
    f = tmp_path / "node.dmon"
    f.write_text(_dmon_text(40))
    (wide, _long, info, _skipped), _notes = _dmon(f, 100)
    assert info.rows == 40 * 8
    per_gpu = wide.group_by("gpu").agg(pl.col("timestamp").n_unique().alias("n"),
                                       (pl.col("timestamp").max() - pl.col("timestamp").min()).alias("span"))
    assert set(per_gpu.get_column("n").to_list()) == {40}  # tick k of every GPU at its own time
    assert set(per_gpu.get_column("span").dt.total_seconds().to_list()) == {39}


def test_dmon_cut_off_last_row_in_a_later_piece(tmp_path):
    text = _dmon_text(30).rstrip("\n")
    f = tmp_path / "node.dmon"
    f.write_text(text[: text.rfind("0.020") + 2])  # the last row ends mid-row, with no line end
    whole = _outcome(_dmon, f, WHOLE)
    assert any("cut off" in reason for _src, _item, reason in whole[3])
    _assert_same(whole, _outcome(_dmon, f, 128))


SMI_HEADER = ("timestamp, index, name, utilization.gpu [%], memory.used [MiB], power.draw [W], "
              "clocks.sm [MHz]\n")


def _smi_text(rows: int, bad: dict | None = None) -> str:
    bad = bad or {}
    out = [SMI_HEADER.rstrip("\n")]
    for i in range(rows):
        sec, gpu = divmod(i, 4)
        cells = [f"2026/01/05 10:{sec // 60:02d}:{sec % 60:02d}.000", str(gpu), "NVIDIA H100 80GB HBM3",
                 f"{(i * 7) % 100} %", "40960 MiB", f"{300 + i % 50}.25 W", "1980 MHz"]
        for col, text in bad.get(i, {}).items():
            cells[col] = text
        out.append(", ".join(cells))
    return "\n".join(out) + "\n"


def test_smi_bad_cell_past_the_first_piece(tmp_path):
    text = _smi_text(400, bad={350: {5: "[Bad] W"}})
    f = tmp_path / "gpu_log.csv"
    f.write_text(text)
    with pytest.raises(InputError) as err:
        nvidia_smi.read_query_csv_wide(f, opts=Options(), chunk_bytes=512)
    assert err.value.line == _line_of(text, "[Bad] W") == 352
    assert "power.draw [W]" in str(err.value)


def test_smi_a_bad_timestamp_later_wins_over_a_bad_cell_earlier(tmp_path):
    # read whole, the timestamps are checked before the cells: the same with pieces
    text = _smi_text(400, bad={10: {3: "abc %"}, 390: {0: "2026/13/05 10:00:00.000"}})
    f = tmp_path / "gpu_log.csv"
    f.write_text(text)
    whole = _outcome(_smi, f, WHOLE)
    assert isinstance(whole, str) and "timestamp" in whole and f":{_line_of(text, '2026/13/05')}:" in whole
    _assert_same(whole, _outcome(_smi, f, 300))


def test_smi_rows_and_names_across_pieces(tmp_path):
    f = tmp_path / "gpu_log.csv"
    f.write_text(_smi_text(300))
    whole, pieces = _outcome(_smi, f, WHOLE), _outcome(_smi, f, 200)
    _assert_same(whole, pieces)
    wide = pieces[0]
    assert wide.height == 300 and wide.get_column("model").unique().to_list() == ["NVIDIA H100 80GB HBM3"]


def test_exporter_skipped_lines_keep_their_numbers_across_pieces(tmp_path):
    lines = []
    for k in range(120):
        for g in range(4):
            lines.append(f'DCGM_FI_DEV_GPU_UTIL{{gpu="{g}",UUID="GPU-{g}",Hostname="n1"}} {(k + g) % 100} '
                         f"{1767600000000 + 1000 * k}")
    lines[401] = 'DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-1",Hostname="n1"} ERROR - FAILED TO CONVERT TO STRING'
    f = tmp_path / "scrapes.prom"
    f.write_text("\n".join(lines) + "\n")
    whole, pieces = _outcome(_exporter, f, WHOLE), _outcome(_exporter, f, 300)
    _assert_same(whole, pieces)
    assert [item for _src, item, _reason in pieces[3]] == ["line 402"]
    assert pieces[2].rows == 480


def test_dmon_lenient_lists_every_bad_cell_as_a_whole_read_does(tmp_path):
    text = _dmon_text(60, bad={(5, 1): (2, "oops"), (55, 6): (0, "0.1.2"), (30, 2): (2, "?")})
    f = tmp_path / "node.dmon"
    f.write_text(text)
    got = []
    for size in (WHOLE, 200):
        opts = Options(strict=False)
        wide, _long, _info, _skipped = dcgm_dmon.read_dmon_wide(f, opts=opts, chunk_bytes=size)
        got.append((wide, [(s.source, s.item, s.reason) for s in opts.lenient_skipped]))
    assert_frame_equal(got[0][0], got[1][0])
    assert got[0][1] == got[1][1]
    lines = [item for _src, item, _reason in got[1][1]]
    assert len(lines) == 3 and all(str(_line_of(text, v)) in " ".join(lines) for v in ("oops", "0.1.2", "?"))
    assert got[1][0].get_column("power_w").null_count() == 2  # the bad cells read as missing
