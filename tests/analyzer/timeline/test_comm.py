"""Communication timed apart from compute (analyzer/timeline/comm.py), ranks as one job (analyzer/timeline/ranks.py),
RL410 exposed-communication and RL411 straggler-rank.

Generated traces (tests/comm_traces.py) have their figures known by construction; the real
traces in ../shared/samples are checked against a ground truth computed here from the trace's own
events with an independent interval sweep (skipped when the folder is absent).
"""

from __future__ import annotations

import gzip
import json
import re
import sqlite3
from decimal import Decimal
from pathlib import Path

import pytest

import comm_traces as C
from ridgeline.pipeline import analyze_paths

ROOT = Path(__file__).resolve().parents[3]
SHARED = ROOT.parent / "shared" / "samples"
MS = 1e-3


def _dev(result, source=None):
    d = result.timeline.devices
    rows = [r for r in d.iter_rows(named=True) if source is None or Path(r["source"]).name == source]
    assert len(rows) == 1
    return rows[0]


def _codes(result, code):
    return [f for f in result.findings if f.code == code]


# ------------------------------------------------------------------ one device, known overlap
def _overlap_trace(tmp_path):
    ev = [
        C.kernel(C.GEMM, 0, 10_000),               # compute [0, 10] ms
        C.kernel(C.NCCL, 4_000, 10_000, 20),        # comm [4, 14]: 6 ms under compute, 4 ms exposed
        C.kernel(C.NCCL, 5_000, 2_000, 21),         # a second collective inside the first: counted once
        C.kernel(C.NCCL, 15_000, 2_000, 20),        # comm [15, 17]
        C.kernel(C.GEMM, 16_000, 4_000),            # compute [16, 20]: 1 ms of it under comm
    ]
    return C.write(tmp_path / "overlap.json", C.trace(ev))


def test_comm_busy_and_exposed_by_construction(tmp_path):
    r = _dev(analyze_paths([_overlap_trace(tmp_path)]))
    assert r["comm_kernels"] == 3
    assert r["comm_busy_s"] == pytest.approx(12 * MS)  # [4,14] + [15,17]
    assert r["compute_busy_s"] == pytest.approx(14 * MS)  # [0,10] + [16,20]
    assert r["comm_exposed_s"] == pytest.approx(5 * MS)  # [10,14] + [15,16]
    assert r["comm_overlap_share"] == pytest.approx(7 / 12)
    assert r["kernel_busy_s"] == pytest.approx(19 * MS)  # [0,14] + [15,20]
    assert r["comm_exposed_s"] <= r["comm_busy_s"] <= r["kernel_busy_s"] <= r["busy_s"]


def test_no_communication_gives_zero_and_a_null_overlap(tmp_path):
    path = C.write(tmp_path / "gemm.json", C.trace([C.kernel(C.GEMM, 0, 1000), C.kernel(C.GEMM, 2000, 1000)]))
    r = _dev(analyze_paths([path]))
    assert (r["comm_kernels"], r["comm_busy_s"], r["comm_exposed_s"]) == (0, 0.0, 0.0)
    assert r["comm_overlap_share"] is None
    assert r["compute_busy_s"] == pytest.approx(r["kernel_busy_s"])
    assert r["rank"] is None and r["rank_from"] is None  # one file without distributedInfo: no rank


def test_fully_hidden_communication_is_not_flagged(tmp_path):
    ev = [C.kernel(C.GEMM, 0, 10_000), C.kernel(C.NCCL, 1_000, 8_000, 20)]
    r = analyze_paths([C.write(tmp_path / "hidden.json", C.trace(ev))])
    assert _dev(r)["comm_exposed_s"] == 0.0 and _dev(r)["comm_overlap_share"] == 1.0
    assert not _codes(r, "RL410")


def test_rl410_message_and_threshold(tmp_path):
    path = _overlap_trace(tmp_path)
    (f,) = _codes(analyze_paths([path]), "RL410")
    # exposed 5 ms of a 20 ms capture = 25%; overlap 7/12 = 58%; comm 12 of 19 ms kernel time = 63%
    assert f.message == ("communication exposed 25% of the 20 ms capture (>= 10%): 5 ms of 12 ms communication "
                         "(3 NCCL/collective kernels) ran with no compute kernel beside it (overlap 58%); "
                         "communication is 63% of kernel time")
    assert f.impact_s == pytest.approx(5 * MS) and f.impact_share == pytest.approx(0.25)
    assert "bucket" in f.remedy and "prefetch" in f.remedy


