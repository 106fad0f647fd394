#!/usr/bin/env python
"""ridgeline vs Meta's Holistic Trace Analysis (HTA) on the same PyTorch profiler (Kineto) traces.

End-to-end wall time and peak memory (the child process's ru_maxrss: interpreter, imports, parse,
analysis) of:

* ``ridgeline``: ``ridgeline analyze TRACE --format json`` in-process (``ridgeline.cli.main``):
  read, busy/idle split per device, kernel table, steps, fusion candidates, rules, JSON;
* ``hta``: ``TraceAnalysis(trace_dir=...)`` (parse) + ``get_temporal_breakdown()`` +
  ``get_idle_time_breakdown()`` (HTA's answers to the same questions).

Each run is a fresh subprocess, ridgeline's and HTA's interleaved; the best of ``--repeat`` runs is kept for wall and CPU time
(user + system: less moved than wall time by other jobs on a shared machine), the largest peak for
memory. HTA parses traces in a multiprocessing pool, so CPU time and memory count the process's
children too: CPU = self + children; memory = self's peak + the largest child's peak (an upper
bound: it assumes they peaked together). Ratios: HTA / ridgeline (time: how many times faster ridgeline is; memory:
HTA's peak over ridgeline's). Issue 22's target: >= 2.5x faster, <= 1/3 of HTA's memory.

HTA is a benchmark-only dependency, installed in its OWN virtualenv (never in ridgeline's): it
pins pandas 2 here, as its call-graph analyses fail under pandas 3::

    python3 -m venv benchmarks/.venv-hta          # gitignored
    benchmarks/.venv-hta/bin/pip install "HolisticTraceAnalysis==0.5.0" "pandas<3"
    .venv/bin/python benchmarks/bench_hta.py [--hta-python benchmarks/.venv-hta/bin/python] [TRACE ...]

Without TRACE arguments it measures the Kineto traces with kernels in ``../shared/samples/kineto``;
``--synthetic-mb 300`` adds a generated trace of that size (where the trace, not the imports, decides memory).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT.parent / "shared" / "samples" / "kineto"

RIDGELINE_CHILD = r"""
import contextlib, io, json, resource, sys, time
sys.path.insert(0, sys.argv[1])
t0 = time.perf_counter()
from ridgeline.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        main(["analyze", sys.argv[2], "--format", "json"])
    except SystemExit as e:
        code = e.code
doc = json.loads(out.getvalue())
dt = time.perf_counter() - t0
dev = doc["timeline"]["devices"]
ru, ch = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"s": dt, "cpu_s": ru.ru_utime + ru.ru_stime + ch.ru_utime + ch.ru_stime,
                  "rss_mb": (ru.ru_maxrss + ch.ru_maxrss) / 1024, "children_mb": ch.ru_maxrss / 1024,
                  "idle_s": sum(d["idle_s"] for d in dev), "busy_s": sum(d["busy_s"] for d in dev),
                  "steps": len(doc["timeline"].get("steps", [])), "fusion": len(doc["timeline"].get("fusion", []))}))
"""

HTA_CHILD = r"""
import json, logging, resource, sys, time, warnings
warnings.filterwarnings("ignore")
logging.disable(logging.CRITICAL)
t0 = time.perf_counter()
from hta.trace_analysis import TraceAnalysis
a = TraceAnalysis(trace_dir=sys.argv[1])
tb = a.get_temporal_breakdown(visualize=False)
ib = a.get_idle_time_breakdown(visualize=False)
dt = time.perf_counter() - t0
idle_us = float(tb["idle_time(us)"].sum()) if "idle_time(us)" in tb else None
ru, ch = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"s": dt, "cpu_s": ru.ru_utime + ru.ru_stime + ch.ru_utime + ch.ru_stime,
                  "rss_mb": (ru.ru_maxrss + ch.ru_maxrss) / 1024, "children_mb": ch.ru_maxrss / 1024,
                  "idle_s": idle_us / 1e6 if idle_us is not None else None}))
