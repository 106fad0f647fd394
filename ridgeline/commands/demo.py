"""``ridgeline demo``: analyze the bundled decode profile (no GPU, no network).
"""

from __future__ import annotations

import click

from ridgeline.commands.common import _os_error_text, _parse_start, _relabel, _tell


DEMO_PROFILE = "decode-b8-h100.ncu-raw.csv"
DEMO_FILES = (DEMO_PROFILE, "infer-0.dmon")
DEMO_LABEL = "ridgeline/data/demo"  # printed instead of the installation's absolute path
# dcgmi dmon records no timestamps: the demo anchors its first tick here (any fixed time would do;
# a fixed one keeps the output reproducible) and says so
DEMO_START = "2026-01-05T08:00:00Z"


def _relabel_demo(result, folder) -> None:
    """Inputs, skipped items and notes name ``ridgeline/data/demo/...``, not this machine's path."""
    _relabel(result, str(folder), DEMO_LABEL)


def demo_folder():
    """The bundled demo inputs (``ridgeline/data/demo``) as an importlib.resources Traversable."""
    from importlib import resources

    return resources.files("ridgeline") / "data" / "demo"


@click.command("demo")
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
        if command in getattr(click.get_current_context().find_root().command, "commands", {}):
            lines.append(f"  # {why}")
            lines.append(f"  {text}")
    lines.append("  # on your own GPU: capture everything ridgeline needs, nothing auto-scaled")
    lines.append("  LC_ALL=C ncu --set roofline --csv --page raw --print-units base \\")
    lines.append("      --log-file profile.csv python your_app.py")
    lines.append("  ridgeline analyze profile.csv")
    return "\n".join(lines)

