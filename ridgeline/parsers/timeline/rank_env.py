"""The distributed rank an Nsight Systems export records: the profiled process's environment.

nsys keeps the launched process's environment in ``META_DATA_CAPTURE`` (rows
``PROCESS_<n>:ENVIRONMENT_VARIABLE`` whose value is ``NAME="value"``, nsys 2023+), and the
environment nsys itself ran in in ``TARGET_INFO_SYSTEM_ENV`` (``DeviceEnvironment``: ``;`` or NUL
separated ``NAME=value``; older exports). A launcher puts the rank there: ``torchrun`` sets
``RANK``/``WORLD_SIZE``, Open MPI ``OMPI_COMM_WORLD_RANK``/``_SIZE``, MPICH and Cray PALS
``PMI_RANK``/``PMI_SIZE``, PMIx ``PMIX_RANK``, MVAPICH ``MV2_COMM_WORLD_RANK``, Slurm's ``srun``
``SLURM_PROCID``/``SLURM_NTASKS``. The first of :data:`RANK_VARS` present wins (the framework's
own rank before the launcher's). Processes of one capture that disagree give no rank (one
capture of several ranks: numbering its devices would be invented).
"""

from __future__ import annotations

import re

RANK_VARS = ("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK", "SLURM_PROCID")
SIZE_VARS = ("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE", "SLURM_NTASKS")
_PAIR = re.compile(r'^\s*([A-Za-z_][A-Za-z0-9_]*)="?([^"]*)"?\s*$')


def _small_int(text: str | None) -> int | None:
    if text is None or not text.strip().isdigit() or len(text.strip()) > 7:
        return None
    return int(text.strip())


def rank_of(env: dict[str, str]) -> tuple[int | None, int | None, str | None]:
    """(rank, world size, the variable the rank came from) of one environment."""
    for var in RANK_VARS:
        rank = _small_int(env.get(var))
        if rank is not None:
            world = next((w for w in (_small_int(env.get(v)) for v in SIZE_VARS) if w is not None), None)
            return rank, (world if world and world > rank else None), var
    return None, None, None


def _decode(v) -> str:
    return v.decode("utf-8", "replace") if isinstance(v, (bytes, bytearray)) else str(v or "")


def nsys_rank(con, tables: set[str]) -> tuple[int | None, int | None, str | None]:
    """(rank, world size, variable) from an nsys sqlite export, or (None, None, None) (also when
    these optional tables are damaged: the rank is a label, not a measurement)."""
    import sqlite3

    try:
        return _nsys_rank(con, tables)
    except sqlite3.Error:
        return None, None, None


def _nsys_rank(con, tables: set[str]) -> tuple[int | None, int | None, str | None]:
    envs: dict[str, dict[str, str]] = {}
    if "META_DATA_CAPTURE" in tables:
        rows = con.execute("SELECT CAST(name AS BLOB), CAST(value AS BLOB) FROM META_DATA_CAPTURE "
                           "WHERE name LIKE 'PROCESS_%:ENVIRONMENT_VARIABLE'").fetchall()
        for name, value in rows:
            m = _PAIR.match(_decode(value))
            if m:
                envs.setdefault(_decode(name).split(":", 1)[0], {})[m.group(1)] = m.group(2)
    if not envs and "TARGET_INFO_SYSTEM_ENV" in tables:
        rows = con.execute("SELECT CAST(value AS BLOB) FROM TARGET_INFO_SYSTEM_ENV "
                           "WHERE name = 'DeviceEnvironment'").fetchall()
        for (value,) in rows[:1]:
            env = {}
            for item in re.split(r"[;\x00]", _decode(value)):
                k, sep, v = item.partition("=")
                if sep and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k):
                    env[k] = v
            envs["system"] = env
    found = {rank_of(env) for env in envs.values()} - {(None, None, None)}
    if len({r for r, _w, _v in found}) != 1:
        return None, None, None
    return sorted(found, key=lambda t: RANK_VARS.index(t[2]))[0]