"""


def run(cmd: list[str]) -> dict:
    p = subprocess.run(cmd, capture_output=True, text=True)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        return {"error": (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1][:200]}
    return json.loads(lines[-1])


def best(runs: list[dict]) -> dict:
    ok = [r for r in runs if "error" not in r]
    if not ok:
        return runs[-1]
    out = min(ok, key=lambda r: r["s"])
    walls = sorted(r["s"] for r in ok)
    return dict(out, rss_mb=max(r["rss_mb"] for r in ok), cpu_s=min(r["cpu_s"] for r in ok),
                median_s=walls[len(walls) // 2])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("traces", nargs="*", type=Path)
    ap.add_argument("--hta-python", default=str(ROOT / "benchmarks" / ".venv-hta" / "bin" / "python"))
    ap.add_argument("--python", default=sys.executable, help="the interpreter that has ridgeline's dependencies")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--ridgeline-root", type=Path, default=ROOT,
                    help="the ridgeline checkout to measure (default: this one; e.g. a main checkout as a baseline)")
    ap.add_argument("--no-hta", action="store_true", help="measure ridgeline only (e.g. two checkouts)")
    ap.add_argument("--synthetic-mb", type=int, default=0,
                    help="also measure a SYNTHETIC Kineto trace of about this many MB (bench_timeline.make_kineto: "
                         "per kernel a cpu_op, a cudaLaunchKernel, the kernel and its flow event)")
    args = ap.parse_args(argv)
    traces = list(args.traces) or sorted(p for p in SAMPLES.glob("*.json*") if "nokernels" not in p.name)
    tmpdir = None
    if args.synthetic_mb:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from bench_timeline import make_kineto

        tmpdir = tempfile.TemporaryDirectory()
        synth = Path(tmpdir.name) / f"synthetic-{args.synthetic_mb}mb.json"
        make_kineto(synth, args.synthetic_mb)
        traces.append(synth)
    if not traces:
        print("no traces (give paths, or put Kineto traces in ../shared/samples/kineto)")
        return 1
    if not args.no_hta and not Path(args.hta_python).exists():
        print(f"HTA interpreter {args.hta_python} not found: see this file's docstring to install HTA in its own venv")
        return 1
    # byte-compile the measured checkout first, as ``pip install`` does for an installed package (HTA's
    # venv has its .pyc files): an editable checkout run with PYTHONDONTWRITEBYTECODE=1 would otherwise
    # compile ridgeline's ~100 modules from source in every run (~0.2 s of each)
    subprocess.run([args.python, "-m", "compileall", "-q", str(args.ridgeline_root / "ridgeline")],
                   capture_output=True, check=False)
    print(f"{'trace':<40}{'MB':>6}{'ridgeline':>11}{'HTA':>9}{'faster':>8}{'CPU r/HTA':>13}{'faster':>7}"
          f"{'MB r/HTA':>11}{'mem':>6}")
    for trace in traces:
        with tempfile.TemporaryDirectory() as tmp:  # HTA reads every trace in a folder: one per folder
            one = Path(tmp) / trace.name
            try:
                os.symlink(trace.resolve(), one)
            except OSError:
                shutil.copy(trace, one)
            # interleaved (ridgeline, HTA, ridgeline, ...): both meet the same moments of a shared machine
            r_runs, h_runs = [], []
            for _ in range(args.repeat):
                r_runs.append(run([args.python, "-c", RIDGELINE_CHILD, str(args.ridgeline_root), str(one)]))
                if not args.no_hta:
                    h_runs.append(run([args.hta_python, "-c", HTA_CHILD, tmp]))
            r = best(r_runs)
            h = {"error": "not run (--no-hta)"} if args.no_hta else best(h_runs)
        size = trace.stat().st_size / 1e6
        if args.no_hta and "error" not in r:
            print(f"{trace.name[:39]:<40}{size:>6.1f}{r['s']:>10.2f}s{'-':>9}{'-':>8}{r['cpu_s']:>7.2f}s{'-':>13}"
                  f"{r['rss_mb']:>5.0f}")
            continue
        if "error" in r or "error" in h:
            print(f"{trace.name[:39]:<40}{size:>6.1f}  ridgeline: {r.get('error', 'ok')}; HTA: {h.get('error', 'ok')}")
            continue
        print(f"{trace.name[:39]:<40}{size:>6.1f}{r['s']:>10.3f}s{h['s']:>8.3f}s{h['s'] / r['s']:>7.2f}x"
              f"{r['cpu_s']:>6.2f}/{h['cpu_s']:<6.2f}{h['cpu_s'] / r['cpu_s']:>6.1f}x"
              f"{r['rss_mb']:>5.0f}/{h['rss_mb']:<5.0f}{r['rss_mb'] / h['rss_mb']:>6.2f}"
              f"   (medians {r['median_s']:.3f}s / {h['median_s']:.3f}s: {h['median_s'] / r['median_s']:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
