"""What the readers' boundary checks (ridgeline.parsers.guard, issue 14) cost on large text inputs.

Writes a synthetic nvidia-smi --query-gpu CSV, a dcgm-exporter scrape file and a long telemetry
CSV of about ``--mb`` MB each, then times, in the same run, the reader alone against the reader
behind ``guard.read_guarded`` (the cell checks are one extra streaming pass). Prints the ratio.

    python benchmarks/bench_guard.py --mb 50
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def write_inputs(folder: Path, mb: float) -> dict[str, Path]:
    target = int(mb * 1e6)
    smi = folder / "smi.csv"
    with open(smi, "w") as fh:
        fh.write("timestamp, index, name, utilization.gpu [%], memory.used [MiB], power.draw [W], clocks.sm [MHz]\n")
        i = 0
        while fh.tell() < target:
            fh.write(f"2026/01/05 09:{(i // 480) % 60:02d}:{(i // 8) % 60:02d}.000, {i % 8}, NVIDIA H100, "
                     f"{i % 100} %, {1000 + i % 7} MiB, {100 + (i % 50) / 10:.2f} W, 1980 MHz\n")
            i += 1
    exp = folder / "scrapes.prom"
    with open(exp, "w") as fh:
        i = 0
        while fh.tell() < target:
            fh.write(f'DCGM_FI_DEV_GPU_UTIL{{gpu="{i % 8}",UUID="GPU-{i % 8}",Hostname="n1"}} {i % 100} '
                     f"{1767600000000 + (i // 8) * 1000}\n")
            i += 1
    long = folder / "long.csv"
    with open(long, "w") as fh:
        fh.write("timestamp,host,gpu,field,value\n")
        i = 0
        while fh.tell() < target:
            fh.write(f"{1767600000 + i // 8},n1,{i % 8},gpu_util_ratio,{(i % 100) / 100}\n")
            i += 1
    return {"nvidia-smi-csv": smi, "dcgm-exporter": exp, "telemetry-csv": long}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=20.0)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    from ridgeline.parsers import guard
    from ridgeline.parsers.telemetry.reader import Options, _reader

    with tempfile.TemporaryDirectory() as tmp:
        files = write_inputs(Path(tmp), args.mb)
        print(f"{'format':<16}{'MB':>6}{'reader s':>10}{'guarded s':>11}{'ratio':>7}")
        for kind, path in files.items():
            reader = _reader(kind)
            plain, guarded = [], []
            for _ in range(args.repeat):
                t = time.perf_counter()
                reader(path, opts=Options(start=None))
                plain.append(time.perf_counter() - t)
                t = time.perf_counter()
                guard.read_guarded(reader, kind, path, opts=Options(start=None))
                guarded.append(time.perf_counter() - t)
            a, b = min(plain), min(guarded)
            print(f"{kind:<16}{path.stat().st_size / 1e6:>6.1f}{a:>10.2f}{b:>11.2f}{b / a:>7.2f}")


if __name__ == "__main__":
    main()
