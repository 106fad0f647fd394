"""The data flows one way; this test keeps it that way.

file -> parsers -> analyzer -> rules -> render, wired by pipeline and cli.
- parsers import nothing above them (only ridgeline.errors, ridgeline.units, ridgeline.result
  and the table contracts in ridgeline.analyzer.schema);
- the analyzer never imports rules, render, pipeline or cli;
- rules never import parsers, render, pipeline or cli;
- renderers never import parsers (they take a finished AnalysisResult);
- sources (live servers) import nothing above the parsers' table;
- cli.py imports no heavy module at module level (``ridgeline --help`` stays instant).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "ridgeline"

FORBIDDEN = {
    "parsers": ("ridgeline.analyzer.roofline", "ridgeline.analyzer.gpus", "ridgeline.rules",
                "ridgeline.render", "ridgeline.pipeline", "ridgeline.cli"),
    "analyzer": ("ridgeline.rules", "ridgeline.render", "ridgeline.pipeline", "ridgeline.cli",
                 "ridgeline.parsers"),
    "rules": ("ridgeline.parsers", "ridgeline.render", "ridgeline.pipeline", "ridgeline.cli"),
    "render": ("ridgeline.parsers", "ridgeline.pipeline", "ridgeline.cli"),
    # live sources fetch and hand rows to the parsers' table: nothing above that
    "sources": ("ridgeline.analyzer.roofline", "ridgeline.analyzer.gpus", "ridgeline.rules", "ridgeline.render",
                "ridgeline.pipeline", "ridgeline.cli"),
}
HEAVY = ("polars", "pandas", "matplotlib", "pyarrow", "numpy", "httpx")


def _imports(path: Path, *, top_level_only: bool = False) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found = []
    for node in nodes:
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return found


def _modules(layer: str) -> list[Path]:
    return sorted((PKG / layer).rglob("*.py"))


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_does_not_import_upward(layer):
    bad = []
    for path in _modules(layer):
        for lineno, name in _imports(path):
            if any(name == f or name.startswith(f + ".") for f in FORBIDDEN[layer]):
                # the analyzer's table contracts are the one thing parsers may share
                bad.append(f"{path.relative_to(PKG.parent)}:{lineno} imports {name}")
    assert not bad, "layering violated:\n" + "\n".join(bad)


def test_cli_has_no_heavy_module_level_imports():
    bad = [
        f"cli.py:{lineno} imports {name}"
        for lineno, name in _imports(PKG / "cli.py", top_level_only=True)
        if name.split(".")[0] in HEAVY
    ]
    assert not bad, bad


def test_the_check_itself_catches_a_violation(tmp_path):
    bad = tmp_path / "x.py"
    bad.write_text("import os\nfrom ridgeline.rules.engine import run_rules\n")
    names = [n for _l, n in _imports(bad)]
    assert "ridgeline.rules.engine" in names


def test_optional_http_client_is_imported_lazily():
    """httpx is the optional ``ridgeline[prometheus]`` extra: no module may need it to import."""
    bad = [
        f"{path.relative_to(PKG.parent)}:{lineno} imports {name}"
        for path in sorted(PKG.rglob("*.py"))
        for lineno, name in _imports(path, top_level_only=True)
        if name.split(".")[0] in ("httpx", "requests")
    ]
    assert not bad, bad