def test_rl410_threshold_from_the_cli(tmp_path, capsys):
    from ridgeline.cli import main

    path = _overlap_trace(tmp_path)
    for value, fires in (("0.25", True), ("0.26", False)):
        with pytest.raises(SystemExit):
            main(["analyze", path, "--format", "json", "--threshold", f"RL410.min_exposed_share={value}"])
        doc = json.loads(capsys.readouterr().out)
        assert any(f["code"] == "RL410" for f in doc["findings"]) is fires


# ------------------------------------------------------------------ ranks: one job
def test_recorded_ranks_make_one_job_and_name_the_straggler(tmp_path):
    files = C.job_folder(tmp_path / "job")
    r = analyze_paths([tmp_path / "job"])
    d = r.timeline.devices.sort("rank")
    assert d.get_column("rank").to_list() == [0, 1, 2, 3]
    assert set(d.get_column("rank_from")) == {"trace"} and set(d.get_column("world_size")) == {4}
    # by construction (4 steps): fast ranks compute 4 x 1 ms and wait 4 x 2.5 ms in the all-reduce;
    # rank 2 computes 4 x 3 ms and spends 4 x 0.5 ms in it
    assert d.get_column("compute_busy_s").to_list() == pytest.approx([4 * MS, 4 * MS, 12 * MS, 4 * MS])
    assert d.get_column("comm_exposed_s").to_list() == pytest.approx([10 * MS, 10 * MS, 2 * MS, 10 * MS])
    (f,) = _codes(r, "RL411")
    assert f.subject == f"rank 2 ({Path(files[2]).name} gpu:0)"
    ev = {e.metric: e.value for e in f.evidence}
    assert ev["compute_busy_s"] == pytest.approx(12 * MS)
    assert ev["others_median_compute_s"] == pytest.approx(4 * MS)
    assert ev["others_median_comm_exposed_s"] == pytest.approx(10 * MS)
    assert ev["comm_exposed_s"] == pytest.approx(2 * MS)
    assert f.impact_s == pytest.approx(8 * MS)  # min(12 - 4 ms excess, 10 ms the others waited)
    assert f.impact_share == pytest.approx(8 / 14.6)  # capture: 4 steps of 3.7 ms less the last 0.2 ms gap
    assert "3.00x the other 3 rank(s)' median 4 ms" in f.message


def test_balanced_job_has_no_straggler(tmp_path):
    C.job_folder(tmp_path / "job", compute_us=(1000, 1000, 1050, 1000))  # 5% above the median: under 10%
    r = analyze_paths([tmp_path / "job"])
    assert not _codes(r, "RL411")
    assert r.timeline.devices.get_column("rank").null_count() == 0


@pytest.mark.parametrize("pattern,how,ranks", [
    ("trace_rank{r}.json", "file name", [0, 1, 2, 3]),
    ("worker-{r}-r{r}.json", "file name", [0, 1, 2, 3]),
    ("host{r}.json", "file order", [0, 1, 2, 3]),
])
def test_ranks_from_file_name_or_order(tmp_path, pattern, how, ranks):
    C.job_folder(tmp_path / "job", recorded=False, names=(pattern,))
    r = analyze_paths([tmp_path / "job"])
    d = r.timeline.devices.sort("source")
    assert d.get_column("rank").to_list() == ranks
    assert set(d.get_column("rank_from")) == {how}
    (f,) = _codes(r, "RL411")
    assert f.subject.startswith("rank 2 ") and f"ranks from {how}" in f.message


def test_file_name_ranks_follow_the_number_not_the_order(tmp_path):
    folder = tmp_path / "job"
    C.job_folder(folder, recorded=False, names=("rank{r}.json",))
    (folder / "rank3.json").rename(folder / "rank10.json")  # sorts before rank2.json by path
    d = analyze_paths([folder]).timeline.devices
    got = dict(zip((Path(s).name for s in d.get_column("source")), d.get_column("rank")))
    assert got == {"rank0.json": 0, "rank1.json": 1, "rank2.json": 2, "rank10.json": 10}


