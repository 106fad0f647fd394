"""Structure-aware fuzzing of the timeline readers (nsys sqlite, nsys stats CSV, Kineto) with atheris
(not run in CI; see README.md). Byte-level fuzzing of an SQLite file or a JSON trace mostly makes
files no reader claims; here the fuzzer's bytes choose *edits* of a real seed instead:

* nsys sqlite: a table, a column, a row and a value (integer of any size, real, text, blob, NULL)
  for up to four ``UPDATE``s, then maybe a cut or a flipped byte;
* Kineto: an event (or ``deviceProperties``), a key (``ts``, ``dur``, ``args.device``...) and a
  JSON value (numbers of any size, strings, lists, objects nested up to 5,000 deep);
* nsys stats CSV: a cell and the text that replaces it.

Each result goes through :func:`ridgeline.pipeline.analyze_paths` strict and lenient. A
RidgelineError is the right answer to bad input; any other exception, and any absurd figure in a
result that was read (:func:`check_figures`: negative times or sizes, a capture past 30 days, a
device that is no GPU index), is a crash atheris saves with its input.

    pip install atheris
    python fuzz/fuzz_timelines.py -max_total_time=3600 -rss_limit_mb=4096

Seeds: ``fixtures/timeline`` and, when present, the small files of ``../shared/samples/nsys`` and
``../shared/samples/kineto``. ``tests/parsers/timeline/test_timeline_fuzz_harness.py`` runs
:func:`one_input` on random bytes (no atheris needed) so the harness itself stays working.
"""

from __future__ import annotations

import gzip
import json
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "fixtures" / "timeline"
SAMPLES = ROOT.parent / "shared" / "samples"
TMP = Path(tempfile.mkdtemp(prefix="ridgeline-fuzz-timeline-"))


MAX_SEED_BYTES = 3_000_000  # a seed every input re-reads: a fuzzer wants small ones


def _size(p: Path) -> int:
    """Bytes a reader parses: a gzip's inflated size (its trailer, modulo 2^32), else the file's."""
    size = p.stat().st_size
    if p.suffix == ".gz" and size >= 18:
        with p.open("rb") as fh:
            fh.seek(-4, 2)
            return max(size, int.from_bytes(fh.read(4), "little"))
    return size


def _seeds():
    small = lambda p: p.is_file() and _size(p) < MAX_SEED_BYTES  # noqa: E731
    sq = sorted(FIX.glob("*.sqlite")) + sorted(p for p in (SAMPLES / "nsys").glob("*.sqlite") if small(p))
    kj = sorted(FIX.glob("*.json")) + sorted(p for p in (SAMPLES / "kineto").glob("*.json*") if small(p))
    cs = sorted(FIX.glob("*gpu_trace*.csv"))
    return {"sqlite": sq, "kineto": kj, "csv": cs}


SEEDS = _seeds()


class Draw:
    """Deterministic choices from the fuzzer's bytes (atheris' FuzzedDataProvider, without atheris)."""

    def __init__(self, data: bytes):
        self.data, self.i = data, 0

    def byte(self) -> int:
        if self.i >= len(self.data):
            return 0
        self.i += 1
        return self.data[self.i - 1]

    def int(self, n: int) -> int:
        return int.from_bytes(bytes(self.byte() for _ in range(n)), "little")

    def pick(self, items):
        return items[self.int(2) % len(items)] if items else None

    def signed(self) -> int:
        width = self.pick([1, 2, 4, 8, 9])  # 9 bytes: past int64
        v = self.int(width)
        return -v if self.byte() & 1 else v

    def text(self, limit: int = 24) -> str:
        n = self.byte() % (limit + 1)
        return bytes(self.byte() for _ in range(n)).decode("utf-8", errors="replace")


def _sql_value(d: Draw):
    kind = d.byte() % 6
    if kind == 0:
        return None
    if kind == 1:
        v = d.signed()
        return v if -(2**63) <= v < 2**63 else str(v)
    if kind == 2:
        return d.signed() / (1 + d.byte())
    if kind == 3:
        return d.text()
    if kind == 4:
        return bytes(d.byte() for _ in range(d.byte() % 8))
    return d.pick([0, -1, 2**63 - 1, -(2**63), 4096, 65536])


def _json_value(d: Draw):
    kind = d.byte() % 8
    if kind == 0:
        return None
    if kind == 1:
        return d.signed()
    if kind == 2:
        return d.signed() / (1 + d.byte()) * 10 ** (d.byte() % 40)
    if kind == 3:
        return d.text()
    if kind == 4:
        return [_json_value(d) for _ in range(d.byte() % 4)]
    if kind == 5:
        return {d.text(6): _json_value(d)}
    if kind == 6:  # a marker, spliced in as deep nesting after json.dumps (which cannot write it)
        return f"\x00DEEP{d.int(2) % 50000}\x00"
    return d.pick([True, False, "cuda:0", 2**64, -1, 1e308, "NaN"])


