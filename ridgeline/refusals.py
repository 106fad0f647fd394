"""Every refusal says what ridgeline took the file for (issue 21, "refused though legal").

A reader's :class:`~ridgeline.errors.InputError` names the file, the line/row/column and what
was expected there (``x.csv:12: column 'ID': expected a launch ID 0..2^63-1, got 'x7'``), but
often not *which kind of file* ridgeline read it as: the user who passed a dcgm-exporter scrape,
an nsys export or an ncu details page by mistake (or the right file, damaged) cannot tell from
``column 'gpu': expected a gpu label`` which reader spoke. The CLI therefore passes every
:class:`~ridgeline.errors.RidgelineError` through :func:`name_the_kind` before printing it: when
the error is about the content of one input file, and its text does not already name that
file's kind, the kind the content detectors (:func:`ridgeline.pipeline.detect`) find is added
at the end (so the start of the line, ``FILE:LINE: ...``, reads as before)::

    x.prom:29: column 'gpu': expected a gpu label 0..4095, got 'x7' (read as dcgm-exporter scrapes (Prometheus text))

Nothing else changes: errors about options, output files, folders or several files, and
messages that already say ``Nsight Compute``, ``nsys``, ``dmon``... are printed as they were. The
detectors read only the head of the file, so this costs nothing on the success path.

A file no detector claims gets :func:`ridgeline.parsers.sniff.by_name` when its name says what it should be (``.sqlite``,
``.ncu-rep``, ``.json``, ``.json.gz``, ``.parquet``, ``.prom``): ``x.sqlite: expected an Nsight
Systems export (nsys export --type sqlite), as its name says; got binary data`` instead of the list
of every format ridgeline reads (which ``.csv`` and ``.txt`` files, read as many formats, keep).
"""

from __future__ import annotations

from pathlib import Path

from ridgeline.errors import InputError, RidgelineError

# words that show a message already names the kind (lower case), per detected family
_NAMED_BY = {
    "ncu": ("nsight compute", "ncu"),
    "nsys": ("nsight systems", "nsys"),
    "kineto": ("pytorch", "kineto"),
    "rocprof": ("rocprof", "rocm"),
    "dcgm-dmon": ("dmon",),
    "nvidia-smi-dmon": ("nvidia-smi",),
    "nvidia-smi-csv": ("nvidia-smi",),
    "dcgm-exporter": ("dcgm-exporter", "prometheus text"),
    "prometheus-json": ("prometheus",),
    "telemetry-csv": ("telemetry",),
    "telemetry-parquet": ("parquet",),
}

_NCU = {"raw": "Nsight Compute CSV (raw page)", "details": "Nsight Compute CSV (details page)",
        "report": "Nsight Compute report (.ncu-rep)", "summary": "Nsight Compute CSV (summary page)"}


def kind_label(found: tuple[str, str]) -> tuple[str, tuple[str, ...]]:
    """(what to call a file ``detect`` found as ``found``, words that already name it)."""
    family, kind = found
    if family == "ncu":
        return _NCU.get(kind, "Nsight Compute export"), _NAMED_BY["ncu"]
    if family == "timeline":
        if kind == "kineto":
            return "PyTorch profiler trace (Kineto JSON)", _NAMED_BY["kineto"]
        if kind.startswith(("rocprof", "rocpd")):
            from ridgeline.parsers.formats import FORMATS

            return FORMATS.get(f"timeline:{kind}", ("amd", kind))[1], _NAMED_BY["rocprof"]
        if kind.startswith("nsys-stats:"):
            return f"Nsight Systems stats CSV ({kind.split(':', 1)[1]})", _NAMED_BY["nsys"]
        return "Nsight Systems export (sqlite)", _NAMED_BY["nsys"]
    from ridgeline.parsers.guard import WHAT

    return WHAT.get(kind, kind), _NAMED_BY.get(kind, (kind,))


def _about_content(err: InputError) -> bool:
    """An error about what is inside the file (not its absence, access, or an output)."""
    text = err.expected
    if text.startswith(("cannot read", "no such file", "no input")) or "ridgeline JSON" in text:
        return False  # not an input's content, or ridgeline's own document (diff, check)
    return "expected" in text or err.line is not None or err.column is not None


def name_the_kind(err: RidgelineError) -> RidgelineError:
    """``err`` with the kind of its file added when it is about one input's content and does
    not say what ridgeline took the file for; else ``err`` itself."""
    if not isinstance(err, InputError) or err.kind is not None or not _about_content(err):
        return err
    path = Path(err.path)
    try:
        if not path.is_file():
            return err
        from ridgeline.pipeline import detect

        found = detect(path)
    except Exception:  # noqa: BLE001 - the error as it stands is still right
        return err
    if found is None:
        return err
    label, words = kind_label(found)
    said = str(err).replace(err.path, "", 1).lower()
    if any(w in said for w in words):
        return err
    return InputError(err.path, err.expected, line=err.line, column=err.column, actual=err.actual, kind=label)

