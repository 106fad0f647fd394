"""Nsight Compute CSV exports (details page and raw page) -> the KERNEL table.

Both layouts, every column set seen from 2019.5 to 2026.2, end in the same normalized table
(:data:`ridgeline.analyzer.schema.KERNEL_COLUMNS`, exact names and order):

* **details** (long): one row per launch x section x metric; identity columns, then
  ``Section Name, Metric Name, Metric Unit, Metric Value`` and optional rule columns (whose
  plain metric rows are *ragged*: 13 fields under a 15-column header). Metric names may be
  section labels (``Duration``, ``SOL FB``): :data:`ncu_metrics.SECTION_LABELS` maps them.
* **raw** (wide): one row per launch, one column per metric, usually a units row second.

The layout is detected from the header line, never from the file name. Text that is not CSV
(``==PROF==``/``==WARNING==`` lines, the application's own output) may appear before the
header and between rows: after a quoted header every line that does not start with ``"`` is
noise; noise lines that look like cut CSV rows (they contain ``","``) are listed in
``skipped``. Several header blocks appended in one file are read one after the other.

Values: all cells are read as strings and only the counters a recipe needs are cast, with
polars expressions (see :mod:`ridgeline.units` for numbers and units). Strict by default: a
non-numeric cell in a needed numeric metric raises :class:`~ridgeline.errors.InputError`
naming the file, the 1-based physical line, the metric and the value; ``strict=False`` turns
such cells into nulls and lists each one in ``skipped``. A file written in a decimal-comma
locale is always refused ("re-export with LC_ALL=C").

Decisions (documented here, tested in ``tests/test_ncu_*.py``):

* A launch whose duration is zero or negative stays in the table with ``duration_s`` null and
  ``duration_s_source`` starting ``"rejected (non-positive duration): "`` plus the counters,
  so the classifier marks it unknown; nothing is dropped.
* ``id`` is the ncu ``ID``; with several header blocks in one file it becomes
  ``"<block>/<ID>"`` for blocks after the first; with several files every id gets
  ``"<file index>:"`` in front (file index 0-based, in the order given).
* ``short_name``: the name without ``void``, template arguments and parameter list, with
  namespaces kept and anonymous namespaces (``<unnamed>``, ``(anonymous namespace)``) removed:
  ``void at::native::<unnamed>::k<float>(int)`` -> ``at::native::k``;
  ``ampere_sgemm_128x64_nn`` stays itself.
* Tensor FLOPs: ``sm__ops_path_tensor_src_*`` totals by precision; per-family counters
  (``..._op_<family>_src_...``) only when no total was collected for the launch. The Volta
  counter ``sm__inst_executed_pipe_tensor.sum`` x 512 only on CC 7.0; on other or unknown CC a
  non-zero count leaves tensor FLOPs null (a note says why; the counter stays in ``metrics``);
  a count of exactly 0 proves no tensor work, so the tensor columns are 0.
* FLOPs on CUDA cores follow ncu's own roofline sections: FP64/FP32 ``add + mul + 2*fma``
  (plus Blackwell's paired ``fadd2``/``fmul2`` x2 and ``ffma2`` x4 when collected), FP16
  ``2*hadd + 2*hmul + 4*hfma``: ncu's Half roofline counts HADD/HMUL/HFMA as half2
  instructions (two lanes), so its FP16 FLOPs are twice NERSC's ``hadd + hmul + 2*hfma``; we
  follow ncu so achieved FP16 matches the peak ncu records (hfma peak x 4). Totals (``.sum``)
  first, then ``.sum.per_cycle_elapsed`` x elapsed cycles, then ``.sum.per_second`` x duration.
* Sparse tensor counters (``*_sparsity_on``) are counted as reported, with a note when one
  counted ops (a ``.peak_sustained`` column says nothing about use).
* The tensor roof is the DENSE peak of the path the launch used (see :func:`_tensor_peak`):
  Hopper's precision totals record the 2:4-sparse rate, the per-family ``_sparsity_off``
  counters the dense one; ``tensor_path`` names the instruction family (``hgmma``, ``hmma``).
* Old details pages print ``Block Size``/``Grid Size`` as Launch Statistics metrics (total
  threads / blocks): they fill ``block_size``/``grid_size`` as printed and the thread/block
  counts.
"""

from __future__ import annotations

import bisect
import csv
import dataclasses
import re
from pathlib import Path
from typing import Any, Iterable

from ridgeline.errors import InputError
from ridgeline.parsers import ncu_metrics as V
from ridgeline.result import InputInfo, Skipped
from ridgeline.units import parse_unit, scale_expr

HEAD_BYTES = 1 << 20  # detect_ncu_layout reads at most this much


@dataclasses.dataclass
class NcuResult:
    """What :func:`read_ncu` returns.

    ``kernels``: KERNEL table (schema order). ``metrics``: source -> every metric by its ncu
    name (raw page: the wide table as printed, strings; details page: the long table, strings);
    a :class:`MetricsTables` dict: a raw page read by the fast path keeps only the counters its
    recipes need in memory and reads its full table from the file on first access.
    ``units``: source -> {column: unit as printed} for raw pages. ``notes``: things worth telling
    the user that are not errors (unknown units, tensor counters that cannot give FLOPs...).
    """

    kernels: Any
    metrics: dict[str, Any]
    skipped: list[Skipped]
    inputs: list[InputInfo]
    units: dict[str, dict[str, str]] = dataclasses.field(default_factory=dict)
    notes: list[str] = dataclasses.field(default_factory=list)


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
    head = raw[:4096]
    if len(head) >= 4 and head.count(b"\x00") > len(head) // 3:
        enc = "utf-16-le" if head[1:2] == b"\x00" else "utf-16-be"
        try:
            return raw.decode(enc, errors=errors).encode("utf-8")
        except UnicodeDecodeError as err:
            raise InputError(path, f"expected text, got binary data (tried {enc})") from err
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


def _no_csv_reason(text: str) -> str:
    if "ERR_NVGPUCTRPERM" in text:
        return (
            "ncu could not read the GPU performance counters (ERR_NVGPUCTRPERM): the file holds "
            "no CSV; profile as root or allow counter access (NVreg_RestrictProfilingToAdminUsers=0)"
        )
    if "No kernels were profiled" in text:
        return (
            "ncu profiled no kernels ('No kernels were profiled'): the file holds no CSV; check "
            "--kernel-name/--launch-skip filters and --target-processes all for child processes"
        )
    if "terminated before first instrumented API call" in text:
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
    removed: list[int]  # physical line numbers removed as noise, ascending
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


def _noise_spans(data: bytes, lo: int, hi: int, quoted: bool) -> list[tuple[int, int]]:
    """(start, end) of every noise line in data[lo:hi]; ``lo`` is at a line start."""
    spans = []
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
    for s in starts:
        e = data.find(b"\n", s, hi)
        spans.append((s, hi if e < 0 else e + 1))
    return spans


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
        spans = _noise_spans(data, hl_end, end, quoted)
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
        cut = _check_last_row(path, body, lo, hi, header, layout, quoted, header_line, removed, strict, skipped)
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


