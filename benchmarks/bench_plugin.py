"""What the pytest plugin costs a test run that does not use it.

Installed with ridgeline, the plugin (entry point pytest11: ridgeline) is loaded by every pytest
run in that environment. Two measurements, each in fresh subprocesses, alternated, median of
--repeat runs, printed as ratios against a baseline from the same run:

1. import time of ``ridgeline.testing.plugin`` after ``import pytest``, against ``import pytest``;
2. ``pytest --collect-only`` in an empty folder, with the plugin against ``-p no:ridgeline``.

    python benchmarks/bench_plugin.py --repeat 9
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time

IMPORTS = (
    "import time; t0 = time.perf_counter(); import pytest; t1 = time.perf_counter(); "
    "import ridgeline.testing.plugin; t2 = time.perf_counter(); print(t1 - t0, t2 - t1)"
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=9)
    args = ap.parse_args()

    pytest_s, plugin_s = [], []
    for _ in range(args.repeat):
        out = subprocess.run([sys.executable, "-c", IMPORTS], capture_output=True, text=True, check=True).stdout
        a, b = (float(x) for x in out.split())
        pytest_s.append(a)
        plugin_s.append(b)
    p, q = statistics.median(pytest_s), statistics.median(plugin_s)
    print(f"import pytest {p * 1e3:.1f} ms; then import ridgeline.testing.plugin {q * 1e3:.1f} ms "
          f"({q / p:.3f}x pytest's import)")

    runs: dict[str, list[float]] = {"without": [], "with": []}
    with tempfile.TemporaryDirectory() as empty:
        for _ in range(args.repeat):
            for key, extra in (("without", ["-p", "no:ridgeline"]), ("with", [])):
                t = time.perf_counter()
                subprocess.run([sys.executable, "-m", "pytest", "-q", "--collect-only", "-p", "no:cacheprovider",
                                *extra], cwd=empty, capture_output=True)
                runs[key].append(time.perf_counter() - t)
    w, wo = statistics.median(runs["with"]), statistics.median(runs["without"])
    print(f"pytest --collect-only, empty folder: -p no:ridgeline {wo:.3f} s; with the plugin {w:.3f} s "
          f"({w / wo:.3f}x)")


if __name__ == "__main__":
    main()
