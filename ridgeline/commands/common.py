"""Helpers every command shares: output (``_emit``, ``_tell``, ``_say``), config (``_config``),
value parsing (``_parse_*``), standard input, relabelling, plots, and ``_render_analyze``
(``analyze_paths`` with the CLI's option spellings, used by roofline and report).

Heavy libraries are imported inside the functions, so ``ridgeline --help`` stays instant.
"""

from __future__ import annotations

import sys

import click

from ridgeline import __version__
from ridgeline.commands.options import _strict_folders


def _config(config):
    """The --config value, or {} (no file at all) under --isolated; both at once is a UsageError."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None and ctx.meta.get("ridgeline.isolated"):
        if config:
            from ridgeline.errors import UsageError

            raise UsageError("give --config FILE or --isolated, not both")
        return {}
    return config


def _terminal_width(default: int = 80) -> int:
    """The terminal's width when stdout is one (at least 60 columns), else ``default``."""
    if not sys.stdout.isatty():
        return default
    import shutil

    return max(60, shutil.get_terminal_size((default, 24)).columns)


def _maybe_colour(text: str, output: str | None) -> str:
    """Severities in colour when the report goes to a terminal and NO_COLOR is not set."""
    from ridgeline.render import colour

    if (output and output != "-") or not colour.wanted(sys.stdout):
        return text
    return colour.colourize(text)


def _fit_lines(text: str, width: int = 80) -> str:
    """Lines longer than ``width`` wrapped, continuation at the line's own indentation."""
    import textwrap

    out = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip())]
        out += textwrap.wrap(line.strip(), width=width, initial_indent=indent, subsequent_indent=indent,
                             break_long_words=False, break_on_hyphens=False) or [line]
    return "\n".join(out)


def _parse_start(start: str | None):
    """--start as an aware datetime (UTC when no zone), or None."""
    if not start:
        return None
    import datetime as _dt

    from ridgeline.errors import UsageError

    try:
        value = _dt.datetime.fromisoformat(start.strip().replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"--start {start!r}: expected an ISO 8601 time such as 2026-01-05T08:00:00Z") from None
    return value if value.tzinfo is not None else value.replace(tzinfo=_dt.timezone.utc)


def _parse_interval(interval: str | None):
    if interval is None:
        return None
    from ridgeline.analyzer.fleet.telemetry import parse_duration_s

    return parse_duration_s(interval, what="--interval")


def _os_error_text(err: OSError) -> str:
    """'No such file or directory' (polars' own errors add ' (os error 2): PATH')."""
    import re as _re

    text = getattr(err, "strerror", None) or str(err)
    return _re.sub(r"\s*\(os error \d+\).*$", "", text, flags=_re.S).strip() or str(err)


def _refuse_overwriting_inputs(output, inputs, plot=None, *, option="-o", also=()) -> None:
    """-o (or --plot) that would replace an input after reading it, named directly, through a
    link or ``..``, as a hard link, or as a file inside an input folder: a UsageError
    (:func:`ridgeline.outpaths.refuse_over_inputs`, the one guard). ``also``: other files read
    (--jobs, --config)."""
    from ridgeline.outpaths import refuse_over_inputs

    refuse_over_inputs([(option, output), ("--plot", plot)], [*inputs, *also])


def _say(text: str) -> None:
    """A line of a listing on stdout (``gpus``: names may come from a config file), made safe
    like every report (ridgeline.render.safe_text.for_output; JSON stays exact)."""
    from ridgeline.render.safe_text import for_output

    click.echo(for_output(text))


def _tell(message: str) -> None:
    """One line on stderr; a path or quoted input in it shown with its control characters escaped
    (ridgeline.render.safe_text.inline), so an error message cannot drive the terminal or a CI log;
    a secret this run was given shown as ``***`` (ridgeline.redact)."""
    from ridgeline.redact import redact  # a secret quoted by a library or a server: *** (issue 35)
    from ridgeline.render.safe_text import for_output, inline

    click.echo(for_output(inline(redact(message))), err=True)


def _emit(text: str, output: str | None, *, colour: bool = False, commands: bool = True) -> None:
    """Write ``text`` to ``output`` (a path; None or '-' = stdout); an unwritable path is a UsageError.

    Every report passes here: control characters from the inputs are shown escaped and GitHub
    workflow commands neutralised (ridgeline.render.safe_text.for_output; ``commands=False`` for
    ``--format github``, whose lines are commands on purpose), then ``colour`` adds the
    terminal's own colour codes when stdout is a terminal."""
    from ridgeline.render.safe_text import for_output

    text = for_output(text, commands=commands)
    if colour:
        text = _maybe_colour(text, output)
    if output and output != "-":
        from ridgeline.atomic import write_text
        from ridgeline.errors import UsageError

        try:
            write_text(output, text)
        except OSError as err:
            raise UsageError(f"cannot write {output}: {_os_error_text(err)}") from None
    else:
        click.echo(text, nl=False)


