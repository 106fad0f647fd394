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

A rank or world size that is no whole number in range (``RANK=abc``, ``"rank": -1``,
``"rank": "3"``, ``3.5``, ``true``, a rank at or past the world size, a world size of 0) is
never taken, and never dropped silently: a note names the file, the key and the value
(:func:`checked_rank` for a trace's ``distributedInfo``, :func:`nsys_rank` for an environment).
"""

from __future__ import annotations

import re

RANK_VARS = ("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK", "SLURM_PROCID")
SIZE_VARS = ("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE", "SLURM_NTASKS")
_PAIR = re.compile(r'^\s*([A-Za-z_][A-Za-z0-9_]*)="?([^"]*)"?\s*$')


MAX_RANK = 9_999_999  # ranks and world sizes have at most 7 digits


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def checked_rank(info, path, notes: list[str]) -> tuple[int | None, int | None]:
    """(rank, world size) of a trace's ``distributedInfo`` (None: not recorded, or not usable:
    then a note in ``notes`` names the file, the key and the value)."""
    if info is None:
        return None, None
    if not isinstance(info, dict):
        notes.append(f"{path}: distributedInfo {_shown(info)} is no object with rank and world_size; "
                     "the trace's rank is left unknown")
        return None, None

    def whole(key, low):
        v = info.get(key)
        if v is None:
            return None, None
        if isinstance(v, int) and not isinstance(v, bool) and low <= v <= MAX_RANK:
            return v, None
        return None, f"distributedInfo.{key} {_shown(v)} is no {key.replace('_', ' ')} (expected a whole number " \
                     f"{low}..{MAX_RANK})"

    rank, bad_rank = whole("rank", 0)
    world, bad_world = whole("world_size", 1)
    if rank is not None and world is not None and rank >= world:
        bad_rank, rank = f"distributedInfo.rank {rank} is not below its world_size {world}", None
    for bad in (bad_rank, bad_world):
        if bad:
            notes.append(f"{path}: {bad}; " + ("the trace's rank is left unknown" if bad is bad_rank
                                               else "the job's size is left unknown"))
    return rank, world


def _small_int(text: str | None) -> int | None:
    if text is None or not re.fullmatch(r"[0-9]{1,7}", text.strip()):  # (not str.isdigit: '³' is a digit to it)
        return None
    return int(text.strip())


def rank_of(env: dict[str, str], bad: list[str] | None = None) -> tuple[int | None, int | None, str | None]:
    """(rank, world size, the variable the rank came from) of one environment; ``bad`` receives
    each rank or size variable set to no usable value (``RANK='abc'``, a rank past the size)."""
    bad = [] if bad is None else bad
    for var in RANK_VARS:
        if env.get(var) is None:
            continue
        rank = _small_int(env.get(var))
        if rank is None:
            bad.append(f"{var}={_shown(env.get(var))} is no rank")
            continue
        world, size_var = None, None
        for v in SIZE_VARS:
            if env.get(v) is None:
                continue
            world = _small_int(env.get(v))
            if world is None or world < 1:
                bad.append(f"{v}={_shown(env.get(v))} is no world size")
                world = None
                continue
            size_var = v
            break
        if world is not None and world <= rank:
            bad.append(f"{var}={rank} is not below {size_var}={world}")
            return None, None, None
        return rank, world, var
    return None, None, None


def _decode(v) -> str:
    return v.decode("utf-8", "replace") if isinstance(v, (bytes, bytearray)) else str(v or "")


def nsys_rank(con, tables: set[str], *, path=None, notes: list[str] | None = None) -> tuple[int | None, int | None, str | None]:
    """(rank, world size, variable) from an nsys sqlite export, or (None, None, None) (also when
    these optional tables are damaged: the rank is a label, not a measurement). ``notes``
    receives one line naming each rank or size variable whose value is not usable."""
    import sqlite3

    bad: list[str] = []
    try:
        found = _nsys_rank(con, tables, bad)
    except sqlite3.Error:
        return None, None, None
    if notes is not None and bad:
        notes.append(f"{path}: the profiled environment's {', '.join(dict.fromkeys(bad))}; "
                     + ("the rank comes from " + found[2] if found[0] is not None else "the rank is left unknown"))
    return found


def _nsys_rank(con, tables: set[str], bad: list[str]) -> tuple[int | None, int | None, str | None]:
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
    found = {rank_of(env, bad) for env in envs.values()} - {(None, None, None)}
    if len({r for r, _w, _v in found}) != 1:
        return None, None, None
    return sorted(found, key=lambda t: RANK_VARS.index(t[2]))[0]
