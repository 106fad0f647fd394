"""Command-line interface: wiring only.

Every command imports what it needs inside its body, so ``ridgeline --help`` does not
pay for polars, pandas or matplotlib. Errors derived from RidgelineError print one line
and exit 2; findings at or above ``--fail-on`` exit 1; a clean run exits 0.
"""

from __future__ import annotations

import sys

import click

from ridgeline import __version__
from ridgeline.errors import RidgelineError

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


@click.group(context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, prog_name="ridgeline")
def cli() -> None:
    """Which wall is your GPU workload hitting, and what to do about it.

    ridgeline reads Nsight Compute CSV exports (raw or details page) and DCGM /
    nvidia-smi telemetry, places every kernel on the roofline of the GPU it ran on,
    and turns that into findings you can act on.

    \b
    Start here:
      ridgeline demo                        # a bundled decode profile, no GPU needed
      ridgeline analyze profile.csv         # kernels on the roofline + findings
      ridgeline analyze profile.csv --format json -o out.json
      ridgeline telemetry dcgm-dmon.txt     # busy vs. working, per GPU and window
      ridgeline gpus                        # the GPU catalogue and ridge points
      ridgeline rules                       # the rule catalogue

    \b
    Recommended capture (everything ridgeline needs, nothing auto-scaled):
      LC_ALL=C ncu --set roofline --csv --page raw --print-units base \\
          --log-file profile.csv ./app
    """


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: one line per user error, never a traceback."""
    try:
        rc = cli.main(args=argv, prog_name="ridgeline", standalone_mode=False)
    except RidgelineError as err:
        click.echo(f"ridgeline: error: {err}", err=True)
        sys.exit(err.exit_code)
    except click.exceptions.Abort:
        click.echo("ridgeline: aborted", err=True)
        sys.exit(130)
    except click.ClickException as err:
        err.show()
        sys.exit(2)
    except click.exceptions.Exit as err:
        sys.exit(err.exit_code)
    except BrokenPipeError:  # `ridgeline analyze x | head`
        sys.exit(0)
    # with standalone_mode=False click returns ctx.exit()'s code (e.g. 1 from --fail-on)
    sys.exit(rc if isinstance(rc, int) else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
