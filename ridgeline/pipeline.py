"""inputs -> parsers -> classifier -> telemetry reduction -> rules -> AnalysisResult.

:func:`analyze_paths` is the one entry point the CLI (and anyone scripting ridgeline)
calls. It expands folders (sorted, recursively), decides each file's format by its
content (never by its extension), parses, classifies every launch on its GPU's
roofline, reduces telemetry to windows and runs the rules.

A file named on the command line that is neither an ncu export nor telemetry is an
:class:`~ridgeline.errors.InputError`; a file found while expanding a folder is listed in
``skipped`` instead (folders hold READMEs and manifests).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from ridgeline.errors import InputError, UsageError
from ridgeline.parsers.formats import describe_formats, expected_formats
from ridgeline.parsers.sniff import describe_head, unread_error
from ridgeline.result import AnalysisResult, InputInfo, Skipped

#: every format ridgeline reads, from the one table in ridgeline.parsers.formats
EXPECTED_FORMATS = expected_formats()


# The telemetry kept on the result for plots and the report's overview: the fields the telemetry
# figure draws (ridgeline.render.plots.TELEMETRY_SERIES) only, as means over at most this many
# equal time bins per GPU (the full long table of a fleet day does not fit memory; the rules and
# the WINDOW table are computed from the lazy scan).
TELEMETRY_PLOT_BINS = 1500


def _add_notes(result: AnalysisResult, notes: Iterable[str]) -> None:
    """Append notes that are not already there (order kept)."""
    for note in notes:
        if note not in result.notes:
            result.notes.append(note)


def expand_paths(paths: Iterable[str | Path]) -> list[tuple[Path, bool]]:
    """Files to read, each with ``explicit`` (named by the user rather than found in a folder).
    Entries of a folder that are not regular files (:func:`ridgeline.parsers.paths.not_regular`)
    are returned too, for the caller to list as skipped."""
    from ridgeline.parsers.paths import refuse_if_not_regular, walk

    out: list[tuple[Path, bool]] = []
    seen: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():  # FIFOs, sockets and dangling links found are kept, and listed as skipped
            items = [(p, False) for p in walk(path)]
        elif path.is_file():
            items = [(path, True)]
        elif path.exists() or path.is_symlink():
            refuse_if_not_regular(path)
            raise InputError(path, "expected a regular file or a folder")
        else:
            raise InputError(path, "no such file or folder")
        for p, explicit in items:
            key = os.path.realpath(p)  # (a symbolic link loop stays as it is: resolve() raised on one)
            if key not in seen:
                seen.add(key)
                out.append((p, explicit))
    return out


#: how a timeline export may begin (gzip, SQLite, JSON): such a file is offered to the timeline
#: detector first, so a trace does not load the ncu and telemetry readers to be ruled out by them
#: (an ncu CSV or report begins otherwise; a file the timeline detector declines goes on below)
_TIMELINE_STARTS = (b"\x1f\x8b", b"SQLite format 3\x00", b"{", b"[")


def _starts_like_timeline(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            head = fh.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError:
        return False
    return head.startswith(_TIMELINE_STARTS)


def detect(path: Path) -> tuple[str, str] | None:
    """``("ncu", layout)`` or ``("telemetry", format)`` from the file's content, else None."""
    timeline_first = _starts_like_timeline(path)  # (the timeline detector runs once either way)
    if timeline_first:
        from ridgeline.parsers.timeline.reader import detect_timeline_format

        kind = detect_timeline_format(path)
        if kind:
            return "timeline", kind
    from ridgeline.parsers.ncu.blocks import detect_ncu_layout
    from ridgeline.parsers.telemetry.reader import detect_telemetry_format

    layout = detect_ncu_layout(path)
    if layout:
        return "ncu", layout
    from ridgeline.parsers.ncu.rep import is_ncu_report

    if is_ncu_report(path):
        return "ncu", "report"
    if not timeline_first:
        from ridgeline.parsers.timeline.reader import detect_timeline_format

        kind = detect_timeline_format(path)
        if kind:
            return "timeline", kind
    kind = detect_telemetry_format(path)
    if kind:
        return "telemetry", kind
    return None


def _folder_skip_reason(path: Path) -> str:
    """Why a file found in a folder was not read: what naming it alone would have said (ncu's own
    failure, what its name promises), else that it is none of the formats read (the long list
    of formats stays in the error for a file named on the command line)."""
    err = _why_not_recognized(path)
    if err.expected == EXPECTED_FORMATS:
        return "not an ncu export, timeline or telemetry (found in a folder)"
    return f"{err.expected.split(' (or ')[0]}" + (f", got {err.actual}" if err.actual else "") + " (found in a folder)"


