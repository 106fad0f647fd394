"""What a file that no reader claims looks like, for one-line errors."""

from __future__ import annotations

from pathlib import Path

_COMPRESSED = (
    (b"\x1f\x8b", "a gzip-compressed file"),
    (b"\x28\xb5\x2f\xfd", "a zstd-compressed file"),
    (b"BZh", "a bzip2-compressed file"),
    (b"\xfd7zXZ\x00", "an xz-compressed file"),
    (b"PK\x03\x04", "a zip archive"),
)


# binary formats people pass by mistake, said by name rather than as "binary data"
_BINARY = (
    (b"\x7fELF", "an executable or shared library (ELF)"),
    (b"MZ", "a Windows executable (PE)"),
    (b"\xcf\xfa\xed\xfe", "a macOS executable (Mach-O)"),
    (b"%PDF", "a PDF document"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"SQLite format 3\x00", "an SQLite database"),
)


def binary_kind(head: bytes) -> str | None:
    """What a binary file is by its magic number (an executable, an image...), or None."""
    return next((what for magic, what in _BINARY if head.startswith(magic)), None)


def looks_utf16(head: bytes) -> str | None:
    """``"utf-16-le"``/``"utf-16-be"`` when a head without a byte-order mark reads as UTF-16 text
    (a zero byte in nearly every other position, the same parity throughout); None otherwise, so
    an executable full of zero bytes is never taken for UTF-16."""
    head = head[:4096]
    if len(head) < 4 or binary_kind(head):
        return None
    even, odd = head[0::2].count(0), head[1::2].count(0)
    half = len(head) // 2
    if odd >= 0.9 * half and even <= 0.05 * half:
        return "utf-16-le"
    if even >= 0.9 * half and odd <= 0.05 * half:
        return "utf-16-be"
    return None


def _gunzip_text(head: bytes) -> str | None:
    """The start of what a gzip head inflates to (at most 4 KiB), or None."""
    import zlib

    try:
        raw = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 4096)
    except zlib.error:
        return None
    return raw.decode("utf-8", errors="replace").lstrip("\ufeff")


def _gunzip_first_line(head: bytes) -> str | None:
    text = _gunzip_text(head)
    if text is None:
        return None
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), None)
    return line[:20] if line and "\x00" not in line and "\ufffd" not in line else None


def describe_head(path: Path) -> str | None:
    """The first non-blank line of a text file, or what the file is when it is not text.

    Used in "expected X, got Y" errors for files no reader claims: compressed files,
    binary Nsight reports, empty files. None when the file cannot be opened.
    """
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return None
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), None)
    if line is None:
        return "an empty file"
    for magic, what in _COMPRESSED:
        if head.startswith(magic):
            inner = _gunzip_first_line(head) if magic == b"\x1f\x8b" else None
            amd = _amd_json(_gunzip_text(head) or "") if inner else None
            if amd:
                return f"gzip-compressed, {amd}"
            if inner:  # ridgeline reads gzip only for PyTorch traces: say what is inside
                return f"{what} (decompress it first) starting: {inner}"
            return f"{what} (decompress it first)"
    stripped = text.lstrip()
    if stripped[:1] in ("[", "{") and not any(ch in line for ch in "\ufffd\x00"):
        return _json_shape(stripped, line)
    if any(ch in line for ch in "\ufffd\x00"):
        if path.suffix.lower() == ".ncu-rep":
            return "a binary Nsight Compute report"
        if path.suffix.lower() in (".nsys-rep", ".qdrep"):
            return "a binary Nsight Systems report (export it: nsys export --type sqlite)"
        if head.startswith(b"SQLite format 3\x00"):
            return "an SQLite database without Nsight Systems tables (CUPTI_ACTIVITY_KIND_*, StringIds)"
        return binary_kind(head) or "binary data"
    from ridgeline.parsers.rocm.detect import amd_unread

    return amd_unread(head) or line


def unread_error(path, first: str | None):
    """The refusal of a file that is a known output ridgeline does not read yet (AMD's), else None."""
    from ridgeline.parsers.rocm.detect import unread_error as amd

    return amd(path, first)


#: AMD profiler JSON that reached no reader (damaged: the readers take the whole ones), said by
#: name so that an AMD profile is never mistaken for an empty or damaged PyTorch trace


def _amd_json(text: str) -> str | None:
    if '"rocprofiler-sdk-tool"' in text[:200]:
        return "a rocprofiler-sdk JSON (rocprofv3 --output-format json) that could not be read"
    if '"BeginNs"' in text and '"EndNs"' in text and ('"DispatchNs"' in text or '"CompleteNs"' in text):
        return "a rocprof --hip-trace JSON (kernel dispatches timed by BeginNs/EndNs) that could not be read"
    return None


def _json_shape(text: str, line: str) -> str:
    """What a JSON file that no reader claims holds, from its start: timelines are objects with
    ``traceEvents`` or arrays of event objects (``"ph"``), Prometheus answers have ``"status"``,
    AMD's profilers write their own (:func:`_amd_json`)."""
    import re

    amd = _amd_json(text)
    if amd:
        return amd
    if text.startswith("["):
        first = re.match(r"\[\s*(.)", text, re.S)
        what = ("an empty JSON array" if first and first.group(1) == "]" else
                "a JSON array whose first item is not a trace event object" if first and first.group(1) != "{" else
                "a JSON array of objects without trace event keys (ph, ts, name)" if first else "a JSON array cut short")
    else:
        what = "a JSON object with no traceEvents list"
    return f"{what}, starting: {line[:30]}"


# what a file's name says it should be (longest suffix first)
_BY_SUFFIX = (
    (".pt.trace.json.gz", "a PyTorch profiler trace (Chrome trace JSON, gzip)"),
    (".json.gz", "a PyTorch profiler trace (Chrome trace JSON, gzip)"),
    (".pt.trace.json", "a PyTorch profiler trace (Chrome trace JSON)"),
    (".json", "a PyTorch profiler trace (Chrome trace JSON) or Prometheus API JSON"),
    (".ncu-rep", "an Nsight Compute report (.ncu-rep)"),
    (".sqlite", "an Nsight Systems export (nsys export --type sqlite)"),
    (".parquet", "telemetry Parquet (timestamp, gpu, field/value or field columns)"),
    (".prom", "dcgm-exporter scrapes (Prometheus text)"),
)


def by_name(path, first: str | None):
    """The refusal (an InputError) of a file no reader claims whose name says what it should be
    (``.sqlite``, ``.json``, ``.json.gz``, ``.parquet``, ``.prom``, ``.ncu-rep``), else None.
    ``first``: what the file looks like (:func:`describe_head`). A binary ``.ncu-rep`` (which
    ``ncu --import`` may read) and a Parquet file (its footer is checked) keep their own messages."""
    from ridgeline.errors import InputError

    name = Path(path).name.lower()
    what = next((w for suffix, w in _BY_SUFFIX if name.endswith(suffix)), None)
    if what is None or first == "a binary Nsight Compute report":
        return None
    if name.endswith(".parquet"):
        try:
            with open(path, "rb") as fh:
                if fh.read(4) == b"PAR1":
                    return None
        except OSError:
            return None
    got = first or "nothing readable"
    if got == "binary data":
        got = "bytes in no format ridgeline reads (damaged, or another kind of file)"
    return InputError(path, f"expected {what}, as its name says; got {got}")