def _check_last_row(path, body, lo, hi, header, layout, quoted, header_line, removed, strict, skipped):
    """Check the last row of body[lo:hi]; return the offset to cut at when it is dropped."""
    hi = len(body) if hi is None else hi
    span = _last_line_span(body, lo, hi)
    if span is None:
        return None
    ls, e = span
    last = body[ls:e]
    problem = _last_row_problem(last, header, layout, quoted)
    if problem is None:
        return None
    kept_before = body.count(b"\n", lo, ls)
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
            source,
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
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        failure = err
    # slow path, only after a failure: rows cut in the middle leave an odd number of quotes
    data = blk.source if isinstance(blk.source, bytes) else _decode(Path(blk.source).read_bytes(), path)
    lines = data.split(b"\n")
    start = 0 if isinstance(blk.source, bytes) else blk.skip_lines
    bad = [i for i in range(start + 1, len(lines)) if lines[i].count(b'"') % 2]
    if not bad:
        raise InputError(path, f"expected well-formed CSV rows ({first[:100]})") from failure
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
        raise InputError(path, f"expected well-formed CSV rows ({str(err).strip()[:100]})") from err


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
    return [c for c in header if c in V.IDENTITY_COLUMNS or c in V.NEEDED_METRICS or V.is_tensor_metric(c)]


# ======================================================================================
# value level
# ======================================================================================
def _short_name(name: str) -> str:
    s = name.strip()
    if s.startswith("unnamed>::"):
        s = "<" + s
    s = re.sub(r"^(?:(?:void|static|__global__|extern \"C\")\s+)+", "", s)
    s = s.replace("<unnamed>::", "").replace("(anonymous namespace)::", "")
    out = []
    depth = 0
    for ch in s:
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    r = re.sub(r"\s+", " ", "".join(out)).strip().strip(":").strip()
    if " " in r:  # leftover return type or qualifiers: keep the function name
        r = r.rsplit(" ", 1)[-1]
    return r or name


def _dims_product(text: str) -> int | None:
    nums = re.findall(r"[0-9]+", text.replace(",", " ") if "(" in text else text.replace(",", ""))
    if not nums:
        return None
    out = 1
    for n in nums:
        out *= int(n)
    return out


def short_name(name: str | None) -> str | None:
    """Public helper: see the module docstring for the rule."""
    return None if name is None else _short_name(name)


class _Ctx:
    """Per-file state shared by the layout readers."""

    def __init__(self, path: Path, strict: bool, skipped: list[Skipped], notes: list[str]):
        self.path = path
        self.strict = strict
        self.skipped = skipped
        self.notes = notes
        self.unknown_units: set[str] = set()


def _bad_cells(ctx: _Ctx, blk: _Block, frame, value_cols: Iterable[tuple[str, str]]):
    """Check cells; raise (strict) or record (lenient). ``value_cols``: (frame column, metric label).

    ``frame`` must carry ``__row``. Returns the set of (row, column) flagged bad when lenient.
    """
    import polars as pl

    from ridgeline.units import bad_number_expr, decimal_comma_expr

    cols = list(value_cols)
    if not cols or frame.height == 0:
        return
    flags = frame.select(
        *[bad_number_expr(pl.col(c)).any().alias(f"b{i}") for i, (c, _l) in enumerate(cols)],
        *[decimal_comma_expr(pl.col(c)).any().alias(f"d{i}") for i, (c, _l) in enumerate(cols)],
    ).row(0)
    n = len(cols)
    for i, (c, label) in enumerate(cols):
        if flags[n + i]:
            hit = frame.filter(decimal_comma_expr(pl.col(c))).select("__row", c, *(["__label"] if "__label" in frame.columns else [])).row(0)
            raise InputError(
                ctx.path,
                "numbers written with a decimal comma (a non-English locale); re-export with LC_ALL=C",
                line=blk.line_of(hit[0]),
                column=hit[2] if len(hit) > 2 else label,
                actual=hit[1],
            )
    for i, (c, label) in enumerate(cols):
        if not flags[i]:
            continue
        extra = ["__label"] if "__label" in frame.columns else []
        bad = frame.filter(bad_number_expr(pl.col(c))).select("__row", c, *extra)
        if ctx.strict:
            r = bad.row(0)
            raise InputError(
                ctx.path,
                "expected a number",
                line=blk.line_of(r[0]),
                column=r[2] if extra else label,
                actual=r[1],
            )
        for r in bad.iter_rows():
            ctx.skipped.append(
                Skipped(
                    str(ctx.path),
                    f"line {blk.line_of(r[0])}",
                    f"column {r[2] if extra else label!r}: not a number {r[1]!r}; read as null",
                )
            )


def _launch_rows(df):
    """Rows with a launch ID (drops a units row and blank lines), without copying when possible."""
    missing = df.select((~_has_id()).fill_null(True).arg_true()).to_series()
    if missing.len() == 0:
        return df
    if missing.len() == 1 and missing[0] == 0:  # the raw page's units row
        return df.slice(1)
    return df.filter(_has_id())


def _has_id():
    import polars as pl

    return pl.col("ID").is_not_null() & (pl.col("ID").str.strip_chars() != "")


LOCALE_SAMPLE_ROWS = 2000


def _check_locale(ctx: _Ctx, blk: _Block, frame, cols: list[str]) -> None:
    """Refuse decimal-comma exports from a sample of every value column (not only the ones the
    recipes read: a file whose counters happen to look like C numbers, "1.234", would
    otherwise be read wrong without a word)."""
    import polars as pl

    from ridgeline.units import decimal_comma_expr

    if not cols or frame.height == 0:
        return
    head = frame.head(LOCALE_SAMPLE_ROWS)
    # every decimal-comma spelling holds a comma: a literal search (one expression over all the
    # columns) finds the few columns that need the pattern; a 2,000-column page is 3x cheaper
    commas = head.select(pl.col(cols).str.contains(",", literal=True).any()).row(0)
    cols = [c for c, has in zip(cols, commas) if has]
    flags = head.select([decimal_comma_expr(pl.col(c)).any().alias(f"c{i}") for i, c in enumerate(cols)]).row(0) \
        if cols else ()
    for c, hit in zip(cols, flags):
        if hit:
            r = head.filter(decimal_comma_expr(pl.col(c))).row(0, named=True)
            column = r.get("Metric Name") or c
            raise InputError(
                ctx.path,
                "numbers written with a decimal comma (a non-English locale); re-export with LC_ALL=C",
                line=blk.line_of(r["__row"]),
                column=column,
                actual=r[c],
            )