def _why_not_recognized(path: Path) -> InputError:
    """The most specific one-line error for a named file no detector claims.

    The ncu parser knows the common ways an ncu export goes wrong (empty file, counter
    permission error, summary page, wrong header); its reason is kept, with the telemetry
    formats added to what was expected. Anything else gets the generic list.
    """
    from ridgeline.parsers.ncu.csv_reader import read_ncu
    from ridgeline.parsers.sniff import by_name

    named = by_name(path, describe_head(path))
    if named is not None:  # x.sqlite, x.json, x.ncu-rep...: what its name says it is, and what it holds
        return named
    from ridgeline.parsers.sniff import binary_kind

    try:
        with open(path, "rb") as fh:
            kind = binary_kind(fh.read(64))
    except OSError:
        kind = None
    if kind:  # an executable, an image, a PDF: said by name, not read as text in some encoding
        return InputError(path, f"{EXPECTED_FORMATS}, got {kind}")
    try:
        read_ncu([str(path)])
    except InputError as err:
        generic = err.expected.startswith("expected an Nsight Compute CSV export (a header line")
        if not generic:
            expected = err.expected
            if expected.startswith("expected"):  # not clearly ncu's own output: telemetry was an option too
                expected += f" (or {describe_formats(('nsys', 'kineto', 'telemetry'))})"
            return InputError(
                path,
                expected,
                line=err.line,
                column=err.column,
                actual=err.actual,
            )
    except Exception:  # noqa: BLE001 - the generic message below is still right
        pass
    from ridgeline.parsers.timeline.reader import is_nsys_report, nsys_export_error

    if is_nsys_report(path):
        return nsys_export_error(path)
    first = describe_head(path)
    if first == "binary data":
        from ridgeline.parsers.guard import parquet_footer_problem

        try:
            with open(path, "rb") as fh:
                magic = fh.read(4)
        except OSError:
            magic = b""
        if magic == b"PAR1":
            problem = parquet_footer_problem(path)
            if problem:
                return InputError(path, "expected a readable Parquet file; it is corrupt or truncated", actual=problem)
            return InputError(path, "expected a telemetry Parquet table (timestamp, gpu, field/value or field "
                              "columns; see docs/telemetry.md)", actual="a Parquet file with other columns")
    if first == "a binary Nsight Compute report":
        return InputError(path, "expected its CSV export: ncu --import "
                          f"{path.name} --csv --page raw --print-units base > {path.stem}.csv", actual=first)
    return unread_error(path, first) or InputError(path, EXPECTED_FORMATS, actual=first)


