"""``dcgmi dmon`` text -> TELEMETRY rows.

Layout facts this reader relies on (DCGM 2.x-4.x):

* A header line ``#Entity  GRACT  SMACT ...`` (2.4+: left-aligned columns; <=2.3:
  ``# Entity`` with right-aligned columns) followed by a units line starting ``ID``/``Id``.
  The pair repeats every 14 ticks; a file may hold several captures with other fields.
* Rows are ``<entity> <values>``; entities contain spaces (``GPU 0``, ``GPU-I 21``,
  ``GPU 0 LINK 3``) so cells are cut at the header's column offsets (left-aligned dialects)
  or after an entity matched by its grammar (right-aligned dialect). A row may be shorter
  than the header (blank cells = no value).
* ``N/A`` = blank (warm-up ticks of profiling fields, unsupported fields) -> null.
* No timestamps: the k-th row of an entity belongs to tick k (entities are not printed in
  index order, so ticks are counted per entity, not by position); its time is
  ``start + k * interval`` (``-d``, default 1000 ms).
* A recorded command line before the header (``dcgmi dmon -e ... -d 500``) gives the
  interval when ``--interval`` is not set; ``#`` comment lines before it are ignored.
* Lines such as ``dmon was stopped due to receiving a signal`` or ``Error ...`` are
  listed in ``skipped`` with their line number.
"""

from __future__ import annotations

import re
from pathlib import Path

from ridgeline.errors import InputError
from ridgeline.parsers import guard
from ridgeline.parsers.telemetry.dcgm_fields import scaled
from ridgeline.parsers.text_chunks import odd_breaks as _odd_breaks
from ridgeline.result import InputInfo, Skipped

ENTITY_RE = re.compile(
    r"^(?P<kind>GPU-CI|GPU-I|GPU|vGPU|Switch|CPU Core|CPU|CX|SW)\s+(?P<id>\d+)(?:\s+LINK\s+(?P<link>\d+))?$"
)
ENTITY_PREFIX_RE = re.compile(
    r"^\s*((?:GPU-CI|GPU-I|GPU|vGPU|Switch|CPU Core|CPU|CX|SW)\s+\d+(?:\s+LINK\s+\d+)?)(?=\s|$)"
)
DEFAULT_INTERVAL_S = 1.0
# a recorded command line before the header: "dcgmi dmon -e 1001,1004 -d 500" (delay in ms)
CMDLINE_RE = re.compile(r"dcgmi\s+dmon\b.*?(?:-d|--delay)[\s=]+(\d+(?:\.\d+)?)")


class _Block:
    def __init__(self, fields: list[str], starts: list[int], ends: list[int], right: bool, line: int):
        self.fields = fields
        self.starts = starts
        self.ends = ends
        self.right = right  # right-aligned (<= 2.3) dialect
        self.line = line
        self.rows: list[tuple[int, str]] = []


def _host_interval_start(path, opts, delay_ms):
    """(host, tick interval in s, time of the first tick) of a dmon capture, with the notes that
    say where each came from (dmon records none of them)."""
    host = opts.host or path.stem
    if opts.host is None:
        opts.note(f"{path}: dcgmi dmon names no host; using the file name {path.stem!r} (give --host)")
    interval = opts.interval_s or (delay_ms / 1000.0 if delay_ms else None) or DEFAULT_INTERVAL_S
    if opts.interval_s is None and delay_ms:
        opts.note(f"{path}: tick interval {delay_ms / 1000.0:g} s from the recorded 'dcgmi dmon -d {delay_ms:g}' command line")
    elif opts.interval_s is None:
        opts.note(f"{path}: dmon tick interval assumed {DEFAULT_INTERVAL_S:g} s (dcgmi dmon -d default; give --interval)")
    return host, interval, opts.start_time(str(path), "dcgmi dmon")


def _known_fields(block, cells, path, skipped):
    """(cells with a column for every header field, [(column index, field)] ridgeline reads);
    fields it does not read are listed in ``skipped``."""
    import polars as pl

    from ridgeline.parsers.telemetry.dcgm_fields import lookup_dmon

    fields = []
    for i, short in enumerate(block.fields):
        fd = lookup_dmon(short)
        if fd is None:
            skipped.append(Skipped(str(path), f"field {short} (header line {block.line})",
                                   "dmon field ridgeline does not analyze"))
            continue
        if f"c{i}" not in cells.columns:
            cells = cells.with_columns(pl.lit(None, dtype=pl.String).alias(f"c{i}"))
        fields.append((i, fd))
    return cells, fields

