"""Damaged timeline inputs, built in a temporary folder from the project's timeline fixtures and the
shared real samples (``../shared/samples/nsys``, ``../shared/samples/kineto``; skipped when absent).

Nothing here is committed as a file: every damaged input is made on the fly from a seed by one
of the damages below, so ``tests/parsers/timeline/test_timeline_damage.py`` regenerates them on every run.
Classes of damage (issue 21), each applied to every seed of its format:

* nsys sqlite: an end before its start, a start near 2^63 (with its end, and alone), NULL and
  text times, a text or huge GPU id, negative and absurd copy sizes, the kernel table empty or
  dropped (a legal copies-only export), ``StringIds`` dropped, the file cut short (at several
  points), bytes flipped (seeded);
* Kineto: a negative duration, a timestamp near 2^63 ns, a null timestamp, a device id of 2^64,
  ``"cuda:0"``, -1, true or a list as the device, negative copy sizes, JSON nested 100,000 deep,
  the file cut short, bytes flipped, swapped timestamp and duration, a JSON list of numbers;
* nsys stats ``cuda_gpu_trace`` CSV: a negative duration, a start near 2^63, a text start, a
  kernel name with a quoted newline, a negative copy size, a row cut short, bytes flipped.

Each damage returns the path it wrote, or None when the seed has nothing it applies to.
"""

from __future__ import annotations

import gzip
import json
import random
import shutil
import sqlite3
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT.parent / "shared" / "samples"
FIX = ROOT / "fixtures" / "timeline"

NEAR_2_63 = 2**63 - 1000


def sqlite_seeds() -> list[Path]:
    out = sorted(FIX.glob("*.sqlite"))
    out += sorted(p for p in (SAMPLES / "nsys").glob("*.sqlite") if p.stat().st_size < 4_000_000)
    return out


def kineto_seeds() -> list[Path]:
    out = [FIX / "capture.kineto.json", FIX / "capture.rocm.kineto.json", FIX / "capture.legacy-autograd.json"]
    out += sorted((SAMPLES / "kineto").glob("*.json*"))
    return [p for p in out if p.is_file()]


def csv_seeds() -> list[Path]:
    out = [FIX / "capture_cuda_gpu_trace.csv", FIX / "capture_cuda_gpu_trace_gui.csv"]
    out += sorted((SAMPLES / "nsys").glob("*_cuda_gpu_trace.csv"))
    return [p for p in out if p.is_file()]


# --------------------------------------------------------------------------------------------
# nsys sqlite
# --------------------------------------------------------------------------------------------
def _sql(seed: Path, out: Path, *statements: str) -> Path | None:
    shutil.copyfile(seed, out)
    con = sqlite3.connect(out)
    try:
        for s in statements:
            con.execute(s)
        con.commit()
    except sqlite3.Error:
        return None
    finally:
        con.close()
    return out


def _first_row(table: str) -> str:
    return f"rowid = (SELECT MIN(rowid) FROM {table})"


K = "CUPTI_ACTIVITY_KIND_KERNEL"
M = "CUPTI_ACTIVITY_KIND_MEMCPY"

SQLITE_DAMAGES = {
    "end-before-start": lambda s, o: _sql(s, o, f"UPDATE {K} SET end = start - 5000 WHERE {_first_row(K)}"),
    "start-near-2^63": lambda s, o: _sql(s, o, f"UPDATE {K} SET start = {NEAR_2_63}, end = {NEAR_2_63 + 500} "
                                               f"WHERE {_first_row(K)}"),
    "start-near-2^63-alone": lambda s, o: _sql(s, o, f"UPDATE {K} SET start = {NEAR_2_63} WHERE {_first_row(K)}"),
    "null-start": lambda s, o: _sql(s, o, f"UPDATE {K} SET start = NULL WHERE {_first_row(K)}"),
    "null-end-all": lambda s, o: _sql(s, o, f"UPDATE {K} SET end = NULL"),
    "text-start": lambda s, o: _sql(s, o, f"UPDATE {K} SET start = 'soon' WHERE {_first_row(K)}"),
    "text-device": lambda s, o: _sql(s, o, f"UPDATE {K} SET deviceId = 'GPU-0' WHERE {_first_row(K)}"),
    "huge-device": lambda s, o: _sql(s, o, f"UPDATE {K} SET deviceId = {2**62} WHERE {_first_row(K)}"),
    "negative-copy-bytes": lambda s, o: _sql(s, o, f"UPDATE {M} SET bytes = -4096 WHERE {_first_row(M)}"),
    "absurd-copy-bytes": lambda s, o: _sql(s, o, f"UPDATE {M} SET bytes = {2**62} WHERE {_first_row(M)}"),
    "copy-end-before-start": lambda s, o: _sql(s, o, f"UPDATE {M} SET end = start - 1 WHERE {_first_row(M)}"),
    "kernel-table-empty": lambda s, o: _sql(s, o, f"DELETE FROM {K}"),
    "kernel-table-dropped": lambda s, o: _sql(s, o, f"DROP TABLE {K}"),
    "stringids-dropped": lambda s, o: _sql(s, o, "DROP TABLE StringIds"),
    "cut-half": lambda s, o: _cut(s, o, 0.5),
    "cut-4k": lambda s, o: _cut(s, o, 4096),
    "cut-100": lambda s, o: _cut(s, o, 100),
    "flip-header": lambda s, o: _flip(s, o, 1, lo=16, hi=100),
    "flip-pages": lambda s, o: _flip(s, o, 40, lo=100),
}


