"""``ridgeline analyze``: every kernel on its GPU's roofline, and the findings.
"""

from __future__ import annotations

import click

from ridgeline.commands.common import (
    _ci_text, _config, _emit, _emit_pieces, _exit_on_findings, _os_error_text, _parse_interval, _parse_start,
    _refuse_overwriting_inputs, _relabel_stdin, _save_plot, _split_codes, _stdin_inputs, _tell,
    _terminal_width,
)
from ridgeline.commands.options import (
    FAIL_ON_OPTION, OUTPUT_OPTION, RULE_OPTIONS, STRICT_OPTION, TELEMETRY_INPUT_OPTIONS,
    TIMELINE_INPUT_OPTIONS, WHAT_IF_OPTIONS, GROUP_OPTIONS, _strict_folders, _timeline_options,
)


@click.command("analyze")
@click.argument("files", nargs=-1, required=True, type=click.Path())
@click.option("--gpu", metavar="NAME", help="Force the GPU (catalogue name or spelling: H100, h100-sxm, A100-SXM4-80GB).")
@click.option("--top", "top", type=click.IntRange(min=1), default=10, show_default=True, help="Kernels shown in the table.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv", "parquet", "sarif", "github"]),
              default="table", show_default=True,
              help="table: readable report; json: one document; csv/parquet: the per-launch table; "
                   "sarif: SARIF 2.1.0 for code scanning; github: GitHub Actions annotations.")
@OUTPUT_OPTION
@RULE_OPTIONS
@FAIL_ON_OPTION
@STRICT_OPTION
@TELEMETRY_INPUT_OPTIONS
@GROUP_OPTIONS
@TIMELINE_INPUT_OPTIONS
@click.option("--all-windows", is_flag=True,
              help="Telemetry: every window row (first 40) instead of per-GPU totals and the worst windows.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), metavar="PATH",
              help="Also draw the roofline to PATH (.png, .svg or .pdf).")
@WHAT_IF_OPTIONS
@click.pass_context
def analyze_cmd(ctx, files, gpu, top, fmt, output, select, ignore, config, thresholds, fail_on, strict, window,
                warmup, tz, start=None, interval=None, host=None, all_windows=False, plot_path=None,
                timeline_launch_gap=None, timeline_short_kernel=None, what_if=(), batch=None, by=(), jobs=None,
                time_format=None):
    """Place every kernel on its GPU's roofline and report findings.

    FILES are Nsight Compute CSV exports (raw or details page) or .ncu-rep reports
    (extra ridgeline[ncu-rep]), telemetry files, timelines (nsys export --type
    sqlite, nsys stats CSVs, PyTorch profiler traces), or folders of them; each
    file's format is detected from its content. A profile and a timeline together
    rank kernel findings by their share of the timeline's wall time.

    \b
    Examples:
      ridgeline analyze profile.csv
      ridgeline analyze profile.csv --gpu h100-sxm --top 20
      ridgeline analyze runs/ --format json -o report.json
      ridgeline analyze profile.csv --format csv -o launches.csv
      ridgeline analyze profile.csv --select RL1 --ignore RL103 --fail-on warning
      ridgeline analyze profile.csv dcgm-dmon.txt --start 2026-01-05T08:00:00Z
      ridgeline analyze profile.csv --what-if H200 --what-if batch=64

    \b
    Exit codes: 0 clean, 1 findings at or above --fail-on, 2 bad input or usage,
    3 a bug in ridgeline (one line; --debug for the traceback).
    Capture everything ridgeline needs with:
      LC_ALL=C ncu --set roofline --csv --page raw --print-units base \\
          --log-file profile.csv ./app
    """
    from ridgeline.errors import UsageError
    from ridgeline.pipeline import analyze_paths

    if fmt == "parquet" and (not output or output == "-"):  # before any file is read
        raise UsageError("--format parquet needs -o PATH (Parquet is binary)")
    _refuse_overwriting_inputs(output, files, plot_path, also=(jobs, config))
    from ridgeline.attribution import check_by

    check_by(by, jobs)  # a bad --by before any file is read
    files, stdin_dir = _stdin_inputs(files)
    result = analyze_paths(
        files,
        gpu=gpu,
        select=_split_codes(select),
        ignore=_split_codes(ignore),
        config=_config(config),
        window=window,
        warmup=warmup,
        tz=tz,
        time_format=time_format,
        start=_parse_start(start),
        interval_s=_parse_interval(interval),
        host=host,
        strict=strict,
        strict_folders=_strict_folders(),
        thresholds=thresholds,
        timeline_options=_timeline_options(timeline_launch_gap, timeline_short_kernel),
        what_if=what_if,
        batch=batch,
        by=by,
        jobs=jobs,
    )
    _relabel_stdin(result, stdin_dir)
    if plot_path:
        _write_plot(result, plot_path)
    try:
        if fmt in ("csv", "parquet"):
            from ridgeline.render.kernels.tables import write_table

            if result.kernels is None or not result.kernels.height:
                click.echo("ridgeline: no kernels in the input: the per-launch table is empty"
                           + (" (telemetry windows: ridgeline telemetry --format csv)" if result.windows is not None
                              else ""), err=True)
            if output and output != "-":
                from ridgeline.atomic import atomic_path

                with atomic_path(output) as tmp:
                    write_table(result, fmt, tmp)
            else:
                write_table(result, fmt, output)
        else:
            if fmt == "json":  # written piece by piece: never the whole document at once
                from ridgeline.render.jsonout import json_pieces

                _emit_pieces(json_pieces(result), output)
                text = None
            elif fmt in ("sarif", "github"):
                text = _ci_text(result, fmt)
            else:
                from ridgeline.render.terminal import format_result

                text = format_result(result, top=top, all_windows=all_windows,
                                     width=_terminal_width() if not output or output == "-" else 80)
            if text is not None:
                _emit(text, output, colour=fmt == "table", commands=fmt != "github")
    except BrokenPipeError:  # `ridgeline analyze x | head`: main() exits quietly
        raise
    except OSError as err:  # includes polars' own FileNotFoundError / PermissionError
        raise UsageError(f"cannot write {output}: {_os_error_text(err)}") from None
    if output and output != "-":
        _tell(f"ridgeline: wrote {output}")
    _exit_on_findings(ctx, result.findings, fail_on)


def _write_plot(result, path) -> None:
    """analyze --plot: the roofline of this result, format by suffix."""
    from ridgeline.render.plots import roofline_figure

    has_kernels = (result.kernels is not None and result.kernels.height) or (
        result.summary is not None and result.summary.height
    )
    if not has_kernels:
        from ridgeline.render.timeline.plot import timeline_figure

        fig = timeline_figure(result)  # a timeline without a profile: its busy/idle plot
        if fig is not None:
            _save_plot(fig, path)
            _tell(f"ridgeline: wrote {path} (timeline)")
            return
        _tell(f"ridgeline: no kernels to draw; {path} not written")
        return
    projection = result.what_if[0] if getattr(result, "what_if", None) else None
    compare = None
    if projection is not None and projection.kind == "gpu":
        from ridgeline.analyzer.kernels.gpus import lookup

        compare = lookup(projection.target_gpu)[0]
    _save_plot(roofline_figure(result, what_if=projection, compare_gpu=compare), path)
    _tell(f"ridgeline: wrote {path}")