def _header(line: str, lineno: int) -> _Block:
    toks = [(m.group(0), m.start(), m.end()) for m in re.finditer(r"\S+", line)]
    if toks[0][0] == "#":  # "# Entity" (<= 2.3)
        toks = toks[2:]
        right = True
    else:  # "#Entity"
        toks = toks[1:]
        right = False
    return _Block([t[0] for t in toks], [t[1] for t in toks], [t[2] for t in toks], right, lineno)


def _cells(block: _Block, rows=None):
    """Cut the block's rows (``rows``: a frame of lineno, line; default ``block.rows``) into an
    entity column and one string column per field (polars)."""
    import polars as pl

    if rows is None:
        nums = [n for n, _ in block.rows]
        lines = pl.Series("line", [t for _, t in block.rows], dtype=pl.String)
        df = pl.DataFrame({"lineno": nums, "line": lines})
    else:
        df = rows
    if not block.right:
        split = r"^\s*((?:GPU-CI|GPU-I|GPU|vGPU|Switch|CPU Core|CPU|CX|SW)\s+\d+(?:\s+LINK\s+\d+)?)"
        cols = [pl.col("line").str.extract(split, 1).alias("entity")]
        for i, name in enumerate(block.fields):
            start = block.starts[i]
            length = (block.starts[i + 1] - start) if i + 1 < len(block.fields) else None
            cols.append(pl.col("line").str.slice(start, length).str.strip_chars().alias(f"c{i}"))
        return df.with_columns(cols)
    # right-aligned: entity by grammar, then whitespace-separated values
    split = r"^\s*((?:GPU-CI|GPU-I|GPU|vGPU|Switch|CPU Core|CPU|CX|SW)\s+\d+(?:\s+LINK\s+\d+)?)(\s.*)?$"
    ent = pl.col("line").str.extract(split, 1)
    rest = pl.col("line").str.extract(split, 2).fill_null("").str.strip_chars()
    df = df.with_columns(ent.str.replace_all(r"\s+", " ").alias("entity"), rest.alias("_rest"))
    parts = pl.col("_rest").str.split_exact(" ", len(block.fields))  # values have no spaces here
    df = df.with_columns(pl.col("_rest").str.replace_all(r"\s+", " ").alias("_rest"))
    df = df.with_columns(parts.alias("_parts")).unnest("_parts")
    rename = {f"field_{i}": f"c{i}" for i in range(len(block.fields))}
    return df.rename({k: v for k, v in rename.items() if k in df.columns})


