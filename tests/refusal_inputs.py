"""Damaged inputs for every reader, built on the fly from good ones (issue 21, "refused though legal"
and "a library's message").

Nothing here is a committed file: each case copies a seed (a project fixture, or a real file from
``../shared/samples`` when that folder is present) into a temporary folder and damages it there.
Used by ``tests/test_refusals.py``; run ``python tests/refusal_inputs.py OUTDIR`` to write every
case into OUTDIR and look at them by hand.

Readers and their seeds: ncu CSV (raw and details pages), ``.ncu-rep``, nsys sqlite, nsys stats
CSV, Kineto JSON (plain and ``.gz``), nvidia-smi ``--query-gpu`` CSV, ``dcgmi dmon`` text,
dcgm-exporter text, Prometheus API JSON, the Parquet telemetry store.

Damages (each applied to every seed it makes sense for; a damage returns None when the seed has
nothing it applies to):

* ``truncate``: the file cut in the middle of a line (at 45% of its bytes; for ``.gz`` the
  compressed stream is cut);
* ``wrong-type``: a number replaced by a word in a column that holds numbers;
* ``missing-column``: a column (field, key, label) the reader needs removed;
* ``text-id``: a launch ID, GPU index or device id written as text (``x7``, ``gpu0``);
* ``sqlite-page``: bytes of a page in the middle of an SQLite file overwritten (a damaged
  database, still with the SQLite magic);
* ``sqlite-header``: the database header page damaged;
* ``json-list`` / ``json-scalar``: a JSON list of numbers / a bare number where the document
  should be (with the seed's extension);
* ``garbage``: seeded random binary bytes with the seed's extension;
* ``empty``: zero bytes with the seed's extension.

``KIND_WORDS[reader]`` are the words one of which a refusal must carry to say what ridgeline took
the file for.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import random
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT.parent / "shared" / "samples"
FIX = ROOT / "fixtures"
DEMO = ROOT / "ridgeline" / "data" / "demo"

# a refusal must say what ridgeline took the file for: one of these (case-insensitive)
KIND_WORDS = {
    "ncu-csv": ("nsight compute", "ncu"),
    "ncu-rep": ("nsight compute", ".ncu-rep", "ncu"),
    "nsys-sqlite": ("nsight systems", "nsys", "sqlite"),
    "nsys-csv": ("nsight systems", "nsys", "cuda_gpu"),
    "kineto": ("pytorch", "kineto", "chrome trace", "trace"),
    "nvidia-smi": ("nvidia-smi",),
    "dmon": ("dcgmi dmon", "dmon"),
    "exporter": ("dcgm-exporter", "prometheus text"),
    "prometheus-json": ("prometheus",),
    "parquet": ("parquet",),
}

# library phrasing that must never reach the user
LIBRARY_PHRASES = (
    "conversion from", "unable to find column", "ComputeError", "SchemaError", "ColumnNotFoundError",
    "InvalidOperationError", "file is not a database", "database disk image is malformed",
    "Expecting value", "Expecting property name", "Extra data", "got binary data", "Traceback",
    "RecursionError", "ArrowInvalid", "ArrowException", "pyarrow", "polars", "codec can't decode",
    "invalid start byte", "Unterminated string", "'NoneType'", "KeyError", "not subscriptable",
    "object has no attribute", "no such column", "no such table", "unable to open database",
    "strict conversion", "casting from", "Parquet magic bytes",
    "OSError", "ValueError", "TypeError", "Compressed file ended", "Error -3 while",
)


@dataclass(frozen=True)
class Case:
    reader: str
    damage: str
    seed: Path
    make: Callable[[Path, Path], Path | None]

    @property
    def id(self) -> str:
        return f"{self.reader}-{self.damage}-{self.seed.name[:40]}"

    def build(self, folder: Path) -> Path | None:
        folder.mkdir(parents=True, exist_ok=True)
        return self.make(self.seed, folder)


# --------------------------------------------------------------------------------------------
# seeds
# --------------------------------------------------------------------------------------------
def _existing(paths) -> list[Path]:
    return [p for p in paths if p.exists()]


def _samples(sub: str, pattern: str, max_bytes: int = 3_000_000) -> list[Path]:
    return sorted(p for p in (SAMPLES / sub).glob(pattern) if p.is_file() and p.stat().st_size <= max_bytes)


def seeds(reader: str) -> list[Path]:
    if reader == "ncu-csv":
        out = _existing([DEMO / "decode-b8-h100.ncu-raw.csv", FIX / "ncu" / "details-2023-15col-multiprocess.csv",
                         FIX / "ncu" / "raw-units-row.csv"])
        return out + [p for p in _samples("ncu", "*.csv") if "EMPTY" not in p.name]
    if reader == "ncu-rep":
        return _samples("ncu-rep", "*.ncu-rep")
    if reader == "nsys-sqlite":
        return sorted(FIX.glob("timeline/*.sqlite")) + _samples("nsys", "*.sqlite")
    if reader == "nsys-csv":
        return _existing([FIX / "timeline" / "capture_cuda_gpu_trace.csv"]) + _samples("nsys", "*_cuda_gpu_*.csv")
    if reader == "kineto":
        return sorted(FIX.glob("timeline/*.json")) + _samples("kineto", "*.json*")
    if reader == "nvidia-smi":
        return _existing([FIX / "telemetry" / "nvidia-smi-query.csv"]) + _samples("dcgm", "*nvidia-smi*.csv")
    if reader == "dmon":
        return _existing([FIX / "telemetry" / "dmon-v24-mig.txt"]) + _samples("dcgm", "*dmon*.txt")
    if reader == "exporter":
        return _existing([FIX / "telemetry" / "exporter-3-scrapes.prom"]) + _samples("dcgm", "*.prom")
    if reader == "prometheus-json":
        return _existing([FIX / "telemetry" / "prometheus-range.json"]) + _samples("dcgm", "*prometheus*.json")
    if reader == "parquet":
        return sorted(FIX.glob("telemetry/hive/**/*.parquet"))[:1]
    raise KeyError(reader)


# --------------------------------------------------------------------------------------------
# generic byte damages
# --------------------------------------------------------------------------------------------
def _out(seed: Path, folder: Path, tag: str) -> Path:
    name = seed.name
    for ext in (".json.gz", ".ncu-rep", ".sqlite", ".parquet", ".json", ".csv", ".prom", ".txt"):
        if name.endswith(ext):
            return folder / f"{name[: -len(ext)][:40]}-{tag}{ext}"
    return folder / f"{name[:40]}-{tag}"


def truncate(seed: Path, folder: Path) -> Path:
    data = seed.read_bytes()
    cut = int(len(data) * 0.45)
    if not seed.name.endswith((".gz", ".ncu-rep", ".sqlite", ".parquet")):
        # inside a line: step past the next newline and back to its middle
        nl = data.find(b"\n", cut)
        prev = data.rfind(b"\n", 0, cut)
        if nl > prev + 2:
            cut = (prev + nl) // 2
    out = _out(seed, folder, "cut")
    out.write_bytes(data[:cut])
    return out


def garbage(seed: Path, folder: Path) -> Path:
    rng = random.Random(seed.name)
    out = _out(seed, folder, "garbage")
    out.write_bytes(bytes(rng.randrange(256) for _ in range(4096)))
    return out


def empty(seed: Path, folder: Path) -> Path:
    out = _out(seed, folder, "empty")
    out.write_bytes(b"")
    return out


def json_list(seed: Path, folder: Path) -> Path:
    return _write_text(seed, folder, "list", "[1, 2, 3]\n")


def json_scalar(seed: Path, folder: Path) -> Path:
    return _write_text(seed, folder, "scalar", "42\n")


def _write_text(seed: Path, folder: Path, tag: str, text: str) -> Path:
    out = _out(seed, folder, tag)
    if out.name.endswith(".gz"):
        out.write_bytes(gzip.compress(text.encode()))
    else:
        out.write_text(text)
    return out


# --------------------------------------------------------------------------------------------
# CSV (ncu, nsys stats, nvidia-smi)
# --------------------------------------------------------------------------------------------
def _csv_split(data: bytes, is_header: Callable[[list[str]], bool]):
    text = data.decode("utf-8-sig", errors="replace")
    lines = text.splitlines(keepends=True)
    # the header is the first line that parses to a row the predicate accepts
    for i, ln in enumerate(lines[:200]):
        row = next(csv.reader([ln]), [])
        if is_header([c.strip() for c in row]):
            rows = list(csv.reader(io.StringIO("".join(lines[i:])), skipinitialspace=True))
            return lines[:i], rows
    return None


def _csv_join(pre, rows) -> bytes:
    out = io.StringIO()
    w = csv.writer(out, quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
    for r in rows:
        w.writerow(r)
    return ("".join(pre) + out.getvalue()).encode()


def _is_float(text: str) -> bool:
    try:
        float(text.replace(",", ""))
        return True
    except ValueError:
        return False


CSV_HEADER = {
    "ncu-csv": lambda r: bool(r) and r[0] == "ID",
    "nsys-csv": lambda r: any(c in ("Name", "Start (ns)", "Start") for c in r) and len(r) > 2,
    "nvidia-smi": lambda r: "timestamp" in r,
}
# the column each reader needs most
CSV_NEEDED = {
    "ncu-csv": ("Kernel Name",),
    "nsys-csv": ("Name",),
    "nvidia-smi": ("timestamp",),
}
# numbers the reader uses, preferred over any other numeric column
CSV_NUMBER = {
    "ncu-csv": ("gpu__time_duration.sum", "Metric Value", "dram__bytes.sum", "dram__bytes_read.sum"),
    "nsys-csv": ("Duration (ns)", "Total Time (ns)", "Duration", "Total Time", "Time (%)"),
    "nvidia-smi": ("utilization.gpu [%]", "utilization.gpu"),
}
DETAILS_USED = ("gpu__time_duration.sum", "Duration", "dram__bytes.sum", "dram__bytes_read.sum")
CSV_ID = {
    "ncu-csv": ("ID",),
    "nsys-csv": ("Device", "GPU", "Strm", "Start (ns)"),
    "nvidia-smi": ("index",),
}


def _data_rows(rows) -> list[int]:
    # ncu details pages with rules write rows without the rule columns: as long as the metric ones
    n = min(len(rows[0]), 16)
    return [i for i, r in enumerate(rows[1:], 1) if len(r) >= n and r[0].strip() != ""]


def _cell(rows, i: int, j: int) -> str:
    return rows[i][j] if j < len(rows[i]) else ""


def csv_damage(reader: str, how: str):
    def make(seed: Path, folder: Path) -> Path | None:
        split = _csv_split(seed.read_bytes(), CSV_HEADER[reader])
        if split is None:
            return None
        pre, rows = split
        data = _data_rows(rows)
        if not data:
            return None
        hdr = [c.strip() for c in rows[0]]
        if how == "missing-column":
            j = next((hdr.index(c) for c in CSV_NEEDED[reader] if c in hdr), None)
            if j is None:
                return None
            rows = [r[:j] + r[j + 1:] for r in rows]
        elif how == "wrong-type":
            # a number the reader uses (CSV_NUMBER; on an ncu details page, a Metric Value that is
            # a number), else a column whose cells are numbers in every data row (not an id)
            used = data
            if "Metric Name" in hdr:  # details page: a metric every roofline reads
                m = hdr.index("Metric Name")
                used = [i for i in data if _cell(rows, i, m).strip() in DETAILS_USED]
            cells = [(i, hdr.index(c)) for c in CSV_NUMBER[reader] if c in hdr for i in used
                     if _is_float(_cell(rows, i, hdr.index(c)).strip().split(" ")[0])]
            if not cells and "Metric Name" in hdr:
                return None  # a details page without a metric every roofline reads (launch stats only)
            if not cells:
                cols = [j for j in range(len(hdr)) if hdr[j] not in CSV_ID[reader]
                        and all(_is_float(_cell(rows, i, j).strip().split(" ")[0]) for i in data)]
                if not cols:
                    return None
                cells = [(data[len(data) // 2], cols[-1])]
            mid, j = cells[len(cells) // 2]
            rows[mid] = list(rows[mid])
            rows[mid][j] = "abc"
        elif how == "text-id":
            j = next((hdr.index(c) for c in CSV_ID[reader] if c in hdr), None)
            if j is None:
                return None
            mid = data[len(data) // 2]
            rows[mid] = list(rows[mid])
            rows[mid][j] = "x7"
        out = _out(seed, folder, how)
        out.write_bytes(_csv_join(pre, rows))
        return out

    return make


# --------------------------------------------------------------------------------------------
# dcgmi dmon and dcgm-exporter text
# --------------------------------------------------------------------------------------------
def _dmon_rows(lines) -> list[int]:
    return [i for i, ln in enumerate(lines) if ln.split()[:1] in (["GPU"],) and len(ln.split()) > 2]


def dmon_damage(how: str):
    def make(seed: Path, folder: Path) -> Path | None:
        lines = seed.read_text(errors="replace").splitlines()
        rows = [i for i in _dmon_rows(lines) if "N/A" not in lines[i]]
        if not rows:
            return None
        mid = rows[len(rows) // 2]
        toks = lines[mid].split()
        if how == "wrong-type":
            lines[mid] = "  ".join(toks[:-1] + ["abc"])
        elif how == "text-id":
            lines[mid] = "  ".join(["GPU", "x7"] + toks[2:])
        elif how == "missing-column":
            hdr = next((i for i, ln in enumerate(lines) if ln.lstrip().startswith(("#Entity", "# Entity"))), None)
            if hdr is None:
                return None
            lines[hdr] = lines[hdr].rstrip().rsplit(None, 1)[0]
        out = _out(seed, folder, how)
        out.write_text("\n".join(lines) + "\n")
        return out

    return make


def exporter_damage(how: str):
    import re

    def make(seed: Path, folder: Path) -> Path | None:
        lines = seed.read_text(errors="replace").splitlines()
        rows = [i for i, ln in enumerate(lines) if ln.startswith("DCGM_FI_") and 'gpu="' in ln]
        if not rows:
            return None
        mid = rows[len(rows) // 2]
        if how == "wrong-type":
            head, _sep, _value = lines[mid].rpartition("} ")
            lines[mid] = head + "} abc"
        elif how == "text-id":
            lines[mid] = re.sub(r'gpu="[^"]*"', 'gpu="x7"', lines[mid])
        elif how == "missing-column":
            for i in rows:
                lines[i] = re.sub(r'gpu="[^"]*",?', "", lines[i])
        out = _out(seed, folder, how)
        out.write_text("\n".join(lines) + "\n")
        return out

    return make


# --------------------------------------------------------------------------------------------
# JSON (Kineto, Prometheus)
# --------------------------------------------------------------------------------------------
def _load_json(seed: Path):
    data = seed.read_bytes()
    if seed.name.endswith(".gz"):
        data = gzip.decompress(data)
    return json.loads(data)


def _dump_json(seed: Path, folder: Path, tag: str, doc) -> Path:
    return _write_text(seed, folder, tag, json.dumps(doc))


def kineto_damage(how: str):
    def make(seed: Path, folder: Path) -> Path | None:
        doc = _load_json(seed)
        events = doc.get("traceEvents") if isinstance(doc, dict) else None
        if not isinstance(events, list):
            return None
        kern = [e for e in events if isinstance(e, dict) and e.get("ph") == "X" and "kernel" in str(e.get("cat", "")).lower()]
        if not kern:
            return None
        e = kern[len(kern) // 2]
        if how == "wrong-type":
            e["dur"] = "abc"
        elif how == "text-id":
            args = e.get("args") or {}
            if "device" in args:
                args["device"] = "gpu0"
            else:
                e["pid"] = "gpu0"
        elif how == "missing-column":
            e.pop("ts", None)
        return _dump_json(seed, folder, how, doc)

    return make


def prometheus_damage(how: str):
    def make(seed: Path, folder: Path) -> Path | None:
        doc = _load_json(seed)
        answers = doc if isinstance(doc, list) else [doc]
        series = [s for a in answers if isinstance(a, dict) for s in ((a.get("data") or {}).get("result") or [])]
        if not series:
            return None
        s = series[len(series) // 2]
        if how == "wrong-type":
            if "values" in s and s["values"]:
                s["values"][0][0] = "abc"
            elif "value" in s:
                s["value"][0] = "abc"
        elif how == "text-id":
            s.setdefault("metric", {})["gpu"] = "x7"
        elif how == "missing-column":
            for a in answers:
                if isinstance(a, dict) and isinstance(a.get("data"), dict):
                    a["data"].pop("result", None)
        return _dump_json(seed, folder, how, doc)

    return make


# --------------------------------------------------------------------------------------------
# nsys sqlite
# --------------------------------------------------------------------------------------------
KERNEL_TABLE = "CUPTI_ACTIVITY_KIND_KERNEL"


def sqlite_damage(how: str):
    def make(seed: Path, folder: Path) -> Path | None:
        out = _out(seed, folder, how)
        shutil.copyfile(seed, out)
        if how in ("sqlite-page", "sqlite-header"):
            data = bytearray(out.read_bytes())
            page = int.from_bytes(data[16:18], "big") or 65536
            npages = len(data) // page
            rng = random.Random(seed.name)
            if how == "sqlite-header":
                start = 20  # keep the 16-byte magic, damage the rest of the header and page 1
                end = min(len(data), page)
            else:
                start = page * max(1, npages // 2)
                end = min(len(data), start + page)
            for i in range(start, end):
                data[i] = rng.randrange(256)
            out.write_bytes(bytes(data))
            return out
        con = sqlite3.connect(out)
        try:
            tables = {r[0] for r in con.execute("select name from sqlite_master where type='table'")}
            if KERNEL_TABLE not in tables or not con.execute(f"select count(*) from {KERNEL_TABLE}").fetchone()[0]:
                return None
            cols = [r[1] for r in con.execute(f"pragma table_info({KERNEL_TABLE})")]
            row = f"rowid = (select rowid from {KERNEL_TABLE} limit 1 offset (select count(*)/2 from {KERNEL_TABLE}))"
            if how == "wrong-type":
                con.execute(f"update {KERNEL_TABLE} set start = 'abc' where {row}")
            elif how == "text-id":
                con.execute(f"update {KERNEL_TABLE} set deviceId = 'gpu0' where {row}")
            elif how == "missing-column":
                col = next((c for c in ("end", "shortName", "demangledName") if c in cols), None)
                if col is None:
                    return None
                con.execute(f'alter table {KERNEL_TABLE} drop column "{col}"')
            con.commit()
        finally:
            con.close()
        return out

    return make


# --------------------------------------------------------------------------------------------
# Parquet store
# --------------------------------------------------------------------------------------------
def parquet_damage(how: str):
    def make(seed: Path, folder: Path) -> Path | None:
        import polars as pl

        df = pl.read_parquet(seed)
        if how == "wrong-type":
            num = [c for c, t in df.schema.items() if t.is_numeric() and c not in ("gpu",)]
            if not num:
                return None
            df = df.with_columns(pl.lit("abc").alias(num[-1]))
        elif how == "text-id":
            if "gpu" not in df.columns:
                return None
            df = df.with_columns(pl.lit("x7").alias("gpu"))
        elif how == "missing-column":
            col = next((c for c in ("time", "timestamp", "field", "value") if c in df.columns), None)
            if col is None:
                return None
            df = df.drop(col)
        out = _out(seed, folder, how)
        df.write_parquet(out)
        return out

    return make


# --------------------------------------------------------------------------------------------
# the table of cases
# --------------------------------------------------------------------------------------------
BYTES = {"truncate": truncate, "garbage": garbage, "empty": empty}
JSONS = {"json-list": json_list, "json-scalar": json_scalar}
STRUCT = ("wrong-type", "missing-column", "text-id")

DAMAGES: dict[str, dict[str, Callable]] = {
    "ncu-csv": {**BYTES, **JSONS, **{h: csv_damage("ncu-csv", h) for h in STRUCT}},
    "ncu-rep": {**BYTES, **JSONS},
    "nsys-sqlite": {**BYTES, **JSONS, "sqlite-page": sqlite_damage("sqlite-page"),
                    "sqlite-header": sqlite_damage("sqlite-header"), **{h: sqlite_damage(h) for h in STRUCT}},
    "nsys-csv": {**BYTES, **JSONS, **{h: csv_damage("nsys-csv", h) for h in STRUCT}},
    "kineto": {**BYTES, **JSONS, **{h: kineto_damage(h) for h in STRUCT}},
    "nvidia-smi": {**BYTES, **JSONS, **{h: csv_damage("nvidia-smi", h) for h in STRUCT}},
    "dmon": {**BYTES, **JSONS, **{h: dmon_damage(h) for h in STRUCT}},
    "exporter": {**BYTES, **JSONS, **{h: exporter_damage(h) for h in STRUCT}},
    "prometheus-json": {**BYTES, **JSONS, **{h: prometheus_damage(h) for h in STRUCT}},
    "parquet": {**BYTES, **JSONS, **{h: parquet_damage(h) for h in STRUCT}},
}


def cases() -> list[Case]:
    out = []
    for reader, damages in DAMAGES.items():
        for seed in seeds(reader):
            for damage, make in damages.items():
                out.append(Case(reader, damage, seed, make))
    return out


if __name__ == "__main__":  # pragma: no cover - a look by hand
    import sys

    dest = Path(sys.argv[1])
    for c in cases():
        p = c.build(dest / c.reader)
        print(c.id, "->", p)