def _cut(seed: Path, out: Path, at: float) -> Path:
    data = _raw(seed)
    n = int(len(data) * at) if at < 1 else int(at)
    out.write_bytes(data[:n])
    return out


def _flip(seed: Path, out: Path, count: int, lo: int = 0, hi: int | None = None, rng_seed: int = 21) -> Path:
    data = bytearray(_raw(seed))
    rng = random.Random(rng_seed)
    hi = min(hi or len(data), len(data))
    for _ in range(count):
        if hi > lo:
            data[rng.randrange(lo, hi)] ^= 1 << rng.randrange(8)
    out.write_bytes(bytes(data))
    return out


def _raw(seed: Path) -> bytes:
    data = seed.read_bytes()
    return gzip.decompress(data) if data.startswith(b"\x1f\x8b") else data


# --------------------------------------------------------------------------------------------
# Kineto
# --------------------------------------------------------------------------------------------
_GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset")


def _trace(seed: Path):
    return json.loads(_raw(seed))


def _events(doc):
    return doc if isinstance(doc, list) else doc.get("traceEvents", [])


def _first_gpu(doc, cats=_GPU_CATS):
    for e in _events(doc):
        if isinstance(e, dict) and e.get("ph") == "X" and (e.get("cat") in cats or
                                                            str(e.get("pid", "")).lower() == "cuda functions"):
            return e
    return None


_KEEP = _GPU_CATS
_TRIMMED: dict = {}


def _trimmed(doc, keep_other: int = 2000):
    """A large trace without most of its host-side events (cuda_runtime, cpu_op...): every GPU
    event is kept, so the devices and the capture are those of the seed; the first
    ``keep_other`` other events stay (the checks stay quick on a 25 MB real trace)."""
    events = _events(doc)
    if len(events) <= 3 * keep_other:
        return doc
    kept, other = [], 0
    for e in events:
        if isinstance(e, dict) and (e.get("cat") in _KEEP or str(e.get("pid", "")).lower() == "cuda functions"):
            kept.append(e)
        elif other < keep_other:
            kept.append(e)
            other += 1
    if isinstance(doc, list):
        return kept
    doc["traceEvents"] = kept
    return doc


def _edit(seed: Path, out: Path, fn, cats=_GPU_CATS) -> Path | None:
    if seed not in _TRIMMED:  # the seed parsed and trimmed once per session, kept as JSON text
        _TRIMMED[seed] = json.dumps(_trimmed(_trace(seed)))
    doc = json.loads(_TRIMMED[seed])
    e = _first_gpu(doc, cats)
    if e is None:
        return None
    fn(e)
    out.write_text(json.dumps(doc))
    return out


def set_field(e: dict, key: str, value) -> None:
    """Set ``key`` of one trace event to ``value``; ``args.NAME`` sets NAME in its args (made an
    object first if it is not one)."""
    if key.startswith("args."):
        if not isinstance(e.get("args"), dict):
            e["args"] = {}
        e["args"][key[5:]] = value
    else:
        e[key] = value


def _set_arg(key, value):
    def fn(e):
        e.setdefault("args", {})[key] = value
    return fn


def _set(key, value):
    def fn(e):
        e[key] = value
    return fn


def _swap(e):
    e["ts"], e["dur"] = e.get("dur"), e.get("ts")


KINETO_DAMAGES = {
    "negative-dur": lambda s, o: _edit(s, o, _set("dur", -7.5)),
    "ts-near-2^63ns": lambda s, o: _edit(s, o, _set("ts", NEAR_2_63 / 1000)),
    "ts-null": lambda s, o: _edit(s, o, _set("ts", None)),
    "ts-text": lambda s, o: _edit(s, o, _set("ts", "later")),
    "ts-dur-swapped": lambda s, o: _edit(s, o, _swap),
    "device-2^64": lambda s, o: _edit(s, o, _set_arg("device", 2**64)),
    "device-cuda:0": lambda s, o: _edit(s, o, _set_arg("device", "cuda:0")),
    "device-minus-1": lambda s, o: _edit(s, o, _set_arg("device", -1)),
    "device-true": lambda s, o: _edit(s, o, _set_arg("device", True)),
    "device-list": lambda s, o: _edit(s, o, _set_arg("device", [0])),
    "negative-bytes": lambda s, o: _edit(s, o, _set_arg("bytes", -4096), cats=("gpu_memcpy", "Memcpy")),
    "grid-huge": lambda s, o: _edit(s, o, _set_arg("grid", [2**70, 1, 1])),
    "deep-nesting": lambda s, o: _deep(o),
    "deep-nesting-in-args": lambda s, o: _deep_args(s, o),
    "list-of-numbers": lambda s, o: _write(o, b"[1, 2, 3]"),
    "events-not-a-list": lambda s, o: _write(o, b'{"traceEvents": {"ph": "X"}}'),
    "cut-half": lambda s, o: _cut(s, o, 0.5),
    "cut-gz-half": lambda s, o: _cut_gz(s, o),
    "flip": lambda s, o: _flip(s, o, 30),
}


