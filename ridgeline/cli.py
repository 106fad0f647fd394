"""Command-line interface: wiring only.

Every command imports what it needs inside its body, so ``ridgeline --help`` does not
pay for polars, pandas or matplotlib. Errors derived from RidgelineError print one line
and exit 2; findings at or above ``--fail-on`` exit 1; a clean run exits 0; anything else
is a bug in ridgeline: one line saying so and exit 3 (the traceback with ``--debug`` or
``RIDGELINE_DEBUG=1``), so a nightly job never mistakes a crash for findings.
"""

from __future__ import annotations

import sys

import click

from ridgeline import __version__
from ridgeline.errors import RidgelineError

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

# exit codes, documented in README ("Exit codes") and in `ridgeline --help`
EXIT_CLEAN, EXIT_FINDINGS, EXIT_INPUT, EXIT_BUG = 0, 1, 2, 3


def _set_isolated(ctx, _param, value):
    if value:
        ctx.meta["ridgeline.isolated"] = True
    return value


ISOLATED_OPTION = click.option("--isolated", is_flag=True, expose_value=False, is_eager=True, callback=_set_isolated,
                               help="Ignore every config file (ridgeline.toml, pyproject.toml); defaults and flags only.")


def _config(config):
    """The --config value, or {} (no file at all) under --isolated; both at once is a UsageError."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None and ctx.meta.get("ridgeline.isolated"):
        if config:
            from ridgeline.errors import UsageError

            raise UsageError("give --config FILE or --isolated, not both")
        return {}
    return config


@click.group(context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, prog_name="ridgeline")
@click.option("--debug", is_flag=True, envvar="RIDGELINE_DEBUG",
              help="On an internal error (exit 3), print the full traceback.")
def cli(debug: bool = False) -> None:
    """Which wall is your GPU workload hitting, and what to do about it.

    ridgeline reads Nsight Compute exports (CSV raw or details page, .ncu-rep
    reports), Nsight Systems exports (sqlite, nsys stats CSVs), PyTorch profiler
    traces and DCGM / nvidia-smi telemetry (files or a live Prometheus), places
    every kernel on the roofline of the GPU it ran on, and turns that into
    findings you can act on.

    \b
    Start here:
      ridgeline demo                   # bundled decode profile, no GPU needed
      ridgeline analyze profile.csv    # kernels on the roofline + findings
      ridgeline analyze profile.csv --format json -o out.json
      ridgeline roofline profile.csv -o roofline.png
      ridgeline report profile.csv dcgm.txt -o report.html
      ridgeline telemetry dcgm-dmon.txt   # busy vs. working, per GPU and window
      ridgeline gpus                   # the GPU catalogue and ridge points
      ridgeline rules                  # the rule catalogue
      ridgeline diff old.json new.json # what changed; exit 1 on a regression
      ridgeline check perf.ridgeline.toml  # expectations in CI, no GPU

    \b
    Exit codes:
      0  clean (no finding at or above --fail-on)
      1  findings at or above --fail-on (diff: a regression)
      2  bad input or usage: one line naming the file, what was expected and found
      3  a bug in ridgeline (please report it; --debug prints the traceback)

    \b
    Recommended capture (everything ridgeline needs, nothing auto-scaled):
      LC_ALL=C ncu --set roofline --csv --page raw --print-units base \\
          --log-file profile.csv ./app
    """


@cli.command("rules")
@click.argument("codes", nargs=-1)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="TOML file with a [tool.ridgeline] table (default: the nearest ridgeline.toml or pyproject.toml "
    "with [tool.ridgeline]); configured thresholds are shown next to the defaults.",
)
@ISOLATED_OPTION
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "markdown", "json"]),
    default="text",
    show_default=True,
    help="text for the terminal, markdown for docs/rules.md, json for tools.",
)
def rules_command(codes: tuple[str, ...], config_path: str | None, fmt: str) -> None:
    """List the rule catalogue, or print one rule's full documentation.

    CODES are rule codes (RL101) for full documentation, or prefixes (RL1) to filter the list.

    \b
    Examples:
      ridgeline rules                   # code, name, severity, one line per rule
      ridgeline rules RL101             # what it finds, why, what to do, thresholds
      ridgeline rules RL9               # only the data-quality rules
      ridgeline rules --format json     # the catalogue for tools
    """
    import json as _json
    import re as _re

    from ridgeline.rules import engine

    cfg = engine.load_config(_config(config_path))  # a named file that is missing or broken is an error in every view
    exact = [c for c in codes if _re.fullmatch(r"(?i)RL[0-9]{3}", c.strip())]
    if codes and len(exact) == len(codes) and fmt == "text":
        overrides = engine.rule_overrides(cfg)
        docs = []
        for code in codes:
            cls = engine.get_rule(code)
            docs.append(engine.rule_doc(cls, overrides=overrides.get(cls.code)))
        from ridgeline.render.doctext import doc_to_text

        click.echo(doc_to_text("\n".join(docs), width=_terminal_width()), nl=False)
        return
    chosen = engine.select_rules(codes) if codes else engine.all_rules()
    wanted = {cls.code for cls in chosen}
    if fmt == "markdown":
        click.echo(engine.rules_markdown(), nl=False)
        return
    rows = [r for r in engine.catalogue_rows() if r["code"] in wanted]
    if fmt == "json":
        click.echo(_json.dumps(rows, indent=2, default=str))
        return
    width = None
    if sys.stdout.isatty():  # a terminal: wrap to it; a pipe or file: one line per rule (grep-able)
        import shutil

        width = shutil.get_terminal_size((80, 24)).columns
    click.echo("\n".join(rule_list_lines(rows, width)))


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


def rule_list_lines(rows, width: int | None = None) -> list[str]:
    """``CODE  name  severity  summary`` per rule; with ``width``, summaries wrap under the name."""
    import textwrap

    name_w = max((len(r["name"]) for r in rows), default=4)
    lines = []
    for r in rows:
        line = f"{r['code']}  {r['name']:<{name_w}}  {r['severity']:<8}  {r['summary']}"
        if width is None or len(line) <= width:
            lines.append(line)
            continue
        indent = " " * (len(r["code"]) + 2)
        lines.append(f"{r['code']}  {r['name']}  {r['severity']}")
        lines += textwrap.wrap(r["summary"], width=width, initial_indent=indent, subsequent_indent=indent)
    return lines


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
    from ridgeline.analyzer.telemetry import parse_duration_s

    return parse_duration_s(interval, what="--interval")


def _os_error_text(err: OSError) -> str:
    """'No such file or directory' (polars' own errors add ' (os error 2): PATH')."""
    import re as _re

    text = getattr(err, "strerror", None) or str(err)
    return _re.sub(r"\s*\(os error \d+\).*$", "", text, flags=_re.S).strip() or str(err)


def _refuse_overwriting_inputs(output, inputs, plot=None) -> None:
    """-o (or --plot) naming one of the input files would destroy it after reading: a UsageError."""
    from pathlib import Path

    from ridgeline.errors import UsageError

    named = {Path(p).resolve() for p in inputs if Path(p).is_file()}
    for target, option in ((output, "-o"), (plot, "--plot")):
        if target and target != "-" and Path(target).resolve() in named:
            raise UsageError(f"{option} {target} is one of the input files; write the output elsewhere")


def _say(text: str) -> None:
    """A line of a listing on stdout (``gpus``: names may come from a config file), made safe
    like every report (ridgeline.render.safe_text.for_output; JSON stays exact)."""
    from ridgeline.render.safe_text import for_output

    click.echo(for_output(text))


def _tell(message: str) -> None:
    """One line on stderr; a path or quoted input in it shown with its control characters escaped
    (ridgeline.render.safe_text.inline), so an error message cannot drive the terminal or a CI log."""
    from ridgeline.render.safe_text import for_output, inline

    click.echo(for_output(inline(message)), err=True)


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


def _split_codes(values: tuple[str, ...]) -> tuple[str, ...]:
    """``--select RL1,RL9 --select RL201`` -> ("RL1", "RL9", "RL201")."""
    return tuple(v.strip() for value in values for v in value.split(",") if v.strip())


# --------------------------------------------------------------------------------------
# options shared by several commands, defined once
# --------------------------------------------------------------------------------------
def _options(*decorators):
    """Several click options applied as one decorator, in the order given."""

    def apply(func):
        for decorator in reversed(decorators):
            func = decorator(func)
        return func

    return apply


RULE_OPTIONS = _options(
    click.option("--select", multiple=True, metavar="CODES",
                 help="Only these rules (codes or prefixes, comma-separated or repeated)."),
    click.option("--ignore", multiple=True, metavar="CODES", help="Skip these rules (codes or prefixes)."),
    click.option("--config", type=click.Path(dir_okay=False),
                 help="TOML file with a [tool.ridgeline] table (default: the nearest ridgeline.toml, "
                      ".ridgeline.toml or pyproject.toml with [tool.ridgeline], here or in a parent folder)."),
    ISOLATED_OPTION,
    click.option("--threshold", "thresholds", multiple=True, metavar="CODE.NAME=VALUE",
                 help="Override a rule threshold."),
)
# projections of the measured kernels (ridgeline.analyzer.whatif)
WHAT_IF_OPTIONS = _options(
    click.option("--what-if", "what_if", multiple=True, metavar="GPU|batch=N",
                 help="Project the measured kernels onto another GPU (--what-if H200) or the decode step onto "
                      "another batch (--what-if batch=64), each at its achieved fraction of its roof; repeatable."),
    click.option("--batch", "batch", type=click.FloatRange(min=0, min_open=True), default=None, metavar="B",
                 help="The profile's decode batch for --what-if batch=N (default: from the norm launches' grids, "
                      "else the weight GEMMs' intensity)."),
)
FAIL_ON_OPTION = click.option("--fail-on", type=click.Choice(["warning", "critical"]),
                              help="Exit 1 when a finding this severe (or worse) exists.")
STRICT_OPTION = click.option("--strict/--lenient", default=True, show_default=True,
                             help="--lenient skips (and lists) launches whose values do not parse instead of stopping, "
                                  "reads a telemetry cell that is no number as missing and skips a telemetry row "
                                  "without a usable GPU id or time (each listed with its line); "
                                  "--strict given explicitly also refuses an unreadable file found in a folder "
                                  "(default: skipped and listed).")


def _strict_folders() -> bool:
    """--strict written on the command line (not just the default): a bad file in a folder is an error."""
    ctx = click.get_current_context(silent=True)
    if ctx is None or "strict" not in ctx.params:
        return False
    from click.core import ParameterSource

    return bool(ctx.params["strict"]) and ctx.get_parameter_source("strict") == ParameterSource.COMMANDLINE
# telemetry inputs given next to a profile (analyze, report)
TELEMETRY_INPUT_OPTIONS = _options(
    click.option("--window", default="5m", show_default=True, help="Telemetry window when telemetry files are given."),
    click.option("--warmup", default=None, help="Telemetry: leading span to drop per GPU (e.g. 2m)."),
    click.option("--tz", default=None, help="Telemetry: zone of naive timestamps (nvidia-smi CSV)."),
    click.option("--start", default=None, metavar="TIME",
                 help="Telemetry: time of the first tick for inputs without timestamps (dcgmi dmon), ISO 8601."),
    click.option("--interval", default=None, metavar="DURATION",
                 help="Telemetry: tick interval of dcgmi/nvidia-smi dmon (their -d; default from the file, else 1s)."),
    click.option("--host", default=None, help="Telemetry: host name for inputs that name none (default: the file name)."),
)


# a live Prometheus as the telemetry source (ridgeline.sources.prometheus)
PROMETHEUS_OPTIONS = _options(
    click.option("--prometheus", "prom_url", metavar="URL",
                 help="Pull DCGM telemetry from this Prometheus (Thanos, Mimir, VictoriaMetrics) base URL."),
    click.option("--from", "prom_from", metavar="TIME",
                 help="Prometheus: start, RFC 3339 (2026-01-05T00:00:00Z), a date, or relative (-24h, now-1d)."),
    click.option("--to", "prom_to", default="now", show_default=True, metavar="TIME", help="Prometheus: end."),
    click.option("--step", "prom_step", default="15s", show_default=True, metavar="DURATION",
                 help="Prometheus: query resolution; use your scrape interval (dcgm-exporter collects every 30s by default)."),
    click.option("--match", "prom_match", metavar="SELECTOR",
                 help="Prometheus: label selector added to every query, e.g. '{cluster=\"a\",Hostname=~\"node-.*\"}'."),
    click.option("--save", "prom_save", type=click.Path(file_okay=False), metavar="DIR",
                 help="Prometheus: also keep what was pulled in DIR (date=/host=/part-0.parquet), which "
                      "`ridgeline telemetry DIR` reads; a re-run fills only what is missing."),
    click.option("--bearer-token-file", "prom_token_file", type=click.Path(dir_okay=False), metavar="FILE",
                 help="Prometheus: read a bearer token from FILE."),
    click.option("--bearer-token-env", "prom_token_env", metavar="VAR",
                 help="Prometheus: read a bearer token from environment variable VAR."),
    click.option("--basic-auth", "prom_user", metavar="USER",
                 help="Prometheus: basic auth user; the password comes from --password-file or "
                      "$RIDGELINE_PROMETHEUS_PASSWORD."),
    click.option("--password-file", "prom_password_file", type=click.Path(dir_okay=False), metavar="FILE",
                 help="Prometheus: basic auth password from FILE."),
    click.option("--ca-bundle", "prom_ca", type=click.Path(dir_okay=False), metavar="FILE",
                 help="Prometheus: CA certificates (PEM) to verify the server with."),
    click.option("--client-cert", "prom_cert", type=click.Path(dir_okay=False), metavar="FILE",
                 help="Prometheus: client certificate (PEM), with --client-key unless it holds the key."),
    click.option("--client-key", "prom_key", type=click.Path(dir_okay=False), metavar="FILE",
                 help="Prometheus: client private key (PEM)."),
    click.option("--insecure", "prom_insecure", is_flag=True, help="Prometheus: do not verify the server's TLS certificate."),
    click.option("--timeout", "prom_timeout", default="60s", show_default=True, metavar="DURATION",
                 help="Prometheus: per-request timeout."),
    click.option("--retries", "prom_retries", type=click.IntRange(min=0), default=3, show_default=True,
                 help="Prometheus: retries of a request after a timeout, connection error, 429 or 5xx (backoff doubles)."),
    click.option("--concurrency", "prom_concurrency", type=click.IntRange(min=1), default=4, show_default=True,
                 help="Prometheus: requests in flight at once."),
    click.option("--max-points", "prom_max_points", type=click.IntRange(min=2, max=11000), default=11000,
                 show_default=True, help="Prometheus: points per series per request (the server allows 11,000)."),
    click.option("--hosts-per-query", "prom_hosts", type=click.IntRange(min=1), default=32, show_default=True,
                 help="Prometheus: split fleets with more Hostname values than this into groups per request."),
    click.option("--strict", "prom_strict", is_flag=True,
                 help="Refuse instead of listing: a Prometheus request that still fails after its retries, an "
                      "unreadable file found in a folder (default: listed, the rest read; exit 2 only when "
                      "nothing usable is left)."),
    click.option("--lenient", "lenient", is_flag=True,
                 help="A cell that is no number is read as missing, a row without a usable GPU id or time "
                      "(or a Prometheus point of the wrong shape) is skipped; each is listed with its line "
                      "(default: exit 2 naming FILE:LINE and the column)."),
)


# timeline inputs (Nsight Systems exports, PyTorch profiler traces) given to analyze or report
TIMELINE_INPUT_OPTIONS = _options(
    click.option("--timeline-launch-gap", "timeline_launch_gap", default=None, metavar="DURATION",
                 help="Timeline: idle gaps up to this are launch overhead (default 10us)."),
    click.option("--timeline-short-kernel", "timeline_short_kernel", default=None, metavar="DURATION",
                 help="Timeline: kernels shorter than this count as short (launch-bound check; default 10us)."),
)


def _parse_short_duration(text, what):
    """'10us' / '5 ms' / '2e-5' (seconds) -> seconds; None -> None."""
    import re

    from ridgeline.errors import UsageError

    if text is None:
        return None
    m = re.match(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(ns|us|µs|μs|ms|s)?\s*$", str(text))
    if not m:
        raise UsageError(f"{what} {text!r}: expected a duration such as 10us, 2ms or 0.5s")
    scale = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, None: 1.0}[m.group(2)]
    return float(m.group(1)) * scale


def _timeline_options(launch_gap, short_kernel):
    return {"launch_gap_s": _parse_short_duration(launch_gap, "--timeline-launch-gap"),
            "short_kernel_s": _parse_short_duration(short_kernel, "--timeline-short-kernel")}


@cli.command("analyze")
@click.argument("files", nargs=-1, required=True, type=click.Path())
@click.option("--gpu", metavar="NAME", help="Force the GPU (catalogue name or spelling: H100, h100-sxm, A100-SXM4-80GB).")
@click.option("--top", "top", type=click.IntRange(min=1), default=10, show_default=True, help="Kernels shown in the table.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv", "parquet", "sarif", "github"]),
              default="table", show_default=True,
              help="table: readable report; json: one document; csv/parquet: the per-launch table; "
                   "sarif: SARIF 2.1.0 for code scanning; github: GitHub Actions annotations.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to this file instead of stdout.")
