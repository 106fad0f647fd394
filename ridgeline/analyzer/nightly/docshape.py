"""A ridgeline JSON document as ``ridgeline diff`` reads it, validated before anything is judged.

A document that is JSON but not what ``analyze``/``telemetry --format json`` write must be one line
``FILE: expected 'JSON.PATH' to be ..., got ...`` (exit 2), never a comparison judged on garbage
(a NaN waste is neither above nor below any band, so a regression turns into "within") nor a
TypeError inside the comparison (exit 3, a bug). :func:`check_document` checks every part the
comparison reads:

* the document is an object with ``schema_version``, ``kernels``, ``findings`` and ``telemetry``;
  ``schema_version`` is ``"MAJOR.MINOR"`` with a major version this ridgeline reads
  (:data:`KNOWN_MAJORS`);
* record lists (``kernels``, ``summary``, ``findings``, ``telemetry.windows``,
  ``telemetry.fleet.by_gpu``/``by_host``, ``telemetry.groups``) are lists of objects;
* names and group keys are text or scalars (a list where a kernel name is, is not ridgeline's);
* every figure the comparison reads (:data:`FIGURES`) is null or a finite number >= 0 and at most
  :data:`MAX_FIGURE` (JSON has no NaN or Infinity and ridgeline never writes them; Python's
  reader accepts both, and ``1e999``, which it reads as infinity); a share at most 1; counts whole;
* window times are ISO 8601 times, each window ending no earlier than it starts;
* findings have a rule code and a severity (info, warning, critical).

The nightly flow (:func:`ridgeline.nightly.collect`) refuses a bad tonight and leaves a bad past
night out with a note; the pairwise diff refuses either document. The reader
(``ridgeline.commands.diff``) turns a document nested too deep for Python's JSON reader into the
same kind of one line. Pure Python, one pass over the records the comparison reads.
"""

from __future__ import annotations

import datetime as _dt
import math
from typing import Any

from ridgeline.errors import InputError

# major versions of docs/json-schema.md this ridgeline reads (minor versions only add keys)
KNOWN_MAJORS = (1,)
# no figure the comparison reads is larger (seconds, hours, FLOPs, bytes): sums over millions of
# records stay finite
MAX_FIGURE = 1e30
REQUIRED_KEYS = ("schema_version", "kernels", "findings", "telemetry")

_SCALAR = (str, int, float, bool, type(None))
# keys used as names / group keys: must be text (a list or object there is not ridgeline's)
NAME_KEYS = {
    "kernels": ("short_name", "kernel_name", "grid_size", "block_size", "bound", "latency_kind"),
    "summary": ("short_name", "kernel_name", "bound", "latency_kind"),
    "findings": ("code", "name", "subject", "severity", "message"),
}
TELEMETRY_NAME_KEYS = ("host", "gpu", "gpu_instance", "model")
# figures the comparison reads, per record list: key -> kind ("figure": finite >= 0; "share": and
# at most 1; "count": a whole number >= 0; "ratio": finite >= 0, a roof fraction may pass 1)
FIGURES: dict[str, dict[str, str]] = {
    "kernels": {"duration_s": "figure", "flops": "figure", "dram_bytes": "figure", "roof_fraction": "ratio"},
    "summary": {"launches": "count", "total_duration_s": "figure", "intensity_dram": "figure",
                "roof_fraction": "ratio"},
    "telemetry.windows": {"span_s": "figure"},
    "telemetry.fleet.by_gpu": {"gpus": "count", "span_h": "figure", "wasted_gpu_h": "figure",
                               "busy_tensor_idle_h": "figure", "allocated_idle_h": "figure", "wasted_share": "share"},
    "telemetry.fleet.by_host": {"gpus": "count", "span_h": "figure", "wasted_gpu_h": "figure",
                                "busy_tensor_idle_h": "figure", "allocated_idle_h": "figure", "wasted_share": "share"},
    "groups": {"gpu_hours": "figure", "wasted_gpu_hours": "figure"},
}
_EXPECTED = {"figure": "a finite number >= 0", "ratio": "a finite number >= 0",
             "share": "a number from 0 to 1", "count": "a whole number >= 0"}
