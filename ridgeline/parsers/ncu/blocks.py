"""Nsight Compute CSV text -> header blocks: encoding (BOM, UTF-16), header lines, noise lines
(``==PROF==``, the application's own output), several blocks in one file, cut last rows, and the
fast path that reads a raw page by columns. The first of the ncu parser's three jobs
(:mod:`ridgeline.parsers.ncu.csv_reader` describes the whole; :mod:`ncu_frames` and :mod:`ncu_derive` follow)."""

from __future__ import annotations

import bisect
import csv
import dataclasses
import re
from pathlib import Path
from typing import Any

from ridgeline.errors import InputError
from ridgeline.parsers.paths import polars_path
from ridgeline.parsers.ncu import metrics as V
from ridgeline.result import Skipped


HEAD_BYTES = 1 << 20  # detect_ncu_layout reads at most this much


# ======================================================================================
# text level: encoding, header blocks, noise
# ======================================================================================
def _decode(raw: bytes, path: object, *, partial: bool = False) -> bytes:
    """Return UTF-8 bytes without BOM (UTF-16 with or without BOM is converted).

    ``partial``: ``raw`` is only the head of a file (a character may be cut at the end).
    """
    errors = "ignore" if partial else "strict"
    if raw.startswith(b"\xff\xfe") or raw.startswith(b"\xfe\xff"):
        try:
            return raw.decode("utf-16", errors=errors).encode("utf-8")
        except UnicodeDecodeError as err:
            raise InputError(path, "expected UTF-16 text after a UTF-16 byte-order mark") from err
    from ridgeline.parsers.sniff import binary_kind, looks_utf16

    head = raw[:4096]
    if len(head) >= 4 and head.count(b"\x00") > len(head) // 3:
        enc = looks_utf16(head)
        if enc is None and partial:  # detection: a binary head has no CSV header, nothing to decode
            return raw
        if enc is None:  # zero bytes, but not UTF-16's pattern: a binary file
            raise InputError(path, f"expected text, got {binary_kind(head) or 'a binary file (zero bytes, not in UTF-16 order)'}")
        try:
            return raw.decode(enc, errors=errors).encode("utf-8")
        except UnicodeDecodeError as err:
            raise InputError(path, f"expected text, got {binary_kind(head) or 'a binary file'} (not {enc} text)") from err
    if raw.startswith(b"\xef\xbb\xbf"):
        return raw[3:]
    return raw


def _split_header(line: bytes) -> list[str]:
    text = line.decode("utf-8", errors="replace").lstrip("\ufeff").rstrip("\r\n")
    return next(csv.reader([text]))


def classify_header(fields: list[str]) -> str | None:
    """'details', 'raw', 'summary' or None from the header's column names."""
    cols = set(fields)
    if not {"ID", "Kernel Name"} <= cols and not {"Kernel Name", "Invocations"} <= cols:
        return None
    if {"Metric Name", "Metric Value"} <= cols:
        return "details"
    if set(V.SUMMARY_MARKERS) & cols:
        return "summary"
    if any("__" in f for f in fields):
        return "raw"
    return None


def _ncu_said(text: str, phrase: str) -> bool:
    """ncu itself printed ``phrase``: on one of its own ``==WARNING==``/``==ERROR==``/``==PROF==``
    lines, not anywhere in the text (a document that quotes ncu is not an ncu log)."""
    import re

    return re.search(r"(?m)^==[A-Z]+==[^\n]*" + re.escape(phrase), text) is not None


