"""The data flows one way; this test keeps it that way.

file -> parsers -> analyzer -> rules -> render, wired by pipeline and cli.
- parsers import nothing above them (only ridgeline.errors, ridgeline.units, ridgeline.result
  and the table contracts in ridgeline.analyzer.schema);
- the analyzer never imports rules, render, pipeline or cli;
- rules never import parsers, render, pipeline or cli;
- renderers never import parsers (they take a finished AnalysisResult);
- sources (live servers) import nothing above the parsers' table;
- commands (one module per CLI command, ridgeline/commands/) may import every layer below;
  nothing below imports commands or cli, and commands never import cli (cli registers them);
- cli.py and the commands import no heavy module at module level (``ridgeline --help`` stays instant).
- no module imports itself back through others: the package's import graph (every import
  statement, deferred ones too) has no cycle; a shared name goes down a floor instead.
- rooms, not prefixes: no module over MAX_MODULE_LINES lines, no folder (package) with more than
  MAX_FOLDER_MODULES modules; a family that outgrows its folder gets a subpackage
  (docs/architecture.md draws them).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "ridgeline"

FORBIDDEN = {
    "parsers": ("ridgeline.analyzer.kernels.roofline", "ridgeline.analyzer.kernels.gpus", "ridgeline.rules",
                "ridgeline.render", "ridgeline.pipeline", "ridgeline.cli", "ridgeline.commands"),
    "analyzer": ("ridgeline.rules", "ridgeline.render", "ridgeline.pipeline", "ridgeline.cli",
                 "ridgeline.parsers", "ridgeline.commands"),
    "rules": ("ridgeline.parsers", "ridgeline.render", "ridgeline.pipeline", "ridgeline.cli", "ridgeline.commands"),
    "render": ("ridgeline.parsers", "ridgeline.pipeline", "ridgeline.cli", "ridgeline.commands"),
    # live sources fetch and hand rows to the parsers' table: nothing above that
    "sources": ("ridgeline.analyzer.kernels.roofline", "ridgeline.analyzer.kernels.gpus", "ridgeline.rules", "ridgeline.render",
                "ridgeline.pipeline", "ridgeline.cli", "ridgeline.commands"),
    # the commands sit on top of everything but the group that registers them
    "commands": ("ridgeline.cli",),
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
        f"{path.relative_to(PKG.parent)}:{lineno} imports {name}"
        for path in [PKG / "cli.py", *_modules("commands")]
        for lineno, name in _imports(path, top_level_only=True)
        if name.split(".")[0] in HEAVY
    ]
    assert not bad, bad


def test_nothing_below_the_commands_imports_them():
    """pipeline, nightly and the other top-level modules are below the commands too."""
    bad = [
        f"{path.relative_to(PKG.parent)}:{lineno} imports {name}"
        for path in sorted(PKG.rglob("*.py"))
        if path.parent.name != "commands" and path.name != "cli.py"
        for lineno, name in _imports(path)
        if name == "ridgeline.commands" or name.startswith("ridgeline.commands.")
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


# ---- no import cycles inside the package -------------------------------------------------------
#
# Every module of ridgeline/ is a node; every import statement anywhere in a file is an edge
# (module level, inside functions, classes, ``try`` or ``if TYPE_CHECKING`` alike: a deferred
# import still makes the two modules depend on each other, it only hides the circle until the
# wrong one is imported first). ``from P import n`` is an edge to module ``P.n`` when that is a
# module, else to ``P`` (the module defining ``n``); ``import a.b.c`` and ``from a.b.c import x``
# to the deepest prefix that is a module; relative imports are resolved against the importer's
# package; ``importlib.import_module`` calls count too (see ``_dynamic_targets``). A package's
# ``__init__`` is a node of its own and counts only where it is named: the parent packages
# Python initialises on the way to a submodule are not edges (a package re-exporting its
# submodules, as ``ridgeline.synth`` does, is no circle). Cycles are the strongly connected
# components (Tarjan);
# for each one the message prints one concrete circle with the file and line of every edge.


def _module_names(root: Path, package: str) -> dict[str, Path]:
    names = {}
    for path in sorted(root.rglob("*.py")):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def _calls_import_module(node: ast.Call) -> bool:
    f = node.func
    # former_module (ridgeline.reexport): a package serving a moved module's names on first use
    return ((isinstance(f, ast.Attribute) and f.attr == "import_module")
            or (isinstance(f, ast.Name) and f.id in ("import_module", "__import__", "former_module")))


def _dynamic_targets(arg: ast.expr, tree: ast.Module, names: dict[str, Path]) -> list[str]:
    """What ``importlib.import_module(arg)`` may import, over-approximated: a literal name is
    that module; an f-string starting ``"pkg.sub."`` is every module directly under ``pkg.sub``
    (the rule engine's discovery, the telemetry reader table); any other expression is every
    string literal of the file that names a module of the package (a lazy-export table)."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return [arg.value] if arg.value in names else []
    if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
        prefix = str(arg.values[0].value)
        return [n for n in names if n.startswith(prefix)]
    return sorted({n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in names})


def import_graph(root: Path = PKG, package: str = "ridgeline") -> dict[str, dict[str, int]]:
    """module -> {imported module of the package: first line importing it}."""
    names = _module_names(root, package)

    def owner(dotted: str) -> str | None:
        while dotted and dotted not in names:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    graph: dict[str, dict[str, int]] = {}
    for mod, path in names.items():
        here = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        out = graph.setdefault(mod, {})
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [owner(a.name) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")[: len(here.split(".")) - (node.level - 1)]
                    src = ".".join(base + ([node.module] if node.module else []))
                else:
                    src = node.module or ""
                targets = [f"{src}.{a.name}" if f"{src}.{a.name}" in names else owner(src) for a in node.names]
            elif isinstance(node, ast.Call) and _calls_import_module(node) and node.args:
                targets = _dynamic_targets(node.args[0], tree, names)
            for t in targets:
                if t and t != mod and (t == package or t.startswith(package + ".")):
                    out.setdefault(t, node.lineno)
    return graph


def import_cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One concrete circle ``[a, b, ..., a]`` per strongly connected component of two or more
    modules (Tarjan's algorithm, iterative), sorted so the report is stable."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, {})))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    components.append(comp)
    cycles = []
    for comp in components:
        first = min(comp)
        # breadth-first inside the component: the shortest way from ``first`` back to itself
        prev: dict[str, str] = {}
        frontier, found = [first], None
        while frontier and found is None:
            nxt = []
            for v in frontier:
                for w in sorted(graph[v]):
                    if w == first:
                        found = v
                        break
                    if w in comp and w not in prev:
                        prev[w] = v
                        nxt.append(w)
                if found is not None:
                    break
            frontier = nxt
        path = [first]
        v = found
        while v != first:
            path.append(v)
            v = prev[v]
        cycles.append([first, *reversed(path[1:]), first])
    return sorted(cycles)


def _describe(cycle: list[str], graph: dict[str, dict[str, int]]) -> str:
    return " -> ".join(f"{a} (line {graph[a][b]})" for a, b in zip(cycle, cycle[1:])) + f" -> {cycle[-1]}"


def test_no_import_cycles_inside_the_package():
    """Modules depend on floors below them, never on each other in a circle: shared vocabulary
    goes down into a module both sides import."""
    graph = import_graph()
    cycles = import_cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(_describe(c, graph) for c in cycles)


def test_the_cycle_check_catches_every_import_form(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.sub import b\n")                        # module named in from-import
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..c import X\n")      # function-level, relative
    (pkg / "c.py").write_text("import pkg.a as a\nX = 1\n")                     # plain import, aliased
    (pkg / "d.py").write_text("from pkg.a import nothing\n")                    # into the cycle, not on it
    (pkg / "e.py").write_text("from . import f\n")                              # a two-module circle
    (pkg / "f.py").write_text("try:\n    from pkg.e import Y\nexcept ImportError:\n    pass\n")
    (pkg / "g.py").write_text("import os\nfrom pkg import sub\nfrom pkg.g import z\n")  # no cycle, self-import ignored
    graph = import_graph(pkg, "pkg")
    assert graph["pkg.sub.b"] == {"pkg.c": 2}
    assert graph["pkg.d"] == {"pkg.a": 1}
    assert graph["pkg.g"] == {"pkg.sub": 2}
    cycles = import_cycles(graph)
    assert cycles == [["pkg.a", "pkg.sub.b", "pkg.c", "pkg.a"], ["pkg.e", "pkg.f", "pkg.e"]]
    assert _describe(cycles[1], graph) == "pkg.e (line 1) -> pkg.f (line 2) -> pkg.e"
    # and the circle goes once the shared name moves down a floor
    (pkg / "f.py").write_text("Y = 2\n")
    assert import_cycles(import_graph(pkg, "pkg")) == [["pkg.a", "pkg.sub.b", "pkg.c", "pkg.a"]]


def test_the_cycle_check_sees_dynamic_imports(tmp_path):
    """A rule the engine discovers by name, or a helper a package exports lazily, still closes a
    circle when it imports the module that loads it."""
    pkg = tmp_path / "pkg"
    (pkg / "rules").mkdir(parents=True)
    for init in (pkg / "__init__.py", pkg / "rules" / "__init__.py"):
        init.write_text("")
    (pkg / "engine.py").write_text("import importlib\ndef load(n):\n    return importlib.import_module(f'pkg.rules.{n}')\n")
    (pkg / "rules" / "r1.py").write_text("def check():\n    from pkg.engine import params\n")
    (pkg / "rules" / "r2.py").write_text("X = 1\n")
    (pkg / "lazy.py").write_text("import importlib\n_LAZY = {'a': 'pkg.helpers'}\n"
                                 "def __getattr__(n):\n    return importlib.import_module(_LAZY[n])\n")
    (pkg / "helpers.py").write_text("from pkg import lazy\n")
    (pkg / "plain.py").write_text("from importlib import import_module\nM = import_module('pkg.rules.r2')\n")
    graph = import_graph(pkg, "pkg")
    assert set(graph["pkg.engine"]) == {"pkg.rules.r1", "pkg.rules.r2"}
    assert graph["pkg.plain"] == {"pkg.rules.r2": 2}
    assert import_cycles(graph) == [["pkg.engine", "pkg.rules.r1", "pkg.engine"], ["pkg.helpers", "pkg.lazy", "pkg.helpers"]]


# ---- rooms: module and folder size ------------------------------------------------------------
MAX_MODULE_LINES = 800
MAX_FOLDER_MODULES = 20  # .py files of one package, its __init__ included; subpackages are rooms of their own


def test_no_module_is_over_the_line_limit():
    big = [f"{p.relative_to(PKG.parent)}: {n} lines" for p in sorted(PKG.rglob("*.py"))
           if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES]
    assert not big, f"modules over {MAX_MODULE_LINES} lines (split by job):\n" + "\n".join(big)


def test_no_folder_is_over_the_module_limit():
    crowded = [f"{d.relative_to(PKG.parent)}: {n} modules" for d in sorted({p.parent for p in PKG.rglob("*.py")})
               if (n := len(list(d.glob("*.py")))) > MAX_FOLDER_MODULES]
    assert not crowded, f"folders over {MAX_FOLDER_MODULES} modules (group by family):\n" + "\n".join(crowded)


def test_every_folder_of_modules_is_a_package():
    """A folder of modules without ``__init__.py`` would be a namespace package: setuptools'
    ``find:`` leaves it out of the wheel, and an installed ridgeline would miss it."""
    loose = [str(d.relative_to(PKG.parent)) for d in sorted({p.parent for p in PKG.rglob("*.py")})
             if not (d / "__init__.py").exists()]
    assert not loose, loose


def test_the_room_checks_catch_a_crowded_folder_and_a_long_module(tmp_path, monkeypatch):
    pkg = tmp_path / "ridgeline"
    (pkg / "sub").mkdir(parents=True)
    for i in range(MAX_FOLDER_MODULES + 1):
        (pkg / f"m{i}.py").write_text("")
    (pkg / "sub" / "long.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1))
    monkeypatch.setitem(globals(), "PKG", pkg)
    with pytest.raises(AssertionError, match="long.py: 801 lines"):
        test_no_module_is_over_the_line_limit()
    with pytest.raises(AssertionError, match="ridgeline: 21 modules"):
        test_no_folder_is_over_the_module_limit()
    with pytest.raises(AssertionError, match="ridgeline/sub"):
        test_every_folder_of_modules_is_a_package()
