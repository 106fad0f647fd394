"""The rules engine: discovery, selection, configuration, running, documentation.

Discovery
    Every module ``ridgeline/rules/rl<NNN>_<slug>.py`` defines exactly one subclass of
    :class:`ridgeline.rules.base.Rule`; :func:`all_rules` imports them all, so adding a rule
    never edits a shared list. The registry refuses (``RuleDefinitionError``, a bug, not a user
    error) a code that does not match ``RL[1-9]NN``, a code that differs from the module's
    number, a duplicate code or alias, a name that is not kebab-case, an unknown severity or
    family, and a docstring without the sections What it finds / Why it matters / What to do /
    Example.

Docstring format
    The rule class docstring (else the module docstring) starts with a one-line summary; each
    section is a line holding only the heading (``What it finds``, optionally ``## ``-prefixed or
    ``:``-suffixed, optionally underlined with dashes) followed by its text.

Selection
    ``select``/``ignore`` take codes or code prefixes (``RL1``, ``RL10``, ``RL105``, ``ALL``),
    from flags or the config file. The most specific matching selector wins (``--select RL1
    --ignore RL105`` runs RL1xx but RL105; ``--ignore RL1 --select RL105`` runs RL105 only); on a
    tie ``ignore`` wins. Flag ``select`` replaces the config's ``select``; flag ``ignore`` adds to
    the config's ``ignore``. A selector that matches no rule is a UsageError.

Configuration
    ``[tool.ridgeline]`` in a TOML file the user names (``--config``), else the nearest
    ``ridgeline.toml`` / ``.ridgeline.toml`` / ``pyproject.toml`` with the table in the current
    folder or a parent (``--isolated`` ignores them all; a ``ridgeline.toml``'s top level may hold
    the keys directly)::

        [tool.ridgeline]
        select = ["RL1", "RL9"]
        ignore = ["RL107"]

        [tool.ridgeline.rules.RL103]
        min_bandwidth_fraction = 0.5
        severity = "critical"   # any rule's severity may be overridden

    Flags: ``--threshold RL103.min_bandwidth_fraction=0.5`` (see :func:`parse_threshold_flags`).
    Unknown top-level keys (``CONFIG_KEYS``), unknown codes, unknown threshold keys and values
    of the wrong type are UsageErrors.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import inspect
import pkgutil
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ridgeline.errors import InputError, UsageError
from ridgeline.rules import catalogue
from ridgeline.rules.base import CODE_RE, DOC_SECTIONS, NAME_RE, SEVERITIES, Context, Evidence, Finding, Rule
from ridgeline.rules.catalogue import rule_doc, rule_doc_sections, severity_range, summary_line  # noqa: F401 (re-exported)

MODULE_RE = re.compile(r"^rl(\d{3})_[a-z0-9_]+$")
SELECTOR_RE = re.compile(r"^RL[0-9]{0,3}$")
FAMILIES = ("kernel", "telemetry", "data", "run", "timeline")
THRESHOLD_FLAG_RE = re.compile(r"^\s*(RL[0-9]{3})\.([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")
# config keys inside a [tool.ridgeline.rules.RLnnn] table that are not thresholds
RULE_META_KEYS = ("severity",)
# top-level keys of [tool.ridgeline]; a part that reads another key adds it here
CONFIG_KEYS = ["select", "ignore", "rules", "gpus", "diff", "classes"]  # diff: ridgeline diff's; classes: of GPU time


class RuleDefinitionError(Exception):
    """A rule module breaks the registry's contract (a programming error, not a user error)."""


# --------------------------------------------------------------------------------------
# discovery
# --------------------------------------------------------------------------------------
# one package per family, named by the first digit of the code (RL1xx kernels, RL2xx telemetry,
# RL4xx timeline, RL9xx data quality); one rule per module inside it
FAMILY_PACKAGES = {"1": "kernel", "2": "telemetry", "4": "timeline", "9": "data"}