def analyze_paths(
    paths: Iterable[str | Path],
    *,
    gpu: Any = None,
    select: Iterable[str] = (),
    ignore: Iterable[str] = (),
    config: str | Path | Mapping[str, Any] | None = None,
    window: str | float | None = "5m",
    tz: str | None = None,
    time_format: str | None = None,
    strict: bool = True,
    warmup: str | float | None = None,
    interval_s: float | None = None,
    host: str | None = None,
    start: Any = None,
    thresholds: Iterable[str] | Mapping[str, Mapping[str, Any]] = (),
    run_rules: bool = True,
    timeline_options: Mapping[str, Any] | None = None,
    engine: str = "local",
    scheduler: Any = None,
    workers: int | None = None,
    progress: Any = None,
    what_if: Iterable[str] = (),
    batch: float | None = None,
    strict_folders: bool = False,
    by: Iterable[str] = (),
    jobs: str | Path | None = None,
) -> AnalysisResult:
    """Analyze ncu exports and/or telemetry files and folders into an AnalysisResult.

    ``gpu``: catalogue name or spelling forcing the GPU (``--gpu``); ``select``/``ignore``:
    rule codes or prefixes; ``config``: a TOML path (``[tool.ridgeline]``) or an already
    loaded dict; ``window``/``warmup``/``tz``/``interval_s``/``host``/``start`` (datetime of the
    first tick of inputs without timestamps)/``time_format`` (nvidia-smi CSV timestamps the data
    cannot settle: :mod:`ridgeline.parsers.telemetry.times`): telemetry options;
    ``strict``: a value that does not parse is an error (else the launch is skipped and
    listed; a telemetry cell is read as missing, a telemetry row without a usable GPU id or time
    skipped, each listed); ``thresholds``: ``CODE.name=value`` rule threshold overrides; ``what_if``: scenario
    specs (a GPU name or ``batch=N``, :mod:`ridgeline.analyzer.kernels.whatif`) projected onto
    ``result.what_if``; ``batch``: the profile's decode batch for ``batch=N`` (default: inferred).
    ``engine``: how telemetry partitions (hosts) are reduced: ``"local"`` (default) or
    ``"dask"`` (``scheduler``: a dask.distributed address or Client, None = a LocalCluster of
    ``workers`` processes); ``progress(done, total, rows)`` is called per partition.
    ``strict_folders``: an unreadable telemetry file found in a folder is an error (default:
    skipped and listed). ``by`` / ``jobs``: attribute the telemetry windows to workloads
    (``--by pod``, a sacct file: :mod:`ridgeline.analyzer.fleet.groups`) into ``result.groups``.
    """
    result = AnalysisResult()
    from ridgeline.rules import engine as rule_engine  # `engine` is the telemetry engine argument

    cfg = rule_engine.load_config(config) if not isinstance(config, Mapping) else dict(config)
    configure_gpus(cfg)  # [tool.ridgeline.gpus."NAME"]: before --gpu and --what-if are resolved
    if gpu is not None:  # a bad --gpu fails before any file is read
        from ridgeline.analyzer.kernels.roofline import resolve_gpu

        resolve_gpu(gpu)
    what_if = list(what_if or ())
    targets = _what_if_targets(what_if, batch)  # a bad spec or GPU fails before any file is read
    paths = list(paths)
    from ridgeline.parsers.paths import not_regular

    files = expand_paths(paths)
    if not files:
        raise InputError(", ".join(str(p) for p in paths) or "(no input)", "no input files found")
    ncu_files: list[Path] = []
    tel_files: list[Path] = []
    tl_files: list[Path] = []
    found_in_folders: set[str] = set()  # a bad one of these is skipped and listed, not fatal
    from ridgeline.parsers.paths import links_out

    _add_notes(result, links_out(paths, files))
    if strict_folders:  # --strict given: what no reader may open in a folder is refused, all named at once
        from ridgeline.parsers.paths import refuse_unusable

        refuse_unusable((p, why) for p, explicit in files if not explicit for why in [not_regular(p)] if why)
    for path, explicit in files:
        why_not = None if explicit else not_regular(path)
        if why_not is not None:  # never opened: a FIFO would block, a dangling link has nothing
            if strict_folders:
                raise InputError(path, "expected a regular file", actual=why_not)
            result.skipped.append(Skipped(str(path), "file", f"not read: {why_not} (found in a folder)"))
            continue
        found = detect(path)
        if found is None:
            if explicit:
                raise _why_not_recognized(path)
            why = _corrupt_parquet(path)
            if why is not None and strict_folders:  # --strict given: a corrupt file in a folder is an error
                raise why
            result.skipped.append(Skipped(str(path), "file", f"unreadable telemetry Parquet: {why}" if why is not None
                                          else _folder_skip_reason(path)))
        elif found[0] == "ncu":
            ncu_files.append(path)
        elif found[0] == "timeline":
            tl_files.append(path)
        else:
            tel_files.append(path)
            if not explicit and not strict_folders:  # --strict given: a bad file in a folder is an error too
                found_in_folders.add(str(path))
    if not ncu_files and not tel_files and not tl_files:
        raise InputError(", ".join(str(p) for p in paths), EXPECTED_FORMATS + "; none found")

    # RL112's thresholds define the latency class the classifier assigns
    latency = rule_engine.rule_params("RL112", cfg, thresholds)
    gpu_entry = None
    metrics = None
    if ncu_files:
        gpu_entry, metrics = _analyze_kernels(
            result, ncu_files, gpu=gpu, strict=strict,
            latency_fraction=latency["max_roof_fraction"], launch_floor_s=latency["launch_floor_s"],
            launch_bound_max_s=latency["launch_bound_max_s"],
        )
    elif gpu is not None:
        from ridgeline.analyzer.kernels.roofline import resolve_gpu

        gpu_entry, note = resolve_gpu(gpu)
        result.gpu_name, result.gpu_match = gpu_entry.name, note
    telemetry_lf = None
    if tel_files:
        telemetry_lf = _analyze_telemetry(
            result, tel_files, window=window, warmup=warmup, tz=tz, interval_s=interval_s, host=host, start=start,
            time_format=time_format, engine=engine, scheduler=scheduler, workers=workers, progress=progress,
            found_in_folders=found_in_folders, strict=strict, strict_folders=strict_folders,
            classes=cfg.get("classes"),
        )
        if by or jobs:  # --by / --jobs: the windows attributed to workloads (ridgeline.analyzer.fleet.groups)
            from ridgeline.attribution import telemetry_groups

            notes: list[str] = []
            result.groups = telemetry_groups(telemetry_lf, result.inputs, result.windows, by=tuple(by),
                                             jobs_path=None if jobs is None else str(jobs), tz=tz, notes=notes,
                                             skipped=result.skipped)
            _add_notes(result, notes)

    if ncu_files and tel_files:
        _add_notes(result, _machine_mismatch_notes(result))
    if tl_files:
        _analyze_timeline(result, tl_files, timeline_options=timeline_options, strict=strict)
        if gpu is not None and not ncu_files:  # --gpu gives a timeline run its GPU and roofs: one fact, every line
            from ridgeline.analyzer.timeline.gpu import timeline_gpu

            chosen = timeline_gpu(result.timeline.devices, gpu)
            gpu_entry, result.roofs = chosen.entry, chosen.roofs
            result.gpu_name, result.gpu_match = chosen.gpu_name, chosen.gpu_match
            _add_notes(result, chosen.notes)
            from ridgeline.analyzer.ops.groups import place_timeline_ops

            place_timeline_ops(result.timeline, chosen.entry)  # op groups under that GPU too (issue 30)
    if what_if:
        from ridgeline.analyzer.kernels.whatif import run_specs

        result.what_if = run_specs(result.kernels, what_if, batch=batch, gpu=gpu_entry, resolve=targets.get,
                                   launch_floor_s=latency["launch_floor_s"],
                                   launch_bound_max_s=latency["launch_bound_max_s"])

    if run_rules:
        from ridgeline.rules.base import Context

        ctx = Context(
            kernels=result.kernels,
            summary=result.summary,
            gpu=gpu_entry,
            telemetry=telemetry_lf,
            # with --by / --jobs the windows carry each one's main group: RL209 compares a pod's GPUs
            windows=result.windows if result.groups is None else result.groups.windows,
            total_gpu_time_s=result.total_gpu_time_s,
            timeline=result.timeline,
            extra={
                "roofs": list(result.roofs),
                "gpu_match": result.gpu_match,
                "inputs": list(result.inputs),
                "skipped": list(result.skipped),
                "notes": list(result.notes),
                "metrics": metrics,
                # RL112's thresholds define the latency class and its launch/stall split; RL113 reads them
                "latency_thresholds": dict(latency),
                **({} if result.groups is None else {"group_keys": result.groups.key_columns}),
            },
        )
        result.findings = rule_engine.run_rules(
            ctx, select=tuple(select), ignore=tuple(ignore), config=cfg, thresholds=thresholds
        )
        if result.timeline is not None and result.timeline.join is not None:
            from ridgeline.rules.timeline.common import weight_by_wall_time

            result.findings = weight_by_wall_time(result.findings, result.timeline, result.kernels)
    return result


