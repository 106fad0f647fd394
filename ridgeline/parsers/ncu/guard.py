"""The ncu readers' boundary: the launch table they return is checked, a library's error on a
file's behalf is translated (the same guarantees as :mod:`ridgeline.parsers.guard` gives the
telemetry readers, for the KERNEL table).

* :func:`read_ncu_checked` calls an ncu reader (CSV or ``.ncu-rep``), names the file whose
  content made a library fail, and passes the launches to :func:`check_kernels`.
* :func:`check_kernels`: a grid or block that is not three whole numbers, a launch ID that did
  not fit (null where the export had one): InputError, or skipped launches under ``--lenient``.
"""

from __future__ import annotations

from typing import Callable

from ridgeline.errors import InputError, RidgelineError
from ridgeline.parsers.guard import collect_guarded, library_error, translate

# "(x, y, z)" as ncu writes it, or one whole number (older exports write "256")
_DIM3 = r"^\s*(\d{1,10}|\(\s*\d{1,10}\s*(,\s*\d{1,10}\s*){0,2}\))\s*$"


def check_kernels(kernels, *, strict: bool = True):
    """Launches whose grid/block is not three whole numbers, or whose ID did not fit.

    Strict: InputError naming the file and the launch. Lenient: the launches are dropped and
    returned as Skipped items. Returns ``(kernels, skipped)``.
    """
    import polars as pl

    from ridgeline.result import Skipped

    if kernels is None or not kernels.height:
        return kernels, []
    cols = kernels.columns
    problems = []
    for col, what in (("grid_size", "Grid Size"), ("block_size", "Block Size")):
        if col in cols:
            problems.append((pl.col(col).is_not_null() & ~pl.col(col).str.contains(_DIM3),
                             f"column {what!r}: expected (x, y, z) in whole numbers", col))
    if "id" in cols and "launch_id" in cols:
        problems.append((pl.col("id").is_not_null() & (pl.col("id").cast(pl.String).str.strip_chars() != "")
                         & pl.col("launch_id").is_null(),
                         "column 'ID': expected a launch ID 0..2^63-1", "id"))
    skipped: list[Skipped] = []
    drop = pl.lit(False)
    for cond, text, col in problems:
        bad = kernels.filter(cond)
        if not bad.height:
            continue
        row = bad.row(0, named=True)
        source = row.get("source") or "(ncu export)"
        if strict:
            name = str(row.get("kernel_name"))
            name = name if len(name) <= 60 else name[:57] + "..."
            raise InputError(source, f"{text} (launch of {name!r}; --lenient skips such launches)",
                             actual=row.get(col))
        for r in bad.iter_rows(named=True):
            skipped.append(Skipped(str(r.get("source")), f"launch {r.get('id')} ({str(r.get('kernel_name'))[:60]})",
                                   f"{text}, got {r.get(col)!r}"))
        drop = drop | cond
    if skipped:
        kernels = kernels.filter(~drop)
    return kernels, skipped


def read_ncu_checked(read_ncu: Callable, files, *, strict: bool = True):
    """``read_ncu(files, strict=strict)`` at the boundary: a library's error becomes one
    InputError naming the file that caused it, and the launches pass :func:`check_kernels`.

    Returns ``(parsed, kernels)``; lenient runs add the dropped launches to ``parsed.skipped``.
    """
    files = [str(p) for p in files]
    what = "an Nsight Compute export (CSV or .ncu-rep)"
    try:
        parsed = read_ncu(files, strict=strict)
    except RidgelineError:
        raise
    except Exception as err:  # noqa: BLE001 - find the file; collect_guarded re-raises what is not a library's
        if not library_error(err):
            raise
        for p in files if len(files) > 1 else []:
            collect_guarded(lambda p=p: read_ncu([p], strict=strict), p, what)
        raise translate(err, files[0] if len(files) == 1 else ", ".join(files), what) from None
    kernels, bad = check_kernels(parsed.kernels, strict=strict)
    parsed.skipped.extend(bad)
    return parsed, kernels
