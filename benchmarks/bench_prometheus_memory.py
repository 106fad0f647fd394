"""Peak memory of a long Prometheus pull, against reading the same data back from the store.

    python benchmarks/bench_prometheus_memory.py                       # 1 and 2 days, 8 hosts x 2 GPUs
    python benchmarks/bench_prometheus_memory.py --days 2 4 --hosts 8 --gpus 4

Needs ``prometheus`` and ``promtool`` (Debian: ``apt-get install prometheus``) and the
``ridgeline[prometheus]`` extra. For each pull length it generates the SYNTHETIC days of
``tests/prometheus_server.py`` (``--days`` consecutive copies of the fixture day, ``--hosts``
hosts of ``--gpus`` GPUs, 8 DCGM fields at 30 s) as OpenMetrics, loads them with ``promtool``
into a real Prometheus on loopback and runs, each in its own process (``ridgeline telemetry ...
--format json -o FILE``, peak RSS = the child's ``ru_maxrss`` from ``wait4``):

* ``save``: the pull with ``--save STORE`` (what a nightly job runs);
* ``pull``: the pull alone;
* ``store`` (the baseline): ``ridgeline telemetry STORE`` on the store the first run wrote,
  i.e. the same samples read back from Parquet.

It prints each run's peak RSS, time and JSON size, the ratio of the pull's peak to the store
read's (same code, same session), and checks that every run's ``telemetry`` and ``findings``
are equal. Memory that grows with the samples shows as a ratio that grows with ``--days``.
``--before DIR`` runs an older checkout too, on the same server and data (``before`` rows);
``--max-points`` makes a pull of a few days take several requests per field.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def run(args: list[str], root: Path = ROOT) -> tuple[float, float, str]:
    """(peak RSS MiB, seconds, stderr) of ``ridgeline ARGS`` (the code at ``root``) in a fresh process."""
    rss, _cpu, secs, text = run_usage(args, root)
    return rss, secs, text


def run_usage(args: list[str], root: Path = ROOT) -> tuple[float, float, float, str]:
    """(peak RSS MiB, CPU s, wall s, stderr) of ``ridgeline ARGS`` (the code at ``root``) in a fresh
    process (also benchmarks/bench_store_days.py's measurement)."""
    cmd = [sys.executable, "-c", "import sys; from ridgeline.cli import main; main(sys.argv[1:])", *args]
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        # cwd=root: `python -c` puts the working folder first on sys.path, before PYTHONPATH
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=root)
        _pid, status, usage = os.wait4(proc.pid, 0)
        secs = time.perf_counter() - t
        err.seek(0)
        text = err.read().decode(errors="replace")
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        sys.exit(f"ridgeline {' '.join(args)} exited {code}: {text.strip()[-400:]}")
    return usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime, secs, text  # ru_maxrss is KiB on Linux


STAGES = r"""
import sys
from ridgeline.sources.prometheus import pull, parse_time
from ridgeline.pipeline import reduce_telemetry
from ridgeline.result import AnalysisResult
from ridgeline.render.jsonout import render_json

def mark(stage):
    status = dict(line.split(":", 1) for line in open("/proc/self/status"))
    hwm, rss = (int(status[k].split()[0]) / 1024 for k in ("VmHWM", "VmRSS"))
    print(f"    {stage:<26} peak {hwm:6.0f} MiB, held {rss:6.0f} MiB", flush=True)

url, t0, t1 = sys.argv[1], sys.argv[2], sys.argv[3]
kw = {"max_points": int(sys.argv[4])} if len(sys.argv) > 4 else {}
mark("imports")
p = pull(url, start=parse_time(t0), end=parse_time(t1), step_s=30, **kw)
mark("pull")
counts = {}
src = p.source() if hasattr(p, "source") else (p.info.path, p.frame)
_lf, _inputs, _skipped, windows = reduce_telemetry([], extra=[src], sample_counts=counts)
mark(f"reduce ({windows.height:,} windows)")
text = render_json(AnalysisResult(inputs=[p.info], windows=windows, sample_counts=counts))
mark(f"JSON ({len(text) / 2**20:.0f} MiB)")
"""


def stages(root: Path, url: str, t0: int, t1: int, max_points: int | None) -> None:
    """Peak and held RSS after each stage of a pull, reduction and JSON render, in one process."""
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    args = [url, str(t0), str(t1)] + ([str(max_points)] if max_points else [])
    subprocess.run([sys.executable, "-c", STAGES, *args], env=env, cwd=root, check=True)


