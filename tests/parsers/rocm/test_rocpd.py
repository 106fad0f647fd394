"""rocprofv3's rocpd SQLite database is read through its documented views (issue 33): a small
database is generated here with rocpd's view names and columns (``kernels``, ``memory_copies``,
``rocpd_info_agent``) over tables named as rocpd names them (uuid-suffixed), so a reader that
went to the tables by name would find nothing; the real MI300X sample is checked against its
MANIFEST (151 kernel dispatches, the agent's product name)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from ridgeline.errors import InputError
from ridgeline.parsers.timeline.reader import detect_timeline_format, read_timeline

SAMPLE = Path(__file__).resolve().parents[3].parent / "shared" / "samples" / "rocm" / \
    "hgliu-mi300x-rocprofv3-rocpd-ck_bmm-28_results.db"
UUID = "_00003fdc92cb72cb9169c7e541b1fcdf"


def _make(path: Path, *, kernels: int = 5, bad_end: bool = False) -> Path:
    con = sqlite3.connect(path)
    con.executescript(f"""
        CREATE TABLE rocpd_kernel_dispatch{UUID} (id INTEGER, pid INTEGER, agent_type TEXT, agent_type_index INTEGER,
            stream_id INTEGER, queue_id INTEGER, start INTEGER, "end" INTEGER, name TEXT, corr_id INTEGER,
            grid_x INTEGER, grid_y INTEGER, grid_z INTEGER, workgroup_x INTEGER, workgroup_y INTEGER, workgroup_z INTEGER);
        CREATE TABLE rocpd_memory_copy{UUID} (id INTEGER, pid INTEGER, stream_id INTEGER, start INTEGER, "end" INTEGER,
            size INTEGER, src_agent_type TEXT, dst_agent_type TEXT, src_agent_type_index INTEGER,
            dst_agent_type_index INTEGER, corr_id INTEGER);
        CREATE TABLE rocpd_info_agent{UUID} (id INTEGER, type TEXT, type_index INTEGER, name TEXT, product_name TEXT,
            extdata TEXT);
        CREATE TABLE rocpd_region{UUID} (id INTEGER, category TEXT, name TEXT, pid INTEGER, tid INTEGER,
            start INTEGER, "end" INTEGER, corr_id INTEGER);
        CREATE VIEW regions AS SELECT * FROM rocpd_region{UUID};
        CREATE VIEW kernels AS SELECT * FROM rocpd_kernel_dispatch{UUID};
        CREATE VIEW memory_copies AS SELECT * FROM rocpd_memory_copy{UUID};
        CREATE VIEW rocpd_info_agent AS SELECT * FROM rocpd_info_agent{UUID};
    """)
    t0 = 1071423114883652
    for i in range(kernels):
        end = t0 + 1000 * i - 5 if bad_end and i == 2 else t0 + 1000 * i + 400
        con.execute(f"INSERT INTO rocpd_kernel_dispatch{UUID} VALUES (?,28,'GPU',0,0,16,?,?,?,?,77824,1,1,256,1,1)",
                    (i + 1, t0 + 1000 * i, end, "kentry<64>(int) [clone .kd]" if i else "__amd_rocclr_fillBufferAligned",
                     i))
    for i in range(kernels):
        con.execute(f"INSERT INTO rocpd_region{UUID} VALUES (?,'HIP_RUNTIME_API_EXT','hipLaunchKernel',28,28,?,?,?)",
                    (i + 1, t0 + 1000 * i - 300, t0 + 1000 * i - 200, i))
    con.execute(f"INSERT INTO rocpd_region{UUID} VALUES (99,'HIP_COMPILER_API_EXT','__hipRegisterFunction',28,28,1,2,0)")
    con.execute(f"INSERT INTO rocpd_region{UUID} VALUES (98,'HIP_RUNTIME_API','hipDeviceSynchronize',28,28,?,?,77)",
                (t0 + 5000, t0 + 90_000))
    con.execute(f"INSERT INTO rocpd_memory_copy{UUID} VALUES (1,28,0,?,?,4096,'CPU','GPU',0,0,99)",
                (t0 + 100_000, t0 + 102_000))
    ext = json.dumps({"cu_count": 304, "wave_front_size": 64})
    con.execute(f"INSERT INTO rocpd_info_agent{UUID} VALUES (0,'CPU',0,'Xeon','Xeon','{{}}')")
    con.execute(f"INSERT INTO rocpd_info_agent{UUID} VALUES (2,'GPU',0,'gfx942','AMD Instinct MI300X',?)", (ext,))
    con.commit()
    con.close()
    return path


def test_a_rocpd_database_is_read_through_its_views(tmp_path):
    t0 = 1071423114883652
    path = _make(tmp_path / "run_results.db")
    assert detect_timeline_format(path) == "rocpd"
    tl = read_timeline(path)
    acts = tl.activities
    assert tl.vendor == "amd" and tl.devices == {0: "AMD Instinct MI300X"}
    assert tl.device_properties[0] == {"unit_count": 304, "warp_size": 64, "gfx": "gfx942"}
    kernels = acts.filter(acts.get_column("kind") == "kernel")
    assert kernels.height == 5 and (kernels.get_column("end_ns") - kernels.get_column("start_ns")).sum() == 5 * 400
    assert "kentry<64>(int)" in set(kernels.get_column("name"))  # the .kd clone suffix removed
    assert kernels.get_column("grid_size")[0] == "(304, 1, 1)"  # 77,824 work-items / 256
    assert kernels.sort("start_ns").get_column("launch_ns").to_list() == [t0 + 1000 * i - 300 for i in range(5)]
    assert tl.host_calls_total == 6 and "hipDeviceSynchronize" in set(tl.api.get_column("name"))  # compiler API left out
    copy = acts.filter(acts.get_column("kind") == "memcpy").row(0, named=True)
    assert copy["copy_kind"] == "HtoD" and copy["bytes"] == 4096


def test_a_damaged_dispatch_is_named_by_view_and_id(tmp_path):
    path = _make(tmp_path / "bad.db", bad_end=True)
    with pytest.raises(InputError) as err:
        read_timeline(path)
    assert "kernels id 3" in str(err.value) and "end before start" in str(err.value)
    assert read_timeline(path, strict=False).activities.height == 5  # 4 kernels + the copy


@pytest.mark.skipif(not SAMPLE.is_file(), reason="../shared/samples/rocm is absent")
def test_the_mi300x_sample_reads_its_151_dispatches_on_a_named_gpu():
    tl = read_timeline(SAMPLE)
    acts = tl.activities
    assert acts.filter(acts.get_column("kind") == "kernel").height == 151
    assert set(acts.get_column("device_name")) == {"AMD Instinct MI300X"}
    assert tl.host_calls_total == 325 and acts.get_column("launch_ns").null_count() == 0  # each its hipLaunchKernel
