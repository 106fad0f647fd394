"""A large text file in pieces cut at line ends, so a reader holds one piece's strings at a time.

The text readers (``dcgmi dmon``, dcgm-exporter scrapes, ``nvidia-smi --query-gpu`` CSV) turn
each piece straight into their compact numeric frame and concatenate those, instead of holding
every line of the file as a string at once (issue 14: a 210 MB dmon file peaked at 4 GB). A
piece ends right after a ``\\n`` (so a ``\\r\\n`` pair and a UTF-8 sequence are never split),
except the file's last piece, which ends where the file does.
"""

from __future__ import annotations

from collections.abc import Iterator

# bytes read per piece (a piece grows past it only to reach the end of a line); the readers'
# per-piece working set is a few times this. Tests set it small to put cells past a boundary.
CHUNK_BYTES = 4 << 20
BOM = b"\xef\xbb\xbf"  # UTF-8 byte-order mark (Windows tools write one)


def line_chunks(path, chunk_bytes: int | None = None) -> Iterator[tuple[bytes, bool]]:
    """``(piece, last)`` for consecutive pieces of the file at ``path``: every piece but the last
    ends with ``\\n``; ``last`` is True for the file's final piece. An empty file yields nothing."""
    size = chunk_bytes or CHUNK_BYTES
    with open(path, "rb") as fh:
        if fh.read(3) != BOM:  # a UTF-8 byte-order mark at the start is no text of the file
            fh.seek(0)
        carry = b""
        while True:
            block = fh.read(size)
            if not block:
                if carry:
                    yield carry, True
                return
            data = carry + block if carry else block
            cut = data.rfind(b"\n")
            if cut < 0:  # one line longer than a piece: keep reading
                carry = data
                continue
            carry = data[cut + 1:]
            piece = data[: cut + 1] if carry else data
            del data
            if not carry and _at_end(fh):
                yield piece, True
                return
            yield piece, False


def _at_end(fh) -> bool:
    pos = fh.tell()
    if fh.read(1):
        fh.seek(pos)
        return False
    return True
