"""nvidia-smi CSV time spellings (issue 32 item 8): one case per row of
:data:`ridgeline.parsers.telemetry.times.SPELLINGS`, the day/month order settled by the data or
by ``--time-format``, and refused in one line otherwise.

Every file here is synthetic, written by :func:`smi` (an nvidia-smi --query-gpu CSV with the
given timestamp cells).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io

import pytest

from ridgeline.errors import InputError, UsageError
from ridgeline.parsers.telemetry.reader import read_telemetry
from ridgeline.parsers.telemetry.times import SPELLINGS, spelling_of

UTC = dt.timezone.utc


def smi(tmp_path, cells, name="smi.csv"):
    p = tmp_path / name
    rows = [f"{c}, 0, NVIDIA H100 80GB HBM3, 50 %, 1000 MiB" for c in cells]
    p.write_text("timestamp, index, name, utilization.gpu [%], memory.used [MiB]\n" + "\n".join(rows) + "\n",
                 encoding="utf-8")
    return p


def times(path, **kw):
    notes: list[str] = []
    df, _, _ = read_telemetry([path], notes=notes, **kw)
    return sorted(set(df.get_column("timestamp").to_list())), notes


def at(*args):
    return dt.datetime(*args, tzinfo=UTC)


def test_every_spelling_has_its_example_recognized():
    assert [spelling_of(s.example).name for s in SPELLINGS] == [s.name for s in SPELLINGS]
    assert spelling_of("yesterday") is None


@pytest.mark.parametrize("cells, expected", [
    (["2025/09/08 17:26:50.250", "2025/09/08 17:26:51.250"], [at(2025, 9, 8, 17, 26, 50, 250000), at(2025, 9, 8, 17, 26, 51, 250000)]),
    (["2025-09-08T17:26:50+08:00", "2025-09-08T17:26:51.5+08:00"], [at(2025, 9, 8, 9, 26, 50), at(2025, 9, 8, 9, 26, 51, 500000)]),
    (["2025-09-08 17:26:50+0800", "2025-09-08T17:26:51 +08"], [at(2025, 9, 8, 9, 26, 50), at(2025, 9, 8, 9, 26, 51)]),
    (["2025-09-08T09:26:50Z", "2025-09-08T04:26:51-05:00"], [at(2025, 9, 8, 9, 26, 50), at(2025, 9, 8, 9, 26, 51)]),
    # a DST change inside the file: each cell's own offset
    (["2025-10-26T02:59:59+02:00", "2025-10-26T02:00:00+01:00"], [at(2025, 10, 26, 0, 59, 59), at(2025, 10, 26, 1, 0, 0)]),
    (["2025-09-08 17:26:50", "2025-09-08T17:26:51.5"], [at(2025, 9, 8, 17, 26, 50), at(2025, 9, 8, 17, 26, 51, 500000)]),
])
def test_spellings_read_to_utc(tmp_path, cells, expected):
    got, notes = times(smi(tmp_path, cells))
    assert got == expected
    zoned = "+" in cells[0] or "Z" in cells[0]
    # times with an offset carry their zone: no "read as UTC" note for them
    assert any("carry no zone" in n for n in notes) is not zoned


def test_an_offset_makes_tz_moot_and_says_so(tmp_path):
    got, notes = times(smi(tmp_path, ["2025-09-08T17:26:50+08:00"]), tz="Europe/Berlin")
    assert got == [at(2025, 9, 8, 9, 26, 50)]
    assert any("carry their UTC offset; --tz Europe/Berlin not applied" in n for n in notes)
    got, _ = times(smi(tmp_path, ["2025-09-08 17:26:50"], "local.csv"), tz="Asia/Shanghai")
    assert got == [at(2025, 9, 8, 9, 26, 50)]  # zone-less ISO: read in --tz


@pytest.mark.parametrize("sep", ["-", "/", "."])
@pytest.mark.parametrize("cells, order, expected", [
    (["12-03-2026 15:13:16", "13-03-2026 15:13:16"], "day first", at(2026, 3, 12, 15, 13, 16)),
    (["03-12-2026 15:13:16", "03-13-2026 15:13:16"], "month first", at(2026, 3, 12, 15, 13, 16)),
])
def test_the_data_settles_day_or_month_first(tmp_path, sep, cells, order, expected):
    got, notes = times(smi(tmp_path, [c.replace("-", sep) for c in cells]))
    assert got[0] == expected and got[1] - got[0] == dt.timedelta(days=1)
    assert any(f"read {order}" in n and "line 3 has a day above 12" in n for n in notes)


def test_no_day_above_12_is_refused_naming_time_format(tmp_path):
    p = smi(tmp_path, ["03-11-2026 15:13:16", "03-11-2026 15:13:17"])
    with pytest.raises(InputError, match="give --time-format month-first or --time-format day-first"):
        read_telemetry([p])
    assert times(p, time_format="month-first")[0][0] == at(2026, 3, 11, 15, 13, 16)
    assert times(p, time_format="day-first")[0][0] == at(2026, 11, 3, 15, 13, 16)
    assert times(p, time_format="%d-%m-%Y %H:%M:%S", tz="Asia/Tokyo")[0][0] == at(2026, 11, 3, 6, 13, 16)


def test_two_orders_in_one_file_are_refused_with_both_lines(tmp_path):
    p = smi(tmp_path, ["12-03-2026 15:13:16", "13-03-2026 15:13:16", "03-14-2026 15:13:16"])
    with pytest.raises(InputError) as err:
        read_telemetry([p])
    assert "'13-03-2026 15:13:16' (line 3) that reads only day first" in str(err.value)
    assert "'03-14-2026 15:13:16' (line 4) only month first" in str(err.value)


def test_a_cell_in_another_spelling_names_the_file_spelling(tmp_path):
    p = smi(tmp_path, ["2025-09-08T17:26:50+08:00", "2025/09/08 17:26:51"])
    with pytest.raises(InputError, match=r"smi.csv:3: .*expected a timestamp like 2025-09-08T17:26:50\+08:00"):
        read_telemetry([p])


def test_lenient_reads_the_files_spelling_and_skips_only_bad_rows(tmp_path):
    p = smi(tmp_path, ["2025-09-08T17:26:50+08:00", "garbage", "2025-09-08T17:26:52+08:00"])
    notes: list[str] = []
    df, _, skipped = read_telemetry([p], strict=False, notes=notes)
    assert df.get_column("timestamp").n_unique() == 2
    assert [s.item for s in skipped] == ["line 3"]
    assert "expected a timestamp like 2025-09-08T17:26:50+08:00" in skipped[0].reason


@pytest.mark.parametrize("value", ["dayfirst", "%Q-%m"])
def test_a_bad_time_format_is_a_usage_error(tmp_path, value):
    from ridgeline.parsers.telemetry.times import check_time_format

    with pytest.raises(UsageError, match="--time-format"):
        check_time_format(value)


@pytest.mark.parametrize("command", ["telemetry", "analyze", "report"])
def test_commands_reading_telemetry_take_time_format_and_refuse_in_one_line(tmp_path, command):
    from ridgeline.cli import main

    p = smi(tmp_path, ["03-11-2026 15:13:16", "03-11-2026 15:13:17"])

    def run(*extra):
        out, err = io.StringIO(), io.StringIO()
        args = [command, str(p), *extra] + (["--format", "markdown"] if command == "report" else ["--format", "json"])
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            try:
                main(args)
                code = 0
            except SystemExit as exc:
                code = exc.code
        return code, err.getvalue()

    code, err = run()
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--time-format" in err
    code, err = run("--time-format", "day-first")
    assert code in (0, 1), err


def test_the_order_is_settled_over_the_whole_file_read_in_pieces(tmp_path):
    from ridgeline.parsers.telemetry.nvidia_smi import read_query_csv_wide
    from ridgeline.parsers.telemetry.reader import Options

    # 10-12 March day first, one sample a second; only the last rows (13 March) settle the order
    cells = [f"{d:02d}-03-2026 10:00:{s:02d}" for d in (10, 11, 12, 13) for s in range(40)]
    p = smi(tmp_path, cells)
    opts = Options()
    wide, _long, _info, _ = read_query_csv_wide(p, opts=opts, chunk_bytes=512)  # many pieces
    days = sorted({t.day for t in wide.get_column("timestamp").to_list()})
    assert days == [10, 11, 12, 13] and {t.month for t in wide.get_column("timestamp").to_list()} == {3}
    assert any("read day first" in n for n in opts.notes)
