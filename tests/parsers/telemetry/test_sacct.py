"""sacct --parsable2 reader: Slurm node ranges, steps, jobs that never started, GPU counts and
indices, zones, and one-line errors naming the line."""

from __future__ import annotations

import datetime as dt

import pytest

from ridgeline.errors import InputError
from ridgeline.parsers.telemetry.sacct import expand_nodelist, expand_ranges, read_sacct

UTC = dt.timezone.utc
HEADER = "JobID|User|Account|JobName|State|NodeList|Start|End|AllocTRES"


@pytest.mark.parametrize("text, hosts", [
    ("gpu[01-04,07]", ["gpu01", "gpu02", "gpu03", "gpu04", "gpu07"]),
    ("node7", ["node7"]),
    ("gpu[8-10]", ["gpu8", "gpu9", "gpu10"]),  # no padding: widths grow as the numbers do
    ("gpu[098-101]", ["gpu098", "gpu099", "gpu100", "gpu101"]),  # padding of the lower bound kept
    ("r[1-2]-n[1-2],cpu5", ["r1-n1", "r1-n2", "r2-n1", "r2-n2", "cpu5"]),  # every combination, lists joined
    ("a[1,3],b[2]", ["a1", "a3", "b2"]),
])
def test_node_lists_expand_as_slurm_writes_them(text, hosts):
    assert expand_nodelist(text) == hosts


@pytest.mark.parametrize("text", ["gpu[01-", "gpu]1", "gpu[a-b]", "gpu[4-2]", "", "gpu[1]x]"])
def test_malformed_node_lists_are_refused(text):
    with pytest.raises(ValueError):
        expand_nodelist(text)


def test_gpu_index_ranges():
    assert expand_ranges("0-3,5") == [0, 1, 2, 3, 5]
    with pytest.raises(ValueError):
        expand_ranges("3-1")


def _write(tmp_path, *lines, name="jobs.txt"):
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return p


def test_jobs_steps_pending_and_running(tmp_path):
    p = _write(tmp_path, HEADER,
               "101|alice|ml|train|COMPLETED|gpu[01-02]|2026-01-05T08:00:00|2026-01-05T10:00:00|cpu=16,gres/gpu=8,node=2",
               "101.batch|||batch|COMPLETED|gpu01|2026-01-05T08:00:00|2026-01-05T10:00:00|cpu=8",
               "101.0|||python|COMPLETED|gpu[01-02]|2026-01-05T08:00:05|2026-01-05T09:59:00|gres/gpu=8",
               "102|bob|infer|serve|RUNNING|gpu03|2026-01-05T09:00:00|Unknown|cpu=8,gres/gpu:h100=4,node=1",
               "103|carol|ml|wait|PENDING|None assigned|Unknown|Unknown|")
    notes: list[str] = []
    jobs, skipped = read_sacct(p, notes=notes)
    # one row per job and node; steps are inside their job's allocation
    assert jobs.select("job", "host").rows() == [("101", "gpu01"), ("101", "gpu02"), ("102", "gpu03")]
    assert jobs.get_column("alloc_gpus").to_list() == [8, 8, 4]  # gres/gpu=8 and the typed gres/gpu:h100=4
    assert jobs.get_column("start")[0] == dt.datetime(2026, 1, 5, 8, tzinfo=UTC)
    assert jobs.get_column("end")[2] is None  # still running: open-ended
    assert jobs.get_column("gpus").to_list() == [None, None, None]  # no GPU indices in the file
    assert [(s.item, s.reason) for s in skipped] == [("job 103 (line 6)", "never started: no node or start time")]
    assert any("2 job step row(s)" in n for n in notes)
    assert any("read as UTC" in n for n in notes)


def test_times_read_in_the_given_zone_and_gpu_indices(tmp_path):
    # --parsable (a '|' ending every line), a GPU index column, a GRES with IDX
    p = _write(tmp_path, "JobID|NodeList|Start|End|GPUIndex|",
               "7|n1|2026-01-05T09:00:00|2026-01-05T10:00:00|0-1,3|",
               "8|n2|2026-07-05T09:00:00|2026-07-05T10:00:00||")
    notes: list[str] = []
    jobs, _ = read_sacct(p, tz="Europe/Berlin", notes=notes)
    assert jobs.get_column("start").to_list() == [dt.datetime(2026, 1, 5, 8, tzinfo=UTC),  # CET = UTC+1
                                                   dt.datetime(2026, 7, 5, 7, tzinfo=UTC)]  # CEST = UTC+2
    assert jobs.get_column("gpus").to_list() == [[0, 1, 3], None]
    assert not any("read as UTC" in n for n in notes)
    q = _write(tmp_path, "JobID|NodeList|Start|End|AllocGRES", "9|n1|2026-01-05T09:00:00|2026-01-05T10:00:00|gpu:a100:2(IDX:2-3)",
               name="gres.txt")
    jobs, _ = read_sacct(q)
    assert jobs.row(0, named=True)["gpus"] == [2, 3] and jobs.row(0, named=True)["alloc_gpus"] == 2


@pytest.mark.parametrize("row, expect", [
    ("104|dave|ml|x|RUNNING|gpu01|2026-01-05T08:00:00|Unknown", ":3: expected 9 '|'-separated fields"),
    ("104|dave|ml|x|RUNNING|gpu01|yesterday|Unknown|", ":3: column 'Start': expected a time"),
    ("104|dave|ml|x|RUNNING|gpu[01-|2026-01-05T08:00:00|Unknown|", ":3: column 'NodeList': expected a Slurm node list"),
    ("104|dave|ml|x|DONE|gpu01|2026-01-05T08:00:00|2026-01-05T07:00:00|", ":3: column 'End': expected End at or after Start"),
])
def test_bad_rows_are_one_line_errors_naming_the_line(tmp_path, row, expect):
    p = _write(tmp_path, HEADER, "101|a|b|c|COMPLETED|gpu01|2026-01-05T08:00:00|2026-01-05T09:00:00|", row)
    with pytest.raises(InputError) as err:
        read_sacct(p)
    assert expect in str(err.value) and "\n" not in str(err.value)


