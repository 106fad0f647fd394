"""Command-line interface: wiring only.

The click group ``cli`` and the console entry point ``main`` live here; each command lives in
its own module under ``ridgeline/commands/`` (shared option sets in ``commands/options.py``,
shared helpers in ``commands/common.py``) and is registered below. Every name this module
held before the split is re-exported, so ``from ridgeline.cli import X`` keeps working.

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
from ridgeline.commands.analyze import _write_plot, analyze_cmd  # noqa: F401
from ridgeline.commands.check import check_cmd  # noqa: F401
from ridgeline.commands.common import (  # noqa: F401 - re-exported: ridgeline.cli.NAME keeps working
    STDIN_LABEL, _ci_text, _config, _emit, _exit_on_findings, _fit_lines, _maybe_colour, _os_error_text,
    _parse_interval, _parse_start, _refuse_overwriting_inputs, _relabel, _relabel_sources, _relabel_stdin,
    _render_analyze, _save_plot, _say, _split_codes, _stdin_inputs, _tell, _terminal_width,
)
from ridgeline.commands.demo import (  # noqa: F401 - re-exported: ridgeline.cli.NAME keeps working
    DEMO_FILES, DEMO_LABEL, DEMO_PROFILE, DEMO_START, _demo_next_steps, _relabel_demo, demo_cmd, demo_folder,
)
from ridgeline.commands.diff import _read_json_document, diff_cmd  # noqa: F401
from ridgeline.commands.gpus import gpus_cmd  # noqa: F401
from ridgeline.commands.options import (  # noqa: F401 - re-exported: ridgeline.cli.NAME keeps working
    FAIL_ON_OPTION, ISOLATED_OPTION, OUTPUT_OPTION, PROMETHEUS_OPTIONS, RULE_OPTIONS, STRICT_OPTION,
    TELEMETRY_INPUT_OPTIONS, TIMELINE_INPUT_OPTIONS, WHAT_IF_OPTIONS, _options, _parse_short_duration,
    _set_isolated, _strict_folders, _timeline_options,
)
from ridgeline.commands.report import report_cmd  # noqa: F401
from ridgeline.commands.roofline import _input_label, roofline_cmd  # noqa: F401
from ridgeline.commands.rules import rule_list_lines, rules_command  # noqa: F401
from ridgeline.commands.telemetry import _pull_prometheus, _read_secret, telemetry_cmd  # noqa: F401
from ridgeline.errors import RidgelineError

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

# exit codes, documented in README ("Exit codes") and in `ridgeline --help`
EXIT_CLEAN, EXIT_FINDINGS, EXIT_INPUT, EXIT_BUG = 0, 1, 2, 3


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


# the commands, in the order they were declared (``ridgeline --help`` lists them sorted)
for _command in (rules_command, analyze_cmd, gpus_cmd, roofline_cmd, report_cmd, demo_cmd, telemetry_cmd, diff_cmd,
                 check_cmd):
    cli.add_command(_command)
del _command


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

        from ridgeline.redact import redact  # a secret quoted in an exception text: *** (issue 35)

        sys.stderr.write(for_output(redact("".join(traceback.format_exception(type(err), err, err.__traceback__)))))
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