@RULE_OPTIONS
@FAIL_ON_OPTION
@STRICT_OPTION
@TELEMETRY_INPUT_OPTIONS
@TIMELINE_INPUT_OPTIONS
@click.option("--all-windows", is_flag=True,
              help="Telemetry: every window row (first 40) instead of per-GPU totals and the worst windows.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), metavar="PATH",
              help="Also draw the roofline to PATH (.png, .svg or .pdf).")
@WHAT_IF_OPTIONS
@click.pass_context
def analyze_cmd(ctx, files, gpu, top, fmt, output, select, ignore, config, thresholds, fail_on, strict, window,
                warmup, tz, start=None, interval=None, host=None, all_windows=False, plot_path=None,
                timeline_launch_gap=None, timeline_short_kernel=None, what_if=(), batch=None):
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
    _refuse_overwriting_inputs(output, files, plot_path)
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
        start=_parse_start(start),
        interval_s=_parse_interval(interval),
        host=host,
        strict=strict,
        strict_folders=_strict_folders(),
        thresholds=thresholds,
        timeline_options=_timeline_options(timeline_launch_gap, timeline_short_kernel),
        what_if=what_if,
        batch=batch,
    )
    _relabel_stdin(result, stdin_dir)
    if plot_path:
        _write_plot(result, plot_path)
    try:
        if fmt in ("csv", "parquet"):
            from ridgeline.render.tables import write_table

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
            if fmt == "json":
                from ridgeline.render.jsonout import render_json

                text = render_json(result)
            elif fmt in ("sarif", "github"):
                text = _ci_text(result, fmt)
            else:
                from ridgeline.render.terminal import format_result

                text = format_result(result, top=top, all_windows=all_windows,
                                     width=_terminal_width() if not output or output == "-" else 80)
            _emit(text, output, colour=fmt == "table", commands=fmt != "github")
    except BrokenPipeError:  # `ridgeline analyze x | head`: main() exits quietly
        raise
    except OSError as err:  # includes polars' own FileNotFoundError / PermissionError
        raise UsageError(f"cannot write {output}: {_os_error_text(err)}") from None
    if output and output != "-":
        _tell(f"ridgeline: wrote {output}")
    _exit_on_findings(ctx, result.findings, fail_on)


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