def test_views_show_the_rank_table(tmp_path, capsys):
    from ridgeline.cli import main

    C.job_folder(tmp_path / "job")
    with pytest.raises(SystemExit):
        main(["analyze", str(tmp_path / "job")])
    out = capsys.readouterr().out
    assert "Ranks: one job of 4 ranks; ranks from the traces (distributedInfo.rank)" in out
    # the rank row names its input by number; the input lines above name the files in full
    row = next(line for line in out.splitlines() if line.split()[:1] == ["2"] and "gpu:0" in line)
    num = row.split()[1]
    assert num.startswith("#") and f"{num} rank2.json" in out
    assert row.split()[-1] == "3.00" and "12 ms" in row
    with pytest.raises(SystemExit):
        main(["analyze", str(tmp_path / "job"), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert [x["rank"] for x in doc["timeline"]["ranks"]] == [0, 1, 2, 3]
    assert all("rank" in x and "comm_exposed_s" in x for x in doc["timeline"]["devices"])
    html = tmp_path / "r.html"
    with pytest.raises(SystemExit) as exc:
        main(["report", str(tmp_path / "job"), "-o", str(html)])
    assert exc.value.code in (0, 1, None)
    page = html.read_text()
    assert 'id="ranks"' in page and "rank2.json gpu:0" in page


def test_group_impact_never_exceeds_the_capture(tmp_path, capsys):
    """Findings of one rule over several devices: the group's share is of the devices' summed
    capture, never the sum of per-device shares (the issue's "327% of capture time")."""
    from ridgeline.cli import main

    C.job_folder(tmp_path / "job", gap_us=8000)  # idle on every rank
    with pytest.raises(SystemExit):
        main(["analyze", str(tmp_path / "job"), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    with pytest.raises(SystemExit):
        main(["analyze", str(tmp_path / "job")])
    out = capsys.readouterr().out
    captures = sum(x["capture_s"] for x in doc["timeline"]["devices"])
    for code in ("RL401",):  # every rank idles 3 x 8 ms of a 38 ms capture
        fs = [f for f in doc["findings"] if f["code"] == code]
        assert len(fs) == 4 and all(f["impact_share"] <= 1 for f in fs)
        m = re.search(rf"^{code} \w+ +4 devices +\[up to [^,]+, ([\d.]+)% of capture time\]", out, re.M)
        assert m, out
        expected = sum(f["impact_s"] for f in fs) / captures
        assert float(m.group(1)) == pytest.approx(100 * expected, abs=0.06) and float(m.group(1)) <= 100


# ------------------------------------------------------------------ real traces, ground truth from the events
COMM_RE = re.compile(r"(?i)nccl|all_?reduce|cross_device_reduce|all_?gather|reduce_?scatter")


def _union(iv):
    out, cur_s, cur_e = [], None, None
    for s, e in sorted(iv):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                out.append((cur_s, cur_e))
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        out.append((cur_s, cur_e))
    return out


def _truth(kernels):
    """(comm busy, comm exposed) in ns from (name, start, end) triples: a plain sweep."""
    comm = _union([(s, e) for n, s, e in kernels if COMM_RE.search(n)])
    comp = _union([(s, e) for n, s, e in kernels if not COMM_RE.search(n)])
    busy = sum(e - s for s, e in comm)
    hidden = 0
    for cs, ce in comm:
        for ks, ke in comp:
            hidden += max(0, min(ce, ke) - max(cs, ks))
    return busy, busy - hidden


KINETO = sorted(SHARED.glob("kineto/*.json*")) if SHARED.is_dir() else []
SQLITE = sorted(SHARED.glob("nsys/*.sqlite")) if SHARED.is_dir() else []


@pytest.mark.parametrize("path", KINETO, ids=[p.name[:40] for p in KINETO])
def test_real_kineto_traces_against_their_events(path):
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as fh:
        doc = json.loads(fh.read(), parse_float=Decimal)  # exact: the text's microseconds with ns decimals
    kernels = [(e["name"], int(round(e["ts"] * 1000)), int(round((e["ts"] + e["dur"]) * 1000)))
               for e in doc["traceEvents"] if e.get("cat") == "kernel" and e.get("ph") == "X"]
    r = analyze_paths([path])
    d = r.timeline.devices
    info = doc.get("distributedInfo") or {}
    for row in d.iter_rows(named=True):
        assert row["comm_exposed_s"] <= row["comm_busy_s"] <= row["kernel_busy_s"] <= row["busy_s"]
        assert row["rank"] == info.get("rank") and row["world_size"] == info.get("world_size")
    if not kernels:
        return
    assert d.height == 1  # each of these traces is one rank's single GPU
    busy, exposed = _truth(kernels)
    row = d.row(0, named=True)
    assert row["comm_kernels"] == sum(1 for n, _s, _e in kernels if COMM_RE.search(n))
    # a reader that keeps float64 epoch microseconds is off by up to a quarter microsecond per
    # interval end (issue 22 item 6); one that keeps the text's nanoseconds is exact
    n = row["comm_kernels"]
    assert row["comm_busy_s"] == pytest.approx(busy / 1e9, abs=0.5e-6 * n + 1e-12)
    assert row["comm_exposed_s"] == pytest.approx(exposed / 1e9, abs=1e-6 * n + 1e-12)
    assert row["comm_overlap_share"] == (None if not busy else pytest.approx(1 - exposed / busy, abs=1e-3))


@pytest.mark.parametrize("path", SQLITE, ids=[p.name[:40] for p in SQLITE])
def test_real_nsys_exports_against_their_kernel_table(path):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT k.deviceId, s.value, k.start, k.end FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                           "JOIN StringIds s ON s.id = COALESCE(k.demangledName, k.shortName)").fetchall()
    finally:
        con.close()
    d = analyze_paths([path]).timeline.devices
    for row in d.iter_rows(named=True):
        assert row["comm_exposed_s"] <= row["comm_busy_s"] <= row["kernel_busy_s"] <= row["busy_s"]
        busy, exposed = _truth([(n, s, e) for dev, n, s, e in rows if dev == row["device"]])
        assert row["comm_busy_s"] == pytest.approx(busy / 1e9, rel=1e-9, abs=1e-12)
        assert row["comm_exposed_s"] == pytest.approx(exposed / 1e9, rel=1e-9, abs=1e-12)


def test_exposed_communication_keeps_its_own_saving_beside_idle(tmp_path):
    """Exposed communication is busy time and idle is not: RL410's impact is not counted under RL401."""
    ev = [C.kernel(C.GEMM, 0, 2_000), C.kernel(C.NCCL, 2_000, 3_000, 20), C.kernel(C.GEMM, 20_000, 1_000)]
    r = analyze_paths([C.write(tmp_path / "both.json", C.trace(ev))])
    (idle,) = _codes(r, "RL401")
    (comm,) = _codes(r, "RL410")
    assert idle.impact_s == pytest.approx(15 * MS) and comm.impact_s == pytest.approx(3 * MS)
    assert idle.impact_share + comm.impact_share <= 1


# ------------------------------------------------------------------ ranks from an nsys export's environment
@pytest.mark.parametrize("env,system_env,rank,world,var", [
    ({"RANK": "2", "WORLD_SIZE": "4", "SLURM_PROCID": "0"}, None, 2, 4, "RANK"),  # torchrun's before srun's
    ({"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "4"}, None, 3, 4, "OMPI_COMM_WORLD_RANK"),
    ({}, "HOME=/root;PMI_RANK=1;PMI_SIZE=2", 1, 2, "PMI_RANK"),  # older exports: nsys's own environment
    ({"HOME": "/root"}, None, None, None, None),
    ({"RANK": "abc"}, None, None, None, None),
])
def test_nsys_rank_from_the_environment(tmp_path, env, system_env, rank, world, var):
    from ridgeline.parsers.timeline.reader import read_timeline

    path = C.nsys_rank_export(tmp_path / "r.sqlite", [C.kernel(C.GEMM, 0, 10)], env, system_env=system_env)
    t = read_timeline(path)
    assert (t.rank, t.world_size) == (rank, world)
    assert t.rank_from == ("environment" if var else None)
    assert any(f"({var})" in n for n in t.notes) is bool(var)


def test_per_rank_nsys_exports_are_one_job(tmp_path):
    folder = tmp_path / "job"
    folder.mkdir()
    compute = [1000, 1000, 3000, 1000]
    for r in (3, 1, 0, 2):  # names say nothing; the environment does
        C.nsys_rank_export(folder / f"node{'abcd'[3 - r]}.sqlite", C.rank_events(compute, 500, 4, 200, r),
                           {"RANK": str(r), "WORLD_SIZE": "4"})
    res = analyze_paths([folder])
    d = res.timeline.devices
    assert set(d.get_column("rank_from")) == {"environment"} and sorted(d.get_column("rank")) == [0, 1, 2, 3]
    (f,) = _codes(res, "RL411")
    assert f.subject.startswith("rank 2 (")
    assert {e.metric: e.value for e in f.evidence}["compute_busy_s"] == pytest.approx(12 * MS)


def test_real_nsys_ranks_from_the_environment():
    from ridgeline.parsers.timeline.reader import read_timeline

    saxpy = SHARED / "nsys" / "pipit-a100-nsys2022.2.1-saxpy-mpi.sqlite"
    clover = SHARED / "nsys" / "pipit-a100x4-nsys2024.5.1-cloverleaf.sqlite"
    if not saxpy.is_file() or not clover.is_file():
        pytest.skip("../shared/samples/nsys is absent")
    # the MPI SAXPY run under srun: PMI_RANK=0, PMI_SIZE=2 in nsys's environment (2022 export)
    t = read_timeline(saxpy)
    assert (t.rank, t.world_size, t.rank_from) == (0, 2, "environment")
    # CloverLeaf, one process driving 4 GPUs: rank 0 of 1 on every device, which is no job of ranks
    r = analyze_paths([clover])
    assert set(r.timeline.devices.get_column("rank")) == {0}
    from ridgeline.analyzer.timeline.ranks import rank_table

    assert rank_table(r.timeline.devices) is None


@pytest.mark.parametrize("info,rank,world", [
    ({"rank": 5, "world_size": 8}, 5, 8),
    ({"rank": "5", "world_size": 8}, None, 8),  # a rank that is not an integer names none
    ({"rank": -1, "world_size": 0}, None, None),
    ({"rank": True}, None, None),
    ("nccl", None, None),  # not an object
])
def test_odd_distributed_info_names_no_rank(tmp_path, info, rank, world):
    from ridgeline.parsers.timeline.reader import read_timeline

    doc = C.trace([C.kernel(C.GEMM, 0, 10)])
    doc["distributedInfo"] = info
    t = read_timeline(C.write(tmp_path / "t.json", doc))
    assert (t.rank, t.world_size) == (rank, world)
    assert t.rank_from == ("trace" if rank is not None else None)


def test_views_show_communication_per_device(tmp_path, capsys):
    from ridgeline.cli import main

    path = _overlap_trace(tmp_path)
    with pytest.raises(SystemExit):
        main(["analyze", path])
    out = capsys.readouterr().out.splitlines()
    i = out.index("Communication per device (docs/timeline.md)")
    # 3 kernels, 12 ms of communication, 5 ms exposed, 7/12 = 58% hidden, 12 of 19 ms kernel time = 63%
    assert out[i + 2].split() == ["gpu:0", "3", "12", "ms", "5", "ms", "58%", "63%"]
    with pytest.raises(SystemExit):
        main(["report", path, "--format", "markdown"])
    md = capsys.readouterr().out
    assert "| gpu:0 | 3 | 12 ms | 5 ms | 58.3% |" in md.replace("overlap.json ", "")
    html = tmp_path / "r.html"
    with pytest.raises(SystemExit):
        main(["report", path, "-o", str(html)])
    assert 'id="communication"' in html.read_text()


def test_two_ranks_of_a_128_rank_job_are_said_as_such_and_name_no_straggler(tmp_path, capsys):
    """Issue 32 item 5: two traces recording world_size 128 are "2 of 128 ranks", in every view,
    and two ranks are too few for a straggler verdict (RL411 min_ranks)."""
    from ridgeline.cli import main
    from ridgeline.render.markdown import render_markdown

    folder = tmp_path / "job"
    folder.mkdir()
    for r in (0, 1):
        C.write(folder / f"hta-128rank-trace-rank{r}.json", C.trace(C.rank_events([1000, 3000], 500, 4, 200, r), r, 128))
    res = analyze_paths([folder])
    assert not _codes(res, "RL411")
    assert res.timeline.devices.get_column("world_size").to_list() == [128, 128]
    with pytest.raises(SystemExit):
        main(["analyze", str(folder)])
    out = capsys.readouterr().out
    assert "Ranks: 2 of 128 ranks of one job (world size 128 recorded by the traces)" in " ".join(out.split())
    assert "one job of 2 ranks" not in out
    # the devices RL410 groups are named whole (a cut name read hta-128r~hta128...~0)
    assert "RL410" in out and "~" not in out
    assert all(f"hta-128rank-trace-rank{r}.json gpu:0" in out for r in (0, 1))
    assert "2 of 128 ranks of one job" in render_markdown(res)
    from view_consistency import views_of

    doc, texts = views_of(res, [folder], tmp_path)
    assert [r["world_size"] for r in doc["timeline"]["ranks"]] == [128, 128]
    assert all("2 of 128 ranks of one job" in " ".join(texts[v].split()) for v in ("terminal", "markdown", "html")), \
        list(texts)