# --------------------------------------------------------------------------------------
# raw page
# --------------------------------------------------------------------------------------
def _raw_block(ctx: _Ctx, blk: _Block, df):
    """-> (wide metric frame M with identity columns + canonical Float64 metrics, units, present)"""
    import polars as pl

    from ridgeline.units import fast_number_expr, needs_slow_expr, number_expr

    every = blk.head if blk.head is not None else df  # every column (the first rows when read by columns)
    units: dict[str, str] = {}
    if every.height and every["ID"][0] in (None, ""):
        first = every.row(0)
        units = {c: (v or "") for c, v in zip(every.columns, first) if c != "__row"}
    df = _launch_rows(df)
    every = _launch_rows(every) if blk.head is not None else df
    cols = set(df.columns)
    wanted = [c for c in df.columns if c in V.NEEDED_METRICS or V.is_tensor_metric(c)]
    numeric = [c for c in wanted if c not in V.STRING_METRICS]
    # counters have a rollup suffix (x.sum, x.avg.pct_of_peak...); suffix-less attributes may hold
    # lists such as "0,12" and are not sampled
    _check_locale(ctx, blk, every, [c for c in every.columns if "__" in c and "." in c and not c.startswith("__")])
    # cells the native float cast cannot read (n/a, grouping commas, garbage) need the slow path
    slow_flags = df.select([needs_slow_expr(pl.col(c)).alias(c) for c in numeric]).row(0) if numeric and df.height else ()
    slow = {c for c, f in zip(numeric, slow_flags) if f}
    _bad_cells(ctx, blk, df, [(c, c) for c in numeric if c in slow])
    if not units and numeric:
        ctx.notes.append(f"{ctx.path}: raw page without a units row: assumed ncu base units (--print-units base)")
    exprs = []
    for c in numeric:
        unit = units.get(c, "") or V.UNITS_WHEN_BLANK.get(c, "")
        info = parse_unit(unit)
        if not info.known:
            ctx.unknown_units.add(f"{unit!r} ({c})")
        value = number_expr(pl.col(c)) if c in slow else fast_number_expr(pl.col(c))
        exprs.append(scale_expr(value, info).alias(c))
    ident = [c for c in df.columns if c in V.IDENTITY_COLUMNS]
    strings = [pl.col(c) for c in V.STRING_METRICS if c in cols]
    m = df.select(*[pl.col(c) for c in ident], *strings, *exprs)
    return m, units, set(wanted)


# --------------------------------------------------------------------------------------
# details page
# --------------------------------------------------------------------------------------
_LABELS = {label for (label, _b) in V.SECTION_LABELS}


def _details_block(ctx: _Ctx, blk: _Block, df):
    import polars as pl

    from ridgeline.units import fast_number_expr, needs_slow_expr, number_expr

    key = ["ID"] + (["Process ID"] if "Process ID" in df.columns else [])
    df = _launch_rows(df)
    ident = [c for c in df.columns if c in V.IDENTITY_COLUMNS]
    first_rows = df.filter(pl.col("ID").ne_missing(pl.col("ID").shift(1)) | (pl.int_range(pl.len()) == 0))
    launches = first_rows.select(ident).unique(subset=key, keep="first", maintain_order=True)

    _check_locale(
        ctx,
        blk,
        df.head(20 * LOCALE_SAMPLE_ROWS).filter(
            pl.col("Metric Name").str.contains(".", literal=True) | (pl.col("Metric Unit").fill_null("") != "")
        ),
        ["Metric Value"],
    )
    names = pl.col("Metric Name")
    wanted = list(V.NEEDED_METRICS | _LABELS)
    sub = df.filter(names.is_in(wanted) | names.str.starts_with("sm__ops_path_tensor_")).select(
        *key, "__row", "Metric Name", "Metric Unit", "Metric Value"
    )
    # unit -> factor, base (a handful of distinct spellings)
    unit_col = pl.col("Metric Unit").fill_null("")
    distinct = [u or "" for u in sub.get_column("Metric Unit").unique().to_list()]
    exps, bases = {}, {}
    for u in distinct:
        info = parse_unit(u)
        exps[u], bases[u] = info.exponent, info.base
        if not info.known:
            ctx.unknown_units.add(repr(u))
    exp = unit_col.replace_strict(exps, default=0, return_dtype=pl.Int32)
    # metrics printed with a blank unit: ncu's base unit for them
    for metric, unit in V.UNITS_WHEN_BLANK.items():
        info = parse_unit(unit)
        exp = pl.when((names == metric) & (unit_col == "")).then(pl.lit(info.exponent, dtype=pl.Int32)).otherwise(exp)
    sub = sub.with_columns(
        exp.alias("__exp"),
        unit_col.replace_strict(bases, default="", return_dtype=pl.String).alias("__base"),
    )
    sub = sub.with_columns(
        pl.lit(10.0).pow(pl.col("__exp").clip(lower_bound=0)).alias("__mul"),
        pl.lit(10.0).pow((-pl.col("__exp")).clip(lower_bound=0)).alias("__div"),
    )
    label_map = {f"{label}\x1f{base}": canon for (label, base), canon in V.SECTION_LABELS.items()}
    is_raw_name = names.is_in(list(V.NEEDED_METRICS)) | names.str.starts_with("sm__ops_path_tensor_")
    sub = sub.with_columns(
        pl.when(is_raw_name)
        .then(names)
        .otherwise(
            pl.concat_str([names, pl.lit("\x1f"), pl.col("__base")]).replace_strict(label_map, default=None, return_dtype=pl.String)
        )
        .alias("__canon")
    ).filter(pl.col("__canon").is_not_null())
    string_rows = sub.filter(pl.col("__canon").is_in(list(V.STRING_METRICS)))
    num = sub.filter(~pl.col("__canon").is_in(list(V.STRING_METRICS))).rename({"Metric Name": "__label"})
    value = pl.col("Metric Value")
    if num.height and num.select(needs_slow_expr(value)).item():
        _bad_cells(ctx, blk, num, [("Metric Value", "Metric Value")])
        parsed = number_expr(value)
    else:
        parsed = fast_number_expr(value)
    num = num.with_columns((parsed * pl.col("__mul") / pl.col("__div")).alias("__v"))
    # section labels used in this block: named next to the counter in *_source columns
    labels_used = dict(
        num.filter(pl.col("__label") != pl.col("__canon")).select("__canon", "__label").unique(subset="__canon").iter_rows()
    )
    present = set(num.get_column("__canon").unique().to_list()) | set(string_rows.get_column("__canon").unique().to_list())
    m = launches
    if num.height:
        wide = num.pivot(on="__canon", index=key, values="__v", aggregate_function="first")
        m = m.join(wide, on=key, how="left", nulls_equal=True, maintain_order="left")
    if string_rows.height:
        wide_s = string_rows.pivot(on="__canon", index=key, values="Metric Value", aggregate_function="first")
        m = m.join(wide_s, on=key, how="left", nulls_equal=True, maintain_order="left")
    return m, present, labels_used


