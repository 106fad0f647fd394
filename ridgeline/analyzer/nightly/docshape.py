"""The shape of a ridgeline JSON document as ``ridgeline diff`` reads it, checked before it is read.

A document that is JSON but not what ``analyze``/``telemetry --format json`` write (a list where
records are expected, a number where a kernel name is) must be one line ``FILE: expected ...,
got ...`` (exit 2), not a TypeError inside the comparison (exit 3, a bug). Only the parts the
comparison reads are checked: record lists, and the record keys it uses as names or groups.
"""

from __future__ import annotations

from typing import Any

from ridgeline.errors import InputError

_SCALAR = (str, int, float, bool, type(None))
# keys used as names / group keys: must be a scalar (a list or object there is not ridgeline's)
NAME_KEYS = {
    "kernels": ("short_name", "kernel_name", "grid_size", "block_size", "bound"),
    "summary": ("short_name", "kernel_name", "bound"),
    "findings": ("code", "name", "subject", "severity", "message"),
}
NUMBER_KEYS = {"summary": ("launches",), "fleet": ("gpus",)}
TELEMETRY_NAME_KEYS = ("host", "gpu", "gpu_instance")


def _records(value: Any, path: str, where: str) -> list[dict]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(r, dict) for r in value):
        got = type(value).__name__ if not isinstance(value, list) else \
            f"a list holding {type(next(r for r in value if not isinstance(r, dict))).__name__}"
        raise InputError(path, f"expected '{where}' to be a list of objects", actual=got)
    return value


def _scalars(records: list[dict], keys, path: str, where: str, *, strings: bool = False) -> None:
    allowed = (str, type(None)) if strings else _SCALAR
    for i, r in enumerate(records):
        for k in keys:
            if not isinstance(r.get(k), allowed):
                raise InputError(path, f"expected '{where}[{i}].{k}' to be " + ("text" if strings else
                                 "a string or number"), actual=type(r[k]).__name__)


def _numbers(records: list[dict], keys, path: str, where: str) -> None:
    for i, r in enumerate(records):
        for k in keys:
            v = r.get(k)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
                raise InputError(path, f"expected '{where}[{i}].{k}' to be a number", actual=str(v)[:40])


def check_document(doc: Any, path: str) -> None:
    """InputError naming ``path`` when ``doc`` has a part the comparison reads in the wrong shape."""
    if not isinstance(doc, dict):
        return  # document_kind says what is wrong with it
    for key, names in NAME_KEYS.items():
        records = _records(doc.get(key), path, key)
        _scalars(records, names, path, key, strings=True)
        _numbers(records, NUMBER_KEYS.get(key, ()), path, key)
    for i, f in enumerate(_records(doc.get("findings"), path, "findings")):
        if f.get("severity") not in ("info", "warning", "critical") or not isinstance(f.get("code"), str):
            raise InputError(path, f"expected 'findings[{i}]' to have a code and a severity (info, warning, critical)",
                             actual=f"code {f.get('code')!r}, severity {f.get('severity')!r}")
    tel = doc.get("telemetry")
    if tel is None:
        return
    if not isinstance(tel, dict):
        raise InputError(path, "expected 'telemetry' to be an object with windows and fleet", actual=type(tel).__name__)
    windows = _records(tel.get("windows"), path, "telemetry.windows")
    _scalars(windows, TELEMETRY_NAME_KEYS, path, "telemetry.windows")
    _scalars(windows, ("host", "window_start", "window_end"), path, "telemetry.windows", strings=True)
    fleet = tel.get("fleet")
    if fleet is None:
        return
    if not isinstance(fleet, dict):
        raise InputError(path, "expected 'telemetry.fleet' to be an object with by_gpu and by_host",
                         actual=type(fleet).__name__)
    for which in ("by_gpu", "by_host"):
        rows = _records(fleet.get(which), path, f"telemetry.fleet.{which}")
        _scalars(rows, TELEMETRY_NAME_KEYS, path, f"telemetry.fleet.{which}")
        _scalars(rows, ("host",), path, f"telemetry.fleet.{which}", strings=True)
        _numbers(rows, NUMBER_KEYS["fleet"], path, f"telemetry.fleet.{which}")
