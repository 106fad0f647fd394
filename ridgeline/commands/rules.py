"""``ridgeline rules``: the rule catalogue, or one rule's full documentation.
"""

from __future__ import annotations

import sys

import click

from ridgeline.commands.common import _config, _terminal_width
from ridgeline.commands.options import ISOLATED_OPTION


@click.command("rules")
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
      ridgeline rules                   # code, name, severities, one line per rule
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


def rule_list_lines(rows, width: int | None = None) -> list[str]:
    """``CODE  name  severity  summary`` per rule; with ``width``, summaries wrap under the name."""
    import textwrap

    name_w = max((len(r["name"]) for r in rows), default=4)
    sev = {r["code"]: "..".join(dict.fromkeys([r["severities"][0], r["severities"][-1]])) for r in rows}
    sev_w = max((len(v) for v in sev.values()), default=8)
    lines = []
    for r in rows:
        line = f"{r['code']}  {r['name']:<{name_w}}  {sev[r['code']]:<{sev_w}}  {r['summary']}"
        if width is None or len(line) <= width:
            lines.append(line)
            continue
        indent = " " * (len(r["code"]) + 2)
        lines.append(f"{r['code']}  {r['name']}  {sev[r['code']]}")
        lines += textwrap.wrap(r["summary"], width=width, initial_indent=indent, subsequent_indent=indent)
    return lines

