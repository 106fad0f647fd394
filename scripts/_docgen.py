"""The one implementation behind scripts/gen_*.py: write generated doc pages, or (``--check``)
exit 1 naming the pages that are stale."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]


def main(pages: dict[Path, Callable[[], str]], *, script: str, doc: str, argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when a generated page is stale")
    args = ap.parse_args(argv)
    stale = []
    for path, make in pages.items():
        text = make()
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path.relative_to(ROOT))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        print("stale: " + ", ".join(map(str, stale)) + f"; run python scripts/{script}", file=sys.stderr)
        return 1
    return 0