# --------------------------------------------------------------------------------------
# recipes -> KERNEL columns
# --------------------------------------------------------------------------------------
_PSEUDO = {V.DURATION: "duration_s", "@sm_clock_hz": "sm_clock_hz"}


def _col(name: str):
    import polars as pl

    return pl.col(_PSEUDO.get(name, name))


def _recipe(alts: list[V.Alt], present: set[str]):
    """-> (value expr, source expr) or (None, None) when no alternative can apply."""
    import polars as pl

    chain = None
    src_chain = None
    for alt in alts:
        required = [t.metric for t in alt.terms if not t.optional] + [m for m in (alt.scale, alt.divide) if m]
        if not all(m in present or m in _PSEUDO for m in required):
            continue
        cond = pl.all_horizontal([_col(m).is_not_null() for m in required])
        total = None
        src_parts = []
        base_terms = [t for t in alt.terms if not t.optional]
        src_parts.append(pl.lit(V.Alt(tuple(base_terms)).label()))
        for t in alt.terms:
            if t.optional and t.metric not in present:
                continue
            e = _col(t.metric)
            if t.optional:
                e = e.fill_null(0.0)
                f = "" if t.factor == 1 else f"{t.factor:g}*"
                src_parts.append(pl.when(_col(t.metric).is_not_null()).then(pl.lit(f" + {f}{t.metric}")))
            e = e * t.factor if t.factor != 1 else e
            total = e if total is None else total + e
        if alt.scale:
            total = total * _col(alt.scale)
            scale = "duration" if alt.scale == V.DURATION else alt.scale.lstrip("@")
            if len(alt.terms) > 1:  # "(a + b + 2*c) x cycles"
                src_parts = [pl.lit("("), *src_parts, pl.lit(")")]
            src_parts.append(pl.lit(f" x {scale}"))
        if alt.divide:
            total = total / _col(alt.divide)
            src_parts.append(pl.lit(f" / {alt.divide}"))
        src = pl.concat_str(src_parts, ignore_nulls=True)
        if chain is None:
            chain, src_chain = pl.when(cond).then(total), pl.when(cond).then(src)
        else:
            chain, src_chain = chain.when(cond).then(total), src_chain.when(cond).then(src)
    if chain is None:
        return None, None
    return chain.otherwise(None), src_chain.otherwise(None)


def _tensor_exprs(m_cols: set[str], present: set[str], ctx: _Ctx):
    """-> dict column -> expr for the five flops_tensor_* columns, flops_tensor, its source and
    peak_flops_tensor_per_s."""
    import polars as pl

    counters: dict[str, dict[str, str]] = {}  # base counter -> {form suffix: column}
    kinds: dict[str, str] = {}  # base counter -> "total" | "family"
    for name in sorted(present):  # sorted: the source string must not depend on set order
        for kind, rx in (("total", V.TENSOR_TOTAL_RE), ("family", V.TENSOR_FAMILY_RE)):
            mt = rx.match(name)
            if mt:
                base = name[: len(name) - len(mt.group(2))]
                counters.setdefault(base, {})[mt.group(2)] = name
                kinds[base] = kind
    totals_expr: dict[str, Any] = {}
    src_expr: dict[str, Any] = {}
    for base, forms in counters.items():
        alts = []
        if ".sum" in forms:
            alts.append((pl.col(forms[".sum"]), base + ".sum", [forms[".sum"]]))
        if ".sum.per_cycle_elapsed" in forms and "sm__cycles_elapsed.avg" in m_cols:
            c = forms[".sum.per_cycle_elapsed"]
            alts.append((pl.col(c) * pl.col("sm__cycles_elapsed.avg"), c + " x sm__cycles_elapsed.avg", [c, "sm__cycles_elapsed.avg"]))
        if ".sum.per_second" in forms:
            c = forms[".sum.per_second"]
            alts.append((pl.col(c) * pl.col("duration_s"), c + " x duration", [c, "duration_s"]))
        if not alts:
            continue
        v = s = None
        for e, label, req in alts:
            cond = pl.all_horizontal([pl.col(r).is_not_null() for r in req])
            v = pl.when(cond).then(e) if v is None else v.when(cond).then(e)
            s = pl.when(cond).then(pl.lit(label)) if s is None else s.when(cond).then(pl.lit(label))
        totals_expr[base] = v.otherwise(None)
        src_expr[base] = s.otherwise(None)

    unknown = sorted(b for b in totals_expr if V.tensor_bucket(b.split("_src_", 1)[1]) is None)
    if unknown:
        ctx.notes.append(
            f"{ctx.path}: tensor counter(s) with an input precision ridgeline does not know, not counted: "
            + ", ".join(unknown)
        )

    def bucket_sum(kind: str, bucket: str):
        items = [b for b in totals_expr if kinds[b] == kind and V.tensor_bucket(b.split("_src_", 1)[1]) == bucket]
        if not items:
            return None
        return pl.when(pl.any_horizontal([totals_expr[b].is_not_null() for b in items])).then(
            pl.sum_horizontal([totals_expr[b] for b in items])
        )

    total_bases = [b for b in totals_expr if kinds[b] == "total"]
    family_bases = [b for b in totals_expr if kinds[b] == "family"]
    any_total = pl.any_horizontal([totals_expr[b].is_not_null() for b in total_bases]) if total_bases else pl.lit(False)
    any_family = pl.any_horizontal([totals_expr[b].is_not_null() for b in family_bases]) if family_bases else pl.lit(False)
    volta = [c for c in V.VOLTA_TENSOR_COUNTERS if c in m_cols]
    pipe = pl.coalesce([pl.col(c) for c in volta]) if volta else pl.lit(None, dtype=pl.Float64)
    pipe_name = pl.coalesce([pl.when(pl.col(c).is_not_null()).then(pl.lit(c)) for c in volta]) if volta else pl.lit(None, dtype=pl.String)
    cc = pl.col("cc")
    is_volta = (cc == V.VOLTA_CC).fill_null(False) & pipe.is_not_null()
    pipe_zero = (pipe == 0).fill_null(False)

    out = {}
    for bucket, colname in V.TENSOR_COLUMNS.items():
        t = bucket_sum("total", bucket)
        f = bucket_sum("family", bucket)
        e = pl.when(any_total).then(t if t is not None else pl.lit(None, dtype=pl.Float64))
        e = e.when(any_family).then(f if f is not None else pl.lit(None, dtype=pl.Float64))
        if bucket == "fp16":
            e = e.when(is_volta).then(pipe * V.VOLTA_TENSOR_FLOPS_PER_INST)
            e = e.when(pipe_zero).then(pl.lit(0.0))
        else:
            e = e.when(is_volta).then(pl.lit(None, dtype=pl.Float64)).when(pipe_zero).then(pl.lit(0.0))
        out[colname] = e.otherwise(None).cast(pl.Float64)
    cols = list(V.TENSOR_COLUMNS.values())
    out["flops_tensor"] = pl.when(pl.any_horizontal([pl.col(c).is_not_null() for c in cols])).then(
        pl.sum_horizontal([pl.col(c) for c in cols])
    )
    # source: the counters actually used, per launch
    def used(bases):
        if not bases:
            return pl.lit(None, dtype=pl.String)
        return pl.concat_str([src_expr[b] for b in bases], separator=" + ", ignore_nulls=True)

    src = (
        pl.when(any_total)
        .then(used(total_bases))
        .when(any_family)
        .then(used(family_bases))
        .when(is_volta)
        .then(pl.concat_str([pl.lit(f"{V.VOLTA_TENSOR_FLOPS_PER_INST}*"), pipe_name, pl.lit(" (CC 7.0 HMMA.884)")]))
        .when(pipe_zero)
        .then(pl.concat_str([pipe_name, pl.lit(" = 0 (no tensor instructions)")]))
        .otherwise(None)
    )
    out["flops_tensor_source"] = pl.when(pl.col("flops_tensor").is_not_null()).then(src)
    # dense peak of what the launch executed (see _tensor_peak)
    peak, peak_src, path = _tensor_peak(counters, kinds, totals_expr, m_cols, ctx)
    out["peak_flops_tensor_per_s"] = peak
    out["peak_flops_tensor_source"] = peak_src
    out["tensor_path"] = path
    sparse_bases = [b for b in totals_expr if "sparsity_on" in b]
    out["sparse_ops"] = pl.sum_horizontal([totals_expr[b].fill_null(0.0) for b in sparse_bases]) if sparse_bases else None
    return out, bool(volta)


