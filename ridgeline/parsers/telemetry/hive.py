"""Hive partition folders (``date=2026-01-05/host=node01``): one encoding, one decoding, one scan.

The store (:mod:`ridgeline.sources.store`) names a partition folder ``KEY=VALUE`` with the value
made by :func:`encode`; every reader of a partitioned folder gets the value back through
:func:`decode` (the folder names, :func:`keys_of`) or :func:`scan` (the columns polars makes of
them), so what is read back is exactly what was saved:

* a value is percent-encoded as UTF-8, every byte but ``A-Z a-z 0-9 - _ . ~`` (``10.0.0.5:9400``
  -> ``10.0.0.5%3A9400``, ``gpu node 7`` -> ``gpu%20node%207``, ``node+1`` -> ``node%2B1``,
  ``50%`` -> ``50%25``); ``/``, ``=`` and ``..`` can never name another folder;
* no value (a series without a host) is Hive's own ``__HIVE_DEFAULT_PARTITION__``, which polars
  reads as null, so it is never the string ``unknown`` (a host may be named that);
* the one string that cannot be told from no value, ``__HIVE_DEFAULT_PARTITION__`` itself, is
  refused by :func:`encode` (polars reads it as null however it is spelled);
* a value whose folder name would pass the file system's limit on one name (255 bytes;
  :data:`MAX_TEXT` for the value once encoded, a 4-byte character taking 12) is refused by
  :func:`encode` (:class:`TooLong`) rather than shortened: a shortened name could not be read back
  as the value saved, and the operating system's own "File name too long" names no host;
* :func:`scan` gives polars a partition schema of strings: left to infer, polars reads a host
  ``007`` as the number 7, ``1e5`` as 100000.0, ``2026-01-05`` as a date, ``true`` as a boolean.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote, unquote

NULL = "__HIVE_DEFAULT_PARTITION__"  # Hive's (and polars') spelling of "no value"
_SAFE = "-_."  # besides letters and digits (and "~", which quote always keeps): bytes kept as they are


NAME_MAX = 255  # bytes in one folder name (Linux, macOS, Windows)
MAX_TEXT = NAME_MAX - len("host=")  # bytes of an encoded value, after the longest key the store writes


class ReservedValue(ValueError):
    """A value the partition folder cannot hold apart from "no value"."""


class TooLong(ReservedValue):
    """A value whose encoded folder name is longer than a file system allows."""


def encode(value: str | None) -> str:
    """The folder text of a partition value (None: no value); :func:`decode` is its inverse."""
    if value is None:
        return NULL
    value = str(value)
    if value == NULL:
        raise ReservedValue(f"{NULL!r} is how a partition folder says 'no value'")
    text = quote(value, safe=_SAFE)
    if len(text) > MAX_TEXT:
        raise TooLong(f"its folder name would be {len(text)} bytes once encoded, more than the "
                      f"{MAX_TEXT} a folder name can hold ({len(value)} characters)")
    return text


def decode(text: str) -> str | None:
    """The value a folder text stands for (None: no value). Text that is no percent-encoded
    UTF-8 (a folder another tool made) is taken as it is."""
    if text == NULL:
        return None
    try:
        return unquote(text, errors="strict")
    except UnicodeDecodeError:
        return text


def keys_of(path: str | os.PathLike, root: str | os.PathLike | None = None) -> list[tuple[str, str | None]]:
    """The ``(key, value)`` pairs of the ``KEY=VALUE`` folders in ``path`` (below ``root`` when
    given; the file name itself is no folder), values decoded."""
    parts = Path(path).parts[:-1]
    if root is not None:
        parts = Path(path).relative_to(root).parts[:-1]
    out = []
    for seg in parts:
        if "=" in seg:
            key, text = seg.split("=", 1)
            out.append((key, decode(text)))
    return out


def value_of(path, key: str, root=None):
    """``(True, value)`` when ``path`` sits under exactly one ``KEY=`` folder (case-insensitive),
    else ``(False, None)``."""
    found = [v for k, v in keys_of(path, root) if k.lower() == key.lower()]
    return (True, found[0]) if len(found) == 1 else (False, None)


def _files(source) -> list[str]:
    if isinstance(source, (list, tuple)):
        return [str(f) for f in source]
    text = str(source)
    if "*" in text:  # FOLDER/**/*.parquet
        return [str(p) for p in Path(text.split("*", 1)[0]).rglob("*.parquet")]
    return [text]


def schema_of(source) -> dict:
    """A partition schema naming every ``KEY=`` folder of ``source``'s files (a file, a list of
    files or a ``FOLDER/**/*.parquet`` glob) as a string column. polars reads every ``KEY=VALUE``
    folder of a path, above the folder named too, and refuses a schema that lacks one; keys the
    schema names that a path lacks are ignored."""
    import polars as pl

    keys: dict = {}
    for f in _files(source):
        for seg in Path(f).parts[:-1]:
            if "=" in seg:
                keys.setdefault(seg.split("=", 1)[0], pl.String)
    return keys


def scan(source, **options):
    """``pl.scan_parquet(source, hive_partitioning=True, ...)`` with every partition value read as
    the string it was saved as (see the module docstring); ``options``: scan_parquet's."""
    import polars as pl

    schema = schema_of(source)
    return pl.scan_parquet(source, hive_partitioning=True, hive_schema=schema or None, **options)
