"""Per-rank traces are one job only when they can be (issue 35, classes 2 and 7): different world
sizes are different jobs, two traces claiming one rank are said, bad rank values are named where
they are read, and a rank file that is a link to a trace outside the folder is joined with a note.
"""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import comm_traces as C
from ridgeline.analyzer.schema import TIMELINE_DEVICE_COLUMNS, polars_schema
from ridgeline.analyzer.timeline.ranks import fill_ranks, job_problem, rank_table
from ridgeline.pipeline import analyze_paths


def _devices(files):
    """A device frame: one device per file, ``files``: [(rank or None, world or None)]."""
    schema = polars_schema(TIMELINE_DEVICE_COLUMNS)
    rows = [{"source": f"f{i}.json", "device": 0, "rank": r, "world_size": w,
             "rank_from": "trace" if r is not None else None, "capture_s": 1.0, "compute_busy_s": 0.5 + i,
             "comm_busy_s": 0.1, "comm_exposed_s": 0.05, "idle_s": 0.1} for i, (r, w) in enumerate(files)]
    return pl.DataFrame([{c: row.get(c) for c in schema} for row in rows], schema=schema)


RANKED = st.lists(st.tuples(st.integers(0, 5), st.sampled_from([None, 2, 4, 8])), min_size=2, max_size=6)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(RANKED)
def test_a_rank_table_only_for_one_job_and_a_note_otherwise(files):
    notes: list[str] = []
    d = fill_ranks(_devices(files), notes)
    worlds = {w for _r, w in files if w is not None}
    ranks = [r for r, _w in files]
    one_job = len(worlds) <= 1 and len(set(ranks)) == len(ranks)
    table = rank_table(d)
    if one_job:
        assert table is not None and table.height == len(files) and not notes
    else:
        assert table is None and len(notes) == 1 and job_problem(d) == notes[0]
        assert ("world sizes" in notes[0]) == (len(worlds) > 1)


def test_one_process_driving_several_gpus_is_no_conflict():
    d = _devices([(0, 2), (1, 2)])
    d = pl.concat([d, d.filter(pl.col("source") == "f0.json").with_columns(pl.lit(1, pl.Int64).alias("device"))])
    notes: list[str] = []
    assert rank_table(fill_ranks(d, notes)) is not None and not notes


def test_two_jobs_in_one_folder_are_not_merged(tmp_path):
    C.job_folder(tmp_path / "job" / "a", compute_us=(1000, 1000, 3000, 1000), names=("a_rank{r}.json",))
    C.job_folder(tmp_path / "job" / "b", compute_us=(1000, 1000), names=("b_rank{r}.json",))
    res = analyze_paths([tmp_path / "job"])
    assert rank_table(res.timeline.devices) is None
    assert not [f for f in res.findings if f.code == "RL411"]
    (note,) = [n for n in res.notes if "different world sizes" in n]
    assert "world size 2:" in note and "world size 4:" in note and "b_rank1.json" in note


def test_two_traces_claiming_rank_0_are_said(tmp_path):
    folder = tmp_path / "job"
    folder.mkdir()
    ev = C.rank_events([1000, 1000], 500, 3, 200, 0)
    C.write(folder / "first.json", C.trace(ev, 0, 2))
    C.write(folder / "again.json", C.trace(ev, 0, 2))
    res = analyze_paths([folder])
    (note,) = [n for n in res.notes if "claim one rank" in n]
    assert "rank 0 by" in note and "again.json" in note and "first.json" in note
    assert rank_table(res.timeline.devices) is None


@pytest.mark.parametrize("info, said", [
    ({"rank": -1, "world_size": 4}, "distributedInfo.rank -1 is no rank"),
    ({"rank": "3", "world_size": 4}, "distributedInfo.rank '3' is no rank"),
    ({"rank": 3.5, "world_size": 4}, "distributedInfo.rank 3.5 is no rank"),
    ({"rank": True, "world_size": 4}, "distributedInfo.rank True is no rank"),
    ({"rank": 2 ** 70, "world_size": 4}, "is no rank (expected a whole number 0..9999999)"),
    ({"rank": 4, "world_size": 4}, "distributedInfo.rank 4 is not below its world_size 4"),
    ({"rank": 1, "world_size": 0}, "distributedInfo.world_size 0 is no world size"),
    ("rank 3", "distributedInfo 'rank 3' is no object"),
])
def test_bad_rank_values_in_a_trace_are_named(tmp_path, info, said):
    from ridgeline.parsers.timeline.reader import read_timeline

    doc = C.trace([C.kernel(C.GEMM, 0, 10)])
    doc["distributedInfo"] = info
    t = read_timeline(C.write(tmp_path / "t.json", doc))
    assert any(said in n and "t.json" in n for n in t.notes), t.notes
    if "world_size 0" in said:
        assert t.rank == 1 and t.world_size is None
    else:
        assert t.rank is None


@pytest.mark.parametrize("env, said, rank", [
    ({"RANK": "abc"}, "RANK='abc' is no rank; the rank is left unknown", None),
    ({"RANK": "-1", "SLURM_PROCID": "2"}, "RANK='-1' is no rank; the rank comes from SLURM_PROCID", 2),
    ({"RANK": "3", "WORLD_SIZE": "2"}, "RANK=3 is not below WORLD_SIZE=2", None),
    ({"RANK": "1", "WORLD_SIZE": "x", "SLURM_NTASKS": "4"}, "WORLD_SIZE='x' is no world size", 1),
    ({"RANK": "³"}, "RANK='³' is no rank", None),
])
def test_bad_rank_values_in_an_environment_are_named(tmp_path, env, said, rank):
    from ridgeline.parsers.timeline.reader import read_timeline

    path = C.nsys_rank_export(tmp_path / "r.sqlite", [C.kernel(C.GEMM, 0, 10)], env)
    t = read_timeline(path)
    assert any(said in n and "r.sqlite" in n for n in t.notes), t.notes
    assert t.rank == rank


def test_a_rank_file_linked_from_outside_the_folder_is_joined_with_a_note(tmp_path):
    files = C.job_folder(tmp_path / "job", compute_us=(1000, 1000, 3000, 1000))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    moved = elsewhere / "rank3.json"
    os.replace(files[3], moved)
    Path(files[3]).symlink_to(moved)
    res = analyze_paths([tmp_path / "job"])
    (note,) = [n for n in res.notes if "symbolic link" in n]
    assert "rank3.json" in note and "outside" in note and "joined to the job" in note
    assert sorted(res.timeline.devices.get_column("rank").to_list()) == [0, 1, 2, 3]