def _no_csv_reason(text: str) -> str:
    if _ncu_said(text, "ERR_NVGPUCTRPERM"):
        return (
            "ncu could not read the GPU performance counters (ERR_NVGPUCTRPERM): the file holds "
            "no CSV; profile as root or allow counter access (NVreg_RestrictProfilingToAdminUsers=0)"
        )
    if _ncu_said(text, "No kernels were profiled"):
        return (
            "ncu profiled no kernels ('No kernels were profiled'): the file holds no CSV; check "
            "--kernel-name/--launch-skip filters and --target-processes all for child processes"
        )
    if _ncu_said(text, "terminated before first instrumented API call"):
        return "the profiled process ended before any CUDA call was instrumented: the file holds no CSV"
    if '"Invocations"' in text or "Invocations," in text:
        return (
            "expected a details or raw page, got ncu's --print-summary table (per-launch data is lost "
            "there); re-export with: ncu --import rep.ncu-rep --csv --page raw"
        )
    err = next((ln.strip() for ln in text.splitlines() if ln.startswith("==ERROR==")), None)
    if err:
        return f"ncu reported an error and wrote no CSV: {err[:120]}"
    return "expected an Nsight Compute CSV export (a header line starting with \"ID\", details or raw page)"


def detect_ncu_layout(path) -> str | None:
    """``"raw"``, ``"details"`` or None, from the first header line in the head of the file."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(HEAD_BYTES)
    except OSError:
        return None
    head = _decode(head, path, partial=True)
    found = _find_headers(head)
    if not found:
        return None
    end = head.find(b"\n", found[0])
    line = head[found[0] : end if end >= 0 else len(head)]
    try:
        layout = classify_header(_split_header(line))
    except (csv.Error, StopIteration):
        return None
    return layout if layout in ("raw", "details") else None


@dataclasses.dataclass
class _Block:
    index: int
    layout: str
    header: list[str]
    header_line: int  # 1-based physical line of the header
    source: Any  # path (fast path) or bytes
    skip_lines: int
    removed: list[int]  # physical line numbers that start no row (noise removed, a quoted value's next line), ascending
    quoted: bool
    # raw page read by columns (fast path): the first rows with every column (units row and
    # locale sample) and a loader of the whole table (NcuResult.metrics, read on first access)
    head: Any = None
    full: Any = None

    def line_of(self, row: int) -> int:
        """1-based physical line of data row ``row`` (0-based, as polars read the block)."""
        line = self.header_line + 1 + row
        i = bisect.bisect_right(self.removed, self.header_line)
        while i < len(self.removed) and self.removed[i] <= line:
            line += 1
            i += 1
        return line


def _line_number(data: bytes, pos: int, cache: list[int]) -> int:
    """1-based line of byte offset ``pos``; ``cache`` = [last_pos, last_line] for forward scans."""
    last_pos, last_line = cache
    if pos < last_pos:
        last_pos, last_line = 0, 1
    line = last_line + data.count(b"\n", last_pos, pos)
    cache[0], cache[1] = pos, line
    return line


_NOISE_AT_NL_QUOTED = re.compile(rb'\n(?!")')
_NOISE_AT_NL_PLAIN = re.compile(rb"\n(?:==|\r?\n)")


def _find_headers(data: bytes) -> list[int]:
    """Byte offsets of the lines that start an ncu header (``"ID",`` or re-saved ``ID,``).

    Uses ``bytes.find`` (memchr speed): a multiline regex would test every byte of a GB file.
    """
    for token in (b'"ID",', b"ID,"):
        out = []
        pos = 0
        while True:
            i = data.find(token, pos)
            if i < 0:
                break
            ls = data.rfind(b"\n", 0, i) + 1
            if i - ls <= 3 and data[ls:i] in (b"", b"\xef\xbb\xbf"):
                out.append(ls)
            pos = i + 1
        if out:
            return out
    return []


def _is_noise_line(data: bytes, pos: int, quoted: bool) -> bool:
    head = data[pos : pos + 2]
    if quoted:
        return not head.startswith(b'"')
    return head.startswith(b"==") or head[:1] in (b"\n", b"\r")


def _noise_spans(data: bytes, lo: int, hi: int, quoted: bool) -> tuple[list[tuple[int, int]], list[int]]:
    """(start, end) of every noise line in data[lo:hi], and the starts of the lines that continue a
    quoted value (a line break inside a kernel name is legal CSV); ``lo`` is at a row start.

    A noise candidate (quoted export: a line not starting with ``"``; re-saved one: a blank line)
    is kept as a row's next line when the quotes of the text kept before it leave a value open
    and the line before it opened or continued that value; ``==`` lines are always noise.
    """
    spans: list[tuple[int, int]] = []
    joined: list[int] = []
    rx = _NOISE_AT_NL_QUOTED if quoted else _NOISE_AT_NL_PLAIN
    starts = []
    if lo < hi and _is_noise_line(data, lo, quoted):
        starts.append(lo)
    pos = lo
    while True:
        m = rx.search(data, pos, hi)
        if m is None:
            break
        s = m.start() + 1
        if s >= hi:
            break
        starts.append(s)
        pos = s
    pos, inside = lo, 0  # quote parity of the kept text in data[lo:pos]
    for s in starts:
        e = data.find(b"\n", s, hi)
        e = hi if e < 0 else e + 1
        if s > lo:
            inside ^= data.count(b'"', pos, s) & 1
            pos = s
            if inside and not (spans and spans[-1][1] == s) and not data.startswith(b"==", s):
                prev = data.rfind(b"\n", lo, s - 1) + 1
                opened = not (inside ^ (data.count(b'"', prev, s) & 1))
                if opened or (joined and joined[-1] == prev):
                    joined.append(s)
                    continue
        spans.append((s, e))
        pos = e  # a noise line's own quotes do not count
    return spans, joined


def _plan(path: Path, strict: bool, skipped: list[Skipped], notes: list[str]) -> list[_Block]:
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise InputError(path, f"cannot read file ({err.strerror or err})") from err
    if not raw or raw.isspace():
        raise InputError(path, "expected an Nsight Compute CSV export, got an empty file")
    converted = raw.startswith((b"\xff\xfe", b"\xfe\xff")) or raw[:4096].count(b"\x00") > len(raw[:4096]) // 3
    data = _decode(raw, path) if converted else raw
    del raw
    starts = _find_headers(data)
    if not starts:
        raise InputError(path, _no_csv_reason(data[:HEAD_BYTES].decode("utf-8", errors="replace")))
    blocks: list[_Block] = []
    cache = [0, 1]
    noise_total = 0
    for bi, start in enumerate(starts):
        end = starts[bi + 1] if bi + 1 < len(starts) else len(data)
        hl_end = data.find(b"\n", start, end)
        hl_end = end if hl_end < 0 else hl_end + 1
        header_line = _line_number(data, start, cache)
        try:
            header = _split_header(data[start:hl_end])
        except (csv.Error, StopIteration) as err:
            raise InputError(path, "expected a CSV header line", line=header_line) from err
        layout = classify_header(header)
        if layout == "summary":
            raise InputError(
                path,
                "expected a details or raw page, got ncu's --print-summary table (per-launch data "
                "is lost there); re-export with: ncu --import rep.ncu-rep --csv --page raw",
                line=header_line,
            )
        if layout is None:
            raise InputError(
                path,
                "expected an ncu details header (... Metric Name, Metric Unit, Metric Value) or raw "
                "header (ID, ..., metric__names)",
                line=header_line,
                actual=",".join(header[:6]),
            )
        quoted = data[start : start + 4].lstrip(b"\xef\xbb\xbf").startswith(b'"')
        removed: list[int] = []
        spans, joined = _noise_spans(data, hl_end, end, quoted)
        lc = [start, header_line]
        joined_lines = [_line_number(data, s, lc) for s in joined]
        if spans:
            lc = [start, header_line]
            pieces, prev = [], hl_end
            for s, e in spans:
                ln = _line_number(data, s, lc)
                removed.append(ln)
                text = data[s:e].strip()
                if text:
                    noise_total += 1
                    if b'","' in text:
                        skipped.append(
                            Skipped(str(path), f"line {ln}", "looks like a cut CSV row (does not start with a quote); ignored")
                        )
                pieces.append(data[prev:s])
                prev = e
            pieces.append(data[prev:end])
            body, lo, hi = b"".join(pieces), 0, None
        else:
            body, lo, hi = data, hl_end, end
        # a cut last row (process killed while writing)
        # a line continuing a quoted value starts no row: line_of skips it like a removed line
        removed = sorted(removed + joined_lines)
        cut = _check_last_row(path, body, lo, hi, header, layout, quoted, header_line, removed, strict, skipped,
                              joined=len(joined_lines))
        whole = not spans and cut is None and len(starts) == 1 and not converted and end == len(data)
        if whole:
            source, skip = path, header_line - 1
        else:
            if body is data:
                body = data[hl_end : end if cut is None else cut]
            elif cut is not None:
                body = body[:cut]
            source, skip = data[start:hl_end].removeprefix(b"\xef\xbb\xbf") + body, 0
        blocks.append(_Block(bi, layout, header, header_line, source, skip, removed, quoted))
    if noise_total:
        notes.append(f"{path}: {noise_total} non-CSV line(s) ignored (ncu messages or application output)")
    return blocks


def _last_row_problem(last: bytes, header: list[str], layout: str, quoted: bool) -> str | None:
    """Why the final row of a block looks cut (None when it looks complete)."""
    text = last.decode("utf-8", errors="replace")
    if text.count('"') % 2 == 1:
        return "unterminated quote"
    try:
        fields = next(csv.reader([text]))
    except (csv.Error, StopIteration):
        fields = []
    need = len(header) if layout == "raw" else header.index("Metric Value") + 1
    if len(fields) < need:
        return f"{len(fields)} fields, expected at least {need}"
    if quoted and not (last.endswith(b'"') or last.endswith(b",")):
        return "row ends inside a value"
    return None


def _last_line_span(body: bytes, lo: int, hi: int) -> tuple[int, int] | None:
    e = hi
    while e > lo and body[e - 1 : e] in (b"\n", b"\r"):
        e -= 1
    if e <= lo:
        return None
    return max(lo, body.rfind(b"\n", lo, e) + 1), e


_ROW_START = re.compile(rb'"|[0-9]+,')  # how a row of a quoted or a re-saved export begins


def _last_record_span(body: bytes, lo: int, hi: int) -> tuple[int, int] | None:
    """The last row of body[lo:hi] (``lo`` at a row start): its last line, and the lines before
    it when a quoted value holds line breaks (the row starts at the last line start outside quotes,
    whether it is complete or cut inside a value). A line that begins like a row (``"``, or an ID
    and a comma) starts one: a row cut further up is not joined to the ones after it."""
    span = _last_line_span(body, lo, hi)
    if span is None:
        return None
    ls, e = span
    if _ROW_START.match(body, ls) or body.count(b'"', lo, ls) % 2 == 0:
        return span
    outside = False
    while not outside and ls > lo and not _ROW_START.match(body, ls):
        prev = body.rfind(b"\n", lo, ls - 1) + 1
        outside ^= body.count(b'"', prev, ls) % 2 == 1
        ls = prev
    return (ls, e) if outside else span


def _check_last_row(path, body, lo, hi, header, layout, quoted, header_line, removed, strict, skipped, *, joined: int = 0):
    """Check the last row of body[lo:hi]; return the offset to cut at when it is dropped.
    ``joined``: lines of body[lo:hi] that continue a quoted value (they start no row)."""
    hi = len(body) if hi is None else hi
    span = _last_record_span(body, lo, hi)
    if span is None:
        return None
    ls, e = span
    last = body[ls:e]
    problem = _last_row_problem(last, header, layout, quoted)
    if problem is None:
        return None
    kept_before = body.count(b"\n", lo, ls) - max(0, joined - last.count(b"\n"))
    blk = _Block(0, layout, header, header_line, None, 0, removed, quoted)
    line = blk.line_of(kept_before)
    if strict:
        text = last.decode("utf-8", errors="replace")
        raise InputError(path, f"expected a complete CSV row, the file looks truncated ({problem})", line=line, actual=text[:60])
    skipped.append(Skipped(str(path), f"line {line}", f"truncated row ({problem}); ignored"))
    removed.append(line)
    removed.sort()
    return ls


TAIL_BYTES = 1 << 20


def _plan_fast(path: Path) -> _Block | None:
    """One block read by polars straight from the file, when the head and tail allow it.

    Returns None (use :func:`_plan`) for UTF-16, a header longer than the head, or a last row
    that looks cut. Noise and extra header blocks further down are found after the read.
    """
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            head = fh.read(HEAD_BYTES)
            if size > HEAD_BYTES:
                fh.seek(max(0, size - TAIL_BYTES))
                tail = fh.read()
            else:
                tail = head
    except OSError:
        return None
    if not head or head.isspace() or head.startswith((b"\xff\xfe", b"\xfe\xff")) or head[:4096].count(b"\x00"):
        return None
    found = _find_headers(head)
    if not found:
        return None
    start = found[0]
    hl_end = head.find(b"\n", start)
    if hl_end < 0:
        return None
    try:
        header = _split_header(head[start:hl_end])
    except (csv.Error, StopIteration):
        return None
    layout = classify_header(header)
    if layout not in ("raw", "details"):
        return None
    quoted = head[start : start + 4].lstrip(b"\xef\xbb\xbf").startswith(b'"')
    lo = 0 if tail is not head else hl_end + 1
    span = _last_line_span(tail, lo, len(tail))
    while span is not None and _is_noise_line(tail, span[0], quoted):  # trailing ==PROF== lines
        span = _last_line_span(tail, lo, span[0])
    if span is not None and (tail is head or span[0] > 0):
        if _last_row_problem(tail[span[0] : span[1]], header, layout, quoted) is not None:
            return None
    header_line = head.count(b"\n", 0, start) + 1
    return _Block(0, layout, header, header_line, path, header_line - 1, [], quoted)


def _read_block(path: Path, blk: _Block, strict: bool = True, skipped: list[Skipped] | None = None,
                *, columns: list[str] | None = None, n_rows: int | None = None):
    import polars as pl

    def read(source, skip):
        return pl.read_csv(
            polars_path(source),
            infer_schema=False,
            skip_lines=skip,
            truncate_ragged_lines=True,
            row_index_name="__row",
            raise_if_empty=False,
            quote_char='"',
            columns=columns,
            n_rows=n_rows,
        )

    try:
        return read(blk.source, blk.skip_lines)
    except (pl.exceptions.ComputeError, pl.exceptions.NoDataError, OSError) as err:
        failure = err
    # slow path, only after a failure: rows cut in the middle leave an odd number of quotes
    data = blk.source if isinstance(blk.source, bytes) else _decode(Path(blk.source).read_bytes(), path)
    lines = data.split(b"\n")
    start = 0 if isinstance(blk.source, bytes) else blk.skip_lines
    bad = [i for i in range(start + 1, len(lines)) if lines[i].count(b'"') % 2]
    if not bad:
        from ridgeline.parsers.plain import plain_reason

        raise InputError(path, f"expected well-formed Nsight Compute CSV rows, got {plain_reason(failure)}") from failure
    physical = [blk.line_of(i - start - 1) for i in bad]
    if strict:
        raise InputError(
            path,
            "expected a complete CSV row (unterminated quote: a cut or interleaved row)",
            line=physical[0],
            actual=lines[bad[0]].decode("utf-8", errors="replace")[:60],
        ) from failure
    for ln in physical:
        if skipped is not None:
            skipped.append(Skipped(str(path), f"line {ln}", "cut CSV row (unterminated quote); ignored"))
    drop = set(bad)
    kept = b"\n".join(ln for i, ln in enumerate(lines[start:], start) if i not in drop)
    blk.removed = sorted(set(blk.removed) | set(physical))
    try:
        return read(kept, 0)
    except (pl.exceptions.ComputeError, pl.exceptions.NoDataError) as err:
        from ridgeline.parsers.plain import plain_reason

        raise InputError(path, f"expected well-formed Nsight Compute CSV rows, got {plain_reason(err)}") from err


def _read_fast(path: Path, notes: list[str]):
    """[(block, frame)] read by polars straight from the file, or None to take the slow path.

    After the read, rows whose ID is not a launch number are examined: ncu's own ``==`` lines
    are dropped (counted in the notes); anything else (application output, a second header
    block, a cut row) sends the file to the slow path, which handles it line by line.
    """
    import polars as pl

    blk = _plan_fast(path)
    if blk is None:
        return None
    columns = _raw_columns(blk.header) if blk.layout == "raw" and _size(path) >= NARROW_MIN_BYTES else None
    try:
        df = _read_block(path, blk, columns=columns)
    except InputError:
        return None
    if "ID" not in df.columns:
        return None
    # a line break inside a name: the slow path numbers the physical lines of the rows after it
    texts = [c for c in ("Kernel Name", "Process Name", "Host Name") if c in df.columns]
    if texts and df.select(pl.any_horizontal(pl.col(texts).str.contains("[\r\n]")).any()).item():
        return None
    ident = pl.col("ID").str.strip_chars()
    odd = df.filter(ident.is_not_null() & (ident != "") & ~ident.str.contains(r"^[0-9][0-9,]*$"))
    odd_rows = odd.get_column("__row").implode()
    if odd.height:
        if not odd.get_column("ID").str.starts_with("==").all():
            return None
        notes.append(f"{path}: {odd.height} non-CSV line(s) ignored (ncu messages or application output)")
        df = df.filter(~pl.col("__row").is_in(odd_rows))
    if columns is not None:
        # every column of the rows the units row and the locale check look at (the first
        # LOCALE_SAMPLE_ROWS launches), and the whole table only when NcuResult.metrics is read
        kept = df.select("__row", launch=_has_id().fill_null(False))
        launch_rows = kept.filter(pl.col("launch")).get_column("__row")
        last = launch_rows[LOCALE_SAMPLE_ROWS - 1] if launch_rows.len() >= LOCALE_SAMPLE_ROWS else None
        upto = max(int(last) + 1, 1) if last is not None else None
        try:
            head = _read_block(path, blk, n_rows=upto)
        except InputError:
            return None
        blk.head = head.filter(pl.col("__row").is_in(kept.get_column("__row").implode()))  # cheaper than a semi join on 2,000+ columns

        def full(path=path, blk=blk, odd_rows=odd_rows):
            whole = _read_block(path, blk)
            return whole.filter(~pl.col("__row").is_in(odd_rows)) if odd_rows.list.len().item() else whole

        blk.full = full
    return [(blk, df)]


LOCALE_SAMPLE_ROWS = 2000  # launches whose cells are checked for a decimal-comma locale
def _has_id():
    import polars as pl

    return pl.col("ID").is_not_null() & (pl.col("ID").str.strip_chars() != "")


NARROW_MIN_BYTES = 32 << 20  # raw pages from this size are read by columns (smaller: one read is cheaper)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _raw_columns(header: list[str]) -> list[str] | None:
    """Columns of a raw page the KERNEL recipes read (None: read them all, e.g. repeated names)."""
    if len(set(header)) != len(header) or "ID" not in header:
        return None
    return [c for c in header if c in V.IDENTITY_COLUMNS or V.needed_metric(c)]