def edit_sqlite(d: Draw, seed: Path, out: Path) -> Path:
    shutil.copyfile(seed, out)
    con = sqlite3.connect(out)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")
                  if r[0].startswith(("CUPTI_ACTIVITY_KIND_", "StringIds", "TARGET_INFO_GPU"))]
        for _ in range(1 + d.byte() % 4):
            table = d.pick(tables)
            if table is None:
                break
            cols = [r[1] for r in con.execute(f"PRAGMA table_info({table})")]
            col = d.pick(cols)
            count = con.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            where = "" if d.byte() % 5 == 0 or not count else f"WHERE rowid IN (SELECT rowid FROM {table} LIMIT 1 OFFSET {d.int(2) % count})"
            try:
                con.execute(f'UPDATE {table} SET "{col}" = ? {where}', (_sql_value(d),))
            except sqlite3.Error:
                pass  # a NOT NULL or type constraint: the edit does not apply
        con.commit()
    finally:
        con.close()
    _damage_bytes(d, out)
    return out


def _damage_bytes(d: Draw, out: Path) -> None:
    op = d.byte() % 8
    if op == 0:  # cut
        data = out.read_bytes()
        out.write_bytes(data[: d.int(4) % max(len(data), 1)])
    elif op == 1:  # flip a few bytes
        data = bytearray(out.read_bytes())
        for _ in range(1 + d.byte() % 4):
            if data:
                data[d.int(4) % len(data)] ^= 1 << (d.byte() % 8)
        out.write_bytes(bytes(data))


def edit_kineto(d: Draw, seed: Path, out: Path) -> Path:
    raw = seed.read_bytes()
    gz = raw[:2] == b"\x1f\x8b"
    doc = json.loads(gzip.decompress(raw) if gz else raw)
    events = doc if isinstance(doc, list) else doc.get("traceEvents", [])
    for _ in range(1 + d.byte() % 4):
        key = d.pick(["ts", "dur", "args.device", "args.bytes", "args.stream", "args.grid", "args.correlation", "name",
                      "cat", "ph", "pid", "tid", "args", "deviceProperties"])
        value = _json_value(d)
        if key == "deviceProperties":
            if isinstance(doc, dict):
                doc["deviceProperties"] = value
            continue
        if not events:
            break
        e = events[d.int(3) % len(events)]
        if not isinstance(e, dict):
            continue
        if key.startswith("args."):
            if not isinstance(e.get("args"), dict):
                e["args"] = {}
            e["args"][key[5:]] = value
        else:
            e[key] = value
    import re

    text = re.sub(r'"\\u0000DEEP(\d+)\\u0000"', lambda m: "[" * int(m.group(1)) + "]" * int(m.group(1)), json.dumps(doc))
    data = text.encode()
    out.write_bytes(gzip.compress(data, 1) if gz else data)
    _damage_bytes(d, out)
    return out


def edit_csv(d: Draw, seed: Path, out: Path) -> Path:
    import csv
    import io

    rows = list(csv.reader(io.StringIO(seed.read_text())))
    for _ in range(1 + d.byte() % 4):
        r = rows[d.byte() % len(rows)]
        if r:
            r[d.byte() % len(r)] = d.pick([d.text(), str(d.signed()), "-5,000", "1.5 ms", "3 parsecs", "a\nb", "(7)"])
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    out.write_text(buf.getvalue())
    _damage_bytes(d, out)
    return out


EDITS = {"sqlite": (edit_sqlite, ".sqlite"), "kineto": (edit_kineto, ".json"), "csv": (edit_csv, ".csv")}


def check_figures(result) -> None:
    """Raise AssertionError for an absurd figure in a result that was read."""
    from ridgeline.parsers.timeline.common import MAX_CAPTURE_S, MAX_DEVICE

    tl = getattr(result, "timeline", None)
    if tl is None or tl.devices is None:
        return
    for row in tl.devices.iter_rows(named=True):
        assert 0 <= row["capture_s"] <= MAX_CAPTURE_S, row
        assert row["busy_s"] <= row["capture_s"] + 1e-9, row
        for k in ("idle_s", "idle_launch_s", "idle_sync_s", "idle_other_s", "copy_only_s", "htod_s", "dtoh_s", "dtod_s"):
            assert row[k] >= -1e-9, (k, row)
        assert row["copy_bytes"] >= 0, row
        assert row["device"] is None or 0 <= row["device"] <= MAX_DEVICE, row
    from ridgeline.analyzer.accounting import accounting

    for rec in accounting(result):
        assert rec["balanced"], rec


def one_input(data: bytes) -> None:
    from ridgeline.errors import RidgelineError
    from ridgeline.pipeline import analyze_paths

    d = Draw(data)
    kind = d.pick(sorted(k for k in SEEDS if SEEDS[k]))
    if kind is None:
        return
    seed = d.pick(SEEDS[kind])
    edit, suffix = EDITS[kind]
    path = edit(d, seed, TMP / f"input{suffix}")
    for strict in (True, False):
        try:
            result = analyze_paths([path], window="all", strict=strict)
        except RidgelineError:
            continue
        check_figures(result)


def main() -> None:
    import os

    import atheris

    os.environ.setdefault("POLARS_MAX_THREADS", "1")
    with atheris.instrument_imports():
        import ridgeline.parsers.timeline.kineto  # noqa: F401
        import ridgeline.parsers.timeline.nsys_csv  # noqa: F401
        import ridgeline.parsers.timeline.nsys_sqlite  # noqa: F401
        import ridgeline.parsers.timeline.common  # noqa: F401
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
