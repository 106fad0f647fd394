"""Expectation files: what a team knows about its kernels, as data (``*.ridgeline.toml``).

One file describes one analysis (the ``[profile]`` inputs, analyzed together as by
``ridgeline analyze``) and what must hold in it::

    [profile]
    paths = ["profiles/prefill-2048.ncu-raw.csv"]   # relative to this file
    # gpu = "h100-sxm"                               # like --gpu; also select, ignore, thresholds, config

    [tolerance]            # used where an expectation gives one value instead of a range
    roof_fraction = 0.1    # absolute: recorded 0.72 accepts 0.62 .. 0.82
    intensity = 0.2        # relative: +-20%
    time_share = 0.25      # relative: +-25%

    [findings]             # no finding at or above min_severity except these codes (or prefixes)
    min_severity = "warning"
    allow = ["RL107"]

    [[expect]]
    name = "prefill GEMMs stay compute-bound"
    family = "gemm"              # or kernel = "exact name", or pattern = "regex"
    ignore_below_share = 0.01    # leave out groups holding < 1% of GPU time
    bound = "compute"            # or ["compute", "memory"]
    roof_fraction = [0.7, 1.05]  # a range, {min = 0.7}, or one value (+- tolerance)
    intensity = {min = 500}      # FLOP/B at DRAM
    time_share = {max = 0.9}     # share of all GPU time, per kernel group
    findings = ["RL105"]         # findings allowed on these kernels

``ridgeline check FILE`` and the pytest plugin check it (one test item per ``[[expect]]``, plus
one for ``[findings]``); ``ridgeline check --write FILE PROFILE`` records today's verdicts.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from pathlib import Path
from typing import Any, Sequence

from ridgeline.errors import InputError, UsageError
from ridgeline.testing.checks import Outcome, check_findings, check_kernels
from ridgeline.testing.kernels import Selector, make_selector

SUFFIX = ".ridgeline.toml"
DEFAULT_TOLERANCE = {"roof_fraction": 0.1, "intensity": 0.2, "time_share": 0.25}
# absolute tolerances; the others are relative to the recorded value
ABSOLUTE_TOLERANCE = ("roof_fraction",)
PROFILE_KEYS = ("paths", "gpu", "select", "ignore", "thresholds", "config", "window", "interval", "start",
                "tz", "host")
EXPECT_KEYS = ("name", "family", "kernel", "pattern", "exclude", "precision", "ignore_below_share", "bound",
               "roof_fraction", "intensity", "time_share", "findings", "required")
FINDINGS_KEYS = ("min_severity", "allow")
TOP_KEYS = ("profile", "tolerance", "findings", "expect")
FINDINGS_ITEM = "findings"


@dataclasses.dataclass
class Expectation:
    """One ``[[expect]]`` entry, its values resolved to ``(low, high)`` ranges."""

    name: str
    selector: Selector
    bound: tuple[str, ...] = ()
    roof_fraction: tuple | None = None
    intensity: tuple | None = None
    time_share: tuple | None = None
    findings: tuple[str, ...] | None = None
    required: bool = True


@dataclasses.dataclass
class ExpectationFile:
    path: Path
    profiles: list[Path]
    options: dict[str, Any]
    expectations: list[Expectation]
    min_severity: str | None = None  # None: no [findings] table, findings not checked globally
    allow: tuple[str, ...] = ()
    tolerance: dict[str, float] = dataclasses.field(default_factory=lambda: dict(DEFAULT_TOLERANCE))

    def item_names(self) -> list[str]:
        names = [e.name for e in self.expectations]
        return names + ([FINDINGS_ITEM] if self.min_severity else [])


# ------------------------------------------------------------------------------------------
# reading
# ------------------------------------------------------------------------------------------
def _toml():
    try:
        import tomllib  # Python 3.11+
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    return tomllib


def _read(path: Path) -> dict[str, Any]:
    tomllib = _toml()
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(path, "no such expectation file") from None
    except OSError as err:
        raise InputError(path, f"cannot read: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise InputError(path, "expected a UTF-8 TOML file") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        msg = str(err)
        m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
        detail = re.sub(r"\s*\(at line \d+, column \d+\)", "", msg)
        raise InputError(path, "expected valid TOML", line=int(m.group(1)) if m else None, actual=detail) from None


def _unknown(path: Path, where: str, table: dict, known: Sequence[str]) -> None:
    for key in table:
        if key not in known:
            raise InputError(path, f"{where}: unknown key {key!r}; known: {', '.join(known)}")


def _number(path: Path, where: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise InputError(path, f"{where}: expected a number", actual=value)
    return float(value)


def _range(path: Path, where: str, value: Any, tolerance: float, absolute: bool) -> tuple | None:
    """A number (recorded value +- tolerance), ``[low, high]`` or ``{min = .., max = ..}``."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        if len(value) != 2:
            raise InputError(path, f"{where}: expected [low, high]", actual=value)
        lo, hi = (_number(path, where, v) for v in value)
        if lo > hi:
            raise InputError(path, f"{where}: low end above high end", actual=value)
        return lo, hi
    if isinstance(value, dict):
        _unknown(path, where, value, ("min", "max"))
        if not value:
            raise InputError(path, f"{where}: expected min, max or both")
        lo = _number(path, where, value["min"]) if "min" in value else None
        hi = _number(path, where, value["max"]) if "max" in value else None
        return lo, hi
    v = _number(path, where, value)
    spread = tolerance if absolute else abs(v) * tolerance
    return v - spread, v + spread


