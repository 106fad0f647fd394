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
from ridgeline.parsers.dcgm_fields import scaled
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


def _header(line: str, lineno: int) -> _Block:
    toks = [(m.group(0), m.start(), m.end()) for m in re.finditer(r"\S+", line)]
    if toks[0][0] == "#":  # "# Entity" (<= 2.3)
        toks = toks[2:]
        right = True
    else:  # "#Entity"
        toks = toks[1:]
        right = False
    return _Block([t[0] for t in toks], [t[1] for t in toks], [t[2] for t in toks], right, lineno)


def _cells(block: _Block):
    """Cut the block's rows into an entity column and one string column per field (polars)."""
    import polars as pl

    nums = [n for n, _ in block.rows]
    lines = pl.Series("line", [t for _, t in block.rows], dtype=pl.String)
    df = pl.DataFrame({"lineno": nums, "line": lines})
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


def read_dmon(path, *, opts):
    """Parse a ``dcgmi dmon`` capture. Returns (DataFrame, InputInfo, skipped)."""
    import polars as pl

    from ridgeline.parsers.dcgm_fields import lookup_dmon

    path = Path(path)
    text = path.read_text(encoding="utf-8", errors="replace")
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

    host = opts.host or path.stem
    if opts.host is None:
        opts.note(f"{path}: dcgmi dmon names no host; using the file name {path.stem!r} (give --host)")
    interval = opts.interval_s or (delay_ms / 1000.0 if delay_ms else None) or DEFAULT_INTERVAL_S
    if opts.interval_s is None and delay_ms:
        opts.note(f"{path}: tick interval {delay_ms / 1000.0:g} s from the recorded 'dcgmi dmon -d {delay_ms:g}' command line")
    elif opts.interval_s is None:
        opts.note(f"{path}: dmon tick interval assumed {DEFAULT_INTERVAL_S:g} s (dcgmi dmon -d default; give --interval)")
    start = opts.start_time(str(path), "dcgmi dmon")

    parts = []
    for bi, block in enumerate(blocks):
        if not block.rows:
            continue
        cells = _cells(block)
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
    if bad.height:
        r = bad.row(0, named=True)
        raise InputError(path, "expected a number or N/A", line=r["lineno"], column=r["short"], actual=r["raw"])

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