def test_a_file_without_the_needed_columns_is_refused(tmp_path):
    with pytest.raises(InputError, match="expected sacct --parsable2 output"):
        read_sacct(_write(tmp_path, "JobID,User,NodeList", "1,a,n1"))
    with pytest.raises(InputError, match=r":1: expected the columns JobID, NodeList, Start and End"):
        read_sacct(_write(tmp_path, "JobID|NodeList|Start", "1|n1|2026-01-05T08:00:00", name="b.txt"))


# ---- bounds, indices and encodings (issue 35, classes 6, 7 and 9)
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from ridgeline.parsers.guard import MAX_GPU_INDEX  # noqa: E402
from ridgeline.parsers.telemetry.sacct import MAX_HOSTS_PER_ROW, MAX_ROWS, TooMany  # noqa: E402

ROW = "1|n1|2026-01-05T08:00:00|2026-01-05T09:00:00|{}"


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, 10 ** 7), st.integers(0, 10 ** 7)), min_size=1, max_size=4))
def test_gpu_index_ranges_are_bounded_or_refused(spans):
    text = ",".join(f"{a}-{b}" for a, b in spans)
    ok = all(a <= b <= MAX_GPU_INDEX for a, b in spans)
    if ok:
        got = expand_ranges(text)
        assert got == sorted({i for a, b in spans for i in range(a, b + 1)}) and len(got) <= MAX_GPU_INDEX + 1
    else:
        with pytest.raises(ValueError):
            expand_ranges(text)


@pytest.mark.parametrize("index", ["0-100000", "4096", "99999999999999999999999", "0-3,-1", ",", "2-"])
def test_a_bad_gpu_index_is_one_line_naming_the_line(tmp_path, index):
    p = _write(tmp_path, "JobID|NodeList|Start|End|GPUIndex", ROW.format("0-1"), ROW.format(index))
    with pytest.raises(InputError) as err:
        read_sacct(p)
    text = str(err.value)
    assert ":3: column 'GPUIndex': expected GPU indices 0..4095" in text and "\n" not in text


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.integers(1, 2000), min_size=1, max_size=4))
def test_node_lists_are_counted_before_they_are_made(sizes):
    text = "-".join(f"r[1-{n}]" for n in sizes)
    total = 1
    for n in sizes:
        total *= n
    if total <= MAX_HOSTS_PER_ROW:
        assert len(expand_nodelist(text)) == total
    else:
        with pytest.raises(TooMany) as err:
            expand_nodelist(text)
        assert err.value.count > MAX_HOSTS_PER_ROW


def test_a_node_list_bomb_is_one_line_naming_the_line_and_never_made(tmp_path):
    """The hosts are counted before any name is made: refusing 10^6 hosts allocates next to
    nothing (memory, not time, is measured: no timed assertions in tests)."""
    import tracemalloc

    p = _write(tmp_path, "JobID|NodeList|Start|End", "1|a[1-1000]-b[1-1000]|2026-01-05T08:00:00|2026-01-05T09:00:00")
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as err:
            read_sacct(p)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, f"{peak / 2**20:.1f} MiB to refuse a node list (10^6 names would take ~60 MiB)"
    assert ":2: column 'NodeList': expected at most 65,536 hosts in one node list" in str(err.value)
    assert "names 1,000,000" in str(err.value)


def test_too_many_rows_in_all_is_refused(tmp_path, monkeypatch):
    import ridgeline.parsers.telemetry.sacct as sacct

    monkeypatch.setattr(sacct, "MAX_ROWS", 5)
    p = _write(tmp_path, "JobID|NodeList|Start|End", "1|n[1-3]|2026-01-05T08:00:00|2026-01-05T09:00:00",
               "2|n[1-3]|2026-01-05T08:00:00|2026-01-05T09:00:00")
    with pytest.raises(InputError, match=r":3: expected at most 5 job-host rows"):
        read_sacct(p)
    assert MAX_ROWS >= 1_000_000


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be", "utf-32", "utf-8-sig"])
def test_a_file_with_a_byte_order_mark_is_decoded(tmp_path, codec):
    text = "\r\n".join([HEADER, "101|zoë|ml|train|COMPLETED|gpu[01-02]|2026-01-05T08:00:00|2026-01-05T10:00:00|"]) + "\r\n"
    raw = text.encode(codec)
    if codec == "utf-16-be":
        raw = b"\xfe\xff" + raw
    p = tmp_path / "jobs.txt"
    p.write_bytes(raw)
    jobs, _ = read_sacct(p)
    assert jobs.select("job", "user", "host").rows() == [("101", "zoë", "gpu01"), ("101", "zoë", "gpu02")]


@pytest.mark.parametrize("raw, expect", [
    ((HEADER + "\n").encode("utf-16-le"), ":1: expected UTF-8 text (sacct --parsable2 output), got NUL bytes"),
    ((HEADER + "\n101|\xff").encode("latin-1"), ":2: expected UTF-8 text (sacct --parsable2 output), got bytes"),
])
def test_a_file_in_another_encoding_is_refused_not_misread(tmp_path, raw, expect):
    p = tmp_path / "jobs.txt"
    p.write_bytes(raw)
    with pytest.raises(InputError) as err:
        read_sacct(p)
    assert expect in str(err.value) and "\n" not in str(err.value)
