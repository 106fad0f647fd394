"""Nsight Compute reports (``.ncu-rep``) -> the KERNEL table, without the ncu binary.

Read with NVIDIA's ``ncu_report`` module (PyPI ``ncu-report``, proprietary licence, manylinux
x86_64 and Windows wheels; no GPU needed), installed by the optional extra
``pip install "ridgeline[ncu-rep]"``. Without it a report is refused in one line that names
the extra and the CSV export to use instead.

One report gives exactly the KERNEL table the same data gives through ncu's raw CSV page:
every launch (every action of every range, in order) becomes one row of a raw-page-shaped
frame of strings (identity columns ``ID``, ``Kernel Name``, ``Context``, ``Stream``,
``Block Size``, ``Grid Size``, ``Device``, ``CC``; a units row first; metric values written
at full precision, ``repr`` of the double), which goes through
:func:`ridgeline.parsers.ncu.csv_reader.kernels_from_raw_frame`, the raw CSV path's own derivation. So
the FLOP/byte recipes, measured peaks, their provenance and the notes about missing counters
exist once. Decisions:

* ``ID`` numbers the launches 0, 1, ... across ranges in report order (ncu's raw page does the
  same); the metrics table (``NcuResult.metrics``) has ``range`` and ``nvtx`` columns besides
  every scalar metric (``nvtx``: the launch's NVTX push/pop ranges, outermost first, ``" > "``
  between them, per domain ``domain:range``; null when the report recorded no NVTX state).
* ``Kernel Name`` is the demangled name, what ncu's CSV pages print by default.
* Metrics with instance values keep their aggregate (the value ncu prints on the raw page).
* ncu's own rule results (``rule_results_as_dicts``) are returned as a separate NCU_RULES
  table (:data:`ridgeline.analyzer.schema.NCU_RULE_COLUMNS`), never turned into findings.
* A file with the report magic that holds no range or no action (the reader loads truncated
  and corrupt files as empty reports) is an InputError: "truncated or corrupt".
* **Completeness.** The reader loads a report cut in the middle as a smaller report (the
  launches before the cut, sometimes half of the launch at the cut). So the file's block layout
  is walked first (:mod:`ridgeline.parsers.ncu.rep_layout`: every block header names its
  payload size and its number of results) and compared with what the reader returns. A file
  whose blocks do not end at its end, or whose reader returns another number of launches than
  its whole blocks promise, is damaged. Strict: an InputError naming the byte where the layout
  breaks. Lenient: the launches of the whole blocks are read, a launch from the cut block (or
  after the break) is left out (its data may be partial), and each launch the layout promises but the reader did not
  give is listed in ``skipped`` ("the rest of the file is missing" when the cut hides how many).
  A layout version the walk was not checked on is read as before, with a note that completeness
  was not checked.
* **Damaged launch data.** The reader parses a launch when it is fetched; data it cannot parse
  (a flipped byte) is logged on file descriptor 2 and the launch comes back without metrics,
  which would read as "ncu could not measure this launch". That log is captured per launch
  (:class:`_ReaderMessages`, so it never reaches the terminal either): strict, an InputError
  naming the launch and what the reader could not parse; lenient, the launch skipped and listed.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

from ridgeline.errors import InputError
from ridgeline.parsers.ncu import metrics as V
from ridgeline.result import InputInfo, Skipped, path_label

MAGIC = b"NVR\x00"
EXTRA = "ridgeline[ncu-rep]"

_MSG_TYPES = {0: "none", 1: "ok", 2: "optimization", 3: "warning", 4: "error"}
_SPEEDUP_TYPES = {0: "unknown", 1: "local", 2: "global"}


def is_ncu_report(path) -> bool:
    """True when the file starts with the Nsight Compute report magic (``NVR\\0``)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == MAGIC
    except OSError:
        return False


def csv_command(path) -> str:
    p = Path(path)
    return f"ncu --import {p.name} --csv --page raw --print-units base > {p.stem}.csv"


def _module(path):
    try:
        import ncu_report  # noqa: PLC0415 - optional extra, imported only for .ncu-rep inputs
    except Exception as err:  # ImportError, or a wheel that does not load on this platform
        raise InputError(
            path,
            f"reading a .ncu-rep report needs NVIDIA's reader: pip install \"{EXTRA}\" (x86_64 Linux and "
            f"Windows wheels), or export it where ncu is installed: {csv_command(path)}",
        ) from err
    return ncu_report


@dataclasses.dataclass
class _Launch:
    range_index: int
    action: Any
    index: int = 0  # position in the report (the launch's ID)
    damage: str | None = None  # what the reader said when it could not parse this launch's data