def _corrupt_parquet(path: Path) -> InputError | None:
    """The InputError of a ``.parquet`` file whose footer or pages cannot be read, else None."""
    if Path(path).suffix != ".parquet":
        return None
    from ridgeline.parsers.guard import check_parquet_pages

    try:
        check_parquet_pages(path)
    except InputError as err:
        return err
    return None


def configure_gpus(cfg: Mapping[str, Any] | None) -> None:
    """The config's own GPUs (``[tool.ridgeline.gpus."NAME"]``) join the catalogue."""
    from ridgeline.analyzer.kernels.gpus import configure

    configure((cfg or {}).get("gpus"), origin="config")


def _what_if_targets(specs: list[str], batch: float | None) -> dict[str, Any]:
    """GPU name -> catalogue entry for the ``--what-if`` GPU specs (UsageError for a bad spec)."""
    from ridgeline.errors import UsageError

    if batch is not None:
        from ridgeline import bounds

        bounds.check("batch", batch, where="--batch")
    out: dict[str, Any] = {}
    if not specs:  # (the what-if model is not loaded for a run without projections)
        return out
    from ridgeline.analyzer.kernels.gpus import lookup
    from ridgeline.analyzer.kernels.whatif import parse_spec

    for spec in specs:
        kind, value = parse_spec(spec)
        if kind == "gpu":
            out[value] = lookup(value)[0]
    return out