@cli.command("gpus")
@click.argument("name", required=False)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--config", type=click.Path(dir_okay=False),
              help="TOML file with a [tool.ridgeline] table (default ./ridgeline.toml): its GPUs are listed too.")
def gpus_cmd(name, fmt, config=None):
    """The GPU catalogue: datasheet peaks and ridge points (FLOP/byte) per precision.

    Ridge point = peak FLOP/s / DRAM bandwidth: kernels whose arithmetic intensity
    is below it are memory-bound. Peaks are dense (no sparsity), at boost clock.

    \b
    Examples:
      ridgeline gpus                 # every GPU, ridge points per precision
      ridgeline gpus h100            # one GPU in detail, with its datasheet
      ridgeline gpus --format json

    \b
    Your own GPUs, in ridgeline.toml (or pyproject.toml under [tool.ridgeline.gpus."NAME"]),
    with the catalogue's keys; peaks are dense FLOP/s per precision (fp64, fp32, fp16,
    tf32_tensor, fp16_tensor, fp8_tensor, int8_tensor, fp64_tensor):
      [gpus."Lab GPU"]                   # illustrative figures, not a real part
      aliases = ["NVIDIA Lab GPU 48GB"]   # the device name ncu records
      cc = "8.9"
      sm_count = 100
      memory_bytes = 48e9
      dram_bw_bytes_per_s = 1.0e12
      peak_flops = { fp32 = 50e12, fp16_tensor = 200e12 }
      source = "the datasheet you took the figures from"
    """
    import json

    from ridgeline.analyzer.gpus import PRECISION_LABELS, PRECISIONS, catalogue, lookup
    from ridgeline.pipeline import configure_gpus
    from ridgeline.rules.engine import load_config

    configure_gpus(load_config(_config(config)))

    if name:
        gpu, note = lookup(name)
        if fmt == "json":
            _say(json.dumps(gpu.to_dict() | {"match": note}, indent=2))
            return
        lines = [
            f"{gpu.name}  ({note})",
            f"  {gpu.arch}, compute capability {gpu.cc}{', ' + gpu.segment if gpu.segment else ''}, "
            f"{gpu.sm_count} SMs, {gpu.memory_bytes / 1e9:.0f} GB, "
            f"DRAM {gpu.dram_bw_bytes_per_s / 1e12:.3g} TB/s",
            f"  {'precision':<14}{'peak TFLOP/s':>14}{'ridge FLOP/B':>14}",
        ]
        for p in PRECISIONS:
            if gpu.peak(p) is None:
                continue
            mark = "  (derived)" if p in gpu.derived else ""
            lines.append(f"  {PRECISION_LABELS[p]:<14}{gpu.peak(p) / 1e12:>14.4g}{gpu.ridge(p):>14.3g}{mark}")
        lines.append(f"  source: {gpu.source}")
        if gpu.notes:
            lines.append(f"  notes: {gpu.notes}")
        import textwrap

        for line in lines:
            _say(textwrap.fill(line, width=80, subsequent_indent="    ") if len(line) > 80 else line)
        return
    gpus = catalogue()
    if fmt == "json":
        _say(json.dumps([g.to_dict() for g in gpus], indent=2))
        return
    short = {"fp64": "FP64", "fp32": "FP32", "fp16": "FP16", "tf32_tensor": "TF32tc", "fp16_tensor": "BF16tc",
             "fp8_tensor": "FP8tc", "int8_tensor": "INT8tc", "fp64_tensor": "FP64tc"}

    def ridge(v):
        if v is None:
            return "-"
        return f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.2f}"

    from ridgeline.analyzer.gpus import configured

    # grouped by segment, then architecture (newest first), so ~90 entries stay readable
    mine = {id(g) for g in configured()}
    titles = {"datacenter": "Datacenter", "workstation": "Workstation", "geforce": "GeForce"}
    groups: dict[tuple, list] = {}
    for g in gpus:
        seg = "configured" if id(g) in mine else (g.segment or "other")
        cc = tuple(int(x) for x in g.cc.split("."))
        groups.setdefault((seg, cc, g.arch), []).append(g)
    seg_order = {"configured": 0, "datacenter": 1, "workstation": 2, "geforce": 3, "other": 4}
    width = max(15, *(len(g.name) + 2 for g in gpus))  # 19 for the bundled names: 80 columns
    _say("Ridge points, FLOP/byte = dense peak FLOP/s / DRAM B/s ('-': no such unit)")
    _say(f"{'GPU':<{width}}{'TB/s':>5}" + "".join(f"{short[p]:>7}" for p in PRECISIONS))
    for seg, cc, arch in sorted(groups, key=lambda k: (seg_order.get(k[0], 9), tuple(-x for x in k[1]))):
        title = "Your GPUs (config)" if seg == "configured" else titles.get(seg, "Other")
        _say(f"{title}, {arch} (CC {'.'.join(map(str, cc))})")
        for g in groups[(seg, cc, arch)]:
            _say(f"  {g.name:<{width - 2}}{g.dram_bw_bytes_per_s / 1e12:>5.2f}"
                       + "".join(f"{ridge(g.ridge(p)):>7}" for p in PRECISIONS))
    _say("tc = tensor cores (BF16tc: fp16 and bf16 inputs; GeForce: FP32-accumulate rate).")
    _say("Details and sources: ridgeline gpus NAME")