SEVERITIES = ("info", "warning", "critical")


def _type(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "text", bool: "true/false", type(None): "null"}.get(
        type(value), type(value).__name__)


def _bad(path: str, where: str, expected: str, value: Any) -> InputError:
    shown = value if isinstance(value, (int, float, str)) and not isinstance(value, bool) else _type(value)
    if isinstance(shown, int) and abs(shown) > 10**20:
        shown = f"an integer of {len(str(abs(shown)))} digits"
    return InputError(path, f"expected '{where}' to be {expected}", actual=shown)


def _records(value: Any, path: str, where: str) -> list[dict]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _bad(path, where, "a list of objects", value)
    for i, r in enumerate(value):
        if not isinstance(r, dict):
            raise _bad(path, f"{where}[{i}]", "an object", r)
    return value


def _ok_figure(value: Any, kind: str) -> bool:
    if value is None:
        return True
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if isinstance(value, int):
        return 0 <= value <= MAX_FIGURE
    if not (math.isfinite(value) and 0.0 <= value <= MAX_FIGURE):
        return False
    if kind == "share":
        return value <= 1.0 + 1e-9
    if kind == "count":
        return value == int(value)
    return True


def _check_record(r: dict, path: str, where: str, *, names=(), figures=None, text_names=True) -> None:
    allowed = (str, type(None)) if text_names else _SCALAR
    for k in names:
        v = r.get(k)
        if not isinstance(v, allowed) or (isinstance(v, float) and not math.isfinite(v)):
            raise _bad(path, f"{where}.{k}", "text" if text_names else "text or a number", v)
    for k, kind in (figures or {}).items():
        v = r.get(k)
        if not _ok_figure(v, kind):
            raise _bad(path, f"{where}.{k}", f"{_EXPECTED[kind]} or null", v)


def _check_records(records: list[dict], path: str, where: str, **how) -> None:
    for i, r in enumerate(records):
        _check_record(r, path, f"{where}[{i}]", **how)


def _time(value: Any) -> _dt.datetime | None:
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        t = _dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    return t if t.tzinfo is not None else t.replace(tzinfo=_dt.timezone.utc)


def _check_windows(windows: list[dict], path: str) -> None:
    where = "telemetry.windows"
    _check_records(windows, path, where, names=TELEMETRY_NAME_KEYS, figures=FIGURES[where], text_names=False)
    _check_records(windows, path, where, names=("host",))
    for i, w in enumerate(windows):
        start, end = _time(w.get("window_start")), _time(w.get("window_end"))
        if start is None:
            raise _bad(path, f"{where}[{i}].window_start", "an ISO 8601 time", w.get("window_start"))
        if end is None:
            raise _bad(path, f"{where}[{i}].window_end", "an ISO 8601 time", w.get("window_end"))
        if end < start:
            raise _bad(path, f"{where}[{i}].window_end", f"no earlier than window_start ({w['window_start']})",
                       w["window_end"])


def _check_group_key(key: Any, path: str, where: str) -> None:
    parts = key.values() if isinstance(key, dict) else key if isinstance(key, list) else (key,)
    for v in parts:
        if not isinstance(v, _SCALAR) or (isinstance(v, float) and not math.isfinite(v)):
            raise _bad(path, where, "text, a list of text or an object of text", v)


def schema_major(doc: dict, path: str) -> int:
    """The document's schema major version; InputError unless ``"MAJOR.MINOR"`` with a known major."""
    version = doc.get("schema_version")
    text = str(version) if isinstance(version, (str, int, float)) and not isinstance(version, bool) else ""
    head, _, minor = text.partition(".")
    if not (head.isdigit() and len(head) < 6 and (minor == "" or minor.isdigit())):
        raise _bad(path, "schema_version", 'a version such as "1.6"', version)
    major = int(head)
    if major not in KNOWN_MAJORS:
        raise InputError(path, f"expected schema_version {' or '.join(f'{m}.x' for m in KNOWN_MAJORS)} (this "
                         "ridgeline reads those; a newer ridgeline wrote this document?)", actual=text)
    return major