def _rule_modules() -> list[str]:
    """The rule modules, as ``family.rlNNN_name``, in the order of their codes."""
    found = []
    for family in FAMILY_PACKAGES.values():
        pkg = importlib.import_module(f"ridgeline.rules.{family}")
        found += [(m.name, f"{family}.{m.name}") for m in pkgutil.iter_modules(pkg.__path__) if MODULE_RE.match(m.name)]
    return [dotted for _name, dotted in sorted(found)]


@functools.lru_cache(maxsize=1)
def _registry() -> tuple[type[Rule], ...]:
    rules: list[type[Rule]] = []
    for mod_name in _rule_modules():
        module = importlib.import_module(f"ridgeline.rules.{mod_name}")
        classes = [
            obj
            for obj in vars(module).values()
            if inspect.isclass(obj) and issubclass(obj, Rule) and obj is not Rule and obj.__module__ == module.__name__
        ]
        if len(classes) != 1:
            raise RuleDefinitionError(
                f"ridgeline.rules.{mod_name} must define exactly one Rule subclass, found {len(classes)}"
            )
        cls = classes[0]
        # the docstring's sections are checked by the tests (test_every_rule_meets_the_contract), not
        # in every run: parsing 33 docstrings was ~4 ms of a short run's start-up
        validate_rule(cls, module_name=mod_name.rsplit(".", 1)[-1], docs=False)
        if FAMILY_PACKAGES.get(cls.code[2]) != mod_name.split(".")[0]:
            raise RuleDefinitionError(f"{cls.code} lives in ridgeline.rules.{mod_name}: its family's package is "
                                      f"ridgeline.rules.{FAMILY_PACKAGES.get(cls.code[2], '?')}")
        rules.append(cls)
    seen: dict[str, str] = {}
    for cls in rules:
        for code in (cls.code, *cls.aliases):
            if code in seen:
                raise RuleDefinitionError(f"rule code {code} used by both {seen[code]} and {cls.__name__}")
            seen[code] = cls.__name__
    names = [cls.name for cls in rules]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise RuleDefinitionError(f"rule names used twice: {', '.join(dupes)}")
    return tuple(sorted(rules, key=lambda r: r.code))


def validate_rule(cls: type[Rule], *, module_name: str | None = None, docs: bool = True) -> None:
    """Raise RuleDefinitionError when a rule class breaks the contract (see the module docstring);
    ``docs=False``: all but the docstring's sections."""
    code = getattr(cls, "code", None)
    if not isinstance(code, str) or not CODE_RE.match(code):
        raise RuleDefinitionError(f"{cls.__name__}: code {code!r} does not match {CODE_RE.pattern}")
    if module_name is not None:
        m = MODULE_RE.match(module_name)
        if not m or f"RL{m.group(1)}" != code:
            raise RuleDefinitionError(f"{cls.__name__}: code {code} does not match its module {module_name}")
    for alias in cls.aliases:
        if not CODE_RE.match(alias):
            raise RuleDefinitionError(f"{code}: alias {alias!r} does not match {CODE_RE.pattern}")
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise RuleDefinitionError(f"{code}: name {name!r} is not kebab-case")
    if cls.severity not in SEVERITIES:
        raise RuleDefinitionError(f"{code}: severity {cls.severity!r} not one of {SEVERITIES}")
    if not isinstance(cls.severities, tuple) or any(s not in SEVERITIES for s in cls.severities):
        raise RuleDefinitionError(f"{code}: severities {cls.severities!r} must be a tuple of {SEVERITIES}")
    if cls.family not in FAMILIES:
        raise RuleDefinitionError(f"{code}: family {cls.family!r} not one of {FAMILIES}")
    for key, spec in cls.thresholds.items():
        if not re.match(r"^[a-z][a-z0-9_]*$", key) or key in RULE_META_KEYS:
            raise RuleDefinitionError(f"{code}: threshold name {key!r} must be snake_case and not {RULE_META_KEYS}")
        if not (isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[1], str) and spec[1].strip()):
            raise RuleDefinitionError(f"{code}: threshold {key!r} must be (default, 'one-line description')")
    if not docs:
        return
    doc = rule_doc_sections(cls)
    missing = [s for s in DOC_SECTIONS if not doc.get(s, "").strip()]
    if missing:
        raise RuleDefinitionError(f"{code}: docstring lacks section(s) {', '.join(missing)}")
    if not doc.get("summary", "").strip():
        raise RuleDefinitionError(f"{code}: docstring lacks a one-line summary")