def _cut_gz(seed: Path, out: Path) -> Path:
    data = seed.read_bytes() if seed.read_bytes()[:2] == b"\x1f\x8b" else gzip.compress(seed.read_bytes(), 1)
    return _write(out, data[: len(data) // 2])


def _write(out: Path, data: bytes) -> Path:
    out.write_bytes(data)
    return out


def _deep(out: Path, depth: int = 100_000) -> Path:
    return _write(out, b'{"traceEvents": ' + b"[" * depth + b"]" * depth + b"}")


def _deep_args(seed: Path, out: Path, depth: int = 100_000) -> Path:
    text = _raw(seed)
    i = text.find(b'"args"')
    if i < 0:
        return None
    j = text.find(b"{", i)
    return _write(out, text[:j + 1] + b'"deep": ' + b"[" * depth + b"]" * depth + b", " + text[j + 1:])


def gzip_bomb(out: Path, decompressed: int = 1 << 30) -> Path:
    """A small ``.json.gz`` that inflates to about ``decompressed`` bytes: a trace header then
    spaces. Made of gzip members (one member of 1 MiB of spaces, ~1 KB compressed, repeated; a
    gzip file may hold several members), so making it costs milliseconds and no memory."""
    piece = gzip.compress(b" " * (1 << 20), 9)
    with open(out, "wb") as fh:
        fh.write(gzip.compress(b'{"traceEvents": ['))
        for _ in range(decompressed >> 20):
            fh.write(piece)
        fh.write(gzip.compress(b"]}"))
    return out


# --------------------------------------------------------------------------------------------
# nsys stats cuda_gpu_trace CSV
# --------------------------------------------------------------------------------------------
def _csv_edit(seed: Path, out: Path, col_prefix: str, value: str, pick=None) -> Path | None:
    import csv
    import io

    text = seed.read_bytes().decode("utf-8", errors="replace")
    rows = list(csv.reader(io.StringIO(text)))
    if len(rows) < 2:
        return None
    header = rows[0]
    col = next((i for i, c in enumerate(header) if c.strip().startswith(col_prefix)), None)
    if col is None:
        return None
    target = next((r for r in rows[1:] if pick is None or pick(header, r)), None)
    if target is None or len(target) <= col:
        return None
    target[col] = value
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows[:2000])  # a large seed: its first 2,000 rows
    out.write_text(buf.getvalue())
    return out


def _is_copy(header, row):
    name = next((i for i, c in enumerate(header) if c.strip() == "Name"), None)
    return name is not None and len(row) > name and "memcpy" in row[name].lower()


CSV_DAMAGES = {
    "negative-duration": lambda s, o: _csv_edit(s, o, "Duration", "-5000"),
    "start-near-2^63": lambda s, o: _csv_edit(s, o, "Start", str(NEAR_2_63)),
    "start-text": lambda s, o: _csv_edit(s, o, "Start", "soon"),
    "start-empty": lambda s, o: _csv_edit(s, o, "Start", ""),
    "name-quoted-newline": lambda s, o: _csv_edit(s, o, "Name", "void k<\n2>(int)"),
    "negative-bytes": lambda s, o: _csv_edit(s, o, "Bytes", "-4", pick=_is_copy),
    "device-text": lambda s, o: _csv_edit(s, o, "Device", "GPU (x)"),
    "device-huge": lambda s, o: _csv_edit(s, o, "Device", f"NVIDIA H100 ({2**64})"),
    "cut-mid-row": lambda s, o: _cut(s, o, 0.37),
    "flip": lambda s, o: _flip(s, o, 20),
}


def damaged(kind: str, seed: Path, damage: str, tmp: Path) -> Path | None:
    """Write ``seed`` with ``damage`` applied under ``tmp``; None when it does not apply to the seed."""
    table = {"sqlite": SQLITE_DAMAGES, "kineto": KINETO_DAMAGES, "csv": CSV_DAMAGES}[kind]
    suffix = {"sqlite": ".sqlite", "kineto": ".json", "csv": ".csv"}[kind]
    out = tmp / f"{seed.name.split('.')[0]}--{damage.replace('^', '')}{suffix}"
    return table[damage](seed, out)