def check_document(doc: Any, path: str) -> None:
    """InputError naming ``path`` and the JSON path of the first part the comparison reads that is
    not what ridgeline writes; see the module docstring."""
    if not isinstance(doc, dict):
        raise InputError(path, "expected a ridgeline JSON document (analyze/telemetry --format json): an object",
                         actual=_type(doc))
    missing = [k for k in REQUIRED_KEYS if k not in doc]
    if missing:
        raise InputError(path, "expected a ridgeline JSON document (analyze/telemetry --format json) with keys "
                         + ", ".join(REQUIRED_KEYS), actual="keys " + ", ".join(str(k)[:20] for k in list(doc)[:6]))
    schema_major(doc, path)
    total = doc.get("total_gpu_time_s")
    if not _ok_figure(total, "figure"):
        raise _bad(path, "total_gpu_time_s", "a finite number >= 0 or null", total)
    gpu = doc.get("gpu")
    if gpu is not None and not isinstance(gpu, dict):
        raise _bad(path, "gpu", "an object", gpu)
    if isinstance(gpu, dict) and not isinstance(gpu.get("name"), (str, type(None))):
        raise _bad(path, "gpu.name", "text", gpu.get("name"))
    for key in ("kernels", "summary"):
        _check_records(_records(doc.get(key), path, key), path, key, names=NAME_KEYS[key], figures=FIGURES[key])
    findings = _records(doc.get("findings"), path, "findings")
    _check_records(findings, path, "findings", names=NAME_KEYS["findings"])
    for i, f in enumerate(findings):
        if f.get("severity") not in SEVERITIES or not isinstance(f.get("code"), str):
            raise InputError(path, f"expected 'findings[{i}]' to have a code and a severity ({', '.join(SEVERITIES)})",
                             actual=f"code {str(f.get('code'))[:20]!r}, severity {str(f.get('severity'))[:20]!r}")
    groups = doc.get("groups")
    if groups is not None and not isinstance(groups, list):
        raise _bad(path, "groups", "a list of objects", groups)
    tel = doc.get("telemetry")
    if tel is None:
        _check_groups(groups, path, "groups")
        return
    if not isinstance(tel, dict):
        raise _bad(path, "telemetry", "an object with windows and fleet", tel)
    _check_windows(_records(tel.get("windows"), path, "telemetry.windows"), path)
    tel_groups = tel.get("groups")
    if tel_groups is not None and not isinstance(tel_groups, list):
        raise _bad(path, "telemetry.groups", "a list of objects", tel_groups)
    _check_groups(tel_groups if tel_groups is not None else groups, path,
                  "telemetry.groups" if tel_groups is not None else "groups")
    fleet = tel.get("fleet")
    if fleet is None:
        return
    if not isinstance(fleet, dict):
        raise _bad(path, "telemetry.fleet", "an object with by_gpu and by_host", fleet)
    for which in ("by_gpu", "by_host"):
        where = f"telemetry.fleet.{which}"
        rows = _records(fleet.get(which), path, where)
        _check_records(rows, path, where, names=TELEMETRY_NAME_KEYS, figures=FIGURES[where], text_names=False)
        _check_records(rows, path, where, names=("host",))


def _check_groups(groups: Any, path: str, where: str) -> None:
    """``groups`` as the trend reads them: the objects with a ``key`` (others are not groups)."""
    for i, g in enumerate(groups or []):
        if not isinstance(g, dict) or "key" not in g:
            continue
        _check_group_key(g["key"], path, f"{where}[{i}].key")
        _check_record(g, path, f"{where}[{i}]", figures=FIGURES["groups"])
