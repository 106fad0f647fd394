"""The block layout of a ``.ncu-rep`` file: what its structure promises, checked without NVIDIA's
reader, so a cut or damaged report is never read as a complete profile of fewer launches.

NVIDIA's ``ncu_report`` loads a report cut in the middle as a smaller, apparently whole report
(the launches before the cut), so :mod:`ridgeline.parsers.ncu.rep` compares what it read with
what this walk finds. The layout, as read from real reports of ncu 2023.1 to 2026.2 (the five in
``../shared/samples/ncu-rep``; NVIDIA does not document it):

* the magic ``NVR\\0``, then a sequence of *chunks*: a little-endian ``uint32`` size and that
  many bytes of a protobuf message;
* the first chunk is the file header (field 1: the format version);
* then blocks, each a chunk holding a block header and, right after it, a payload of the size
  the header names (field 5, bytes, ``0`` for blocks that only carry session facts); field 2 is
  the number of results (profiled launches) the payload holds, field 1 the number of sources.

The walk reads only the headers (a seek over each payload). A well-formed file ends exactly at
the end of its last block; the launches it promises are the sum of field 2. A file cut exactly
between two blocks cannot be told from a shorter profile by its structure: that is the one
truncation this check cannot see (``docs/ncu-damaged.md``).
"""

from __future__ import annotations

import dataclasses
import struct

HEADER_MAX = 64 << 20  # a block header larger than this is not a header (a damaged size)
KNOWN_VERSIONS = frozenset({7})  # file-header versions whose block layout was checked (ncu 2023.1-2026.2)


@dataclasses.dataclass
class Layout:
    size: int  # file size, bytes
    blocks: int  # whole blocks
    results: int  # launches the whole blocks promise
    end: int  # offset where the walk stopped (== size when the file is whole)
    problem: str | None = None  # why the walk stopped early (None: the file is whole)
    cut_results: int = 0  # launches promised by a block whose header was read but whose payload is cut
    version: int | None = None  # the file header's field 1

    @property
    def known(self) -> bool:
        """The layout version is one this walk was checked on (else its counts are not used)."""
        return self.version in KNOWN_VERSIONS


def _varint(data: bytes, i: int) -> tuple[int, int]:
    out = shift = 0
    while True:
        if i >= len(data) or shift > 63:
            raise ValueError("varint runs past the message")
        b = data[i]
        i += 1
        out |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return out, i


def _header_fields(data: bytes) -> dict[int, int]:
    """Varint fields of one protobuf message (length-delimited and fixed fields skipped)."""
    out: dict[int, int] = {}
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            out[field], i = _varint(data, i)
        elif wire == 2:
            n, i = _varint(data, i)
            i += n
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        else:
            raise ValueError(f"wire type {wire}")
        if i > len(data) or field == 0:
            raise ValueError("field runs past the message")
    return out


def walk(path) -> Layout:
    """The report's blocks, from their headers (see the module docstring)."""
    with open(path, "rb") as fh:
        fh.seek(0, 2)
        size = fh.tell()
        fh.seek(4)  # after the magic
        pos, blocks, results, first, version = 4, 0, 0, True, None
        while pos < size:
            head = fh.read(4)
            if len(head) < 4:
                return Layout(size, blocks, results, pos, version=version, problem=f"a chunk size cut at byte {pos} ({len(head)} of 4 bytes)")
            (n,) = struct.unpack("<I", head)
            if n > HEADER_MAX or pos + 4 + n > size:
                what = "the file header" if first else "a block header"
                return Layout(size, blocks, results, pos, version=version, problem=
                              f"{what} at byte {pos} needs {n} bytes, the file has {size - pos - 4} after it")
            body = fh.read(n)
            if first:
                first = False
                try:
                    version = _header_fields(body).get(1)
                except ValueError:
                    version = None
                pos += 4 + n
                continue
            try:
                fields = _header_fields(body)
            except ValueError:
                return Layout(size, blocks, results, pos, version=version, problem=f"the block header at byte {pos} is not readable")
            payload = fields.get(5, 0)
            promised = fields.get(2, 0)
            if pos + 4 + n + payload > size:
                have = size - pos - 4 - n
                return Layout(size, blocks, results, pos, version=version, problem=
                              f"the block at byte {pos} promises {payload} bytes of data, the file has {have}",
                              cut_results=promised)
            fh.seek(payload, 1)
            pos += 4 + n + payload
            blocks += 1
            results += promised
    return Layout(size, blocks, results, pos, version=version)