def _read_dmon_python(path, *, opts):
    """Line-by-line reader (the fallback of :func:`read_dmon_wide` for files with line breaks
    other than \\n and \\r\\n, or not UTF-8). Returns (long DataFrame, InputInfo, skipped)."""
    import polars as pl

    path = Path(path)
    text = path.read_text(encoding="utf-8-sig", errors="replace")  # -sig: a byte-order mark is no text
    lines = text.splitlines()
    skipped: list[Skipped] = []
    blocks: list[_Block] = []
    cur: _Block | None = None
    expect_units = False
    delay_ms: float | None = None
    for no, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r")
        if not line.strip():
            continue
        if line.startswith("#Entity") or line.startswith("# Entity"):
            hdr = _header(line, no)
            if cur is not None and cur.fields == hdr.fields and cur.starts == hdr.starts:
                pass  # repeated header of the same capture (every 14 ticks)
            else:
                cur = hdr
                blocks.append(cur)
            expect_units = True
            continue
        stripped = line.strip()
        if expect_units and (stripped.startswith("ID") or stripped.startswith("Id")) \
                and ENTITY_PREFIX_RE.match(line) is None:
            expect_units = False
            continue
        expect_units = False
        if cur is None:
            m = CMDLINE_RE.search(line)
            if m and delay_ms is None:
                delay_ms = float(m.group(1))
                continue
            if stripped.startswith("#"):
                continue  # a comment/banner line, not a sample
            skipped.append(Skipped(str(path), f"line {no}", f"text before the first #Entity header: {stripped[:60]!r}"))
            continue
        if ENTITY_PREFIX_RE.match(line) is None:
            skipped.append(Skipped(str(path), f"line {no}", f"not a dmon row: {stripped[:60]!r}"))
            continue
        cur.rows.append((no, line))

    if not blocks:
        raise InputError(path, "expected a dcgmi dmon '#Entity' header line")
    # dcgmi ends every row with a newline: a last row without one was cut off mid-row (a capture
    # killed or a file truncated), so its missing cells are not N/A; list it instead of reading it
    if text and not text.endswith("\n") and cur is not None and cur.rows and cur.rows[-1][0] == len(lines):
        no, _row = cur.rows.pop()
        skipped.append(Skipped(str(path), f"line {no}", "last line has no line end: the capture was cut off mid-row"))

    host, interval, start = _host_interval_start(path, opts, delay_ms)

    parts = []
    for bi, block in enumerate(blocks):
        if not block.rows:
            continue
        cells = _cells(block)
        cells, fields = _known_fields(block, cells, path, skipped)
        cells = cells.with_columns(pl.lit(bi).alias("block"))
        for i, fd in fields:
            c = pl.col(f"c{i}")
            parts.append(
                cells.select(
                    "lineno", "entity", "block",
                    pl.lit(fd.canonical).alias("field"),
                    pl.lit(fd.dmon).alias("short"),
                    c.alias("raw"),
                    pl.lit(fd.scale).alias("scale"),
                )
            )
    if not parts:
        raise InputError(path, "expected dmon rows with fields ridgeline analyzes (e.g. GRACT, TENSO, GPUTL)")
    allrows = pl.concat(parts)
    # entity grammar
    allrows = allrows.with_columns(
        pl.col("entity").str.replace_all(r"\s+", " ").alias("entity")
    ).with_columns(
        pl.col("entity").str.extract(ENTITY_RE.pattern, 1).alias("ekind"),
        pl.col("entity").str.extract(ENTITY_RE.pattern, 2).cast(pl.Int64).alias("eid"),
        pl.col("entity").str.extract(ENTITY_RE.pattern, 3).alias("elink"),
    )
    # keep GPUs and GPU instances; list other entities
    is_gpu = (pl.col("ekind").is_in(["GPU", "GPU-I"]) & pl.col("elink").is_null()).fill_null(False)
    other = allrows.filter(~is_gpu)
    if other.height:
        for ent, n in other.group_by("entity").agg(pl.col("lineno").n_unique()).sort("entity").iter_rows():
            skipped.append(Skipped(str(path), f"entity {ent} ({n} rows)", "entity kind ridgeline does not analyze"))
    keep = allrows.filter(is_gpu)
    # values: N/A or blank -> null, anything else must be a number
    raw = pl.col("raw").fill_null("")
    keep = keep.with_columns(
        pl.when(raw.is_in(["N/A", ""])).then(None).otherwise(raw.cast(pl.Float64, strict=False)).alias("num")
    )
    bad = keep.filter(pl.col("num").is_null() & ~raw.is_in(["N/A", ""]))
    for short in bad.get_column("short").unique(maintain_order=True):  # --lenient: listed, read as missing
        guard.bad_cells(opts, path, bad.filter(pl.col("short") == short), "expected a number or N/A", column=short, value="raw")

    # ticks: the k-th row of an entity (within a capture block) is tick k
    rows = keep.select("lineno", "entity", "block").unique().sort("lineno")
    rows = rows.with_columns(pl.int_range(pl.len()).over("block", "entity").alias("tick"))
    keep = keep.join(rows.select("lineno", "tick"), on="lineno", how="left")
    base_us = int(start.timestamp() * 1_000_000)
    out = keep.select(
        (pl.lit(base_us) + (pl.col("tick") * (interval * 1_000_000)).round(0).cast(pl.Int64))
        .cast(pl.Datetime("us", "UTC")).alias("timestamp"),
        pl.lit(host).alias("host"),
        pl.when(pl.col("ekind") == "GPU").then(pl.col("eid")).otherwise(None).alias("gpu"),
        pl.when(pl.col("ekind") == "GPU-I").then(pl.col("eid").cast(pl.String)).otherwise(None).alias("gpu_instance"),
        pl.col("field"),
        scaled(pl.col("num"), pl.col("scale")).alias("value"),
    )
    if keep.filter(pl.col("ekind") == "GPU-I").height:
        opts.note(f"{path}: GPU-I ids are DCGM entity ids, not NVML GPU-instance ids; parent GPU unknown")
    info = InputInfo(str(path), "dcgm-dmon", rows.height)
    return out, info, skipped


