"""Generated Kineto traces for the communication and rank tests (built in the tests, never
committed): compute kernels and NCCL all-reduce kernels whose overlap is known by construction.

Times are whole microseconds so Kineto's float microseconds are exact in nanoseconds.
"""

from __future__ import annotations

import json

GEMM = "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn"
NCCL = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"


def kernel(name: str, ts: int, dur: int, stream: int = 7, device: int = 0) -> dict:
    return {"ph": "X", "cat": "kernel", "name": name, "pid": device, "tid": stream, "ts": ts, "dur": dur,
            "args": {"device": device, "stream": stream}}


def trace(events: list[dict], rank: int | None = None, world: int | None = None) -> dict:
    doc = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB"}], "traceEvents": events}
    if rank is not None:
        doc["distributedInfo"] = {"backend": "nccl", "rank": rank, "world_size": world}
    return doc


def write(path, doc) -> str:
    path.write_text(json.dumps(doc))
    return str(path)


def rank_events(compute_us: list[int], allreduce_us: int, steps: int, gap_us: int, rank: int,
                delay_us: list[int] | None = None, nccl_args: bool = False) -> list[dict]:
    """One rank of a synchronous data-parallel job: per step, compute (``compute_us[rank]``, starting
    ``delay_us[rank]`` late: a host or data-loader stall) then an all-reduce that starts when this
    rank's compute ends and ends when the last rank's compute ends plus ``allreduce_us`` (NCCL spins
    until every peer arrives); then ``gap_us`` idle. ``nccl_args``: the all-reduce kernels carry
    Kineto's collective args (process group "0", Seq = the step, 1M bf16 elements, the group size)."""
    delay = list(delay_us) if delay_us else [0] * len(compute_us)
    arrive = [d + c for d, c in zip(delay, compute_us)]
    slowest = max(arrive)
    step = slowest + allreduce_us + gap_us
    ev = []
    for i in range(steps):
        t0 = 1000 + i * step
        ev.append(kernel(GEMM, t0 + delay[rank], compute_us[rank]))
        ev.append(kernel(NCCL, t0 + arrive[rank], slowest - arrive[rank] + allreduce_us, stream=20))
        if nccl_args:
            ev[-1]["args"].update({"Collective name": "allreduce", "Process Group Name": "0", "Seq": i,
                                   "In msg nelems": 1 << 20, "Out msg nelems": 1 << 20, "dtype": "BFloat16",
                                   "Group size": len(compute_us), "Process Group Ranks": str(list(range(len(compute_us))))})
    return ev


def job_folder(folder, compute_us=(1000, 1000, 3000, 1000), allreduce_us=500, steps=4, gap_us=200,
               recorded=True, names=("rank{r}.json",), delay_us=None, nccl_args=False) -> list[str]:
    """A folder of per-rank traces (rank 2 the straggler by default); ``recorded``: write
    distributedInfo; ``names``: file name pattern."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    world = len(compute_us)
    for r in range(world):
        doc = trace(rank_events(list(compute_us), allreduce_us, steps, gap_us, r, delay_us, nccl_args), r if recorded else None, world)
        out.append(write(folder / names[0].format(r=r), doc))
    return out


def nsys_rank_export(path, events: list[dict], env: dict[str, str] | None = None, *, system_env: str | None = None):
    """A minimal Nsight Systems sqlite export (2024+ schema) of Kineto-style kernel ``events`` (us),
    with the profiled process's environment in META_DATA_CAPTURE (``env``) or, older exports, nsys's
    own in TARGET_INFO_SYSTEM_ENV's DeviceEnvironment (``system_env``: ``;``-separated)."""
    import sqlite3

    con = sqlite3.connect(path)
    c = con.cursor()
    names = sorted({e["name"] for e in events})
    c.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL)")
    c.executemany("INSERT INTO StringIds VALUES (?, ?)", list(enumerate(names, 1)))
    c.execute("CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT)")
    c.execute("INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_VERSION', '2024.5.1.113')")
    c.execute("CREATE TABLE META_DATA_CAPTURE (name TEXT, value TEXT)")
    c.executemany("INSERT INTO META_DATA_CAPTURE VALUES ('PROCESS_0:ENVIRONMENT_VARIABLE', ?)",
                  [(f'{k}="{v}"',) for k, v in (env or {}).items()])
    c.execute("CREATE TABLE TARGET_INFO_SYSTEM_ENV (globalVid INTEGER, devStateName TEXT, name TEXT, nameEnum INTEGER, "
              "value TEXT)")
    if system_env is not None:
        c.execute("INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (0, '', 'DeviceEnvironment', 0, ?)", (system_env,))
    c.execute("""CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,
                 contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER,
                 shortName INTEGER, mangledName INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER,
                 blockY INTEGER, blockZ INTEGER)""")
    for i, e in enumerate(events):
        nid = names.index(e["name"]) + 1
        c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,?,1,?,?,?,?,?,?,64,1,1,256,1,1)",
                  (e["ts"] * 1000, (e["ts"] + e["dur"]) * 1000, e["args"]["device"], e["args"]["stream"], i,
                   4242 * 16777216, nid, nid, nid))
    con.commit()
    con.close()
    return str(path)