def _emit_pieces(pieces, output: str | None, *, commands: bool = True) -> None:
    """:func:`_emit` of a document given in pieces (no colour), written piece by piece, so a
    large report (a 50,000-launch JSON: 210 MB) is never held whole; the same bytes."""
    from ridgeline.render.safe_text import for_output_pieces

    safe = for_output_pieces(pieces, commands=commands)
    if output and output != "-":
        from ridgeline.atomic import atomic_path
        from ridgeline.errors import UsageError

        try:
            with atomic_path(output) as tmp:
                with open(tmp, "w", encoding="utf-8") as fh:
                    for piece in safe:
                        fh.write(piece)
        except OSError as err:
            raise UsageError(f"cannot write {output}: {_os_error_text(err)}") from None
    else:
        for piece in safe:
            click.echo(piece, nl=False)


def _split_codes(values: tuple[str, ...]) -> tuple[str, ...]:
    """``--select RL1,RL9 --select RL201`` -> ("RL1", "RL9", "RL201")."""
    return tuple(v.strip() for value in values for v in value.split(",") if v.strip())


def _exit_on_findings(ctx, findings, fail_on) -> None:
    """--fail-on: exit 1 when a finding this severe (or worse) exists."""
    if fail_on:
        rank = {"info": 0, "warning": 1, "critical": 2}
        if any(rank.get(f.severity, -1) >= rank[fail_on] for f in findings):
            ctx.exit(1)


def _ci_text(result, fmt: str) -> str:
    """--format sarif / github: the findings for a CI system (ridgeline.render.ci)."""
    from ridgeline.render import ci
    from ridgeline.rules import engine

    if fmt == "github":
        return ci.render_github(result)
    docs = {cls.code: engine.rule_doc(cls) for cls in engine.all_rules()}
    return ci.render_sarif(result, engine.catalogue_rows(), docs=docs, version=__version__)


STDIN_LABEL = "<stdin>"


def _stdin_inputs(files):
    """``-`` among FILES: standard input saved to a private temporary file (formats are told by
    content, which needs a file to seek in). Returns (files, temp folder or None)."""
    if "-" not in files:
        return files, None
    import tempfile
    from pathlib import Path

    from ridgeline.errors import UsageError

    if list(files).count("-") > 1:
        raise UsageError("'-' (standard input) can be given once")
    folder = Path(tempfile.mkdtemp(prefix="ridgeline-stdin-"))
    target = folder / "stdin"
    data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
    target.write_bytes(data)
    import atexit
    import shutil

    atexit.register(shutil.rmtree, folder, True)
    return [str(target) if f == "-" else f for f in files], folder


def _relabel_stdin(result, folder) -> None:
    """Inputs, skipped items, notes and launches name ``<stdin>``, not the temporary file."""
    if folder is None:
        return
    _relabel(result, str(folder / "stdin"), STDIN_LABEL)



def _render_analyze(files, *, gpu, select=(), ignore=(), config=None, thresholds=(), strict=True, window="5m",
                    warmup=None, tz=None, start=None, interval=None, host=None, timeline_options=None, what_if=(),
                    batch=None, by=(), jobs=None, time_format=None):
    """analyze_paths with the CLI's option spellings (shared by roofline and report)."""
    from ridgeline.pipeline import analyze_paths

    return analyze_paths(
        files, gpu=gpu, select=_split_codes(select), ignore=_split_codes(ignore), config=_config(config),
        window=window, warmup=warmup, tz=tz, time_format=time_format, strict=strict, thresholds=thresholds,
        start=_parse_start(start), interval_s=_parse_interval(interval), host=host,
        timeline_options=timeline_options, what_if=what_if, batch=batch, strict_folders=_strict_folders(),
        by=by, jobs=jobs,
    )


def _save_plot(fig, path) -> None:
    """save_figure with an unwritable path as a one-line UsageError."""
    from ridgeline.atomic import atomic_path
    from ridgeline.errors import UsageError
    from ridgeline.render.plots import save_figure

    try:
        with atomic_path(path) as tmp:
            save_figure(fig, tmp)
    except OSError as err:
        raise UsageError(f"cannot write {path}: {_os_error_text(err)}") from None


def _relabel(result, old: str, new: str) -> None:
    """``old`` (a path prefix) reads ``new`` in a result's inputs, skipped items, notes and launches."""
    import dataclasses

    def fix(text):
        return text.replace(old, new) if isinstance(text, str) else text

    result.inputs = [dataclasses.replace(i, path=fix(i.path)) for i in result.inputs]
    result.skipped = [dataclasses.replace(s, source=fix(s.source)) for s in result.skipped]
    result.notes = [fix(n) for n in result.notes]
    _relabel_sources(result, old, new)


def _relabel_sources(result, old: str, new: str) -> None:
    """Per-launch sources and per-input sample counts relabelled like the inputs (the accounting
    matches them by path)."""
    if result.sample_counts:
        result.sample_counts = {k.replace(old, new): v for k, v in result.sample_counts.items()}
    if result.kernels is not None and "source" in result.kernels.columns:
        import polars as pl

        result.kernels = result.kernels.with_columns(pl.col("source").str.replace_all(old, new, literal=True))