def _codes(path: Path, where: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(path, f"{where}: expected a list of rule codes such as [\"RL101\", \"RL9\"]", actual=value)
    out = []
    for v in value:
        code = v.strip().upper()
        if not re.fullmatch(r"RL[0-9]{0,3}", code):
            raise InputError(path, f"{where}: expected a rule code or prefix (RL101, RL1)", actual=v)
        out.append(code)
    return tuple(out)


def _default_name(sel: Selector) -> str:
    return sel.family or sel.kernel or (f"/{sel.pattern}/" if sel.pattern else "all kernels")


def load(path: str | Path, profiles: Sequence[str | Path] = ()) -> ExpectationFile:
    """Read and validate an expectation file; ``profiles`` (paths as given) replace its own."""
    path = Path(path)
    data = _read(path)
    _unknown(path, "top level", data, TOP_KEYS)
    prof = data.get("profile", {})
    if not isinstance(prof, dict):
        raise InputError(path, "[profile]: expected a table")
    _unknown(path, "[profile]", prof, PROFILE_KEYS)
    tol = dict(DEFAULT_TOLERANCE)
    tol_in = data.get("tolerance", {})
    if not isinstance(tol_in, dict):
        raise InputError(path, "[tolerance]: expected a table")
    _unknown(path, "[tolerance]", tol_in, tuple(DEFAULT_TOLERANCE))
    for key, value in tol_in.items():
        tol[key] = _number(path, f"[tolerance] {key}", value)
    if profiles:
        paths = [Path(p) for p in profiles]
    else:
        raw = prof.get("paths")
        if isinstance(raw, str):
            raw = [raw]
        if not raw or not isinstance(raw, list) or not all(isinstance(p, str) for p in raw):
            raise InputError(path, "[profile] paths: expected a list of profile files, relative to this file "
                                   "(or name the profiles on the command line)", actual=raw)
        paths = [path.parent / p for p in raw]
    options = _options(path, prof)
    min_severity, allow = None, ()
    if "findings" in data:
        fnd = data["findings"]
        if not isinstance(fnd, dict):
            raise InputError(path, "[findings]: expected a table")
        _unknown(path, "[findings]", fnd, FINDINGS_KEYS)
        min_severity = fnd.get("min_severity", "warning")
        if min_severity not in ("info", "warning", "critical"):
            raise InputError(path, "[findings] min_severity: expected info, warning or critical", actual=min_severity)
        allow = _codes(path, "[findings] allow", fnd.get("allow", []))
    entries = data.get("expect", [])
    if not isinstance(entries, list):
        raise InputError(path, "expect: expected [[expect]] tables")
    expectations = [_expectation(path, i, e, tol) for i, e in enumerate(entries, 1)]
    seen: dict[str, int] = {}
    for e in expectations:  # item names are unique within a file
        n = seen.get(e.name, 0) + 1
        seen[e.name] = n
        if n > 1:
            e.name = f"{e.name} ({n})"
    return ExpectationFile(path=path, profiles=paths, options=options, expectations=expectations,
                           min_severity=min_severity, allow=allow, tolerance=tol)


def _options(path: Path, prof: dict) -> dict[str, Any]:
    """[profile] keys -> keyword arguments of ridgeline.pipeline.analyze_paths."""
    out: dict[str, Any] = {"config": {}}  # never ./ridgeline.toml of wherever the check runs
    for key in ("gpu", "window", "tz", "host"):
        if key in prof:
            if not isinstance(prof[key], str):
                raise InputError(path, f"[profile] {key}: expected a string", actual=prof[key])
            out[key] = prof[key]
    for key in ("select", "ignore"):
        if key in prof:
            out[key] = _codes(path, f"[profile] {key}", prof[key])
    if "thresholds" in prof:
        value = prof["thresholds"]
        if isinstance(value, dict):
            out["thresholds"] = value
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            out["thresholds"] = tuple(value)
        else:
            raise InputError(path, "[profile] thresholds: expected a table {RL105 = {min_fraction = 0.4}} or "
                                   "a list of \"CODE.name=value\"", actual=value)
    if "config" in prof:
        out["config"] = path.parent / str(prof["config"])
    if "interval" in prof:
        from ridgeline.analyzer.fleet.telemetry import parse_duration_s

        out["interval_s"] = parse_duration_s(prof["interval"], what=f"{path}: [profile] interval")
    if "start" in prof:
        import datetime as _dt

        start = prof["start"]
        if isinstance(start, str):
            try:
                start = _dt.datetime.fromisoformat(start.strip().replace("Z", "+00:00"))
            except ValueError:
                raise InputError(path, "[profile] start: expected an ISO 8601 time", actual=prof["start"]) from None
        if not isinstance(start, _dt.datetime):
            raise InputError(path, "[profile] start: expected an ISO 8601 time", actual=start)
        out["start"] = start if start.tzinfo else start.replace(tzinfo=_dt.timezone.utc)
    return out


def _expectation(path: Path, index: int, entry: Any, tol: dict[str, float]) -> Expectation:
    where = f"expect #{index}"
    if not isinstance(entry, dict):
        raise InputError(path, f"{where}: expected a table")
    if isinstance(entry.get("name"), str):
        where = f"expect #{index} ({entry['name']!r})"
    _unknown(path, where, entry, EXPECT_KEYS)
    for key in ("name", "family", "kernel", "pattern", "exclude", "precision"):
        if key in entry and not isinstance(entry[key], str):
            raise InputError(path, f"{where}: {key}: expected a string", actual=entry[key])
    try:
        sel = make_selector(family=entry.get("family"), kernel=entry.get("kernel"), pattern=entry.get("pattern"),
                            exclude=entry.get("exclude"), precision=entry.get("precision"),
                            min_share=_number(path, f"{where} ignore_below_share", entry.get("ignore_below_share", 0.0)))
    except UsageError as err:
        raise InputError(path, f"{where}: {err}") from None
    bound = entry.get("bound", ())
    bound = (bound,) if isinstance(bound, str) else bound
    if not isinstance(bound, (list, tuple)) or not all(isinstance(b, str) for b in bound):
        raise InputError(path, f"{where}: bound: expected \"compute\", \"memory\", \"latency\", \"launch\", \"stall\" or a list of them",
                         actual=entry.get("bound"))
    checks = {k: _range(path, f"{where} {k}", entry.get(k), tol[k], k in ABSOLUTE_TOLERANCE)
              for k in ("roof_fraction", "intensity", "time_share")}
    findings = _codes(path, f"{where} findings", entry["findings"]) if "findings" in entry else None
    required = entry.get("required", True)
    if not isinstance(required, bool):
        raise InputError(path, f"{where}: required: expected true or false", actual=required)
    if not (bound or findings is not None or any(v is not None for v in checks.values())):
        raise InputError(path, f"{where}: expects nothing: give bound, roof_fraction, intensity, time_share "
                               "or findings")
    return Expectation(name=entry.get("name") or _default_name(sel), selector=sel, bound=tuple(bound),
                       findings=findings, required=required, **checks)


# ------------------------------------------------------------------------------------------
# checking
# ------------------------------------------------------------------------------------------
def analyze(spec: ExpectationFile, cache: dict | None = None):
    """The AnalysisResult of the file's profiles (memoized in ``cache``, shared with the fixture)."""
    from ridgeline.testing import analyze as analyze_cached

    return analyze_cached(*spec.profiles, cache=cache, **spec.options)


def check_one(spec: ExpectationFile, name: str, result, table=None) -> Outcome:
    """The outcome of the item ``name`` (an expectation's name, or ``"findings"``)."""
    from ridgeline.testing.kernels import kernel_table

    if table is None:
        table = kernel_table(result)
    if name == FINDINGS_ITEM and spec.min_severity:
        covered: set[str] = set()
        for e in spec.expectations:  # findings on kernels an expectation rules on are judged there
            if e.findings is not None and table is not None:
                covered |= set(e.selector.apply(table).get_column("subject").to_list())
        outcome = check_findings(result, min_severity=spec.min_severity, ignore=spec.allow,
                                 allowed_on={s: ("RL",) for s in covered})
        return outcome
    for e in spec.expectations:
        if e.name == name:
            out = check_kernels(result, e.selector, bound=e.bound or None, roof_fraction=e.roof_fraction,
                                intensity=e.intensity, time_share=e.time_share, findings=e.findings,
                                min_severity=spec.min_severity or "warning", required=e.required, table=table)
            if e.name != _default_name(e.selector):
                out.what = f"{e.name} ({out.what})"
            return out
    raise KeyError(name)


def check_all(spec: ExpectationFile, result) -> list[tuple[str, Outcome]]:
    from ridgeline.testing.kernels import kernel_table

    table = kernel_table(result)
    return [(name, check_one(spec, name, result, table)) for name in spec.item_names()]


def format_report(spec: ExpectationFile, outcomes: list[tuple[str, Outcome]], result) -> str:
    """The text ``ridgeline check`` prints."""
    shown = ", ".join(_display(p) for p in spec.profiles)
    gpu = f" ({result.gpu_name})" if getattr(result, "gpu_name", None) else ""
    lines = _wrap(f"ridgeline check: {_display(spec.path)} against {shown}{gpu}", "  ")
    for name, out in outcomes:
        if out.passed:
            lines += _wrap(f"  ok    {name}", " " * 8)
        else:
            lines += _wrap(f"  FAIL  {name}", " " * 8)
            for p in out.problems:
                for part in p.split("\n"):
                    lead = " " * (len(part) - len(part.lstrip()))
                    lines += _wrap(" " * 8 + part, " " * 8 + lead + "  ")  # "- item" text continues under itself
    failed = sum(1 for _n, o in outcomes if not o.passed)
    lines.append(f"{len(outcomes)} expectation{'s' if len(outcomes) != 1 else ''}: "
                 f"{len(outcomes) - failed} passed, {failed} failed")
    return "\n".join(lines) + "\n"


def _wrap(line: str, indent: str, width: int = 80) -> list[str]:
    """One report line fitted to ``width`` columns, continuation lines at ``indent`` (long kernel
    names and paths are not broken)."""
    import textwrap

    if len(line) <= width:
        return [line]
    first = line[: len(line) - len(line.lstrip())]
    return textwrap.wrap(line.strip(), width=width, initial_indent=first, subsequent_indent=indent,
                         break_long_words=False, break_on_hyphens=False) or [line]


def _display(path: Path) -> str:
    """Relative to the working folder when under it, else as it is."""
    from ridgeline.testing.asserts import _short

    return _short(str(Path(path).absolute())) if Path(path).is_absolute() else str(path)


# ------------------------------------------------------------------------------------------
# writing
# ------------------------------------------------------------------------------------------
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _escaped(text: str, *, quote: bool) -> str:
    """``text`` with what a TOML file cannot hold raw written as escapes, so it reads back exact:
    control characters (C0, DEL, C1: TOML refuses C0 and DEL raw), format characters (bidi
    overrides, zero-width) and line/paragraph separators as ``\\uXXXX`` (``\\UXXXXXXXX`` past
    U+FFFF); ``quote``: a basic string's ``"`` and ``\\`` too. A lone surrogate, which no TOML
    file (nor UTF-8) can hold, is written as U+FFFD."""
    import unicodedata

    out = []
    for ch in text:
        if quote and ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
            continue
        cat = unicodedata.category(ch)
        if cat == "Cs":
            out.append("\\uFFFD")
        elif cat in ("Cc", "Cf", "Zl", "Zp") and (quote or ch != "\t"):
            out.append(f"\\u{ord(ch):04X}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08X}")
        else:
            out.append(ch)
    return "".join(out)


def _q(text: str) -> str:
    """A TOML basic string that reads back as ``text`` (:func:`_escaped`)."""
    return '"' + _escaped(str(text), quote=True) + '"'


def _key(name: str) -> str:
    """A TOML key: bare when it may be, else quoted."""
    import re

    return name if re.fullmatch(r"[A-Za-z0-9_-]+", str(name)) else _q(name)


def _comment(text: str) -> str:
    """Text for a ``#`` comment: nothing in it can end the comment or be refused by a reader."""
    return _escaped(str(text), quote=False)


def _g(x: float) -> str:
    """4 significant figures, always a TOML float."""
    text = f"{x:.4g}"
    if "e" in text:
        mant, exp = text.split("e")
        text = (mant if "." in mant else mant + ".0") + "e" + str(int(exp))
    elif "." not in text and "inf" not in text and "nan" not in text:
        text += ".0"
    return text


def render(result, *, expect_path: Path, profiles: Sequence[Path], min_share: float = 0.01,
           tolerance: dict[str, float] | None = None, min_severity: str = "warning",
           profile_options: dict[str, Any] | None = None) -> str:
    """An expectation file recording ``result``'s verdicts: one ``[[expect]]`` per kernel group holding
    at least ``min_share`` of GPU time, the findings at or above ``min_severity`` as allowed."""
    from ridgeline import __version__
    from ridgeline.testing.checks import SEVERITY_RANK
    from ridgeline.testing.kernels import kernel_table

    tol = dict(DEFAULT_TOLERANCE, **(tolerance or {}))
    base = expect_path.resolve().parent
    rel = [Path(os.path.relpath(Path(p).resolve(), base)).as_posix() for p in profiles]
    lines = [
        f"# ridgeline expectations, recorded by `ridgeline check --write` (ridgeline {__version__}) from",
        _comment(f"# {', '.join(rel)}{' on ' + result.gpu_name if result.gpu_name else ''}."),
        "# Edit freely: a single value accepts the recorded value +- [tolerance]; a range is [low, high]",
        _comment("# or {min = .., max = ..}. Check with: ridgeline check " + expect_path.name + "  (or pytest)."),
        "",
        "[profile]",
        "paths = [" + ", ".join(_q(p) for p in rel) + "]  # relative to this file",
    ]
    for key, value in (profile_options or {}).items():
        if key != "paths":
            lines.append(f"{_key(key)} = {_toml_value(value)}")
    lines += [
        "",
        "[tolerance]",
        f"roof_fraction = {_g(tol['roof_fraction'])}  # absolute: fraction of roof +- this",
        f"intensity = {_g(tol['intensity'])}  # relative: +- this share of the recorded intensity",
        f"time_share = {_g(tol['time_share'])}  # relative: +- this share of the recorded share of GPU time",
    ]
    table = kernel_table(result)
    rank = SEVERITY_RANK[min_severity]
    findings = [f for f in (result.findings or []) if SEVERITY_RANK.get(f.severity, -1) >= rank]
    rows = [] if table is None else [r for r in table.to_dicts() if (r["time_share"] or 0.0) >= min_share]
    recorded = {r["subject"] for r in rows}
    elsewhere = sorted({f.code for f in findings if f.subject not in recorded})
    lines += [
        "",
        "[findings]  # findings on kernels with an [[expect]] below are judged there",
        f"min_severity = {_q(min_severity)}",
        "allow = [" + ", ".join(_q(c) for c in elsewhere) + "]",
    ]
    # kernels are recorded by their full name (stable across ridgeline versions; labels follow the
    # family table and a profile's other kernels) and named by the label findings use
    keys = [r["kernel_name"] or r["name"] for r in table.to_dicts()] if table is not None else []
    left_out = (table.height if table is not None else 0) - len(rows)
    for r in rows:
        key = r["kernel_name"] or r["name"]
        lines += ["", "[[expect]]"]
        if r["subject"] != key:
            lines.append(f"name = {_q(r['subject'])}")
        lines.append(f"kernel = {_q(key)}")
        if keys.count(key) > 1:
            lines.append(f"precision = {_q(r.get('precision') or 'none')}")
        if r.get("bound"):
            lines.append(f"bound = {_q(r['bound'])}")
        for key, col in (("roof_fraction", "roof_fraction"), ("intensity", "intensity_dram"),
                         ("time_share", "time_share")):
            v = r.get(col)
            if v is not None and math.isfinite(v):
                lines.append(f"{key} = {_g(v)}")
        codes = sorted({f.code for f in findings if f.subject == r["subject"]})
        lines.append("findings = [" + ", ".join(_q(c) for c in codes) + "]")
    if left_out > 0:
        lines += ["", f"# {left_out} smaller kernel group{'s' if left_out != 1 else ''} (< {min_share:.0%} of GPU time "
                      "each) have no [[expect]]; their findings count under [findings]."]
    return "\n".join(lines) + "\n"


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return _q(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return _q(str(value))


def write(expect_path: str | Path, profiles: Sequence[str | Path] = (), *, gpu: str | None = None,
          min_share: float = 0.01, min_severity: str | None = None) -> tuple[str, Any]:
    """Analyze ``profiles`` (or, with none, the file's own) and write the file; returns (text, result).

    An existing file keeps its ``[profile]`` options, ``[tolerance]`` and ``min_severity``.
    """
    from ridgeline.pipeline import analyze_paths

    expect_path = Path(expect_path)
    old: dict[str, Any] = {}
    tolerance = None
    if expect_path.exists():
        spec = load(expect_path, profiles)
        old = {k: v for k, v in _read(expect_path).get("profile", {}).items() if k != "paths"}
        tolerance = spec.tolerance
        min_severity = min_severity or spec.min_severity
        if not profiles:
            profiles = spec.profiles
        options = spec.options
    else:
        if not profiles:
            raise UsageError(f"{expect_path} does not exist yet: name the profile(s) to record")
        options = {"config": {}}
    if gpu:
        old["gpu"] = gpu
        options = dict(options, gpu=gpu)
    profiles = [Path(p) for p in profiles]
    from ridgeline.outpaths import refuse_over_inputs  # (the file's own profile paths too)

    refuse_over_inputs([("check --write", expect_path)], profiles)
    result = analyze_paths(profiles, **options)
    text = render(result, expect_path=expect_path, profiles=profiles, min_share=min_share,
                  tolerance=tolerance, min_severity=min_severity or "warning", profile_options=old)
    from ridgeline.atomic import write_text

    try:
        write_text(expect_path, text)
    except OSError as err:
        raise UsageError(f"cannot write {expect_path}: {err.strerror or err}") from None
    return text, result