def _analyze_kernels(result: AnalysisResult, files: list[Path], *, gpu: Any, strict: bool,
                     latency_fraction: float, launch_floor_s: float, launch_bound_max_s: float):
    import polars as pl

    from ridgeline.analyzer.kernels.devices import resolve_gpu_choice
    from ridgeline.analyzer.kernels.roofline import classify, summarize

    from ridgeline.parsers.ncu.guard import read_ncu_checked

    ncu_rules = {}

    def read(paths, strict):
        parsed, ncu_rules["table"] = read_kernel_files([Path(p) for p in paths], strict=strict)
        return parsed

    parsed, kernels = read_ncu_checked(read, files, strict=strict)
    result.ncu_rules = ncu_rules.get("table")
    result.inputs.extend(parsed.inputs)
    result.skipped.extend(parsed.skipped)
    _add_notes(result, parsed.notes)
    roofline, roofs = classify(kernels, gpu=gpu, latency_fraction=latency_fraction, launch_floor_s=launch_floor_s,
                               launch_bound_max_s=launch_bound_max_s)
    result.kernels = roofline
    result.roofs = roofs
    result.summary = summarize(roofline)
    total = roofline.get_column("duration_s").sum() if roofline.height else None
    result.total_gpu_time_s = float(total) if total else None

    # which GPU, and how it was chosen (ridgeline.analyzer.kernels.devices)
    choice = resolve_gpu_choice(roofline, roofs, gpu=gpu)
    entry = choice.entry
    result.gpu_name, result.gpu_match = choice.gpu_name, choice.gpu_match
    result.notes.extend(choice.notes)

    n_unknown = roofline.filter(pl.col("bound") == "unknown").height
    if n_unknown:
        hints = (
            roofline.filter(pl.col("bound") == "unknown")
            .get_column("missing_hint")
            .drop_nulls()
            .unique(maintain_order=True)
            .to_list()
        )
        hint = f" ({'; '.join(hints[:3])})" if hints else ""
        result.notes.append(f"{n_unknown} of {roofline.height} launches are 'unknown' on the roofline{hint}")
    _note_uncounted_tensor_work(roofline, result.notes)
    if roofline.height and roofline.get_column("flops_tensor").null_count() == roofline.height:
        has_flops = roofline.get_column("flops").null_count() < roofline.height
        # a tensor pipe measured idle on every launch: no tensor work to hide
        idle = (roofline.get_column("tensor_pipe_active_ratio") == 0).fill_null(False).all() if "tensor_pipe_active_ratio" in roofline.columns else False
        if has_flops and not idle:
            result.notes.append(
                "no tensor-core FLOP counters in the export: tensor work is invisible, so GEMM-like kernels "
                "may look memory-bound or far below roof (collect --set roofline)"
            )
    return entry, parsed.metrics


def _note_uncounted_tensor_work(roofline, notes: list[str]) -> None:
    """Launches whose tensor pipe was active with no tensor FLOP counter: say what ran and how busy."""
    import polars as pl

    if not roofline.height or "tensor_pipe_precision" not in roofline.columns:
        return
    hit = roofline.filter(pl.col("flops").is_null() & pl.col("precision").is_not_null()
                          & (pl.col("precision") == pl.col("tensor_pipe_precision")))
    if not hit.height:
        return
    parts = [f"{p} up to {r:.1%} of the pipe" for p, r in hit.group_by("precision").agg(
        pl.col("tensor_pipe_active_ratio").max()).sort("precision").iter_rows()]
    notes.append(
        f"{hit.height} launch(es) ran tensor instructions the FLOP counters did not count ({', '.join(parts)}): "
        "precision from the tensor pipe, FLOPs unknown (collect --section SpeedOfLight_HierarchicalTensorRooflineChart)"
    )


def read_kernel_files(files: list[Path], *, strict: bool = True):
    """ncu CSV exports and ``.ncu-rep`` reports -> (NcuResult, NCU_RULES table or None).

    CSV only: :func:`~ridgeline.parsers.ncu.csv_reader.read_ncu` on all of them, as before. With reports
    among them, each file is read on its own and launch ids get ``"<file index>:"`` in front
    (as read_ncu does with several files), in the order given.
    """
    import polars as pl

    from ridgeline.parsers.ncu.csv_reader import MetricsTables, NcuResult, read_ncu
    from ridgeline.parsers.ncu.rep import is_ncu_report, read_ncu_rep

    reports = [is_ncu_report(p) for p in files]
    if not any(reports):
        return read_ncu([str(p) for p in files], strict=strict), None
    several = len(files) > 1
    kernels, rules, inputs, skipped, notes, units = [], [], [], [], [], {}
    metrics = MetricsTables()
    for i, (path, is_rep) in enumerate(zip(files, reports)):
        prefix = f"{i}:" if several else ""
        if is_rep:
            one, rule_table = read_ncu_rep([path], strict=strict, id_prefixes=[prefix])
            rules.append(rule_table)
        else:
            one = read_ncu([str(path)], strict=strict)
            if prefix:
                one.kernels = one.kernels.with_columns((pl.lit(prefix) + pl.col("id")).alias("id"))
        kernels.append(one.kernels)
        inputs += one.inputs
        skipped += one.skipped
        notes += one.notes
        units.update(one.units)
        for key in dict.keys(one.metrics):
            loader = getattr(one.metrics, "_loaders", {}).get(key)
            if loader is not None:
                metrics.defer(key, loader)
            else:
                metrics[key] = one.metrics[key]
    parsed = NcuResult(kernels=pl.concat(kernels, how="vertical"), metrics=metrics, skipped=skipped,
                       inputs=inputs, units=units, notes=notes)
    return parsed, pl.concat(rules, how="vertical") if rules else None