def all_rules() -> list[type[Rule]]:
    """Every rule class, sorted by code (modules ``ridgeline/rules/rlNNN_*.py``)."""
    return list(_registry())


def get_rule(code: str) -> type[Rule]:
    """The rule for a code or alias (case-insensitive); UsageError if there is none."""
    want = code.strip().upper()
    for cls in _registry():
        if want == cls.code or want in cls.aliases:
            return cls
    raise UsageError(f"unknown rule code {code!r}; known: {_known_codes()}")


def _known_codes() -> str:
    codes = [cls.code for cls in _registry()]
    return ", ".join(codes) if codes else "none"


# --------------------------------------------------------------------------------------
# docs (ridgeline.rules.catalogue renders them from the registry's rule classes)
# --------------------------------------------------------------------------------------
def catalogue_rows() -> list[dict[str, Any]]:
    """One dict per rule: code, name, severity, severities, family, summary, thresholds, aliases."""
    return catalogue.catalogue_rows(_registry())


def rules_markdown() -> str:
    """The rules reference page (docs/rules.md), generated from the rule objects."""
    return catalogue.rules_markdown(_registry())


# --------------------------------------------------------------------------------------
# configuration
# --------------------------------------------------------------------------------------
def _toml():
    try:
        import tomllib  # Python 3.11+
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    return tomllib


