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


@cli.command("rules")
@click.argument("codes", nargs=-1)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="TOML file with a [tool.ridgeline] table (default: ./ridgeline.toml if present); "
    "configured thresholds are shown next to the defaults.",
)
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

    exact = [c for c in codes if _re.fullmatch(r"(?i)RL[0-9]{3}", c.strip())]
    if codes and len(exact) == len(codes) and fmt == "text":
        overrides = engine.rule_overrides(engine.load_config(config_path))
        docs = []
        for code in codes:
            cls = engine.get_rule(code)
            docs.append(engine.rule_doc(cls, overrides=overrides.get(cls.code)))
        click.echo("\n".join(docs), nl=False)
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
    width = max((len(r["name"]) for r in rows), default=4)
    for r in rows:
        click.echo(f"{r['code']}  {r['name']:<{width}}  {r['severity']:<8}  {r['summary']}")


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