def _hfma2_mma_idiom(ctx: _Ctx, m, present: set[str]):
    """Launches whose only half-precision instructions are the compiler's HFMA2.MMA register moves.

    On Ampere and later the compiler initialises and moves registers with ``HFMA2.MMA`` (an HFMA2
    issued to the tensor pipe): such a launch counts ``hfma`` = exactly 32 x
    ``sm__inst_executed_pipe_tensor`` (one warp instruction, 32 threads) with zero ``hadd`` and
    ``hmul`` -- plain fp32 or integer kernels show it (``CUDAFunctorOnSelf_add<int>``). Those are
    not fp16 math and no MMA ran: their FP16 and tensor FLOPs are 0, with a note, so they never
    decide a precision label. CC 7.0 (Volta), where the pipe counter is real HMMA work, is left alone.
    """
    import polars as pl

    def first(op):
        return next((f"{u}{V.SASS.format(op=op)}.sum" for u in ("sm__", "smsp__")
                     if f"{u}{V.SASS.format(op=op)}.sum" in present), None)

    hf, ha, hm = first("hfma"), first("hadd"), first("hmul")
    pipe = next((c for c in V.VOLTA_TENSOR_COUNTERS if c in present), None)
    if not (hf and ha and hm and pipe):
        return m
    idiom = (
        (pl.col(ha) == 0) & (pl.col(hm) == 0) & (pl.col(hf) > 0) & (pl.col(hf) == 32 * pl.col(pipe))
        & (pl.col("cc").fill_null("") != V.VOLTA_CC)
    ).fill_null(False)
    n = m.select(idiom.sum()).item()
    if not n:
        return m
    ctx.notes.append(
        f"{ctx.path}: {n} launch(es) count hfma = 32 x {pipe} with no hadd/hmul: the compiler's HFMA2.MMA "
        "register moves, not fp16 math; their FP16 and tensor FLOPs are counted as 0 and do not set the precision"
    )
    why = f" = HFMA2.MMA register moves ({hf} = 32 x {pipe}, no hadd/hmul): 0"
    tensor_cols = [c for c in V.TENSOR_COLUMNS.values() if c in m.columns]
    return m.with_columns(
        pl.when(idiom).then(0.0).otherwise(pl.col("flops_fp16")).alias("flops_fp16"),
        pl.when(idiom).then(pl.lit(hf + why)).otherwise(pl.col("flops_fp16_source")).alias("flops_fp16_source"),
        *[pl.when(idiom).then(0.0).otherwise(pl.col(c)).alias(c) for c in tensor_cols],
        pl.when(idiom).then(0.0).otherwise(pl.col("flops_tensor")).alias("flops_tensor"),
        pl.when(idiom).then(pl.lit(pipe + why)).otherwise(pl.col("flops_tensor_source")).alias("flops_tensor_source"),
    )


_FAMILY_OP_RE = re.compile(r"^sm__ops_path_tensor_op_([a-z0-9]+)_src_")


