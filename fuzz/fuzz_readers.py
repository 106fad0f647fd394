"""Coverage-guided fuzzing of ridgeline's readers with atheris (not run in CI; see README.md).

Every input is written to a temporary file and read through the readers' API
(``ridgeline.pipeline.analyze_paths``: detection, the format's reader, the boundary checks,
the reduction and the rules). A RidgelineError is the expected answer to bad input; any
other exception is a finding, which atheris reports with the input that caused it.

    pip install atheris
    python fuzz/fuzz_readers.py fuzz/corpus -max_total_time=3600
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import atheris

with atheris.instrument_imports():
    import polars  # noqa: F401 - imported once, outside the loop

    from ridgeline.errors import RidgelineError
    from ridgeline.pipeline import analyze_paths

TMP = Path(tempfile.mkdtemp(prefix="ridgeline-fuzz-"))


def one_input(data: bytes) -> None:
    path = TMP / "input"
    path.write_bytes(data)
    try:
        analyze_paths([path], window="all")
    except RidgelineError:
        pass


def main() -> None:
    os.environ.setdefault("POLARS_MAX_THREADS", "1")
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