class _ReaderMessages:
    """Capture what NVIDIA's reader writes to file descriptor 2 (its C++ log) while it parses.

    The reader parses a launch's data when the action is first fetched; a damaged one is logged
    (``Can't parse message of type "NV.Profiler.Messages.ProfileResult" because it is missing
    required fields: ...``) and returned without its metrics. The log is taken per action, so the
    damaged launch is named, and never reaches the terminal (a one-line error stays one line).
    """

    def __enter__(self):
        import os
        import sys
        import tempfile

        self._tmp = tempfile.TemporaryFile()
        self._pos = 0
        try:
            sys.stderr.flush()
        except Exception:  # noqa: BLE001 - a closed or odd stderr: capture anyway
            pass
        self._saved = os.dup(2)
        os.dup2(self._tmp.fileno(), 2)
        return self

    def take(self) -> str:
        """What was written since the last call, without the logger's own preamble."""
        self._tmp.seek(self._pos)
        data = self._tmp.read()
        self._pos += len(data)
        lines = [ln for ln in data.decode("utf-8", errors="replace").splitlines()
                 if ln.strip() and not ln.startswith("WARNING: All log messages before absl")]
        return "\n".join(lines)

    def __exit__(self, *exc):
        import os

        os.dup2(self._saved, 2)
        os.close(self._saved)
        self._tmp.close()
        return False


def _damage(text: str) -> str | None:
    """The reader's complaint about unparsable data, shortened; None when it said nothing such."""
    for ln in text.splitlines():
        if "Can't parse message" in ln or "can't parse" in ln.lower():
            tail = ln.split("because", 1)[-1].strip() if "because" in ln else ln.split("]", 1)[-1].strip()
            return tail[:160]
    return None


def _value(metric) -> str | None:
    """The value as the raw page would print it; None (ncu prints n/a) when it has none."""
    if not metric.has_value():
        return None
    kind = metric.kind()
    if kind == metric.ValueKind_STRING:
        return metric.as_string()
    if kind in (metric.ValueKind_UINT64, metric.ValueKind_UINT32):
        return str(metric.as_uint64())
    if kind in (metric.ValueKind_DOUBLE, metric.ValueKind_FLOAT):
        v = metric.as_double()
        return None if v is None or (isinstance(v, float) and math.isnan(v)) else repr(float(v))
    return None


def _dims(action, prefix: str) -> str | None:
    vals = []
    for axis in "xyz":
        m = action.metric_by_name(f"{prefix}_{axis}")
        if m is None:
            return None
        vals.append(str(m.as_uint64()))
    return "(" + ", ".join(vals) + ")"


def _nvtx(action) -> str | None:
    """The launch's NVTX ranges: per domain, push/pop ranges (outermost first) then start/end
    ranges, ``domain:range`` (the default domain unnamed), joined by ``" > "``; None without NVTX."""
    try:
        state = action.nvtx_state()
    except Exception:  # noqa: BLE001 - the reader raises on reports without NVTX data
        return None
    if state is None:
        return None
    parts = []
    try:
        for dom_id in state.domains():
            dom = state.domain_by_id(dom_id)
            name = dom.name() or ""
            for r in list(dom.push_pop_ranges()) + list(dom.start_end_ranges()):
                parts.append(f"{name}:{r}" if name else str(r))
    except Exception:  # noqa: BLE001 - an NVTX state the reader cannot walk: no column value
        return None
    return " > ".join(parts) if parts else None


def _identity(launch_id: int, action) -> dict[str, str | None]:
    def num(name):
        m = action.metric_by_name(name)
        return None if m is None else _value(m)

    major, minor = num("device__attribute_compute_capability_major"), num("device__attribute_compute_capability_minor")
    cc = None
    if major is not None and minor is not None:
        cc = f"{int(float(major))}.{int(float(minor))}"
    return {
        "ID": str(launch_id),
        "Kernel Name": action.name(action.NameBase_DEMANGLED),
        "Context": num("launch__context_id"),
        "Stream": num("launch__stream_id"),
        "Block Size": _dims(action, "launch__block_dim"),
        "Grid Size": _dims(action, "launch__grid_dim"),
        "Device": num("launch__device_id"),
        "CC": cc,
    }


def _wanted(name: str) -> bool:
    return V.needed_metric(name)