def _tensor_peak(counters: dict, kinds: dict, totals_expr: dict, m_cols: set[str], ctx: _Ctx):
    """-> (peak FLOP/s expr, its source expr, tensor path expr): the DENSE roof of what ran.

    Per input-precision bucket, the counters that carried ops are weighed by time, each against
    its own ``.sum.peak_sustained`` x SM clock: ``peak = sum(ops) / sum(ops / peak)``; the bucket
    with the most ops decides. Per-instruction-family counters (``..._op_<family>_src_...``; on
    Hopper ``hgmma`` = warpgroup wgmma, ``hmma`` = legacy mma.sync, each split by sparsity) are
    used when the launch has non-zero ones, so dense ops meet the dense rate and an mma.sync
    kernel meets the mma.sync roof it could actually reach; the path is named in ``tensor_path``.
    Otherwise the precision totals: on CC 9.x a total not split by sparsity records the 2:4-sparse
    rate as its ``peak_sustained`` (the dense ``..._sparsity_off`` family rate is half of it), so
    it is halved and the source says so. Totals split by sparsity (Ampere/Ada) carry their own rate.
    """
    import polars as pl

    null_f = pl.lit(None, dtype=pl.Float64)
    null_s = pl.lit(None, dtype=pl.String)
    hopper = pl.col("cc").fill_null("").str.starts_with("9.")
    buckets: dict[str, dict[str, list[str]]] = {}
    for base in totals_expr:
        if base + V.TENSOR_PEAK_SUFFIX not in m_cols:
            continue
        bucket = V.tensor_bucket(base.split("_src_", 1)[1])
        if bucket is not None:
            buckets.setdefault(bucket, {"total": [], "family": []})[kinds[base]].append(base)
    if not buckets:
        return null_f, null_s, null_s

    def ops(base):
        return totals_expr[base].fill_null(0.0)

    per_bucket = []  # (ops, time in cycles, source, path)
    for bucket, groups in sorted(buckets.items()):
        parts = []
        for kind in ("family", "total"):
            bases = sorted(groups[kind])
            if not bases:
                continue
            terms_ops, terms_time, src_parts, path_parts = [], [], [], []
            for base in bases:
                peak = pl.col(base + V.TENSOR_PEAK_SUFFIX)
                halve = kind == "total" and "_sparsity_" not in base and bucket not in ("fp64",) and "int1" not in base
                label = base + V.TENSOR_PEAK_SUFFIX
                if halve:
                    peak = pl.when(hopper).then(peak / 2).otherwise(peak)
                    label_e = pl.when(hopper).then(pl.lit(label + " / 2 (CC 9.x totals record the 2:4-sparse rate)")).otherwise(pl.lit(label))
                else:
                    label_e = pl.lit(label)
                used = ops(base) > 0
                terms_ops.append(ops(base))
                terms_time.append(pl.when(used & (peak > 0)).then(ops(base) / peak).otherwise(0.0))
                src_parts.append(pl.when(used).then(label_e))
                mt = _FAMILY_OP_RE.match(base)
                if kind == "family" and mt:
                    op = mt.group(1) + ("-sparse" if "sparsity_on" in base else "")
                    path_parts.append(pl.when(used).then(pl.lit(op)))
            o = pl.sum_horizontal(terms_ops)
            t = pl.sum_horizontal(terms_time)
            src = pl.concat_str(src_parts, separator=" + ", ignore_nulls=True)
            path = pl.concat_list(path_parts).list.drop_nulls().list.unique().list.sort().list.join("+") if path_parts else null_s
            parts.append((o, t, src, path))
        # family counters win where they carried ops
        if len(parts) == 2:
            (fo, ft, fs, fp), (to, tt, ts, tp) = parts
            use_f = fo > 0
            parts = [(pl.when(use_f).then(fo).otherwise(to), pl.when(use_f).then(ft).otherwise(tt),
                      pl.when(use_f).then(fs).otherwise(ts), pl.when(use_f).then(fp).otherwise(null_s))]
        per_bucket.append(parts[0])
    top = pl.max_horizontal([o for o, _t, _s, _p in per_bucket])
    peak = src = path = None
    for o, t, s_, p_ in per_bucket:
        cond = (o == top) & (top > 0) & (t > 0)
        value = o / t * pl.col("sm_clock_hz")
        source = pl.concat_str([s_, pl.lit(" x SM clock (sm_clock_hz)")])
        if peak is None:
            peak, src, path = pl.when(cond).then(value), pl.when(cond).then(source), pl.when(cond).then(p_)
        else:
            peak, src, path = peak.when(cond).then(value), src.when(cond).then(source), path.when(cond).then(p_)
    ok = pl.col("sm_clock_hz").is_not_null()
    peak = pl.when(ok).then(peak.otherwise(None))
    src = pl.when(ok).then(src.otherwise(None))
    path = path.otherwise(None)
    return peak, src, pl.when(path != "").then(path)