def _render_analyze(files, *, gpu, select=(), ignore=(), config=None, thresholds=(), strict=True, window="5m",
                    warmup=None, tz=None, start=None, interval=None, host=None, timeline_options=None, what_if=(),
                    batch=None):
    """analyze_paths with the CLI's option spellings (shared by roofline and report)."""
    from ridgeline.pipeline import analyze_paths

    return analyze_paths(
        files, gpu=gpu, select=_split_codes(select), ignore=_split_codes(ignore), config=_config(config),
        window=window, warmup=warmup, tz=tz, strict=strict, thresholds=thresholds,
        start=_parse_start(start), interval_s=_parse_interval(interval), host=host,
        timeline_options=timeline_options, what_if=what_if, batch=batch, strict_folders=_strict_folders(),
    )


def _input_label(path, files) -> str:
    """The file name, or parent/name when several inputs share a name (profile.csv in each run dir)."""
    from pathlib import Path

    names = [Path(f).name for f in files]
    p = Path(path)
    return p.name if names.count(p.name) == 1 else str(Path(p.parent.name) / p.name)


def _write_plot(result, path) -> None:
    """analyze --plot: the roofline of this result, format by suffix."""
    from ridgeline.render.plots import roofline_figure

    has_kernels = (result.kernels is not None and result.kernels.height) or (
        result.summary is not None and result.summary.height
    )
    if not has_kernels:
        from ridgeline.render.timeline_plot import timeline_figure

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
        from ridgeline.analyzer.gpus import lookup

        compare = lookup(projection.target_gpu)[0]
    _save_plot(roofline_figure(result, what_if=projection, compare_gpu=compare), path)
    _tell(f"ridgeline: wrote {path}")


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


@cli.command("roofline")
@click.argument("files", nargs=-1, required=True, type=click.Path())
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Image to write: .png, .svg or .pdf (the suffix picks the format).")
@click.option("--gpu", metavar="NAME", help="Force the GPU whose roofs are drawn (H100, h100-sxm, A100...).")
@click.option("--compare-gpu", metavar="NAME", help="Also draw this catalogue GPU's roofs, dashed grey.")
@click.option("--per-launch", is_flag=True, help="One point per launch instead of one per kernel name.")
@click.option("--top", type=click.IntRange(min=0), default=8, show_default=True, help="Kernels labelled by name.")
@click.option("--label", "labels", multiple=True, metavar="TEXT",
              help="Legend name for each input, in order (default: the file name).")
@click.option("--title", help="Plot title (default names the GPU and the input).")
@click.option("--levels/--no-levels", default=True, show_default=True,
              help="Also mark the labelled kernels at their L2/L1 intensities (hollow) when counted.")
@STRICT_OPTION
def roofline_cmd(files, output, gpu, compare_gpu, per_launch, top, labels, title, levels, strict):
    """Draw the roofline: kernels as points against the GPU's bandwidth and compute roofs.

    Each FILE (an ncu export, or a folder of them) is analyzed on its own and drawn
    with its own marker, so a batch sweep shows the march toward the ridge point.
    Point area is the kernel's share of GPU time; colour says memory- or compute-bound.

    \b
    Examples:
      ridgeline roofline profile.csv -o roofline.png
      ridgeline roofline b1.csv b8.csv b32.csv b256.csv --label "batch 1" --label "batch 8" \\
          --label "batch 32" --label "batch 256" -o decode-sweep.svg
      ridgeline roofline profile.csv --compare-gpu B200 -o what-if.pdf
      ridgeline roofline profile.csv --per-launch --top 0 -o launches.png
    """
    from pathlib import Path

    from ridgeline.errors import UsageError
    from ridgeline.render.plots import SAVE_FORMATS, roofline_figure

    if Path(output).suffix.lower() not in SAVE_FORMATS:  # fail before the analysis, not after
        raise UsageError(f"cannot write a plot to {output!r}: use a .png, .svg or .pdf file name")
    if labels and len(labels) != len(files):
        raise UsageError(f"--label given {len(labels)} times for {len(files)} inputs; give one per input or none")
    from ridgeline.pipeline import configure_gpus
    from ridgeline.rules.engine import load_config

    configure_gpus(load_config(None))  # ./ridgeline.toml's own GPUs
    compare = None
    if compare_gpu:
        from ridgeline.analyzer.gpus import lookup

        compare, _note = lookup(compare_gpu)
    runs = []
    for i, path in enumerate(files):
        res = _render_analyze([path], gpu=gpu, strict=strict)
        has_kernels = (res.kernels is not None and res.kernels.height) or (res.summary is not None and res.summary.height)
        if not has_kernels:
            if len(files) == 1:
                from ridgeline.errors import InputError

                raise InputError(path, "expected Nsight Compute kernels to draw; found none (telemetry only?)")
            _tell(f"ridgeline: {path}: no kernels to draw, left out of the plot")
            continue
        runs.append((labels[i] if labels else _input_label(path, files), res))
    if not runs:
        from ridgeline.errors import InputError

        raise InputError(", ".join(files), "expected Nsight Compute kernels to draw; found none")
    fig = roofline_figure(runs, per_launch=per_launch, top=top, compare_gpu=compare, title=title, levels=levels)
    _save_plot(fig, output)
    _tell(f"ridgeline: wrote {output}")