def _read_toml(path: Path) -> dict[str, Any]:
    tomllib = _toml()
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as err:
        raise UsageError(f"cannot read config file {path}: {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        raise InputError(path, "expected a UTF-8 TOML file", actual=f"byte 0x{err.object[err.start]:02x} at offset {err.start}") from None
    try:
        return tomllib.loads(text)
    except RecursionError:  # arrays or inline tables nested thousands deep: valid TOML Python cannot hold
        raise UsageError(f"config file {path}: values nest too deep to read (ridgeline's settings are at most "
                         f"3 deep; {_bounds().MAX_CONFIG_DEPTH} levels are allowed)") from None
    except tomllib.TOMLDecodeError as err:
        msg = str(err)
        m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
        line = int(m.group(1)) if m else getattr(err, "lineno", None)
        detail = re.sub(r"\s*\(at line \d+, column \d+\)", "", msg)
        raise InputError(path, "expected valid TOML", line=line, actual=detail) from None


CONFIG_NAMES = ("ridgeline.toml", ".ridgeline.toml", "pyproject.toml")


def find_config(start: str | Path | None = None) -> Path | None:
    """The config file ruff's way: in ``start`` (default the current folder) or the nearest
    parent, the first of ``ridgeline.toml``, ``.ridgeline.toml``, or a ``pyproject.toml`` that
    has a ``[tool.ridgeline]`` table; None when no folder up to the root has one."""
    here = Path(start) if start is not None else Path.cwd()
    try:
        here = here.resolve()
    except OSError:
        return None
    for folder in (here, *here.parents):
        for name in CONFIG_NAMES:
            candidate = folder / name
            try:
                if not candidate.is_file():
                    continue
                if name == "pyproject.toml":
                    text = candidate.read_text(encoding="utf-8-sig", errors="replace")
                    if not re.search(r"(?m)^\s*\[\s*tool\s*\.\s*ridgeline\s*[\].]", text):
                        continue
            except OSError:
                continue
            return candidate
    return None


def load_config(path: str | Path | None = None) -> dict[str, Any]:
    """The ``[tool.ridgeline]`` table of a TOML file.

    With ``path``: that file (UsageError if missing); without: the file :func:`find_config`
    finds (``ridgeline.toml``, ``.ridgeline.toml`` or ``pyproject.toml`` with the table, here or
    in the nearest parent folder), else ``{}``. A ``ridgeline.toml`` (or any file but ``pyproject.toml``) without a
    ``[tool.ridgeline]`` table is read from its top level. A ``pyproject.toml`` without the
    table is a UsageError when named explicitly.
    """
    if isinstance(path, Mapping):  # already loaded (or {} under --isolated)
        return dict(path)
    if path is None:
        p = find_config()
        if p is None:
            return {}
    else:
        p = Path(path)
        if not p.is_file():
            what = "is not a regular file" if p.exists() else "not found"
            raise UsageError(f"config file {path} {what} (expected a TOML file with a [tool.ridgeline] table)")
    data = _read_toml(p)
    tool = data.get("tool")
    if isinstance(tool, dict) and isinstance(tool.get("ridgeline"), dict):
        table, prefix = dict(tool["ridgeline"]), "tool.ridgeline."
    elif p.name == "pyproject.toml":
        raise UsageError(f"{p} has no [tool.ridgeline] table")
    else:
        table, prefix = {k: v for k, v in data.items() if k != "tool"}, ""
    check_config_values(table, origin=str(p), prefix=prefix)
    return table


def _bounds():
    from ridgeline import bounds

    return bounds


def check_config_values(table: Mapping[str, Any], *, origin: str = "config", prefix: str = "tool.ridgeline.") -> None:
    """The values of a ``[tool.ridgeline]`` table that every command reads, checked against their
    bounds (:mod:`ridgeline.bounds`) when the file is read, so a bad one is one line naming the file,
    the table and the key in every command, whichever part would read it: nesting at most
    ``MAX_CONFIG_DEPTH`` deep, the ``diff`` thresholds, the ``gpus`` entries."""
    _bounds().check_depth(table, where=origin)
    if "diff" in table:
        from ridgeline.analyzer.nightly.diff import thresholds

        thresholds(table["diff"], where=f"{origin}: [{prefix}diff]")
    if "classes" in table:
        from ridgeline.analyzer.fleet.classes import thresholds as class_thresholds

        class_thresholds(table["classes"], where=f"{origin}: [{prefix}classes]")
    if "gpus" in table:
        from ridgeline.analyzer.kernels.gpus import parse_entry

        gpus = table["gpus"]
        if not isinstance(gpus, Mapping):
            raise UsageError(f"{origin}: [{prefix}gpus] must hold one table per GPU, e.g. [{prefix}gpus.\"H20\"]")
        for name, entry in gpus.items():
            parse_entry(str(name), entry, where=f'{origin}: [{prefix}gpus."{name}"]')


def _parse_scalar(text: str) -> Any:
    tomllib = _toml()
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def parse_threshold_flags(values: Iterable[str]) -> dict[str, dict[str, Any]]:
    """``["RL103.min_bandwidth_fraction=0.5"]`` -> ``{"RL103": {"min_bandwidth_fraction": 0.5}}``.

    Values are read as TOML scalars (``0.5``, ``10``, ``true``, ``"text"``); a bare word stays a
    string. A malformed flag is a UsageError; codes and keys are checked by :func:`run_rules`.
    """
    out: dict[str, dict[str, Any]] = {}
    for raw in values:
        m = THRESHOLD_FLAG_RE.match(raw.strip().upper()[:5] + raw.strip()[5:]) if raw else None
        if not m or not m.group(3):
            raise UsageError(f"--threshold expects CODE.name=value (e.g. RL103.min_bandwidth_fraction=0.5), got {raw!r}")
        out.setdefault(m.group(1), {})[m.group(2)] = _parse_scalar(m.group(3))
    return out


def merge_config(
    config: Mapping[str, Any] | None,
    *,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    thresholds: Iterable[str] | Mapping[str, Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """Fold command-line flags into a config dict (flag ``select`` replaces, ``ignore`` extends,
    ``thresholds`` -- flag strings or a ``{code: {key: value}}`` mapping -- override)."""
    out = dict(config or {})
    if select:
        out["select"] = list(select)
    if ignore:
        out["ignore"] = _as_list(out.get("ignore", ()), "ignore") + list(ignore)
    extra = thresholds if isinstance(thresholds, Mapping) else parse_threshold_flags(thresholds)
    if extra:
        rules = {k: dict(v) for k, v in _rules_table(out).items()}
        for code, values in extra.items():
            rules.setdefault(str(code).upper(), {}).update(values)
        out["rules"] = rules
    return out


def _as_list(value: Any, key: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise UsageError(f"config: {key} must be a list of rule codes or prefixes, got {value!r}")


def validate_config(config: Mapping[str, Any] | None) -> None:
    """UsageError for a top-level key nobody reads (a typo would otherwise be ignored silently)."""
    for key in config or {}:
        if key in CONFIG_KEYS:
            continue
        hint = ""
        if isinstance(key, str) and CODE_RE.match(key.upper()):
            hint = f"; rule settings go in [tool.ridgeline.rules.{key.upper()}]"
        raise UsageError(f"config: unknown key {key!r} in [tool.ridgeline]; known: {', '.join(CONFIG_KEYS)}{hint}")


def _rules_table(config: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    rules = config.get("rules", {})
    if not isinstance(rules, Mapping) or not all(isinstance(v, Mapping) for v in rules.values()):
        raise UsageError("config: [tool.ridgeline.rules] must hold one table per rule code, e.g. [tool.ridgeline.rules.RL103]")
    return {str(k): dict(v) for k, v in rules.items()}


def _coerce(code: str, key: str, default: Any, value: Any) -> Any:
    def bad(expected: str) -> UsageError:
        return UsageError(f"{code}.{key}: expected {expected}, got {value!r}")

    if default is None:  # unset by default: a share, fraction or ratio is still a number when set
        return _coerce(code, key, 0.0, value) if threshold_range(key)[1] is not None else value
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        raise bad("true or false")
    if isinstance(default, int):
        if isinstance(value, bool):
            raise bad("an integer")
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise bad("an integer")
    if isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad("a number")
        return float(value)
    if isinstance(default, str):
        if not isinstance(value, str):
            raise bad("a string")
        return value
    if isinstance(default, (tuple, list)):
        if not isinstance(value, (tuple, list)):
            raise bad("a list")
        return type(default)(value)
    return value


def rule_overrides(config: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    """Validated ``{code: {threshold or 'severity': value}}`` from a config dict.

    Aliases resolve to the rule's code; unknown codes, unknown keys and wrongly typed values are
    UsageErrors.
    """
    out: dict[str, dict[str, Any]] = {}
    for code, values in _rules_table(config or {}).items():
        cls = get_rule(code)
        clean = out.setdefault(cls.code, {})
        for key, value in values.items():
            if key == "severity":
                if value not in SEVERITIES:
                    raise UsageError(f"{cls.code}.severity: expected one of {', '.join(SEVERITIES)}, got {value!r}")
                clean[key] = value
                continue
            if key not in cls.thresholds:
                known = ", ".join(sorted(cls.thresholds)) or "none"
                raise UsageError(f"{cls.code}: unknown threshold {key!r}; known: {known} (and severity)")
            clean[key] = _check_range(cls.code, key, _coerce(cls.code, key, cls.thresholds[key][0], value))
    return out


def rule_params(
    code: str,
    config: Mapping[str, Any] | None = None,
    thresholds: Iterable[str] | Mapping[str, Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """One rule's thresholds: defaults, then the config, then ``--threshold`` flags (validated).

    For the analyzer steps a rule's thresholds also define (RL112's latency class)."""
    cls = get_rule(code)
    out = {k: v for k, (v, _d) in cls.thresholds.items()}
    out.update(rule_overrides(merge_config(config, thresholds=thresholds)).get(cls.code, {}))
    out.pop("severity", None)
    return out


# documented ranges of numeric thresholds (README, Configuration): every one is a finite number
# >= 0; a ``*_share``, ``*_fraction`` or ``*_ratio`` is a part of a whole (of GPU time, of a roof,
# of a peak), so at most 1, except the ones named here with their own upper bound
RANGE_EXCEPTIONS = {
    "max_sm_fraction": (64.0, "a multiple of the SM count (waves)"),
}


# no threshold a rule compares (seconds, counts, bytes, FLOP/s) is larger
MAX_THRESHOLD = 1e18


def threshold_range(key: str) -> tuple[float, float | None, str]:
    """``(low, high, what)`` of a numeric threshold named ``key`` (high None: unbounded)."""
    if key in RANGE_EXCEPTIONS:
        high, what = RANGE_EXCEPTIONS[key]
        return 0.0, high, what
    words = key.split("_")  # whole words: 'duration' is not a ratio
    for word, what in (("share", "a share"), ("fraction", "a fraction"), ("ratio", "a ratio")):
        if word in words:
            return 0.0, 1.0, what
    return 0.0, None, "a number"


def _check_range(code: str, key: str, value: Any) -> Any:
    """Every numeric threshold is finite and >= 0; shares, fractions and ratios at most 1."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    low, high, what = threshold_range(key)
    if value != value or value in (float("inf"), float("-inf")) or value < low:  # NaN, infinite, negative
        raise UsageError(f"{code}.{key}: expected a number >= 0, got {str(value)[:40]}")
    if value > MAX_THRESHOLD:  # an integer of 400 digits is finite, and no count or size a rule compares
        raise UsageError(f"{code}.{key}: expected a number >= 0, at most {MAX_THRESHOLD:g}, got {str(value)[:40]}")
    if high is not None and value > high:
        raise UsageError(f"{code}.{key}: expected {what} between 0 and {high:g}, got {value!r}")
    return value


# --------------------------------------------------------------------------------------
# selection and running
# --------------------------------------------------------------------------------------
def _normalize_selectors(values: Iterable[str], what: str) -> list[str]:
    out = []
    for raw in values:
        for part in str(raw).split(","):
            sel = part.strip().upper()
            if not sel:
                continue
            if sel == "ALL":
                sel = "RL"
            if not SELECTOR_RE.match(sel):
                raise UsageError(f"{what}: {part.strip()!r} is not a rule code or prefix (RL, RL1, RL10, RL105, ALL)")
            if not any(c.startswith(sel) for cls in _registry() for c in (cls.code, *cls.aliases)):
                raise UsageError(f"{what}: {part.strip()!r} matches no rule; known: {_known_codes()}")
            out.append(sel)
    return out


def _best_match(codes: Sequence[str], selectors: Sequence[str]) -> int:
    return max((len(s) for s in selectors for c in codes if c.startswith(s)), default=-1)


def select_rules(
    select: Iterable[str] = (), ignore: Iterable[str] = (), *, family: str | Iterable[str] | None = None
) -> list[type[Rule]]:
    """The rules a select/ignore pair enables (most specific selector wins; ties go to ignore)."""
    sel = _normalize_selectors(select, "select") or ["RL"]
    ign = _normalize_selectors(ignore, "ignore")
    families = None
    if family is not None:
        families = {family} if isinstance(family, str) else set(family)
        unknown = families - set(FAMILIES)
        if unknown:
            raise UsageError(f"unknown rule family {sorted(unknown)[0]!r}; known: {', '.join(FAMILIES)}")
    chosen = []
    for cls in _registry():
        if families is not None and cls.family not in families:
            continue
        codes = (cls.code, *cls.aliases)
        s, i = _best_match(codes, sel), _best_match(codes, ign)
        if s >= 0 and s > i:
            chosen.append(cls)
    return chosen


def _check_finding(cls: type[Rule], f: Any) -> None:
    if not isinstance(f, Finding):
        raise RuleDefinitionError(f"{cls.code}.check returned {type(f).__name__}, not Finding")
    if f.code != cls.code or f.name != cls.name:
        raise RuleDefinitionError(f"{cls.code}.check returned a finding labelled {f.code} {f.name}")
    if f.severity not in severity_range(cls):  # the catalogue lists exactly this range
        raise RuleDefinitionError(f"{cls.code}: finding severity {f.severity!r}; the rule declares "
                                  f"{', '.join(severity_range(cls))} (Rule.severity, Rule.severities)")
    if "\n" in f.message or "\n" in f.remedy:
        raise RuleDefinitionError(f"{cls.code}: message and remedy must be one line each")


def run_rules(
    ctx: Context,
    *,
    select: Iterable[str] = (),
    ignore: Iterable[str] = (),
    config: Mapping[str, Any] | None = None,
    family: str | Iterable[str] | None = None,
    thresholds: Iterable[str] | Mapping[str, Mapping[str, Any]] = (),
) -> list[Finding]:
    """Run the selected rules on a context; findings sorted by impact (largest first).

    ``config`` is a :func:`load_config` dict (``select``, ``ignore``, ``rules``); ``select``,
    ``ignore`` and ``thresholds`` are the command-line flags, folded in by :func:`merge_config`.
    ``family`` restricts to ``"kernel"``, ``"telemetry"``, ``"data"`` (or several). A rule that
    raises is a bug and the exception propagates.
    """
    cfg = merge_config(config, select=tuple(select), ignore=tuple(ignore), thresholds=thresholds)
    validate_config(cfg)
    overrides = rule_overrides(cfg)
    chosen = select_rules(
        _as_list(cfg.get("select", ()), "select"), _as_list(cfg.get("ignore", ()), "ignore"), family=family
    )
    findings: list[Finding] = []
    for cls in chosen:
        params = dict(overrides.get(cls.code, {}))
        severity = params.pop("severity", None)
        rule = cls(params)
        for f in rule.check(ctx) or ():
            _check_finding(cls, f)
            if severity is not None:
                f = dataclasses.replace(f, severity=severity)
            findings.append(f)
    return sort_findings(share_impacts(findings, total_s=ctx.total_gpu_time_s))


PROFILE_KINDS = ("kernel", "profile")


def share_impacts(findings: Iterable[Finding], *, total_s: float | None = None) -> list[Finding]:
    """Count each saving once.

    Findings on one subject (same ``subject_kind`` and ``subject``) describe the same GPU time:
    the one with the largest impact keeps it, the others keep ``impact_s`` null, and each lists
    the others' codes in ``related``. Then, within the profile (kernel and profile findings),
    impacts are capped so they never add up to more than the profiled GPU time ``total_s``
    (largest first; a capped finding says so in its evidence).
    """
    findings = list(findings)
    by_subject: dict[tuple[str, str], list[int]] = {}
    for i, f in enumerate(findings):
        if f.impact_s is not None:  # findings that claim no saving share nothing
            by_subject.setdefault((f.subject_kind, f.subject), []).append(i)
    for idx in by_subject.values():
        if len(idx) < 2:
            continue
        ranked = sorted(idx, key=lambda i: (-(findings[i].impact_s or 0.0), findings[i].code))
        keeper = ranked[0]
        has_impact = findings[keeper].impact_s is not None
        for i in idx:
            others = tuple(findings[j].code for j in ranked if j != i)
            f = findings[i]
            if i != keeper and has_impact:
                f = dataclasses.replace(f, impact_s=None, impact_share=None)
            findings[i] = dataclasses.replace(f, related=others)
    if total_s:
        left = float(total_s)
        order = sorted((i for i, f in enumerate(findings) if f.subject_kind in PROFILE_KINDS and f.impact_s),
                       key=lambda i: (-findings[i].impact_s, findings[i].code, findings[i].subject))
        for i in order:
            f = findings[i]
            if f.impact_s > left:
                capped = max(left, 0.0)
                findings[i] = dataclasses.replace(
                    f, impact_s=capped, impact_share=capped / total_s,
                    evidence=f.evidence + (Evidence("impact_capped_from_s", f.impact_s, "s", "derived"),),
                )
            left -= findings[i].impact_s
    return findings


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Largest impact first (share of observed GPU time, then seconds; see Finding.sort_key)."""
    return sorted(findings, key=lambda f: f.sort_key)


def severity_at_least(findings: Iterable[Finding], level: str) -> bool:
    """True when any finding's severity is ``level`` or worse (for ``--fail-on``)."""
    level = level.lower()
    if level not in SEVERITIES:
        raise UsageError(f"--fail-on: expected one of {', '.join(SEVERITIES)}, got {level!r}")
    rank = {s: i for i, s in enumerate(SEVERITIES)}
    return any(rank.get(f.severity, -1) >= rank[level] for f in findings)
