"""``ridgeline report``: an HTML or Markdown report page.
"""

from __future__ import annotations

import click

from ridgeline.commands.common import (
    _config, _emit, _exit_on_findings, _refuse_overwriting_inputs, _relabel_stdin, _render_analyze,
    _stdin_inputs, _tell,
)
from ridgeline.commands.options import (
    FAIL_ON_OPTION, GROUP_OPTIONS, RULE_OPTIONS, STRICT_OPTION, TELEMETRY_INPUT_OPTIONS, TIMELINE_INPUT_OPTIONS,
    WHAT_IF_OPTIONS, _timeline_options,
)


@click.command("report")
@click.argument("files", nargs=-1, required=True, type=click.Path())
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="File to write (default report.html, or stdout for --format markdown).")
@click.option("--format", "fmt", type=click.Choice(["html", "markdown"]), default=None,
              help="html: one self-contained page; markdown: GitHub-flavoured (CI job summaries). "
                   "Default: from the -o suffix (.md -> markdown), else html.")
@click.option("--gpu", metavar="NAME", help="Force the GPU (catalogue name or spelling: H100, h100-sxm, A100...).")
@click.option("--compare-gpu", metavar="NAME", help="HTML: also draw this catalogue GPU's roofs on the plot.")
@click.option("--per-launch", is_flag=True, help="HTML: plot one point per launch instead of one per kernel name.")
@click.option("--title", help="Page title (default names the GPU and the inputs).")
@RULE_OPTIONS
@FAIL_ON_OPTION
@STRICT_OPTION
@TELEMETRY_INPUT_OPTIONS
@GROUP_OPTIONS
@TIMELINE_INPUT_OPTIONS
@WHAT_IF_OPTIONS
@click.pass_context
def report_cmd(ctx, files, output, fmt, gpu, compare_gpu, per_launch, title, select, ignore, config, thresholds,
               fail_on, strict, window, warmup, tz, start=None, interval=None, host=None, timeline_launch_gap=None,
               timeline_short_kernel=None, what_if=(), batch=None, by=(), jobs=None, time_format=None):
    """Write a report page: summary, findings, plots, kernel table, inputs.

    FILES (ncu exports and/or telemetry, or folders) are analyzed together, as by
    `ridgeline analyze`. The HTML page is one file with everything inline (styles,
    SVG plots, a sortable kernel table): it fetches nothing and opens offline.

    \b
    Examples:
      ridgeline report profile.csv -o report.html
      ridgeline report profile.csv dcgm-dmon.txt --gpu h100 -o report.html
      ridgeline report profile.csv --format markdown >> "$GITHUB_STEP_SUMMARY"
      ridgeline report scrapes/ --by namespace --by pod -o fleet.html
    """
    from pathlib import Path

    if fmt is None:
        fmt = "markdown" if output and Path(output).suffix.lower() in (".md", ".markdown") else "html"
    _refuse_overwriting_inputs(output or ("report.html" if fmt == "html" else None), files, also=(jobs, config))
    from ridgeline.pipeline import configure_gpus
    from ridgeline.rules.engine import load_config

    configure_gpus(load_config(_config(config)))
    from ridgeline.attribution import check_by

    check_by(by, jobs)  # a bad --by before any file is read
    if compare_gpu:  # a misspelled GPU is an error whatever the format (it is drawn in HTML only)
        from ridgeline.analyzer.kernels.gpus import lookup

        lookup(compare_gpu)
    files, stdin_dir = _stdin_inputs(files)
    result = _render_analyze(files, gpu=gpu, select=select, ignore=ignore, config=config, thresholds=thresholds,
                             strict=strict, window=window, warmup=warmup, tz=tz, start=start, interval=interval,
                             host=host, timeline_options=_timeline_options(timeline_launch_gap, timeline_short_kernel),
                             what_if=what_if, batch=batch, by=by, jobs=jobs, time_format=time_format)
    _relabel_stdin(result, stdin_dir)
    if fmt == "markdown":
        from ridgeline.render.markdown import render_markdown

        text = render_markdown(result, title=title)
    else:
        compare = None
        if compare_gpu:
            from ridgeline.analyzer.kernels.gpus import lookup

            compare, _note = lookup(compare_gpu)
        from ridgeline.render.html import render_html

        text = render_html(result, title=title, per_launch=per_launch, compare_gpu=compare)
        output = output or "report.html"
    _emit(text, output, commands=fmt == "markdown")  # CSS has `::before` at line starts
    if output and output != "-":
        _tell(f"ridgeline: wrote {output}")
    _exit_on_findings(ctx, result.findings, fail_on)