@cli.command("report")
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
@TIMELINE_INPUT_OPTIONS
@WHAT_IF_OPTIONS
@click.pass_context
def report_cmd(ctx, files, output, fmt, gpu, compare_gpu, per_launch, title, select, ignore, config, thresholds,
               fail_on, strict, window, warmup, tz, start=None, interval=None, host=None, timeline_launch_gap=None,
               timeline_short_kernel=None, what_if=(), batch=None):
    """Write a report page: summary, findings, plots, kernel table, inputs.

    FILES (ncu exports and/or telemetry, or folders) are analyzed together, as by
    `ridgeline analyze`. The HTML page is one file with everything inline (styles,
    SVG plots, a sortable kernel table): it fetches nothing and opens offline.

    \b
    Examples:
      ridgeline report profile.csv -o report.html
      ridgeline report profile.csv dcgm-dmon.txt --gpu h100 -o report.html
      ridgeline report profile.csv --format markdown >> "$GITHUB_STEP_SUMMARY"
    """
    from pathlib import Path

    if fmt is None:
        fmt = "markdown" if output and Path(output).suffix.lower() in (".md", ".markdown") else "html"
    _refuse_overwriting_inputs(output or ("report.html" if fmt == "html" else None), files)
    from ridgeline.pipeline import configure_gpus
    from ridgeline.rules.engine import load_config

    configure_gpus(load_config(_config(config)))
    if compare_gpu:  # a misspelled GPU is an error whatever the format (it is drawn in HTML only)
        from ridgeline.analyzer.gpus import lookup

        lookup(compare_gpu)
    files, stdin_dir = _stdin_inputs(files)
    result = _render_analyze(files, gpu=gpu, select=select, ignore=ignore, config=config, thresholds=thresholds,
                             strict=strict, window=window, warmup=warmup, tz=tz, start=start, interval=interval,
                             host=host, timeline_options=_timeline_options(timeline_launch_gap, timeline_short_kernel),
                             what_if=what_if, batch=batch)
    _relabel_stdin(result, stdin_dir)
    if fmt == "markdown":
        from ridgeline.render.markdown import render_markdown

        text = render_markdown(result, title=title)
    else:
        compare = None
        if compare_gpu:
            from ridgeline.analyzer.gpus import lookup

            compare, _note = lookup(compare_gpu)
        from ridgeline.render.html import render_html

        text = render_html(result, title=title, per_launch=per_launch, compare_gpu=compare)
        output = output or "report.html"
    _emit(text, output, commands=fmt == "markdown")  # CSS has `::before` at line starts
    if output and output != "-":
        _tell(f"ridgeline: wrote {output}")
    _exit_on_findings(ctx, result.findings, fail_on)


DEMO_PROFILE = "decode-b8-h100.ncu-raw.csv"
DEMO_FILES = (DEMO_PROFILE, "infer-0.dmon")
DEMO_LABEL = "ridgeline/data/demo"  # printed instead of the installation's absolute path
# dcgmi dmon records no timestamps: the demo anchors its first tick here (any fixed time would do;
# a fixed one keeps the output reproducible) and says so
DEMO_START = "2026-01-05T08:00:00Z"


def _relabel_demo(result, folder) -> None:
    """Inputs, skipped items and notes name ``ridgeline/data/demo/...``, not this machine's path."""
    _relabel(result, str(folder), DEMO_LABEL)


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


def demo_folder():
    """The bundled demo inputs (``ridgeline/data/demo``) as an importlib.resources Traversable."""
    from importlib import resources

    return resources.files("ridgeline") / "data" / "demo"


@cli.command("demo")
@click.option("--top", "top", type=click.IntRange(min=1), default=10, show_default=True, help="Kernels shown in the table.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="table: the report `ridgeline analyze` prints; json: the same as one JSON document.")
@click.option("--copy-to", type=click.Path(file_okay=False), metavar="DIR",
              help="Also copy the demo input files into DIR, to try other commands on them.")
def demo_cmd(top, fmt, copy_to):
    """Analyze a bundled decode profile: no GPU, no network, about a second.

    The inputs are SYNTHETIC (made by fixtures/generate.py from a Llama-3-8B-like
    model's shapes and the H100 SXM datasheet): one decode step at batch 8 as an
    Nsight Compute raw-page export, plus 10 minutes of `dcgmi dmon` from that GPU.

    \b
    Examples:
      ridgeline demo
      ridgeline demo --format json
      ridgeline demo --copy-to demo-inputs && ridgeline analyze demo-inputs
    """
    import shutil
    from importlib import resources
    from pathlib import Path

    from ridgeline.errors import UsageError
    from ridgeline.pipeline import analyze_paths

    bundle = demo_folder()
    if not all((bundle / name).is_file() for name in DEMO_FILES):
        raise UsageError("the demo data is missing from this installation (ridgeline/data/demo); reinstall ridgeline")
    with resources.as_file(bundle) as folder:
        folder = Path(folder)
        if copy_to:
            dest = Path(copy_to)
            try:
                dest.mkdir(parents=True, exist_ok=True)
                for name in DEMO_FILES:
                    shutil.copy2(folder / name, dest / name)
            except OSError as err:
                raise UsageError(f"cannot copy the demo inputs to {dest}: {_os_error_text(err)}") from None
            _tell(f"ridgeline: copied the demo inputs to {dest}")
        result = analyze_paths([folder / name for name in DEMO_FILES], start=_parse_start(DEMO_START))
        _relabel_demo(result, folder)
        result.notes.append(
            f"demo: dcgmi dmon records no timestamps; its first tick is placed at {DEMO_START} "
            "(a fixed time, for reproducible output)"
        )
        if fmt == "json":
            from ridgeline.render.jsonout import render_json

            click.echo(render_json(result), nl=False)
        else:
            from ridgeline.render.terminal import format_result

            click.echo("ridgeline demo: SYNTHETIC inputs (Llama-3-8B-like decode, batch 8, H100 SXM) from")
            click.echo(f"  {DEMO_LABEL} (bundled)")
            click.echo("")
            click.echo(format_result(result, top=top), nl=False)
        if fmt == "table":
            click.echo("")
            click.echo(_demo_next_steps(folder, copy_to))


def _demo_next_steps(folder, copy_to) -> str:
    """'Try next' lines, only for commands this installation has."""
    where = copy_to or "demo-inputs"
    steps = [] if copy_to else [
        ("demo", "ridgeline demo --copy-to demo-inputs", "copy the inputs somewhere to experiment"),
    ]
    steps += [
        ("analyze", f"ridgeline analyze {where}/{DEMO_PROFILE} --top 20", "the profile alone, more kernels"),
        ("analyze", f"ridgeline analyze {where} --start {DEMO_START} --format json -o demo.json",
         "everything as one JSON document"),
        ("analyze", f"ridgeline analyze {where}/{DEMO_PROFILE} --what-if H200",
         "the same kernels on an H200 (or this step at another batch: --what-if batch=64)"),
        ("rules", "ridgeline rules RL101", "what a finding means and how to act on it"),
        ("gpus", "ridgeline gpus h100", "the roofs and ridge points used"),
    ]
    lines = ["Try next:"]
    for command, text, why in steps:
        if command in cli.commands:
            lines.append(f"  # {why}")
            lines.append(f"  {text}")
    lines.append("  # on your own GPU: capture everything ridgeline needs, nothing auto-scaled")
    lines.append("  LC_ALL=C ncu --set roofline --csv --page raw --print-units base \\")
    lines.append("      --log-file profile.csv python your_app.py")
    lines.append("  ridgeline analyze profile.csv")
    return "\n".join(lines)


@cli.command("telemetry")
@click.argument("paths", nargs=-1, required=False, type=click.Path())
@click.option("--window", default="5m", show_default=True, help="Window length (30s, 5m, 1h) or 'all' for one row per GPU.")
@click.option("--warmup", default=None, metavar="DURATION", help="Leading span dropped per GPU (e.g. 2m).")
@click.option("--tz", default=None, metavar="ZONE", help="Zone of naive timestamps, e.g. Europe/Berlin (nvidia-smi CSV); default UTC.")
@click.option("--interval", "interval", default=None, metavar="DURATION",
              help="Tick interval of dcgmi dmon / nvidia-smi dmon (their -d; default 1s) and of exporter scrapes without timestamps.")
@click.option("--start", default=None, metavar="TIME", help="Time of the first tick for inputs without timestamps (ISO 8601, UTC if no zone).")
@click.option("--host", default=None, help="Host name for inputs that name none (default: the file name).")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv", "parquet", "sarif", "github"]),
              default="table", show_default=True,
              help="table: readable report; json: one document; csv/parquet: the per-window table; "
                   "sarif / github: findings for code scanning / GitHub Actions annotations.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to this file instead of stdout.")
