"""Coverage-guided fuzzing of the ``.ncu-rep`` reader with atheris (not run in CI; see README.md).

A report is megabytes of protobuf, too big for byte-level mutation from scratch, so the fuzzer's
bytes drive *edits of a real report*: which seed, then up to eight edits (cut at an offset, flip
a bit, overwrite a run of bytes, repeat a span), offsets chosen by the fuzzer. Each mutant is
read through ``ridgeline.pipeline.analyze_paths`` (strict or lenient, also chosen), which walks
the block layout (:mod:`ridgeline.parsers.ncu.rep_layout`), loads it with NVIDIA's
``ncu_report`` and derives the KERNEL table. The right answers: a ``RidgelineError`` whose message
is one line, or a result with no negative or non-finite per-launch figure. Anything else
(another exception, a figure below zero) is a finding atheris saves with its input.

    pip install atheris ncu-report
    python fuzz/fuzz_ncu_rep.py -max_total_time=3600 -rss_limit_mb=4096 [SEED.ncu-rep ...]

Seeds default to ``../shared/samples/ncu-rep/*.ncu-rep``; name others after the options.
:func:`one_input` needs no atheris (``tests/parsers/ncu/test_fuzz_ncu_rep.py`` runs it on a few
fixed inputs so the harness itself stays working).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TMP = Path(tempfile.mkdtemp(prefix="ridgeline-fuzz-rep-"))
SEEDS: list[bytes] = []


def seeds(paths=None) -> list[bytes]:
    if not SEEDS:
        found = [Path(p) for p in paths] if paths else sorted((ROOT.parent / "shared" / "samples" / "ncu-rep").glob("*.ncu-rep"))
        SEEDS.extend(p.read_bytes() for p in found)
    return SEEDS


class _Bytes:
    """A tiny FuzzedDataProvider: integers from the fuzzer's bytes (0 when they run out)."""

    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def int(self, n: int) -> int:
        if n <= 1:
            return 0
        chunk = self.data[self.pos: self.pos + 4]
        self.pos += 4
        return int.from_bytes(chunk.ljust(4, b"\0"), "little") % n


def mutant(data: bytes) -> tuple[bytes, bool]:
    """(damaged report, strict) from the fuzzer's bytes."""
    src = seeds()
    if not src:
        raise SystemExit("no seed reports: pass .ncu-rep paths or provide ../shared/samples/ncu-rep")
    fb = _Bytes(data)
    out = bytearray(src[fb.int(len(src))])
    strict = bool(fb.int(2))
    for _ in range(fb.int(9)):
        if len(out) <= 8:
            break
        op, at = fb.int(4), 4 + fb.int(len(out) - 4)
        if op == 0:
            del out[at:]
        elif op == 1:
            out[at] ^= 1 << fb.int(8)
        elif op == 2:
            run = bytes(fb.int(256) for _ in range(1 + fb.int(8)))
            out[at: at + len(run)] = run
        else:
            n = 1 + fb.int(4096)
            out[at:at] = out[at: at + n]
    return bytes(out), strict


def one_input(data: bytes) -> None:
    import math

    import polars as pl

    from ridgeline.errors import RidgelineError
    from ridgeline.pipeline import analyze_paths

    report, strict = mutant(data)
    path = TMP / "input.ncu-rep"
    path.write_bytes(report)
    try:
        res = analyze_paths([path], window="all", strict=strict)
    except RidgelineError as err:
        if "\n" in str(err).strip():
            raise AssertionError(f"a multi-line error: {err}") from err
        return
    k = res.kernels
    if k is not None and k.height:
        num = [c for c, t in k.schema.items() if t.is_numeric()]
        bad = k.select([(pl.col(c) < 0).any().alias(c) for c in num]).row(0, named=True)
        neg = [c for c, v in bad.items() if v]
        if neg:
            raise AssertionError(f"negative figures in {neg}")
    if res.total_gpu_time_s is not None and not (math.isfinite(res.total_gpu_time_s) and res.total_gpu_time_s >= 0):
        raise AssertionError(f"GPU time {res.total_gpu_time_s}")


def main() -> None:
    import atheris  # noqa: PLC0415 - only the fuzzing run needs it

    os.environ.setdefault("POLARS_MAX_THREADS", "1")
    args = [a for a in sys.argv if not a.endswith(".ncu-rep")]
    seeds([a for a in sys.argv[1:] if a.endswith(".ncu-rep")] or None)
    atheris.Setup(args, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