from ridgeline.parsers.timeline.allocator import TIMELINE_ALLOCATOR, load_polars_for_timelines  # noqa: E402,F401


def _analyze_timeline(result: AnalysisResult, files: list[Path], *, timeline_options=None, strict: bool = True) -> None:
    """Timeline files (nsys sqlite, nsys stats CSV, Kineto JSON) -> result.timeline.

    Read one file at a time; the analysis keeps per-device figures and the small tables the
    rules and renderers need. With a KERNEL table in the result, kernels are joined by name.
    """
    from ridgeline.analyzer.timeline.busy import analyze_one, combine, join_roofline
    from ridgeline.parsers.timeline.reader import read_timeline

    load_polars_for_timelines()  # (a no-op where profiles or telemetry were read first)
    parts = []
    for path in files:  # one file at a time: memory bounded by the largest
        from ridgeline.parsers.guard import collect_guarded

        tl = collect_guarded(lambda path=path: read_timeline(path, host_calls="sync", strict=strict), path,
                             "a timeline (Nsight Systems export, nsys stats CSV, PyTorch profiler trace)")
        result.inputs.append(InputInfo(str(path), tl.kind, tl.records_read))  # used + damaged records skipped
        result.skipped.extend(tl.skipped)
        _add_notes(result, tl.notes)
        parts.append(analyze_one(tl, **dict(timeline_options or {})))
        del tl
    result.timeline = combine(parts)
    _add_notes(result, result.timeline.notes)
    if result.kernels is not None and result.kernels.height:
        join_roofline(result.timeline, result.kernels)
        _add_notes(result, result.timeline.join_notes)


def _analyze_telemetry(result: AnalysisResult, files: list[Path], *, window, warmup, tz, interval_s, host,
                       start=None, time_format=None, engine="local", scheduler=None, workers=None, progress=None,
                       found_in_folders=frozenset(), strict=True, strict_folders=False, classes=None):
    """Windows from the lazy scan (never the whole long table in memory); returns the LazyFrame.

    ``result.telemetry`` gets :func:`plot_telemetry`'s small downsampled frame.
    """
    notes: list[str] = []
    counts: dict = {}
    lf, inputs, skipped, windows = reduce_telemetry(
        [str(p) for p in files], window=window, warmup=warmup, tz=tz, interval_s=interval_s, host=host,
        start=start, time_format=time_format, notes=notes, engine=engine, scheduler=scheduler, workers=workers, progress=progress,
        found_in_folders=found_in_folders, strict=strict, strict_folders=strict_folders, sample_counts=counts,
        classes=classes)
    if not inputs and skipped:  # every telemetry file found in a folder was unreadable
        raise InputError(", ".join(str(p) for p in files[:3]) + (", ..." if len(files) > 3 else ""),
                         f"expected readable telemetry; all {len(skipped)} file(s) were skipped, e.g. "
                         f"{skipped[0].source}: {skipped[0].reason}")
    result.inputs.extend(inputs)
    result.skipped.extend(skipped)
    _add_notes(result, notes)
    result.windows = windows
    check_window(window, result.windows)
    _add_notes(result, empty_windows_notes(result.windows, inputs, warmup))
    _add_notes(result, silent_telemetry_notes(result.windows))
    from ridgeline.parsers.guard import collect_guarded

    result.telemetry = collect_guarded(lambda: plot_telemetry(lf, result.windows), files)

    result.sample_counts = counts  # counted by the reduction (the same figures as a pass over lf)
    return lf


#: window columns the telemetry rules (RL201-RL206) read, and the field each comes from
RULE_FIELDS = {
    "gpu_util_mean_ratio": "GPU-Util (DCGM_FI_DEV_GPU_UTIL, nvidia-smi utilization.gpu)",
    "gr_engine_active_mean_ratio": "GR_ENGINE_ACTIVE (1001)",
    "sm_active_mean_ratio": "SM_ACTIVE (1002)",
    "tensor_active_mean_ratio": "PIPE_TENSOR_ACTIVE (1004)",
    "dram_active_mean_ratio": "DRAM_ACTIVE (1005)",
    "fb_used_max_bytes": "FB_USED (252)",
}