@RULE_OPTIONS
@FAIL_ON_OPTION
@click.option("--all-windows", is_flag=True,
              help="Table: every window row (up to --max-rows) instead of per-GPU totals and the worst windows.")
@click.option("--worst", type=click.IntRange(min=0), default=10, show_default=True,
              help="Table: worst windows by wasted time shown under the per-GPU totals.")
@click.option("--max-rows", type=click.IntRange(min=1), default=40, show_default=True,
              help="Table: at most this many GPU rows (or window rows with --all-windows).")
@click.option("--by", "by", multiple=True, metavar="KEY",
              help="Group GPUs by workload: pod, namespace, container, job, host, label=NAME, or user/account "
                   "with --jobs; repeat to nest (--by namespace --by pod).")
@click.option("--jobs", "jobs", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Slurm accounting (sacct --parsable2 with JobID, User, Account, NodeList, Start, End, AllocTRES) "
                   "joined on host, GPU and time; groups by job unless --by says otherwise.")
@click.option("--engine", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="Reduce the partitions (hosts) here, or with dask.distributed (needs ridgeline[dask]).")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="--engine dask: scheduler address (tcp://host:8786); default a LocalCluster on this machine.")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="--engine dask without --scheduler: LocalCluster worker processes (default 2).")
@click.option("-q", "--quiet", is_flag=True, help="No progress line on stderr (shown only when stderr is a terminal).")
@PROMETHEUS_OPTIONS
@click.pass_context
def telemetry_cmd(ctx, paths, window, warmup, tz, interval, start, host, fmt, output, select, ignore, config,
                  thresholds, fail_on, max_rows, all_windows=False, worst=10, engine="local", scheduler=None,
                  workers=None, quiet=False, by=(), jobs=None, **prom):
    """Busy vs. working: GPU-Util against Tensor-Core, SM and DRAM activity, per GPU and window.

    PATHS are dcgmi dmon captures, dcgm-exporter scrapes, Prometheus query JSON,
    nvidia-smi --query-gpu CSV or nvidia-smi dmon text, long/wide telemetry CSV or
    Parquet, or folders of them (hive-partitioned Parquet folders stay one lazy scan).
    Each file's format is detected from its content.

    \b
    Examples:
      ridgeline telemetry dcgm-dmon.txt --interval 1s --start 2026-01-05T08:00:00Z
      ridgeline telemetry scrapes/ --window 1h --warmup 2m
      ridgeline telemetry gpu_log.csv --tz Europe/Berlin --window all
      ridgeline telemetry fleet/ --format csv -o windows.csv --fail-on warning
      ridgeline telemetry fleet/ --all-windows --max-rows 200
      ridgeline telemetry --prometheus http://prom:9090 --from -24h --to now \\
          --match '{cluster="a"}' --save store/ --format json -o night.json

    \b
    Exit codes: 0 clean, 1 findings at or above --fail-on, 2 bad input or usage,
    3 a bug in ridgeline (one line; --debug for the traceback).
    """
    from ridgeline.analyzer.telemetry import parse_duration_s
    from ridgeline.errors import UsageError
    from ridgeline.pipeline import reduce_telemetry
    from ridgeline.progress import Progress
    from ridgeline.result import AnalysisResult
    from ridgeline.rules.base import Context
    from ridgeline.rules.engine import load_config, run_rules

    interval_s = parse_duration_s(interval, what="--interval")
    start_dt = _parse_start(start)
    from ridgeline.attribution import check_by, telemetry_groups

    check_by(by, jobs)  # a bad --by before any file is read
    if fmt == "parquet" and (not output or output == "-"):  # before any file is read
        raise UsageError("--format parquet needs -o PATH (Parquet is binary)")
    _refuse_overwriting_inputs(output, paths)
    cfg = load_config(_config(config))
    notes: list[str] = []
    if engine != "dask" and (scheduler or workers):
        raise UsageError("--scheduler and --workers go with --engine dask")
    if not paths and not prom.get("prom_url"):
        raise UsageError("give telemetry PATHS, or --prometheus URL --from START to pull from a server")
    if prom.get("lenient") and prom.get("prom_strict"):
        raise UsageError("--strict and --lenient exclude each other")
    pulled = _pull_prometheus(prom) if prom.get("prom_url") else None
    if pulled is not None:
        ctx.call_on_close(pulled.close)  # the pull's temporary files, once the output is written
    paths, stdin_dir = _stdin_inputs(paths)
    counts: dict = {}  # samples per input, counted by the reduction
    lf, inputs, skipped, windows = reduce_telemetry(
        paths, window=window, warmup=warmup, tz=tz, interval_s=interval_s, host=host, start=start_dt, notes=notes,
        engine=engine, scheduler=scheduler, workers=workers, progress=Progress(enabled=False if quiet else None),
        extra=[] if pulled is None else [pulled.source()],
        strict=not prom.get("lenient"), strict_folders=bool(prom.get("prom_strict")), sample_counts=counts,
    )
    if pulled is not None:
        inputs.append(pulled.info)
        skipped += pulled.skipped
        notes += [n for n in pulled.notes if n not in notes]
    if not inputs:
        from ridgeline.errors import InputError

        why = f"; {len(skipped)} file(s) skipped, e.g. {skipped[0].source}: {skipped[0].reason}" if skipped else ""
        raise InputError(", ".join(paths), "expected telemetry files (dcgmi dmon, dcgm-exporter, Prometheus JSON, "
                         "nvidia-smi CSV/dmon, telemetry CSV/Parquet); none found" + why)
    from ridgeline.pipeline import check_window, empty_windows_notes, silent_telemetry_notes

    check_window(window, windows)
    notes += [n for n in empty_windows_notes(windows, inputs, warmup) if n not in notes]
    notes += [n for n in silent_telemetry_notes(windows) if n not in notes]
    context = Context(telemetry=lf, windows=windows)
    findings = run_rules(context, select=_split_codes(select), ignore=_split_codes(ignore), config=cfg,
                         family="telemetry", thresholds=thresholds)
    groups = telemetry_groups(lf, inputs, windows, by=by, jobs_path=jobs, tz=tz, notes=notes, skipped=skipped)
    result = AnalysisResult(inputs=inputs, windows=windows, findings=findings, skipped=skipped, notes=notes,
                            sample_counts=counts, groups=groups)
    _relabel_stdin(result, stdin_dir)
    if fmt == "parquet":
        from ridgeline.atomic import write_parquet

        try:
            write_parquet(windows, output)
        except OSError as err:
            raise UsageError(f"cannot write {output}: {_os_error_text(err)}") from None
    else:
        if fmt == "csv":
            from ridgeline.render.tables import safe_cells

            text = safe_cells(windows).write_csv()
        elif fmt == "json":
            from ridgeline.render.jsonout import render_json

            text = render_json(result)
        elif fmt in ("sarif", "github"):
            text = _ci_text(result, fmt)
        else:
            from ridgeline.render.telemetry import format_telemetry_report

            text = format_telemetry_report(result, max_rows=max_rows, all_windows=all_windows, worst=worst,
                                           width=_terminal_width() if not output or output == "-" else 80)
        _emit(text, output, colour=fmt == "table", commands=fmt != "github")
    if output and output != "-":
        _tell(f"ridgeline: wrote {output}")
    _exit_on_findings(ctx, findings, fail_on)


