"""A large text file in pieces cut at line ends, so a reader holds one piece's strings at a time.

The text readers (``dcgmi dmon``, dcgm-exporter scrapes, ``nvidia-smi --query-gpu`` CSV) turn
each piece straight into their compact numeric frame and concatenate those, instead of holding
every line of the file as a string at once (issue 14: a 210 MB dmon file peaked at 4 GB). A
piece ends right after a ``\\n`` (so a ``\\r\\n`` pair and a UTF-8 sequence are never split),
except the file's last piece, which ends where the file does.

:func:`odd_breaks` tells the same readers when a piece holds a line break other than ``\\n`` /
``\\r\\n`` (they then split lines as Python does); it lives here, below all of them, so no text
reader imports another.
"""

from __future__ import annotations

from collections.abc import Iterator

# bytes read per piece (a piece grows past it only to reach the end of a line); the readers'
# per-piece working set is a few times this. Tests set it small to put cells past a boundary.
CHUNK_BYTES = 4 << 20
# the longest line a text reader takes (a dcgm-exporter sample with a 100,000-character pod label is
# 0.1 MB); a longer one is refused, naming its line, before it is held: one 50 MB line held as
# text and split took 8.5 GB. Tests set it small.
MAX_LINE_BYTES = 8 << 20
BOM = b"\xef\xbb\xbf"  # UTF-8 byte-order mark (Windows tools write one)


def line_chunks(path, chunk_bytes: int | None = None) -> Iterator[tuple[bytes, bool]]:
    """``(piece, last)`` for consecutive pieces of the file at ``path``: every piece but the last
    ends with ``\\n``; ``last`` is True for the file's final piece. An empty file yields nothing.
    A line longer than :data:`MAX_LINE_BYTES` is an InputError naming its line number."""
    size = chunk_bytes or CHUNK_BYTES
    line = 1  # number of the first line not yet yielded
    with open(path, "rb") as fh:
        if fh.read(3) != BOM:  # a UTF-8 byte-order mark at the start is no text of the file
            fh.seek(0)
        carry = b""
        while True:
            block = fh.read(size)
            if not block:
                if carry:
                    if len(carry) > MAX_LINE_BYTES:
                        _check_lines(path, carry, line)
                    yield carry, True
                return
            data = carry + block if carry else block
            cut = data.rfind(b"\n")
            if cut < 0:  # one line longer than a piece: keep reading, up to the cap
                if len(data) > MAX_LINE_BYTES:
                    raise _too_long(path, line)
                carry = data
                continue
            if cut + 1 > MAX_LINE_BYTES:  # a piece this long may hold a line past the cap
                _check_lines(path, data[: cut + 1], line)
            line += data.count(b"\n", 0, cut + 1)
            carry = data[cut + 1:]
            piece = data[: cut + 1] if carry else data
            del data
            if not carry and _at_end(fh):
                yield piece, True
                return
            yield piece, False


def check_line_lengths(path, chunk_bytes: int | None = None) -> None:
    """One streaming pass: InputError naming the first line longer than :data:`MAX_LINE_BYTES`
    (for checks that hand the file to a library reading a line whole before the reader runs)."""
    for _piece, _last in line_chunks(path, chunk_bytes):
        pass


def _check_lines(path, data: bytes, line: int) -> None:
    """InputError for the first line of ``data`` (its first line numbered ``line``) past the cap."""
    for i, text in enumerate(data.split(b"\n")):
        if len(text) > MAX_LINE_BYTES:
            raise _too_long(path, line + i)


def _too_long(path, line: int):
    from ridgeline.errors import InputError

    return InputError(path, f"expected lines of at most {MAX_LINE_BYTES:,} bytes "
                      "(ridgeline.parsers.text_chunks.MAX_LINE_BYTES)", line=line,
                      actual="a line longer than that")


def _at_end(fh) -> bool:
    pos = fh.tell()
    if fh.read(1):
        fh.seek(pos)
        return False
    return True


# line breaks Python's str.splitlines() honours besides \n and \r\n (then the line-by-line reader
# runs): VT, FF, FS, GS, RS, NEL, LS, PS in UTF-8, and a carriage return not followed by \n
ODD_BREAKS = (b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e", b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9")


def odd_breaks(data: bytes) -> bool:
    """True when ``data`` holds a line break besides ``\\n`` / ``\\r\\n``: the readers then split
    lines as ``str.splitlines()`` does instead of letting polars cut at ``\\n``."""
    # single bytes first (memchr-fast); the multi-byte breaks only when their last byte occurs
    if any(b in data for b in (b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e")):
        return True
    if any(b[-1:] in data and b in data for b in ODD_BREAKS[5:]):
        return True
    return b"\r" in data and data.count(b"\r") != data.count(b"\r\n")