def _check_layout(path: Path, launches: list, strict: bool, skipped: list[Skipped], notes: list[str],
                  damaged: int = 0) -> list:
    """Compare the launches read with what the file's block layout promises (module docstring)."""
    from ridgeline.parsers.ncu.rep_layout import walk

    try:
        layout = walk(path)
    except OSError as err:
        raise InputError(path, f"cannot read file ({err.strerror or err})") from err
    if not layout.known:
        notes.append(f"{path}: report layout version {layout.version} not checked for completeness "
                     "(ridgeline knows version 7, ncu 2023.1-2026.2); launches read as the reader gives them")
        return launches
    whole = layout.results - damaged  # launches skipped as damaged are already listed
    if layout.problem is None and len(launches) == whole:
        return launches
    if layout.problem is not None:
        what = f"the file is cut or damaged ({layout.problem})"
    else:
        what = f"its blocks promise {whole} launch(es), the reader returned {len(launches)}"
    if strict:
        raise InputError(path, f"expected a whole Nsight Compute report; truncated or corrupt: {what} (--lenient reads the "
                         f"{min(whole, len(launches))} launch(es) of its whole blocks and lists the rest)")
    kept = launches[:whole]
    for la in launches[len(kept):]:
        skipped.append(Skipped(str(path), f"launch {la.index}", "after the point where the damaged report's layout breaks: "
                               "its data may be partial and cannot be checked; skipped"))
    missing = max(0, whole - len(kept)) + max(0, layout.cut_results - max(0, len(launches) - len(kept)))
    for i in range(min(missing, 10_000)):
        skipped.append(Skipped(str(path), f"launch {len(launches) + damaged + i}", "promised by the report's layout, not "
                               "readable (damaged report); skipped"))
    if layout.problem is not None:
        skipped.append(Skipped(str(path), "file", f"{what}: launches after byte {layout.end} are unknown"))
    notes.append(f"{path}: damaged report ({what}); {len(kept)} launch(es) of whole blocks read")
    return kept


def _load(path: Path, strict: bool = True, skipped: list[Skipped] | None = None, notes: list[str] | None = None):
    mod = _module(path)
    skipped = [] if skipped is None else skipped
    notes = [] if notes is None else notes
    launches = []
    with _ReaderMessages() as log:
        try:
            report = mod.load_report(str(path))
        except Exception as err:  # noqa: BLE001 - the reader's own exception types are not public
            from ridgeline.parsers.plain import plain_reason

            raise InputError(path, f"expected a readable Nsight Compute report, got {plain_reason(err)}") from err
        said = log.take()
        if _damage(said):
            if strict:
                raise InputError(path, f"expected a whole Nsight Compute report; truncated or corrupt: the reader "
                                 f"could not parse it ({_damage(said)})")
            skipped.append(Skipped(str(path), "file", f"damaged report: the reader could not parse part of it "
                                   f"({_damage(said)})"))
        elif said:
            notes.append(f"{path}: NVIDIA's reader said: {said[:200]}")
        for ri in range(report.num_ranges()):
            rng = report.range_by_idx(ri)
            for ai in range(rng.num_actions()):
                action = rng.action_by_idx(ai)
                launches.append(_Launch(ri, action, len(launches), _damage(log.take())))
    for launch in launches:
        if launch.damage is None:
            continue
        if strict:
            raise InputError(path, f"expected a whole Nsight Compute report; truncated or corrupt: launch "
                             f"{launch.index} (range {launch.range_index}) is damaged, the reader could not "
                             f"parse its data ({launch.damage}); --lenient skips it")
        skipped.append(Skipped(str(path), f"launch {launch.index}", f"damaged in the report (the reader could "
                               f"not parse its data: {launch.damage}); skipped"))
    damaged = sum(1 for la in launches if la.damage)
    launches = [la for la in launches if la.damage is None]
    launches = _check_layout(path, launches, strict, skipped, notes, damaged=damaged)
    if not launches:
        raise InputError(
            path,
            "expected an Nsight Compute report with at least one profiled launch; the reader found none "
            "(a truncated or corrupt .ncu-rep)",
        )
    return report, launches