@cli.command("diff")
@click.argument("documents", nargs=-1, required=True, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True,
              help="text for the terminal, markdown for a job summary or PR comment, json for tools.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to this file instead of stdout.")
@click.option("--config", type=click.Path(dir_okay=False),
              help="TOML file whose [tool.ridgeline.diff] table sets the thresholds (default: found as for analyze).")
@ISOLATED_OPTION
@click.option("--threshold", "diff_thresholds", multiple=True, metavar="NAME=VALUE",
              help="Override a regression threshold, e.g. kernel_time_rel=0.2 (see ridgeline.analyzer.diff).")
@click.option("--top", type=click.IntRange(min=1), default=15, show_default=True,
              help="Kernels, hosts and GPUs shown per table.")
@click.pass_context
def diff_cmd(ctx, documents, fmt, output, config, diff_thresholds, top):
    """Compare ridgeline JSON documents: what changed, and is it a regression?

    BASE NEW: the pair below. NIGHT... TONIGHT, or a folder of nightly documents
    (`diff nights/ tonight.json`): tonight against the band the nights draw (median and
    MAD, trend_k / trend_min_baselines / trend_window; see docs/nightly.md).

    BASE and NEW are two `analyze --format json` documents (kernels matched by name and
    launch shape: time, share, intensity, bound, roof fraction) or two `telemetry --format
    json` documents (per GPU and host: wasted GPU-hours, busy with idle tensor cores, idle
    while allocated, coverage; fleet totals). Findings: new, resolved, changed severity.

    \b
    A regression (thresholds: [tool.ridgeline.diff] or --threshold NAME=VALUE):
      kernel_time_rel=0.10, kernel_time_abs_s=50e-6  a kernel group grew by both
      total_time_rel=0.10, total_time_abs_s=50e-6    the run's time grew by both
      new_finding_severity=warning    a finding this severe is new, or rose to it
      fleet_waste_share=0.05          fleet waste grew by 5 points of GPU-hours
      host_waste_share=0.10           a host's waste grew by 10 points

    \b
    Examples:
      ridgeline diff last-night.json tonight.json
      ridgeline diff nights/ tonight.json     # against the band of the nights
      ridgeline diff old.json new.json --format markdown >> "$GITHUB_STEP_SUMMARY"
      ridgeline diff old.json new.json --threshold kernel_time_rel=0.2

    \b
    Exit codes: 0 no regression, 1 regression, 2 bad input (not ridgeline
    JSON, different kinds, incompatible schema versions), 3 a bug in ridgeline.
    """
    from ridgeline.analyzer.diff import compare
    from ridgeline.errors import UsageError
    from ridgeline.rules.engine import load_config

    _refuse_overwriting_inputs(output, documents)
    cfg = load_config(_config(config))
    table = cfg.get("diff", {})
    if not isinstance(table, dict):
        raise UsageError("config: [tool.ridgeline.diff] must be a table of thresholds, e.g. kernel_time_rel = 0.2")
    overrides = dict(table)
    for item in diff_thresholds:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"--threshold {item!r}: expected NAME=VALUE, e.g. kernel_time_rel=0.2")
        overrides[name.strip()] = value.strip()
    import os

    if len(documents) != 2 or any(p != "-" and os.path.isdir(p) for p in documents):
        from ridgeline.nightly import diff_many

        if len(documents) < 2 and not (documents and os.path.isdir(documents[0])):
            raise UsageError("diff: expected BASE NEW, NIGHT... TONIGHT or a folder of nightly documents")
        text, regressed = diff_many(documents, _read_json_document, overrides, fmt=fmt, top=top)
        _emit(text, output)
        if output and output != "-":
            _tell(f"ridgeline: wrote {output}")
        ctx.exit(1 if regressed else 0)
    base, new = documents
    docs = [_read_json_document(p) for p in (base, new)]
    from ridgeline.analyzer.docshape import check_document

    for doc, label in zip(docs, (base, new)):
        check_document(doc, label)
    cmp = compare(docs[0], docs[1], base_label=base, new_label=new, overrides=overrides)
    if fmt == "json":
        from ridgeline.render.diff import render_diff_json

        text = render_diff_json(cmp)
    elif fmt == "markdown":
        from ridgeline.render.diff import render_diff_markdown

        text = render_diff_markdown(cmp, top=top)
    else:
        from ridgeline.render.diff import format_diff

        text = format_diff(cmp, top=top)
    _emit(text, output)
    if output and output != "-":
        _tell(f"ridgeline: wrote {output}")
    if cmp.regressed:
        ctx.exit(1)


def _read_json_document(path: str):
    """A JSON file as Python objects; InputError (one line) when it is not JSON."""
    import json

    from ridgeline.errors import InputError

    try:
        if path == "-":
            raw = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
        else:
            with open(path, "rb") as fh:
                raw = fh.read()
    except OSError as err:
        raise InputError(path, f"cannot read it: {_os_error_text(err)}") from None
    try:
        return json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise InputError(path, "expected a ridgeline JSON document (UTF-8), got binary data") from None
    except json.JSONDecodeError as err:
        from ridgeline.parsers.plain import plain_reason

        raise InputError(path, f"expected a ridgeline JSON document, got {plain_reason(err)}", line=err.lineno) from None


def _pull_prometheus(prom: dict):
    """telemetry --prometheus: pull, report progress on a terminal, --save the store."""
    import os

    from ridgeline.errors import UsageError
    from ridgeline.sources import prometheus as P

    if not prom.get("prom_from"):
        raise UsageError("--prometheus needs --from START (e.g. --from -24h or 2026-01-05T00:00:00Z)")
    import datetime as _dt

    now = _dt.datetime.now(_dt.timezone.utc)  # one "now" for both ends
    start = P.parse_time(prom["prom_from"], what="--from", now=now).astimezone(_dt.timezone.utc)
    end = P.parse_time(prom["prom_to"], what="--to", now=now).astimezone(_dt.timezone.utc)
    token = None
    if prom.get("prom_token_file") and prom.get("prom_token_env"):
        raise UsageError("give --bearer-token-file or --bearer-token-env, not both")
    if prom.get("prom_token_file"):
        token = _read_secret(prom["prom_token_file"], "--bearer-token-file")
    elif prom.get("prom_token_env"):
        token = os.environ.get(prom["prom_token_env"], "").strip()
        if not token:
            raise UsageError(f"--bearer-token-env {prom['prom_token_env']}: the variable is not set or empty")
    password = None
    if prom.get("prom_password_file"):
        password = _read_secret(prom["prom_password_file"], "--password-file")
    elif prom.get("prom_user"):
        password = os.environ.get("RIDGELINE_PROMETHEUS_PASSWORD")
        if password is None:
            raise UsageError("--basic-auth needs a password: --password-file FILE or $RIDGELINE_PROMETHEUS_PASSWORD")
    if password is not None and not prom.get("prom_user"):
        raise UsageError("--password-file needs --basic-auth USER")
    if token and prom.get("prom_user"):
        raise UsageError("give a bearer token or --basic-auth, not both")
    if prom.get("prom_key") and not prom.get("prom_cert"):
        raise UsageError("--client-key needs --client-cert")
    auth = P.Auth(bearer_token=token, username=prom.get("prom_user"), password=password, ca_bundle=prom.get("prom_ca"),
                  client_cert=prom.get("prom_cert"), client_key=prom.get("prom_key"),
                  insecure=bool(prom.get("prom_insecure")))
    progress = None
    if sys.stderr.isatty():
        def progress(done, total):
            click.echo(f"\rridgeline: {done}/{total} requests", err=True, nl=done == total)
    pulled = P.pull(prom["prom_url"], start=start, end=end, step_s=P.parse_duration(prom["prom_step"], what="--step"),
                    match=prom.get("prom_match"), auth=auth, concurrency=prom["prom_concurrency"],
                    timeout_s=P.parse_duration(prom["prom_timeout"], what="--timeout"), retries=prom["prom_retries"],
                    max_points=prom["prom_max_points"], hosts_per_query=prom["prom_hosts"],
                    strict=bool(prom.get("prom_strict")), progress=progress)
    if not pulled.rows:
        pulled.close()
        from ridgeline.errors import InputError

        why = f"; {len(pulled.failed)} of {pulled.chunks} requests failed, e.g. {pulled.skipped[0].item}: " \
              f"{pulled.failed[0][1]}" if pulled.failed else ""
        span = f"{start:%Y-%m-%dT%H:%M:%SZ}..{end:%Y-%m-%dT%H:%M:%SZ}"
        raise InputError(pulled.info.path, f"expected DCGM series (DCGM_FI_DEV_GPU_UTIL, DCGM_FI_PROF_*, ...) in {span}"
                         + (f" matching {prom['prom_match']}" if prom.get("prom_match") else "")
                         + "; found none" + why)
    if pulled.failed:
        click.echo(f"ridgeline: {len(pulled.failed)} of {pulled.chunks} requests failed; listed under skipped, "
                   "their samples missing", err=True)
    if prom.get("prom_save"):
        report = pulled.save(prom["prom_save"])  # host by host: never the whole pull in memory
        _tell(f"ridgeline: {report.summary(prom['prom_save'])}")
    return pulled