def silent_telemetry_notes(windows) -> list[str]:
    """A note when the telemetry holds no field any rule reads: 'Findings: none' then means
    nothing was looked at, not a clean bill (and the note says what was read)."""
    if windows is None or not windows.height:
        return []
    present = [c for c in RULE_FIELDS if c in windows.columns and windows.get_column(c).null_count() < windows.height]
    if present:
        return []
    import re

    # every measured field the windows hold (a mean or max in any unit: ratio, W, Hz, C, bytes,
    # B/s), so a temperature the JSON reports is named here too
    measured = re.compile(r"^(.+?)_(?:mean|max)_(?:ratio|w|hz|c|bytes|bytes_per_s)$")
    read = list(dict.fromkeys(m.group(1) for c in windows.columns if (m := measured.match(c))
                              and windows.get_column(c).null_count() < windows.height))
    return [
        "no telemetry field any rule reads was present (read: " + (", ".join(read) or "no numeric field")
        + "): no performance rule can judge it, so having no performance finding is not a clean bill; collect "
        + ", ".join(RULE_FIELDS.values())
    ]


def reduce_telemetry(paths, *, window="5m", warmup=None, tz=None, interval_s=None, host=None, start=None,
                     time_format=None, notes=None, engine="local", scheduler=None, workers=None, progress=None, extra=(),
                     found_in_folders=frozenset(), strict=True, strict_folders=False,
                     sample_counts: dict | None = None, classes=None):
    """Telemetry files/folders -> ``(long LazyFrame, inputs, skipped, WINDOW table)``.

    ``classes``: ``[tool.ridgeline.classes]``, under which the windows' ``class`` is judged.

    Inputs are read per file (:func:`ridgeline.parsers.telemetry.reader.scan_telemetry_sources`), cut
    into one partition per host, and each partition is reduced by the same pure function
    (:func:`ridgeline.analyzer.fleet.partitions.reduce_partitions`) with ``engine`` ``"local"`` or
    ``"dask"``. The long LazyFrame (nothing read yet) is what the rules' context and plots take.
    ``extra``: ``(name, frame)`` TELEMETRY long tables read elsewhere, or ``TelemetrySource``
    objects (a Prometheus pull: :meth:`ridgeline.sources.prometheus.Pull.source`, one lazy scan
    per host), after the files; their inputs are the caller's to list. ``found_in_folders``: files found by
    expanding a folder, skipped and listed when unreadable instead of failing the run.
    ``strict``/``strict_folders``: as :func:`ridgeline.parsers.telemetry.reader.scan_telemetry` (False:
    ``--lenient``, bad cells read as missing and bad rows skipped, listed).
    ``sample_counts``: a dict that receives ``{source: (samples, blank values)}`` of the long
    table, counted while the partitions are reduced (no second pass over the inputs).
    """
    from ridgeline.analyzer.fleet.classes import reclassify
    from ridgeline.analyzer.fleet.partitions import reduce_partitions
    from ridgeline.parsers.telemetry.reader import TelemetrySource, long_table, scan_telemetry_sources, telemetry_partitions

    if engine == "dask":  # before any file is read
        from ridgeline.analyzer.fleet.partitions import DASK_EXTRA_MESSAGE, dask_available

        if not dask_available():
            raise UsageError(DASK_EXTRA_MESSAGE)
    import functools

    from ridgeline.parsers import guard
    from ridgeline.parsers.guard import collect_guarded

    def read(check_folder_pages: bool):
        counts: dict = {}
        sources, inputs, skipped = scan_telemetry_sources(
            paths, tz=tz, interval_s=interval_s, host=host, start=start, notes=notes,
            found_in_folders=found_in_folders, strict=strict, strict_folders=strict_folders,
            check_folder_pages=check_folder_pages, time_format=time_format,
        )
        sources += [e if isinstance(e, TelemetrySource) else TelemetrySource(str(e[0]), "telemetry-long", e[1].lazy())
                    for e in extra]
        # a lazy Parquet scan is read here: a corrupt page is one line naming the inputs, not a polars error
        check = functools.partial(guard.check_partition, strict=strict)  # ids and times of Parquet, once read
        windows = collect_guarded(
            lambda: reduce_partitions(telemetry_partitions(sources), window=window, warmup=warmup, engine=engine,
                                      scheduler=scheduler, workers=workers, progress=progress, counts=counts,
                                      check=check, problems=skipped),
            [s.path for s in sources] or list(paths))
        if sample_counts is not None:
            sample_counts.clear()
            sample_counts.update(counts)
        return long_table(sources), inputs, skipped, reclassify(windows, classes)

    # a folder's Parquet files are read once: the page check that decodes them all beforehand (so
    # a corrupt file is listed and left out, never read halfway) runs only when reading them failed
    try:
        return read(check_folder_pages=False)
    except InputError:
        if not any(Path(p).is_dir() for p in ([paths] if isinstance(paths, (str, Path)) else paths)):
            raise
    return read(check_folder_pages=True)