def _row(days, samples, windows, k, mib, secs, json_mib, ratio) -> str:
    return (f"{days:>4} {samples:>11,} {windows:>8,} {k:<13} {mib:>7.0f} MiB {secs:>6.1f} s "
            f"{json_mib:>5.1f} MiB {ratio:>17.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--days", type=int, nargs="+", default=[1, 2], help="pull lengths in days (default 1 2)")
    ap.add_argument("--hosts", type=int, default=8, help="hosts (default 8)")
    ap.add_argument("--gpus", type=int, default=2, help="GPUs per host (default 2)")
    ap.add_argument("--max-points", type=int, default=None,
                    help="the pull's --max-points (default ridgeline's, 11,000 = 3.8 days at 30 s): pulls "
                         "longer than one request show whether memory grows with the pull's length")
    ap.add_argument("--before", type=Path, default=None,
                    help="a checkout of the code before a change (e.g. `git worktree add /tmp/before HEAD~3`): "
                         "its runs are measured on the same server and data, labelled 'before'")
    ap.add_argument("--stages", action="store_true",
                    help="also print the peak and held RSS after each stage (pull, reduce, JSON) in one process")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder (printed)")
    ap.add_argument("--window", default=None,
                    help="every run's --window (default ridgeline's, 5m): a longer window has fewer windows, "
                         "which separates what grows with the windows from what grows with the samples")
    args = ap.parse_args()

    import prometheus_server as ps

    if not (shutil.which("prometheus") and shutil.which("promtool")):
        sys.exit("bench_prometheus_memory: prometheus/promtool not installed (apt-get install prometheus)")
    hosts = tuple(f"node{i:02d}" for i in range(1, args.hosts + 1))
    tmp = Path(tempfile.mkdtemp(prefix="bench-prom-mem-"))
    rows = []
    codes = ([("before", args.before.resolve())] if args.before else []) + [("after" if args.before else "this", ROOT)]
    try:
        for days in args.days:
            work = tmp / f"d{days}"
            t = time.perf_counter()
            om, _ = ps.write_fixture_day(work / "fixture", hosts, days=days, gpus=args.gpus, csv=False)
            ps.load_blocks(om, work / "data", timeout_s=max(300, 120 * days))  # promtool: ~2-hour blocks
            om.unlink()
            samples = sum(1 for _ in ps.series(hosts, args.gpus)) * ps.DAY_POINTS * days
            print(f"{days} day(s): {len(hosts)} hosts x {args.gpus} GPUs, {samples:,} samples, "
                  f"{time.perf_counter() - t:.0f} s to generate and load", flush=True)
            server = ps.PrometheusServer(work / "data", work)
            try:
                end = ps.DAY_START + days * 86400 - ps.STEP_S
                pull = ["telemetry", "--prometheus", server.url, "--from", str(ps.DAY_START), "--to", str(end),
                        "--step", "30s", "--format", "json", "-q"]
                if args.max_points:
                    pull += ["--max-points", str(args.max_points)]
                if args.window:
                    pull += ["--window", args.window]
                res, out = {}, {}
                if args.stages:
                    for label, root in codes:
                        print(f"  stages, {label}:", flush=True)
                        stages(root, server.url, ps.DAY_START, end, args.max_points)
                for label, root in codes:
                    store = work / f"store-{label}"
                    for k in ("save", "pull"):
                        out[f"{label} {k}"] = work / f"{label}-{k}.json"
                        extra = ["--save", str(store)] if k == "save" else []
                        res[f"{label} {k}"] = run([*pull, *extra, "-o", str(out[f"{label} {k}"])], root)
            finally:
                server.stop()
            for label, root in codes:
                out[f"{label} store"] = work / f"{label}-store.json"
                res[f"{label} store"] = run(["telemetry", str(work / f"store-{label}"), "--format", "json", "-q",
                                             "-o", str(out[f"{label} store"])]
                                            + (["--window", args.window] if args.window else []), root)
            docs = {k: json.loads(p.read_text(encoding="utf-8")) for k, p in out.items()}
            base = docs[f"{codes[-1][0]} store"]
            for k, doc in docs.items():
                if any(doc[key] != base[key] for key in ("telemetry", "findings")):
                    sys.exit(f"{days} day(s): the {k} run's windows or findings differ from the store read's")
            windows = len(base["telemetry"]["windows"])
            del docs, base
            for k, (mib, secs, _err) in res.items():
                rows.append((days, samples, windows, k, mib, secs, out[k].stat().st_size / 2**20,
                             mib / res[f"{k.split()[0]} store"][0]))
                print("  " + _row(*rows[-1]), flush=True)
            shutil.rmtree(work / "data", ignore_errors=True)
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"\n{'days':>4} {'samples':>11} {'windows':>8} {'run':<13} {'peak RSS':>10} {'time':>8} "
          f"{'JSON':>9} {'peak / store read':>18}")
    for row in rows:
        print(_row(*row))
    print("\nwindows, findings: identical between every run (pulls, store reads"
          + (", before and after" if args.before else "") + ") at every length")


if __name__ == "__main__":
    main()