def _read_secret(path: str, option: str) -> str:
    """The first line of a secret file, stripped; never echoed."""
    from ridgeline.errors import UsageError

    try:
        with open(path, encoding="utf-8") as fh:
            value = fh.read().strip()
    except (OSError, UnicodeDecodeError) as err:
        raise UsageError(f"{option} {path}: cannot read it ({getattr(err, 'strerror', None) or type(err).__name__})") from None
    if not value:
        raise UsageError(f"{option} {path}: the file is empty")
    return value


@cli.command("check")
@click.argument("expect_file", type=click.Path(dir_okay=False))
@click.argument("profiles", nargs=-1, type=click.Path())
@click.option("--write", is_flag=True,
              help="Record the profiles' verdicts into EXPECT_FILE instead of checking (keeps an existing file's "
                   "[profile] options and [tolerance]).")
@click.option("--gpu", metavar="NAME", help="With --write: force the GPU, and record it in the file.")
@click.option("--min-share", type=click.FloatRange(0, 1), default=0.01, show_default=True,
              help="With --write: an [[expect]] for each kernel group holding at least this share of GPU time.")
@click.pass_context
def check_cmd(ctx, expect_file, profiles, write, gpu, min_share):
    """Check profiles against an expectation file (*.ridgeline.toml), or record one.

    PROFILES replace the profiles the file names (its [profile] paths, relative to the
    file). pytest collects files named *.ridgeline.toml too, one test per expectation.

    \b
    Examples:
      ridgeline check --write perf/prefill.ridgeline.toml profiles/prefill.csv
      ridgeline check perf/prefill.ridgeline.toml
      ridgeline check perf/prefill.ridgeline.toml new-capture.csv

    \b
    Exit codes: 0 every expectation holds, 1 one does not, 2 bad input or usage,
    3 a bug in ridgeline. See docs/perf-tests.md.
    """
    from ridgeline.testing import expectations

    if write:
        _refuse_overwriting_inputs(expect_file, profiles)
        _text, result = expectations.write(expect_file, profiles, gpu=gpu, min_share=min_share)
        n = len(expectations.load(expect_file).item_names())
        _tell(f"ridgeline: wrote {expect_file} ({n} expectation{'s' if n != 1 else ''} from "
              f"{', '.join(i.path for i in result.inputs)})")
        return
    if gpu:
        from ridgeline.errors import UsageError

        raise UsageError("--gpu is for --write; to force the GPU when checking, set gpu in the file's [profile]")
    spec = expectations.load(expect_file, profiles)
    result = expectations.analyze(spec)
    outcomes = expectations.check_all(spec, result)
    _emit(expectations.format_report(spec, outcomes, result), None)
    if any(not o.passed for _name, o in outcomes):
        ctx.exit(1)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: one line per user error, never a traceback."""
    try:
        rc = cli.main(args=argv, prog_name="ridgeline", standalone_mode=False)
    except RidgelineError as err:
        from ridgeline.refusals import name_the_kind  # says what the file was read as (issue 21)

        _tell(f"ridgeline: error: {name_the_kind(err)}")
        sys.exit(err.exit_code)
    except click.exceptions.Abort:
        click.echo("ridgeline: aborted", err=True)
        sys.exit(130)
    except click.ClickException as err:  # bad option value, missing argument...: one line too
        hint = ""
        ctx = getattr(err, "ctx", None)
        if ctx is not None and getattr(ctx, "command_path", None):
            hint = f" (see '{ctx.command_path} --help')"
        message = " ".join(err.format_message().split())
        _tell(f"ridgeline: error: {message}{hint}")
        sys.exit(2)
    except click.exceptions.Exit as err:
        sys.exit(err.exit_code)
    except BrokenPipeError:  # `ridgeline analyze x | head`
        _quiet_stdout()
        sys.exit(0)
    except KeyboardInterrupt:
        click.echo("ridgeline: aborted", err=True)
        sys.exit(130)
    except SystemExit as err:
        # click answers a broken pipe (EPIPE while echoing) with exit 1 after wrapping stdout
        # in a flush-pacifier; the reader leaving is not a failure of ours
        if err.code == 1 and type(sys.stdout).__name__ == "_PacifyFlushWrapper":
            _quiet_stdout()
            sys.exit(0)
        raise
    except Exception as err:  # noqa: BLE001 - anything else is a bug of ours: exit 3, never 1
        _report_bug(err, argv)
        sys.exit(EXIT_BUG)
    try:  # what is still buffered fails here when the reader has gone (`ridgeline rules | head -2`)
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
        sys.exit(0)
    # with standalone_mode=False click returns ctx.exit()'s code (e.g. 1 from --fail-on)
    sys.exit(rc if isinstance(rc, int) else 0)


def _debug_requested(argv: list[str] | None) -> bool:
    """--debug anywhere before a bare '--', or RIDGELINE_DEBUG set to something true."""
    import os

    args = sys.argv[1:] if argv is None else list(argv)
    if "--" in args:
        args = args[: args.index("--")]
    env = os.environ.get("RIDGELINE_DEBUG", "").strip().lower()
    return "--debug" in args or env not in ("", "0", "false", "no")


def _report_bug(err: BaseException, argv: list[str] | None) -> None:
    """One line on stderr saying this is a bug and how to report it; the traceback with --debug."""
    where = ""
    tb = err.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is not None:
        import os

        where = f" at {os.path.basename(tb.tb_frame.f_code.co_filename)}:{tb.tb_lineno}"
    text = " ".join(str(err).split())
    if len(text) > 160:
        text = text[:157] + "..."
    if _debug_requested(argv):
        import traceback

        from ridgeline.render.safe_text import for_output  # names and paths in it escaped (issue 21)

        sys.stderr.write(for_output("".join(traceback.format_exception(type(err), err, err.__traceback__))))
    _tell(f"ridgeline: internal error (a bug in ridgeline {__version__}): {type(err).__name__}{where}"
          + (f": {text}" if text else "")
          + "; please report it to the ridgeline maintainers with the command line and the input file"
          + ("" if _debug_requested(argv) else " (rerun as `ridgeline --debug ...` or with RIDGELINE_DEBUG=1 for the traceback)"))


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not fail again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout without a file descriptor (tests capture it)
        pass


if __name__ == "__main__":  # pragma: no cover
    main()