def _machine_mismatch_notes(result: AnalysisResult) -> list[str]:
    from ridgeline.analyzer.kernels.devices import machine_mismatch_notes

    return machine_mismatch_notes(result.windows, result.kernels)


def check_window(window, windows) -> None:
    """A --window shorter than the telemetry's sample interval is a UsageError: its windows would
    hold at most one sample each and cover only part of the time observed."""
    if windows is None or not windows.height or "interval_s" not in windows.columns:
        return
    if window is None or (isinstance(window, str) and window.strip().lower() == "all"):
        return
    from ridgeline.analyzer.fleet.telemetry import parse_duration_s
    from ridgeline.errors import UsageError

    window_s = parse_duration_s(window, what="--window")
    interval = windows.get_column("interval_s").drop_nulls().max()
    if interval is not None and window_s < interval:
        raise UsageError(f"--window {window}: shorter than the telemetry's sample interval ({interval:g} s); "
                         f"use at least {interval:g}s")


def empty_windows_notes(windows, inputs, warmup) -> list[str]:
    """Why telemetry that was read gave no window (else nothing)."""
    if windows is None or windows.height or not sum(i.rows for i in inputs):
        return []
    if warmup:
        return [f"--warmup {warmup} dropped every sample: each GPU's telemetry is shorter than the warm-up"]
    return ["the telemetry holds no samples of the fields ridgeline analyzes (GPU-Util, DCGM activity, power, "
            "clocks, memory)"]


def plot_telemetry(lf, windows, *, fields: Iterable[str] | None = None, bins: int = TELEMETRY_PLOT_BINS):
    """A small TELEMETRY-shaped DataFrame for plots and the report overview.

    Only ``fields`` (default: those the telemetry figure draws). Per host / GPU / GPU instance
    / field: the mean ``value`` over each of ``bins`` equal time bins spanning the run (the
    windows' extent), stamped with the bin's first sample time; other columns keep their first
    value in the bin. Runs on the streaming engine, so the long table is never materialized.
    A run with fewer samples than bins keeps about one sample per bin, i.e. its own values.
    """
    import polars as pl

    from ridgeline.analyzer.schema import TELEMETRY_COLUMNS

    if fields is None:
        from ridgeline.render.plots import TELEMETRY_SERIES

        fields = [series[0] for series in TELEMETRY_SERIES]
    lf = lf.filter(pl.col("field").is_in(list(fields)) & pl.col("value").is_not_null())
    t0 = t1 = None
    if windows is not None and windows.height and "window_start" in windows.columns:
        t0 = windows.get_column("window_start").min()
        t1 = windows.get_column("window_end").max() if "window_end" in windows.columns else None
    if t0 is None or t1 is None or t1 <= t0:
        span = lf.select(pl.col("timestamp").min().alias("a"), pl.col("timestamp").max().alias("b")).collect()
        t0, t1 = span.row(0)
    if t0 is None or t1 is None:
        return lf.collect(engine="streaming")
    span_us = max((t1 - t0).total_seconds() * 1e6, 1.0)
    bin_us = max(span_us / bins, 1.0)
    keys = ["host", "gpu", "gpu_instance", "field"]
    bin_expr = ((pl.col("timestamp") - pl.lit(t0)).dt.total_microseconds() / bin_us).floor().cast(pl.Int64)
    others = [c for c in TELEMETRY_COLUMNS if c not in keys and c not in ("timestamp", "value")]
    schema = lf.collect_schema()
    out = (
        lf.group_by(*keys, bin_expr.alias("_bin"))
        .agg(
            pl.col("timestamp").min(),
            pl.col("value").mean(),
            *[pl.col(c).first() for c in others if c in schema],
        )
        .drop("_bin")
        .collect(engine="streaming")
    )
    order = [c for c in TELEMETRY_COLUMNS if c in out.columns] + [c for c in out.columns if c not in TELEMETRY_COLUMNS]
    return out.select(order).sort("host", "gpu", "gpu_instance", "field", "timestamp", nulls_last=True)


__all__ = ["analyze_paths", "detect", "expand_paths", "plot_telemetry", "EXPECTED_FORMATS", "InputInfo"]
