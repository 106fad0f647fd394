"""``ridgeline diff``: compare ridgeline JSON documents.
"""

from __future__ import annotations

import sys

import click

from ridgeline.commands.common import _config, _emit, _os_error_text, _refuse_overwriting_inputs, _tell
from ridgeline.commands.options import ISOLATED_OPTION, OUTPUT_OPTION


@click.command("diff")
@click.argument("documents", nargs=-1, required=True, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True,
              help="text for the terminal, markdown for a job summary or PR comment, json for tools.")
@OUTPUT_OPTION
@click.option("--config", type=click.Path(dir_okay=False),
              help="TOML file whose [tool.ridgeline.diff] table sets the thresholds (default: found as for analyze).")
@ISOLATED_OPTION
@click.option("--threshold", "diff_thresholds", multiple=True, metavar="NAME=VALUE",
              help="Override a regression threshold, e.g. kernel_time_rel=0.2 (see ridgeline.analyzer.nightly.diff).")
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
    from ridgeline.analyzer.nightly.diff import compare
    from ridgeline.errors import UsageError
    from ridgeline.rules.engine import load_config

    _refuse_overwriting_inputs(output, documents, also=(config,))
    cfg = load_config(_config(config))
    table = cfg.get("diff", {})
    if not isinstance(table, dict):
        raise UsageError("config: [tool.ridgeline.diff] must be a table of thresholds, e.g. kernel_time_rel = 0.2")
    overrides = dict(table)
    from ridgeline.analyzer.nightly.diff import thresholds

    for item in diff_thresholds:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"--threshold {item!r}: expected NAME=VALUE, e.g. kernel_time_rel=0.2")
        thresholds({name.strip(): value.strip()}, where="--threshold")  # named by the flag, not the merged table
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
    from ridgeline.analyzer.nightly.docshape import check_document

    for doc, label in zip(docs, (base, new)):
        check_document(doc, label)
    cmp = compare(docs[0], docs[1], base_label=base, new_label=new, overrides=overrides)
    if fmt == "json":
        from ridgeline.render.nightly.diff import render_diff_json

        text = render_diff_json(cmp)
    elif fmt == "markdown":
        from ridgeline.render.nightly.diff import render_diff_markdown

        text = render_diff_markdown(cmp, top=top)
    else:
        from ridgeline.render.nightly.diff import format_diff

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
    from ridgeline.parsers.jsontext import JSONLimitError, loads, read_bytes

    try:
        if path == "-":
            raw = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
        else:
            raw = read_bytes(path)
        return loads(raw)  # size and nesting bounded as for every JSON input
    except OSError as err:
        raise InputError(path, f"cannot read it: {_os_error_text(err)}") from None
    except JSONLimitError as err:
        raise InputError(path, f"expected a ridgeline JSON document (nested a few levels), got {err}") from None
    except UnicodeDecodeError:
        raise InputError(path, "expected a ridgeline JSON document (UTF-8), got binary data") from None
    except json.JSONDecodeError as err:
        from ridgeline.parsers.plain import plain_reason

        raise InputError(path, f"expected a ridgeline JSON document, got {plain_reason(err)}", line=err.lineno) from None

