"""``ridgeline roofline``: draw the roofline plot.
"""

from __future__ import annotations

import click

from ridgeline.commands.common import _refuse_overwriting_inputs, _render_analyze, _save_plot, _tell
from ridgeline.commands.options import STRICT_OPTION


def _input_label(path, files) -> str:
    """The file name, or parent/name when several inputs share a name (profile.csv in each run dir)."""
    from pathlib import Path

    names = [Path(f).name for f in files]
    p = Path(path)
    return p.name if names.count(p.name) == 1 else str(Path(p.parent.name) / p.name)


@click.command("roofline")
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

    _refuse_overwriting_inputs(output, files)
    if Path(output).suffix.lower() not in SAVE_FORMATS:  # fail before the analysis, not after
        raise UsageError(f"cannot write a plot to {output!r}: use a .png, .svg or .pdf file name")
    if labels and len(labels) != len(files):
        raise UsageError(f"--label given {len(labels)} times for {len(files)} inputs; give one per input or none")
    from ridgeline.pipeline import configure_gpus
    from ridgeline.rules.engine import load_config

    configure_gpus(load_config(None))  # ./ridgeline.toml's own GPUs
    compare = None
    if compare_gpu:
        from ridgeline.analyzer.kernels.gpus import lookup

        compare, _note = lookup(compare_gpu)
    runs = []
    for i, path in enumerate(files):
        res = _render_analyze([path], gpu=gpu, strict=strict)
        has_kernels = (res.kernels is not None and res.kernels.height) or (res.summary is not None and res.summary.height)
        if not has_kernels:
            if len(files) == 1:
                from ridgeline.errors import InputError

                raise InputError(path, f"expected Nsight Compute kernels to draw; found none: {_what_it_holds(res)}")
            _tell(f"ridgeline: {path}: no kernels to draw, left out of the plot")
            continue
        runs.append((labels[i] if labels else _input_label(path, files), res))
    if not runs:
        from ridgeline.errors import InputError

        raise InputError(", ".join(files), "expected Nsight Compute kernels to draw; found none")
    fig = roofline_figure(runs, per_launch=per_launch, top=top, compare_gpu=compare, title=title, levels=levels)
    _save_plot(fig, output)
    _tell(f"ridgeline: wrote {output}")


def _what_it_holds(res) -> str:
    """Why an analysed input has nothing to draw, from what it was read as (never a guess)."""
    if getattr(res, "timeline", None) is not None:
        return ("a timeline holds kernel times but no FLOP or byte counters to place on a roofline "
                "(ridgeline analyze or report reads it; ncu --set roofline measures the kernels)")
    if getattr(res, "windows", None) is not None:
        return "GPU telemetry holds no per-kernel counters (ridgeline telemetry or analyze reads it)"
    return "the file holds no kernel launches"