def _derive(ctx: _Ctx, m, present: set[str], *, block: _Block, id_prefix: str, labels: dict[str, str] | None = None):
    """Wide metric frame (ncu names, base units) -> KERNEL columns in schema order."""
    import polars as pl

    from ridgeline.analyzer.schema import KERNEL_COLUMNS, polars_schema
    from ridgeline.units import needs_slow_expr, number_expr

    cols = set(m.columns)
    # derived__ section metrics stand for counters (fill the counter when it is missing)
    alias_exprs = []
    replacements: dict[str, str] = {f"{c}": f"'{lbl}' ({c})" for c, lbl in (labels or {}).items()}
    for dname, (target, f) in V.DERIVED_ALIASES.items():
        if dname in cols:
            e = pl.col(dname) / f
            if target in cols:
                alias_exprs.append(pl.coalesce([pl.col(target), e]).alias(target))
            else:  # the source columns name the derived metric actually read
                alias_exprs.append(e.alias(target))
                replacements[target] = f"{dname}/{f:g}"
            present.add(target)
    if alias_exprs:
        m = m.with_columns(alias_exprs)
    cols = set(m.columns)
    present = {p for p in present if p in cols}

    int_cols = [c for c in ("ID", "Process ID", "Context", "Stream", "Device") if c in cols]
    slow_ints = set()
    if int_cols and m.height:
        flags = m.select([needs_slow_expr(pl.col(c).cast(pl.String)).alias(c) for c in int_cols]).row(0)
        slow_ints = {c for c, f in zip(int_cols, flags) if f}

    def num_int(name):
        if name not in cols:
            return None
        col = pl.col(name).cast(pl.String)
        if name in slow_ints:  # grouping commas ("1,024") or blanks
            return number_expr(col).cast(pl.Int64, strict=False)
        return col.cast(pl.Int64, strict=False)

    def lit_null(dtype):
        return pl.lit(None, dtype=dtype)

    launch_id = num_int("ID")
    if launch_id is None:
        raise InputError(ctx.path, "expected an 'ID' column")
    id_str = pl.col("ID").cast(pl.String).str.replace_all(",", "", literal=True)
    if block.index > 0:
        id_str = pl.concat_str([pl.lit(f"{block.index}/"), id_str])
    if id_prefix:
        id_str = pl.concat_str([pl.lit(id_prefix), id_str])

    # ids: identity
    dev = num_int("Device")
    dev_alt = [pl.col(c).cast(pl.Int64, strict=False) for c in ("device__attribute_device_index", "launch__device_id") if c in cols]
    device = pl.coalesce([e for e in [dev, *dev_alt] if e is not None]) if (dev is not None or dev_alt) else lit_null(pl.Int64)
    if "CC" in cols:
        cc = pl.col("CC")
    elif {"device__attribute_compute_capability_major", "device__attribute_compute_capability_minor"} <= cols:
        cc = pl.concat_str(
            [
                pl.col("device__attribute_compute_capability_major").cast(pl.Int64, strict=False).cast(pl.String),
                pl.lit("."),
                pl.col("device__attribute_compute_capability_minor").cast(pl.Int64, strict=False).cast(pl.String),
            ]
        )
    else:
        cc = lit_null(pl.String)

    def dims(col_name, attr):
        printed = pl.col(col_name) if col_name in cols else None
        product = None
        if printed is not None:  # "(128, 2, 1)" -> 256, computed once per distinct string
            distinct = m.get_column(col_name).unique().drop_nulls().to_list()
            table = {d: _dims_product(d) for d in distinct}
            product = printed.replace_strict(table, default=None, return_dtype=pl.Int64)
        attr_v = pl.col(attr).cast(pl.Int64, strict=False) if attr in cols else None
        if printed is None and attr_v is not None:
            printed = pl.col(attr).cast(pl.Int64, strict=False).cast(pl.String)
        count = pl.coalesce([e for e in (product, attr_v) if e is not None]) if (product is not None or attr_v is not None) else lit_null(pl.Int64)
        return (printed if printed is not None else lit_null(pl.String)), count

    block_size, block_threads = dims("Block Size", "launch__block_size")
    grid_size, grid_blocks = dims("Grid Size", "launch__grid_size")

    stage1 = [
        id_str.alias("id"),
        launch_id.alias("launch_id"),
        pl.lit(str(ctx.path)).alias("source"),
        (num_int("Process ID") if "Process ID" in cols else lit_null(pl.Int64)).alias("process_id"),
        (pl.col("Process Name") if "Process Name" in cols else lit_null(pl.String)).alias("process_name"),
        (pl.col("Host Name") if "Host Name" in cols else lit_null(pl.String)).alias("host_name"),
        device.alias("device"),
        (pl.col("device__attribute_display_name") if "device__attribute_display_name" in cols else lit_null(pl.String)).alias("device_name"),
        cc.alias("cc"),
        (num_int("Context") if "Context" in cols else lit_null(pl.Int64)).alias("context"),
        (num_int("Stream") if "Stream" in cols else lit_null(pl.Int64)).alias("stream"),
        (pl.col("Kernel Name") if "Kernel Name" in cols else lit_null(pl.String)).alias("kernel_name"),
        block_size.alias("block_size"),
        grid_size.alias("grid_size"),
        block_threads.alias("block_threads"),
        grid_blocks.alias("grid_blocks"),
    ]
    for out, names in V.CLOCKS.items():
        have = [pl.col(n) for n in names if n in present]
        stage1.append((pl.coalesce(have) if have else lit_null(pl.Float64)).alias(out))
    for out, names in V.PERCENT_METRICS.items():
        have = [pl.col(n) for n in names if n in present]
        stage1.append((pl.coalesce(have) if have else lit_null(pl.Float64)).alias(out))
    # duration
    dur, dur_src = _recipe(V.DURATION_RECIPE, present)
    if dur is None:
        dur, dur_src = lit_null(pl.Float64), lit_null(pl.String)
    stage1 += [dur.alias("__dur"), dur_src.alias("__dur_src")]
    m = m.with_columns(stage1)
    bad_dur = (pl.col("__dur") <= 0) | ~pl.col("__dur").is_finite()
    m = m.with_columns(
        pl.when(bad_dur.fill_null(False)).then(None).otherwise(pl.col("__dur")).alias("duration_s"),
        pl.when(bad_dur.fill_null(False))
        .then(pl.concat_str([pl.lit("rejected (non-positive duration): "), pl.col("__dur_src"), pl.lit(" = "), pl.col("__dur").cast(pl.String)]))
        .otherwise(pl.col("__dur_src"))
        .alias("duration_s_source"),
    )
    n_bad = m.select(bad_dur.fill_null(False).sum()).item()
    if n_bad:
        ctx.notes.append(f"{ctx.path}: {n_bad} launch(es) with zero or negative duration: duration_s left null")
    # FLOPs, bytes, peaks
    stage2 = []
    for out, alts in {**V.FLOP_RECIPES, **V.BYTE_RECIPES}.items():
        v, s = _recipe(alts, present)
        stage2 += [(v if v is not None else lit_null(pl.Float64)).alias(out), (s if s is not None else lit_null(pl.String)).alias(out + "_source")]
    for out, alts in V.PEAK_RECIPES.items():
        v, s = _recipe(alts, present)
        stage2.append((v if v is not None else lit_null(pl.Float64)).alias(out))
        if out == "peak_dram_bytes_per_s":
            stage2.append((s if s is not None else lit_null(pl.String)).alias("__peak_dram_src"))
        elif out in V.CACHE_PEAK_LEVELS:  # L2/L1 roofs: a non-positive peak is no roof (null)
            stage2[-1] = (pl.when(v > 0).then(v) if v is not None else lit_null(pl.Float64)).alias(out)
            stage2.append((pl.when(v > 0).then(s) if s is not None else lit_null(pl.String)).alias(out + "_source"))
    m = m.with_columns(stage2)
    clk, bus = V.DEVICE_DRAM_PEAK
    if clk in present and bus in present:
        attr_peak = 2 * pl.col(clk) * pl.col(bus) / 8  # clock already in Hz
        m = m.with_columns(
            pl.when(pl.col("peak_dram_bytes_per_s").is_null() & attr_peak.is_not_null() & (attr_peak > 0))
            .then(pl.lit(V.DEVICE_DRAM_PEAK_SOURCE))
            .otherwise(pl.col("__peak_dram_src"))
            .alias("peak_dram_bytes_per_s_source"),
            pl.coalesce([pl.col("peak_dram_bytes_per_s"), pl.when(attr_peak > 0).then(attr_peak)]).alias("peak_dram_bytes_per_s"),
        )
    else:
        m = m.with_columns(pl.col("__peak_dram_src").alias("peak_dram_bytes_per_s_source"))
    tensor, has_volta = _tensor_exprs(set(m.columns), present, ctx)
    first = {k: v for k, v in tensor.items() if k in V.TENSOR_COLUMNS.values()}
    m = m.with_columns(**first)
    m = m.with_columns(
        flops_tensor=tensor["flops_tensor"],
        peak_flops_tensor_per_s=tensor["peak_flops_tensor_per_s"],
        peak_flops_tensor_per_s_source=tensor["peak_flops_tensor_source"],
        tensor_path=tensor["tensor_path"],
    )
    m = m.with_columns(flops_tensor_source=tensor["flops_tensor_source"])
    m = _hfma2_mma_idiom(ctx, m, present)
    if has_volta:
        pipe_cols = [c for c in V.VOLTA_TENSOR_COUNTERS if c in m.columns]
        n_lost = m.select(
            (pl.col("flops_tensor").is_null() & (pl.coalesce([pl.col(c) for c in pipe_cols]) > 0)).sum()
        ).item()
        if n_lost:
            ctx.notes.append(
                f"{ctx.path}: {n_lost} launch(es) executed tensor instructions ({pipe_cols[0]} > 0) but "
                "x512 FLOPs per instruction holds only on CC 7.0 (Volta): tensor FLOPs left null; collect "
                "sm__ops_path_tensor_* (ncu --section SpeedOfLight_HierarchicalTensorRooflineChart)"
            )
    sparse = tensor["sparse_ops"]
    if sparse is not None:
        n_sparse = m.select((sparse > 0).fill_null(False).sum()).item()
        if n_sparse:
            ctx.notes.append(
                f"{ctx.path}: {n_sparse} launch(es) counted ops on sparse tensor paths (*_sparsity_on > 0): "
                "they are counted as ncu reports them and measured against the sparse rate; whether "
                "those ops are dense-equivalent is not documented"
            )
    # short names: on distinct kernel names only
    names = m.get_column("kernel_name").unique().drop_nulls().to_list()
    mapping = {n: _short_name(n) for n in names}
    m = m.with_columns(pl.col("kernel_name").replace_strict(mapping, default=None, return_dtype=pl.String).alias("short_name"))
    if replacements:  # section labels ("'Duration' (gpu__time_duration.sum)"), derived__ metrics
        # one pass per column through placeholders, so a replacement is never replaced again
        order = sorted(replacements, key=len, reverse=True)
        fix = []
        for c in KERNEL_COLUMNS:
            if c.endswith("_source"):
                e = pl.col(c)
                for i, canon in enumerate(order):
                    e = e.str.replace_all(canon, f"\x00{i}\x00", literal=True)
                for i, canon in enumerate(order):
                    e = e.str.replace_all(f"\x00{i}\x00", replacements[canon], literal=True)
                fix.append(e.alias(c))
        m = m.with_columns(fix)
    schema = polars_schema(KERNEL_COLUMNS)
    return m.select([pl.col(c).cast(t) for c, t in schema.items()])


