"""One line of verdict per real sample, to see what a change did to every file at once.

    python scripts/sample_verdicts.py ../shared/samples -o before.json      # on main
    python scripts/sample_verdicts.py ../shared/samples -o after.json       # on a branch
    python scripts/sample_verdicts.py --compare before.json after.json      # Markdown table of changes

Per file: the exit code (or the one-line refusal), the GPU and how it was chosen, launches per
bound, the roofs and where they came from, the findings (code and severity), and how many kernels
lack FLOPs / DRAM bytes. Runs ``ridgeline analyze --format json`` in process.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import sys
from pathlib import Path


def verdict(path: Path) -> dict:
    from ridgeline.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(["analyze", str(path), "--format", "json"])
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 2
    if code not in (0, 1):
        return {"exit": code, "error": err.getvalue().strip().splitlines()[-1:] or [""]}
    doc = json.loads(out.getvalue())
    kernels = doc.get("kernels") or []
    gpu = doc.get("gpu") or {}
    return {
        "exit": code,
        "gpu": gpu.get("name"),
        # the bound as every view shows it: the latency class split by its kind (launch/stall)
        "bounds": dict(collections.Counter(str((k.get("latency_kind") or k.get("bound")) if k.get("bound") == "latency"
                                           else k.get("bound")) for k in kernels)),
        "precisions": dict(collections.Counter(str(k.get("precision")) for k in kernels)),
        "timeline": _timeline(doc.get("timeline") or {}),
        "roofs": sorted({f"{r.get('kind')}:{r.get('precision') or r.get('level')}@{r.get('source')}"
                         for r in doc.get("roofs") or []}),
        "findings": sorted(collections.Counter(f"{f['code']}/{f['severity']}" for f in doc.get("findings") or [])
                           .items()),
        "no_flops": sum(k.get("flops") is None for k in kernels),
        "no_dram": sum(k.get("dram_bytes") is None for k in kernels),
        "kernels": len(kernels),
    }


def _timeline(tl: dict) -> dict | None:
    """What a timeline verdict rests on: devices, where host calls come from, the idle split,
    summary rows read, and the profile join."""
    devices = tl.get("devices") or []
    if not devices and not tl.get("totals"):
        return None
    out = {"devices": len(devices), "summary_rows": len(tl.get("totals") or [])}
    if devices:
        out["host_api"] = sorted({str(d.get("host_api")) for d in devices})
        out["vendor"] = sorted({str(d.get("vendor")) for d in devices})
        out["idle_sync_s"] = round(sum(d.get("idle_sync_s") or 0 for d in devices), 6)
    return out


def compare(before: dict, after: dict) -> str:
    rows = ["| sample | before | after |", "|---|---|---|"]
    for name in sorted(set(before) | set(after)):
        b, a = before.get(name), after.get(name)
        if b == a:
            continue
        keys = [k for k in sorted(set(b or {}) | set(a or {})) if (b or {}).get(k) != (a or {}).get(k)]
        fmt = lambda d: "<br>".join(f"{k}: {d.get(k)}" for k in keys) if d else "absent"  # noqa: E731
        rows.append(f"| {name} | {fmt(b)} | {fmt(a)} |")
    return "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?", type=Path)
    ap.add_argument("-o", "--output", type=Path)
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = ap.parse_args(argv)
    if args.compare:
        print(compare(*(json.loads(p.read_text()) for p in args.compare)))
        return 0
    if args.folder is None:
        ap.error("give a samples folder or --compare")
    files = sorted(p for p in args.folder.rglob("*") if p.is_file() and p.name != "MANIFEST.md")
    result = {}
    for i, p in enumerate(files, 1):
        print(f"[{i}/{len(files)}] {p.relative_to(args.folder)}", file=sys.stderr)
        result[str(p.relative_to(args.folder))] = verdict(p)
    text = json.dumps(result, indent=1, sort_keys=True)
    if args.output:
        args.output.write_text(text + "\n", encoding="utf-8")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