def read_dmon(path, *, opts):
    """Parse a ``dcgmi dmon`` capture into TELEMETRY long rows. Returns (DataFrame, InputInfo, skipped)."""
    from ridgeline.parsers.telemetry.common import wide_to_long_rows

    wide, long, info, skipped = read_dmon_wide(path, opts=opts)
    return (long if long is not None else wide_to_long_rows(wide)), info, skipped


class _OddText(Exception):
    """A piece polars does not split into lines as Python would: the line-by-line reader runs."""


#: bytes per piece of a dmon capture: half the other text readers' (text_chunks.CHUNK_BYTES). A dmon
#: line turns into ~2x less frame than an exporter line, so the pieces' temporaries decide more of
#: its peak: an 83 MB capture peaked at 240 MiB (3.02x the file) with 4 MiB pieces, 231 MiB with
#: 2 MiB, 229 MiB with 1 MiB; CPU +10% at 2 MiB, +30% at 1 MiB (benchmarks/README.md)
DMON_CHUNK_BYTES = 2 << 20


def read_dmon_wide(path, *, opts, chunk_bytes: int | None = None):
    """Parse a ``dcgmi dmon`` capture with polars, one row per GPU row of the file.

    Returns ``(wide, long, info, skipped)``: ``wide`` has ``timestamp, host, gpu, gpu_instance``
    and one Float64 column per canonical field (values scaled, blanks null), in header order;
    it is None (and ``long`` the long rows) when the file holds several captures with different
    fields, or names a field twice (their merge is the long table's). Lines are split and
    classified by polars expressions (no Python loop per line), one piece of the file at a time
    (:mod:`ridgeline.parsers.text_chunks`; ``chunk_bytes`` sets the piece size): each piece
    becomes numeric columns straight away, so the file's lines are never all held as strings.
    The rows come out per entity (GPUs by index, then GPU instances), each in tick order: the
    order the reduction reads, so it sorts no copy of the frame.
    A file whose line breaks polars does not split like Python (form feeds, lone carriage
    returns) or that is not UTF-8 goes through the line-by-line reader instead (``wide`` None).
    """
    from ridgeline.parsers.text_chunks import line_chunks

    path = Path(path)
    state = _DmonPieces(path, opts)
    try:
        for data, last in line_chunks(path, chunk_bytes or DMON_CHUNK_BYTES):
            state.feed(data, last)
    except _OddText:
        long, info, skipped = _read_dmon_python(path, opts=opts)
        return None, long, info, skipped
    return state.finish(opts)


