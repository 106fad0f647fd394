"""A library's complaint about a file, said in ridgeline's words (issue 21, "a library's message").

When a reader hands a damaged file to json, sqlite3, gzip, pyarrow or polars, the exception they
raise describes the data in the library's terms: ``Unterminated string starting at: line 103
column 4 (char 1641)``, ``database disk image is malformed``, ``conversion from `str` to `i64`
failed in column 'start_ns' for 1 out of 9 values: ["abc"]``, ``unable to find column "name"``.
Those phrases mean nothing to someone who ran ``nsys`` or ``ncu``; the one-line refusal must say
what is wrong with *the file* (and where: line and column, row, table, column name) instead.

:func:`plain_reason` turns one such exception into a short phrase; readers put it after the
``expected ...`` of their :class:`~ridgeline.errors.InputError`, which already names the file and
the kind of file ridgeline took it for. :data:`LIBRARY_PHRASES` lists the fragments that must
never reach a user (``tests/test_refusals.py`` checks every damaged input against it).
Unknown messages fall back to the library's text with its class names and programmer advice
cut, so nothing is hidden.
"""

from __future__ import annotations

import re

# fragments of library messages that must never reach the user as they are
LIBRARY_PHRASES = (
    "conversion from", "unable to find column", "ComputeError", "SchemaError", "ColumnNotFoundError",
    "InvalidOperationError", "file is not a database", "database disk image is malformed",
    "Expecting value", "Expecting property name", "Extra data", "got binary data", "Traceback",
    "RecursionError", "ArrowInvalid", "pyarrow", "polars", "codec can't decode", "invalid start byte",
    "Unterminated string", "'NoneType'", "not subscriptable", "object has no attribute", "no such column",
    "no such table", "could not parse", "strict conversion", "Parquet magic bytes", "Compressed file ended",
    "Error -3 while",
)

_JSON = (
    ("Unterminated string", "a string that is never closed"),
    ("Expecting property name", "a key that is missing or not in double quotes"),
    ("Expecting ',' delimiter", "a missing ','"),
    ("Expecting ':' delimiter", "a missing ':'"),
    ("Expecting value", "a value missing (or not JSON)"),
    ("Extra data", "more data after the end of the JSON document"),
    ("Invalid control character", "a raw control character inside a string"),
    ("Invalid \\escape", "a bad backslash escape"),
    ("Invalid \\uXXXX escape", "a bad \\u escape"),
)


def _json_reason(err) -> str:
    msg = getattr(err, "msg", str(err))
    what = next((plain for lib, plain in _JSON if msg.startswith(lib)), "not valid JSON")
    doc = getattr(err, "doc", None) or ""
    pos = getattr(err, "pos", 0) or 0
    at_end = doc and pos >= len(doc.rstrip()) - 1
    if msg.startswith("Unterminated string") and doc and '"' not in doc[pos + 1:]:
        at_end = True  # the string runs to the end of the file
    if at_end and not msg.startswith("Extra data"):
        return f"the JSON ends early at line {err.lineno}, column {err.colno} (the file is cut short)"
    return f"{what} at line {err.lineno}, column {err.colno}"


def _sqlite_reason(text: str) -> str:
    low = text.lower()
    m = re.match(r"no such (column|table): ?(.+)", text, re.I)
    if m:
        return f"{m.group(1)} '{m.group(2).strip()}' is missing"
    if "malformed" in low or "disk image" in low:
        return "a damaged or missing database page"
    if "not a database" in low or "file is encrypted" in low:
        return "a damaged SQLite header (or not an SQLite file)"
    if "locked" in low or "busy" in low:
        return "the database is locked by another program"
    if "datatype mismatch" in low:
        return "a value of the wrong type"
    return "the SQLite file cannot be read (" + _clean(text) + ")"


_POLARS_CONVERSION = re.compile(
    r"conversion from `?(\w+)`? to `?(\w+)`? failed in column '([^']*)' for (\d+) out of (\d+) values: \[(.*?)\]", re.S)
_POLARS_PARSE = re.compile(r"could not parse `(.*?)` as dtype `?(\w+)`? at column '([^']*)'", re.S)
_POLARS_COLUMN = re.compile(r"""unable to find column "?([^";]*)"?""")
_TYPE_WORDS = {"i8": "a whole number", "i16": "a whole number", "i32": "a whole number", "i64": "a whole number",
               "u8": "a whole number", "u16": "a whole number", "u32": "a whole number", "u64": "a whole number",
               "f32": "a number", "f64": "a number", "float": "a number", "int": "a whole number",
               "datetime": "a time", "date": "a date", "bool": "true or false", "boolean": "true or false"}


def _type_word(dtype: str) -> str:
    d = dtype.lower()
    return next((w for k, w in _TYPE_WORDS.items() if d.startswith(k)), f"a {dtype} value")


def _clean(text: str) -> str:
    text = " ".join(text.split())
    for cut in (" This error occurred", " You might want to try", " Hint:", "; use sys.set_int_max_str_digits",
                " Resolved plan until failure", "; valid columns:", " Either the file is corrupted"):
        if cut in text:
            text = text.split(cut)[0]
    text = re.sub(r"\b(polars|pyarrow)(\.\w+)*\b\.?", "", text)
    text = re.sub(r"\b\w+(Error|Exception)\b:?\s*", "", text)
    text = text.strip().rstrip(".")
    return text[:137] + "..." if len(text) > 140 else text


def plain_reason(err: BaseException) -> str:
    """What ``err`` (raised by a library reading a file) says about the file, in plain words."""
    import json

    if isinstance(err, json.JSONDecodeError):
        return _json_reason(err)
    if isinstance(err, UnicodeDecodeError):
        return f"bytes that are not UTF-8 text at byte {err.start}"
    if isinstance(err, RecursionError):
        return "nesting deeper than any real file has"
    text = " ".join(str(err).split())
    module = (type(err).__module__ or "").split(".")[0]
    if module in ("sqlite3", "_sqlite3"):
        return _sqlite_reason(text)
    if isinstance(err, EOFError) or "Compressed file ended" in text:
        return "the compressed stream is cut short"
    if "CRC check failed" in text or "Incorrect length of data produced" in text:
        return "damaged compressed data (its checksum does not match)"
    if "Not a gzipped file" in text:
        return "not gzip data, though the name ends in .gz"
    if text.startswith("Error -3 while") or "invalid stored block" in text or "incorrect header check" in text:
        return "damaged compressed data"
    if "magic bytes not found" in text:
        return "no Parquet footer (the file is cut short or not Parquet)"
    m = _POLARS_CONVERSION.search(text)
    if m:
        bad = m.group(6).split(",")[0].strip().strip('"')
        return f"column '{m.group(3)}' holds {bad!r} where {_type_word(m.group(2))} belongs"
    m = _POLARS_PARSE.search(text)
    if m:
        return f"column '{m.group(3)}' holds {m.group(1)!r} where {_type_word(m.group(2))} belongs"
    m = _POLARS_COLUMN.search(text)
    if m:
        return f"column '{m.group(1).strip()}' is missing"
    if "invalid utf-8" in text.lower() or "invalid utf8" in text.lower():
        return "bytes that are not UTF-8 text"
    if "found more fields than defined" in text or "ragged" in text:
        return "a row with more fields than the header"
    return _clean(text) or type(err).__name__


def has_library_phrase(text: str) -> str | None:
    """The first :data:`LIBRARY_PHRASES` fragment in ``text``, or None."""
    low = text.lower()
    return next((p for p in LIBRARY_PHRASES if p.lower() in low), None)
