"""Wiring of ``ridgeline telemetry --by ... --jobs FILE``: reads the jobs file, takes the label runs
from the long table where the inputs carry labels, and builds the group report
(:mod:`ridgeline.analyzer.fleet.groups`). Sits beside :mod:`ridgeline.pipeline` (it calls a parser and
the analyzer, which may not call each other)."""

from __future__ import annotations

from ridgeline.result import path_label

# input kinds whose readers keep the series' workload labels (the ``labels`` column)
LABELLED_KINDS = frozenset({"dcgm-exporter", "prometheus-json", "prometheus-api"})
# tables that keep them when they have a ``labels`` column (a store saved with its labels,
# ridgeline.sources.store; a store written before labels were kept has none)
TABLE_KINDS = frozenset({"telemetry-parquet", "telemetry-csv"})


def carries_labels(info) -> bool:
    """Whether an input's rows carry workload labels (by kind; a table by its ``labels`` column)."""
    if info.kind in LABELLED_KINDS:
        return True
    if info.kind in TABLE_KINDS:
        from ridgeline.parsers.telemetry.table import carries_labels as table_has_labels

        return table_has_labels(info.path)
    return False


def unlabelled_note(inputs, dims, labelled) -> str | None:
    """One note naming the tables (stores) without labels among inputs of which others have them
    (``labelled``: :func:`carries_labels` of each input), when a ``--by`` dimension asks for a
    label (None otherwise)."""
    label_dims = [d.name for d in dims if d.source == "label"]
    tables = [i.path for i, has in zip(inputs, labelled) if i.kind in TABLE_KINDS and not has]
    if not label_dims or not tables:
        return None
    nouns = ", ".join(f"(no {d.split('=', 1)[-1]})" for d in label_dims)
    return (f"{', '.join(tables[:3])}{', ...' if len(tables) > 3 else ''}: keeps no workload labels (a store written "
            f"before ridgeline kept them, or from telemetry without any): its GPUs are in {nouns}")


def check_by(by, jobs_path) -> None:
    """UsageError for a bad ``--by``, InputError for a ``--jobs`` file that is not there (before
    any telemetry is read)."""
    if jobs_path:
        from pathlib import Path

        if not Path(jobs_path).is_file():
            from ridgeline.errors import InputError

            raise InputError(jobs_path, "expected a file of sacct --parsable2 output (--jobs)",
                             actual="no such file" if not Path(jobs_path).exists() else "not a regular file")
    if by:
        from ridgeline.analyzer.fleet.groups import parse_by

        parse_by(by, have_jobs=bool(jobs_path))


def telemetry_groups(lf, inputs, windows, *, by=(), jobs_path=None, tz=None, notes: list[str] | None = None,
                     skipped: list | None = None):
    """The :class:`~ridgeline.analyzer.fleet.groups.GroupReport` of ``--by`` / ``--jobs``, or None when
    neither was given. ``notes`` and ``skipped`` receive the jobs file's notes and the jobs that
    never started; the report's own notes are added to ``notes`` too."""
    if not by and not jobs_path:
        return None
    from ridgeline.analyzer.fleet.groups import group_report, parse_by

    dims = parse_by(by or (["job"] if jobs_path else []), have_jobs=bool(jobs_path))  # bad --by before reading
    jobs = None
    if jobs_path:
        from ridgeline.parsers.telemetry.sacct import read_sacct

        jobs, left_out = read_sacct(jobs_path, tz=tz, notes=notes)
        if skipped is not None:
            skipped.extend(left_out)
    asks_labels = any(d.source == "label" for d in dims)
    # (a table's footers are read only when a dimension asks for labels)
    labelled = [carries_labels(i) if asks_labels else i.kind in LABELLED_KINDS for i in inputs]
    have_labels = any(labelled)
    if have_labels and notes is not None and (note := unlabelled_note(inputs, dims, labelled)) is not None:
        notes.append(note)  # once, naming the stores (the others' GPUs are grouped by their labels)
    runs = None
    if have_labels and any(d.source == "label" for d in dims) and windows is not None and windows.height:
        runs = _runs(lf, inputs, labelled, tz=tz, left_out={s.source for s in skipped or () if s.item == "file"})
    report = group_report(windows, [d.name for d in dims], runs=runs, jobs=jobs, have_labels=have_labels)
    if notes is not None:
        notes.extend(n for n in report.notes if n not in notes)
    return report


def _runs(lf, inputs, labelled, *, tz=None, left_out=frozenset()):
    """The label runs of every input: a Parquet table that keeps labels (a store) file by file
    (:func:`ridgeline.analyzer.fleet.groups.label_runs_in_chunks`: memory bounded by one file, not
    the store's long table; ``left_out``: the files the reader skipped, corrupt ones), the others
    from the long table, whole (:func:`label_runs`)."""
    import polars as pl

    from ridgeline.analyzer.fleet.groups import label_runs, label_runs_in_chunks

    stores = [i for i, has in zip(inputs, labelled) if i.kind == "telemetry-parquet" and has]
    if not stores:
        return label_runs(lf)
    from ridgeline.parsers.telemetry.reader import Options
    from ridgeline.parsers.telemetry.table import label_chunks

    opts = Options(tz=tz)
    parts = [label_runs_in_chunks(label_chunks(i.path, opts=opts, exclude=left_out)) for i in stores]
    paths = [path_label(i.path) for i in stores]  # as the rows name them
    if any(i not in stores for i in inputs):  # the other inputs' rows: the long table without the stores'
        parts.append(label_runs(lf.filter(~pl.col("source").is_in(paths))))
    return pl.concat(parts, how="vertical_relaxed")