class _DmonPieces:
    """The state :func:`read_dmon_wide` carries from one piece of the file to the next: line
    numbers, capture blocks (headers), whether the last line was a header (a units line
    follows), ticks counted per (block, entity), the first bad cell per (block, field)."""

    def __init__(self, path: Path, opts):
        self.path = path
        self.opts = opts
        self.time0: tuple = ()  # (host, tick interval s, first tick in us), from the first header on
        self.next_line = 1  # number of the piece's first line
        self.seen_header = False
        self.prev_hdr = False  # the last non-blank line (from the first header on) was a header
        self.delay_ms: float | None = None
        self.skipped: list[Skipped] = []
        self.keys: dict[str, tuple] = {}
        self.blocks: list[_Block] = []
        self.fields: dict[int, list] = {}  # block -> [(column index, field)]
        self.field_skips: dict[int, list[Skipped]] = {}
        self.has_rows: set[int] = set()
        self.others: dict[str, int] = {}  # non-GPU entity -> rows (blocks with fields)
        self.ticks: dict[int, dict[str, int]] = {}  # block -> entity -> rows so far
        # (block, field position) -> [frames of (lineno, value)] of cells that are not numbers: the
        # first piece's only when strict (the first is reported), every piece's when lenient (listed)
        self.bad: dict[tuple[int, int], list] = {}
        self.strict = guard.strict_of(opts)
        self.parts: dict[int, dict] = {}  # block -> (gpu, gpu_instance) -> numeric pieces
        self.n_rows = 0

    def feed(self, data: bytes, last: bool) -> None:
        import polars as pl

        if _odd_breaks(data):
            raise _OddText
        ends_nl = data.endswith(b"\n")
        has_cr = b"\r" in data
        try:
            df = pl.read_lines(data, name="line")
        except Exception as err:  # noqa: BLE001 - not UTF-8: the line-by-line reader
            raise _OddText from err
        del data
        first = self.next_line
        df = df.with_row_index("lineno", offset=first)
        self.next_line = first + df.height
        n_last = self.next_line - 1  # number of the piece's last line
        line = pl.col("line")
        if has_cr:
            df = df.with_columns(line.str.strip_chars_end("\r"))
        df = df.filter(line.str.contains(r"\S"))
        df = df.with_columns(
            (line.str.starts_with("#Entity") | line.str.starts_with("# Entity")).alias("hdr"),
            line.str.contains(ENTITY_PREFIX_RE.pattern.replace("(?=\\s|$)", "(?:\\s|$)")).alias("ent"),
        )
        hdr_rows = df.filter(pl.col("hdr"))
        if not self.seen_header:
            if not hdr_rows.height:
                self._before_header(df)
                return
            first_hdr = hdr_rows.get_column("lineno")[0]
            self._before_header(df.filter(pl.col("lineno") < first_hdr))
            df = df.filter(pl.col("lineno") >= first_hdr)
            self.seen_header = True
            # host, interval and start are known from here on (only lines before the first header
            # set them): each piece gets its final columns, with no copy of the whole frame at the
            # end; the notes that say where they came from are given in finish()
            import dataclasses

            host, interval, start = _host_interval_start(self.path, dataclasses.replace(self.opts, notes=[]),
                                                         self.delay_ms)
            self.time0 = (host, interval, int(start.timestamp() * 1_000_000))
        if not df.height:
            return
        # a units line ('ID ...') right after a header; every other non-entity line is listed
        stripped = line.str.strip_chars()
        units = (pl.col("hdr").shift(1).fill_null(self.prev_hdr)
                 & (stripped.str.starts_with("ID") | stripped.str.starts_with("Id")) & ~pl.col("ent"))
        df = df.with_columns(units.alias("units"))
        self.prev_hdr = bool(df.get_column("hdr")[-1])
        # capture blocks: a header differing from the current block's starts a new block
        block_of_header = [len(self.blocks) - 1]  # rows before the piece's first header
        for no, text in hdr_rows.select("lineno", "line").iter_rows():
            text = text.rstrip("\r")
            if text not in self.keys:
                h = _header(text, no)
                self.keys[text] = (tuple(h.fields), tuple(h.starts))
            if not self.blocks or (tuple(self.blocks[-1].fields), tuple(self.blocks[-1].starts)) != self.keys[text]:
                self.blocks.append(_header(text, no))
            block_of_header.append(len(self.blocks) - 1)
        df = df.with_columns(
            pl.when(pl.col("hdr")).then(pl.col("hdr").cum_sum()).otherwise(None).forward_fill().fill_null(0).alias("_h"))
        df = df.with_columns(pl.lit(pl.Series("_b", block_of_header, dtype=pl.Int64)).gather(pl.col("_h")).alias("block"))
        body = df.filter(~pl.col("hdr") & ~pl.col("units"))
        del df
        junk = body.filter(~pl.col("ent"))
        rows = body.filter(pl.col("ent")).select("lineno", "line", "block")
        del body
        for no, text in junk.select("lineno", "line").iter_rows():
            self.skipped.append(Skipped(str(self.path), f"line {no}", f"not a dmon row: {text.strip()[:60]!r}"))
        # a last row without a line end was cut off mid-row: listed, not read
        if last and not ends_nl and rows.height and rows.get_column("lineno")[-1] == n_last:
            self.skipped.append(Skipped(str(self.path), f"line {n_last}",
                                        "last line has no line end: the capture was cut off mid-row"))
            rows = rows.head(rows.height - 1)
        for bi in rows.get_column("block").unique(maintain_order=True).to_list():
            self._block_rows(bi, rows.filter(pl.col("block") == bi).select("lineno", "line"))

    def _before_header(self, df) -> None:
        """Lines before the first header: a recorded command line (the tick interval), comments, or junk."""
        for no, text in df.select("lineno", "line").iter_rows():
            m = CMDLINE_RE.search(text)
            if m and self.delay_ms is None:
                self.delay_ms = float(m.group(1))
                continue
            if text.strip().startswith("#"):
                continue
            self.skipped.append(Skipped(str(self.path), f"line {no}",
                                        f"text before the first #Entity header: {text.strip()[:60]!r}"))

    def _block_rows(self, bi: int, brows) -> None:
        """One block's entity rows of a piece -> its numeric piece (tick, gpu, gpu_instance, values)."""
        import polars as pl

        from ridgeline.parsers.telemetry.dcgm_fields import blank_to_null

        block = self.blocks[bi]
        self.has_rows.add(bi)
        cells = _cells(block, brows)
        skips: list[Skipped] = []
        cells, fields = _known_fields(block, cells, self.path, skips)
        if bi not in self.fields:
            self.fields[bi], self.field_skips[bi] = fields, skips
        ent = pl.col("entity").str.replace_all(r"\s+", " ")
        cells = cells.with_columns(ent.alias("entity")).with_columns(
            pl.col("entity").str.extract_groups(ENTITY_RE.pattern).alias("_e"))
        cells = cells.with_columns(
            pl.col("_e").struct.field("kind").alias("ekind"),
            pl.col("_e").struct.field("id").cast(pl.Int64, strict=False).alias("eid"),
            pl.col("_e").struct.field("link").alias("elink"),
        ).drop("_e")
        huge = cells.filter(pl.col("eid").is_null() & pl.col("ekind").is_not_null())
        if huge.height:  # an id past 2^63 (the same message whichever piece of the file holds it)
            from ridgeline.parsers.guard import MAX_GPU_INDEX

            r = huge.row(0, named=True)
            raise InputError(self.path, f"expected an entity id 0..{MAX_GPU_INDEX}", line=r["lineno"],
                             actual=r["entity"])
        is_gpu = (pl.col("ekind").is_in(["GPU", "GPU-I"]) & pl.col("elink").is_null()).fill_null(False)
        if not fields:
            return
        for ent_name, n in cells.filter(~is_gpu).group_by("entity").agg(pl.col("lineno").n_unique()).iter_rows():
            self.others[ent_name] = self.others.get(ent_name, 0) + n
        keep = cells.filter(is_gpu)
        del cells
        # values: N/A or blank -> null, anything else must be a number (first bad one by block, field, row)
        num = {}
        for i, _fd in fields:
            raw = pl.col(f"c{i}").fill_null("")
            num[i] = pl.when(raw.is_in(["N/A", ""])).then(None).otherwise(raw.cast(pl.Float64, strict=False))
        bad_cols = keep.select([(num[i].is_null() & ~pl.col(f"c{i}").fill_null("").is_in(["N/A", ""])).any().alias(str(i))
                                for i, _fd in fields]).row(0) if keep.height else ()
        for pos, ((i, fd), bad) in enumerate(zip(fields, bad_cols)):
            if bad and not (self.strict and (bi, pos) in self.bad):
                cells = keep.filter(num[i].is_null() & ~pl.col(f"c{i}").fill_null("").is_in(["N/A", ""]))
                self.bad.setdefault((bi, pos), []).append(cells.select("lineno", pl.col(f"c{i}").alias("v")))
        if self.bad and self.strict:  # the file is refused: no need to keep its values
            return
        # ticks: the k-th row of an entity (within a capture block) is tick k
        seen = self.ticks.setdefault(bi, {})
        tick = pl.int_range(pl.len()).over("entity")
        if seen:
            tick = tick + pl.col("entity").replace_strict(seen, default=0, return_dtype=pl.Int64)
        for ent_name, n in keep.group_by("entity").len().iter_rows():
            seen[ent_name] = seen.get(ent_name, 0) + n
        self.n_rows += keep.height
        host, interval, base_us = self.time0
        piece = keep.select(
            (pl.lit(base_us) + (tick.cast(pl.Int64) * (interval * 1_000_000)).round(0).cast(pl.Int64))
            .cast(pl.Datetime("us", "UTC")).alias("timestamp"),
            pl.lit(host).alias("host"),
            pl.when(pl.col("ekind") == "GPU").then(pl.col("eid")).otherwise(None).alias("gpu"),
            pl.when(pl.col("ekind") == "GPU-I").then(pl.col("eid").cast(pl.String)).otherwise(None).alias("gpu_instance"),
            *[blank_to_null(_scaled(num[i], fd.scale)).alias(f"_f{k}") for k, (i, fd) in enumerate(fields)],
        )
        # kept per entity (GPU or GPU instance), each part one chunk per column: finish() lays the
        # entities' rows end to end, so the frame comes out ordered by (GPU, time) as the reduction
        # reads it (dmon prints every GPU per tick; the reduction would otherwise sort a copy of
        # the whole frame, its largest allocation)
        mine = self.parts.setdefault(bi, {})
        for key, part in piece.partition_by("gpu", "gpu_instance", maintain_order=True, as_dict=True).items():
            mine.setdefault(key, []).append(part)

    def finish(self, opts):
        import polars as pl

        path = self.path
        if not self.seen_header:
            raise InputError(path, "expected a dcgmi dmon '#Entity' header line")
        host, interval, start = _host_interval_start(path, opts, self.delay_ms)
        skipped = self.skipped
        with_rows = sorted(self.has_rows)
        for bi in with_rows:
            skipped.extend(self.field_skips[bi])
        if not any(self.fields[bi] for bi in with_rows):
            raise InputError(path, "expected dmon rows with fields ridgeline analyzes (e.g. GRACT, TENSO, GPUTL)")
        for ent, n in sorted(self.others.items()):
            skipped.append(Skipped(str(path), f"entity {ent} ({n} rows)", "entity kind ridgeline does not analyze"))
        # cells that are not numbers, by block, field and row as a whole read gives them: strict,
        # the first is an InputError; --lenient, every one is listed and read as missing
        for bi, pos in sorted(self.bad):
            guard.bad_cells(opts, path, pl.concat(self.bad[(bi, pos)]), "expected a number or N/A",
                            column=self.fields[bi][pos][1].dmon, value="v")
        assert (host, interval, int(start.timestamp() * 1_000_000)) == self.time0
        frames = []
        for bi in with_rows:
            if self.fields[bi]:
                per_entity = self.parts.pop(bi)
                order = sorted(per_entity, key=_entity_order)
                frames.append((self.fields[bi], pl.concat([p for k in order for p in per_entity[k]], rechunk=False)))
        if any(f.get_column("gpu_instance").null_count() < f.height for _fields, f in frames):
            opts.note(f"{path}: GPU-I ids are DCGM entity ids, not NVML GPU-instance ids; parent GPU unknown")
        info = InputInfo(str(path), "dcgm-dmon", self.n_rows)
        ident = ["timestamp", "host", "gpu", "gpu_instance"]
        canon = [[fd.canonical for _i, fd in fields] for fields, _f in frames]
        if len(frames) == 1 and len(set(canon[0])) == len(canon[0]):
            fields, f = frames[0]
            wide = f.rename({f"_f{k}": name for k, name in enumerate(canon[0])})
            return wide, None, info, skipped
        long = [f.select(*ident, pl.lit(name).alias("field"), pl.col(f"_f{k}").alias("value"))
                for (fields, f), names in zip(frames, canon) for k, name in enumerate(names)]
        if not long:
            from ridgeline.parsers.telemetry.common import empty_frame

            return None, empty_frame().select(*ident, "field", "value"), info, skipped
        return None, pl.concat(long), info, skipped


def _entity_order(key) -> tuple:
    """Sort key of a (gpu, gpu_instance) entity: whole GPUs by index, then GPU instances by id."""
    gpu, gi = key
    return (gpu is None, gpu if gpu is not None else -1, gi is not None,
            (len(gi), gi) if gi is not None else (0, ""))


def _scaled(num, scale):
    from ridgeline.parsers.telemetry.dcgm_fields import scaled

    return scaled(num, scale)
