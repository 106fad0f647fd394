"""``ridgeline check``: check profiles against an expectation file, or record one.
"""

from __future__ import annotations

import click

from ridgeline.commands.common import _emit, _refuse_overwriting_inputs, _tell


@click.command("check")
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
        _refuse_overwriting_inputs(expect_file, profiles, option="check --write")
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