def _frame(launches, *, every: bool):
    """Raw-page-shaped frame of strings: units row, then one row per launch."""
    import polars as pl

    rows: list[dict[str, str | None]] = []
    units: dict[str, str] = {}
    for launch in launches:
        a = launch.action
        row = _identity(launch.index, a)
        if every:
            row["range"] = str(launch.range_index)
            row["nvtx"] = _nvtx(a)
        for name in a.metric_names():
            if not every and not _wanted(name):
                continue
            m = a.metric_by_name(name)
            if m is None:
                continue
            row[name] = _value(m)
            if name not in units:
                units[name] = m.unit() or ""
        rows.append(row)
    ident = ["ID", "Kernel Name", "Context", "Stream", "Block Size", "Grid Size", "Device", "CC"]
    extra = ["range", "nvtx"] if every else []
    metric_cols = sorted({k for r in rows for k in r} - set(ident) - set(extra))
    columns = ident + extra + metric_cols
    data = {c: [r.get(c) for r in rows] for c in columns}
    frame = pl.DataFrame(data, schema={c: pl.String for c in columns})
    if every:
        return frame
    units_row = pl.DataFrame({c: [units.get(c) if c in units else None] for c in columns}, schema={c: pl.String for c in columns})
    return pl.concat([units_row, frame], how="vertical")


def _rules(path: Path, launches, kernels, id_prefix: str):
    import polars as pl

    from ridgeline.analyzer.schema import NCU_RULE_COLUMNS, polars_schema

    # by launch_id (the launch's index in the report): launches skipped as failed replays have no row
    by_launch = {lid: (i, s) for lid, i, s in zip(kernels.get_column("launch_id").to_list(),
                                                 kernels.get_column("id").to_list(),
                                                 kernels.get_column("short_name").to_list())}
    out: list[dict[str, Any]] = []
    for launch in launches:
        li = launch.index
        if li not in by_launch:
            continue
        kid, short = by_launch[li]
        try:
            results = launch.action.rule_results_as_dicts()
        except Exception:  # noqa: BLE001 - a report without rule results
            results = []
        for r in results or []:
            msg = r.get("rule_message") or {}
            speed = r.get("speedup_estimation") or {}
            out.append({
                "id": kid,
                "short_name": short,
                "source": path_label(path),
                "rule": r.get("rule_identifier"),
                "rule_name": r.get("name"),
                "section": r.get("section_identifier"),
                "type": _MSG_TYPES.get(msg.get("type"), str(msg.get("type"))),
                "title": msg.get("title") or None,
                "message": msg.get("message") or None,
                "speedup_type": _SPEEDUP_TYPES.get(speed.get("type")) if speed else None,
                "estimated_speedup_pct": float(speed["speedup"]) if speed.get("speedup") is not None else None,
            })
    return pl.DataFrame(out, schema=polars_schema(NCU_RULE_COLUMNS))


def read_ncu_rep(paths, *, strict: bool = True, id_prefixes: list[str] | None = None):
    """Read ``.ncu-rep`` reports -> (:class:`~ridgeline.parsers.ncu.csv_reader.NcuResult`, NCU_RULES table).

    ``id_prefixes``: one per path (default: ``"<index>:"`` when several paths, else none), as
    :func:`ridgeline.parsers.ncu.csv_reader.read_ncu` prefixes launch ids.
    """
    import polars as pl

    from ridgeline.analyzer.schema import KERNEL_COLUMNS, NCU_RULE_COLUMNS, polars_schema
    from ridgeline.parsers.ncu.csv_reader import MetricsTables, NcuResult, kernels_from_raw_frame

    if isinstance(paths, (str, Path)):
        paths = [paths]
    paths = [Path(p) for p in paths]
    if id_prefixes is None:
        id_prefixes = [f"{i}:" if len(paths) > 1 else "" for i in range(len(paths))]
    skipped: list[Skipped] = []
    notes: list[str] = []
    kernels, rules, inputs, units_all = [], [], [], {}
    metrics = MetricsTables()
    for path, prefix in zip(paths, id_prefixes):
        report, launches = _load(path, strict, skipped, notes)
        frame = _frame(launches, every=False)
        k, units = kernels_from_raw_frame(path, frame, strict=strict, skipped=skipped, notes=notes, id_prefix=prefix)
        kernels.append(k)
        units_all[str(path)] = units
        rules.append(_rules(path, launches, k, prefix))
        inputs.append(InputInfo(str(path), "ncu-rep", k.height))

        def every(launches=launches, prefix=prefix, report=report):  # the report keeps its actions alive
            f = _frame(launches, every=True)
            return f.with_columns((pl.lit(prefix) + pl.col("ID")).alias("id")).select("id", pl.exclude("id"))

        metrics.defer(str(path), every)
    table = pl.concat(kernels, how="vertical") if kernels else pl.DataFrame(schema=polars_schema(KERNEL_COLUMNS))
    rule_table = pl.concat(rules, how="vertical") if rules else pl.DataFrame(schema=polars_schema(NCU_RULE_COLUMNS))
    return NcuResult(kernels=table, metrics=metrics, skipped=skipped, inputs=inputs, units=units_all, notes=notes), rule_table
