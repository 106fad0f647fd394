#!/usr/bin/env python
"""Regenerate docs/kernel-families.md from the kernel-family table (``--check``: exit 1 if stale).

    python scripts/gen_families_doc.py          # rewrite docs/kernel-families.md
    python scripts/gen_families_doc.py --check  # CI: fail when the table changed and the page did not
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ridgeline.analyzer.families import families_markdown  # noqa: E402

DOC = ROOT / "docs" / "kernel-families.md"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when docs/kernel-families.md is stale")
    args = ap.parse_args(argv)
    text = families_markdown()
    if args.check:
        current = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
        if current != text:
            print("docs/kernel-families.md is stale: run python scripts/gen_families_doc.py", file=sys.stderr)
            return 1
        return 0
    DOC.parent.mkdir(parents=True, exist_ok=True)
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