# ======================================================================================
# entry point
# ======================================================================================
def _concat_longs(longs):
    import polars as pl

    return longs[0] if len(longs) == 1 else pl.concat(longs, how="diagonal_relaxed")


class MetricsTables(dict):
    """``NcuResult.metrics``: source -> DataFrame of every metric by its ncu name.

    A raw page read by the fast path keeps only the columns the recipes need in memory; its
    full table (every column, strings) is read from the file the first time it is looked up
    (``[]``, ``get``, ``values``, ``items``, iteration into another mapping), then kept.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._loaders: dict = {}

    def defer(self, key, loader) -> None:
        self._loaders[key] = loader
        super().__setitem__(key, None)

    def _load(self, key) -> None:
        loader = self._loaders.pop(key, None)
        if loader is not None:
            super().__setitem__(key, loader())

    def __getitem__(self, key):
        self._load(key)
        return super().__getitem__(key)

    def __setitem__(self, key, value) -> None:
        self._loaders.pop(key, None)
        super().__setitem__(key, value)

    def get(self, key, default=None):
        return self[key] if key in self else default

    def __iter__(self):  # not the C fast path: dict(m) and {**m} go through __getitem__
        return iter(list(super().keys()))

    def values(self):
        return [self[k] for k in self]

    def items(self):
        return [(k, self[k]) for k in self]

    def pop(self, key, *default):
        if key in self:
            self._load(key)
        return super().pop(key, *default)

    def copy(self):
        return dict(self.items())

    def __eq__(self, other):
        return dict(self.items()) == other

    __hash__ = None

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{k!r}: " + ("<read on first access>" if k in self._loaders else repr(v))
                               for k, v in super().items()) + "}"


def kernels_from_raw_frame(path, frame, *, strict: bool = True, skipped: list[Skipped] | None = None,
                           notes: list[str] | None = None, id_prefix: str = ""):
    """A raw-page-shaped frame -> (KERNEL table, units): the raw CSV path's own derivation.

    ``frame``: every cell a string, columns named as on ncu's raw page (identity columns such as
    ``ID``, ``Kernel Name``, ``Block Size``, then metric names), the first row the units row
    (``ID`` null) and one row per launch after it. Readers of other containers of the same
    metrics (``.ncu-rep`` via :mod:`ridgeline.parsers.ncu_rep`) call this, so the FLOP/byte
    recipes, peaks and notes exist once.
    """
    import polars as pl

    ctx = _Ctx(Path(path), strict, skipped if skipped is not None else [], notes if notes is not None else [])
    if "__row" not in frame.columns:
        frame = frame.with_row_index("__row").with_columns(pl.col("__row").cast(pl.Int64))
    blk = _Block(0, "raw", [c for c in frame.columns if c != "__row"], 1, None, 0, [], True)
    m, units, present = _raw_block(ctx, blk, frame)
    kernels = _derive(ctx, m, set(present), block=blk, id_prefix=id_prefix)
    if ctx.unknown_units:
        ctx.notes.append(f"{path}: unknown unit(s) {', '.join(sorted(ctx.unknown_units))}: values kept unscaled")
    return kernels, units


def read_ncu(paths, *, strict: bool = True) -> NcuResult:
    """Read one or several ncu CSV exports (details or raw page, detected per file).

    >>> res = read_ncu(["profile.csv"])          # doctest: +SKIP
    >>> res.kernels.select("short_name", "duration_s", "dram_bytes")  # doctest: +SKIP
    """
    import polars as pl

    from ridgeline.analyzer.schema import KERNEL_COLUMNS, polars_schema

    if isinstance(paths, (str, Path)):
        paths = [paths]
    paths = [Path(p) for p in paths]
    if not paths:
        raise InputError("<no input>", "expected at least one ncu CSV file")
    skipped: list[Skipped] = []
    notes: list[str] = []
    kernels, metrics, inputs, units_all = [], MetricsTables(), [], {}
    for fi, path in enumerate(paths):
        ctx = _Ctx(path, strict, skipped, notes)
        prefix = f"{fi}:" if len(paths) > 1 else ""
        frames, longs, unit_map, launches = [], [], {}, 0
        read = _read_fast(path, notes)
        if read is None:
            blocks = _plan(path, strict, skipped, notes)
            read = [(blk, _read_block(path, blk, strict, skipped)) for blk in blocks]
        blocks = [blk for blk, _df in read]
        for blk, df in read:
            if blk.layout == "raw":
                m, units, present = _raw_block(ctx, blk, df)
                labels = None
                unit_map.update(units)
                long = None if blk.full is not None else _launch_rows(df)
            else:
                m, present, labels = _details_block(ctx, blk, df)
                long = _launch_rows(df)
            k = _derive(ctx, m, set(present), block=blk, id_prefix=prefix, labels=labels if blk.layout == "details" else None)
            frames.append(k)
            launches += k.height
            id_col = pl.concat_str([pl.lit(prefix + (f"{blk.index}/" if blk.index else "")), pl.col("ID").str.replace_all(",", "", literal=True)])
            if blk.full is not None:  # read by columns: the whole table is read when first asked for
                longs.append(lambda load=blk.full, id_col=id_col: _launch_rows(load()).drop("__row").with_columns(
                    id_col.alias("id")).select("id", pl.exclude("id")))
            else:
                longs.append(long.drop("__row").with_columns(id_col.alias("id")).select("id", pl.exclude("id")))
        if launches == 0:
            raise InputError(path, "expected at least one profiled launch after the header, found none")
        kernels.extend(frames)
        if any(callable(x) for x in longs):
            metrics.defer(str(path), lambda longs=longs: _concat_longs([x() if callable(x) else x for x in longs]))
        else:
            metrics[str(path)] = _concat_longs(longs)
        if unit_map:
            units_all[str(path)] = unit_map
        kind = "ncu-" + blocks[0].layout
        inputs.append(InputInfo(str(path), kind, launches))
        if ctx.unknown_units:
            notes.append(f"{path}: unknown unit(s) {', '.join(sorted(ctx.unknown_units))}: values kept unscaled")
    table = pl.concat(kernels, how="vertical") if kernels else pl.DataFrame(schema=polars_schema(KERNEL_COLUMNS))
    return NcuResult(kernels=table, metrics=metrics, skipped=skipped, inputs=inputs, units=units_all, notes=notes)
