#!/usr/bin/env python
"""Regenerate docs/rules.md from the rule classes (``--check``: exit 1 if the file is stale).

    python scripts/gen_rules_doc.py          # rewrite docs/rules.md
    python scripts/gen_rules_doc.py --check  # CI: fail when a rule changed and the page did not
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ridgeline.rules.engine import rules_markdown  # noqa: E402

DOC = ROOT / "docs" / "rules.md"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when docs/rules.md is stale")
    args = ap.parse_args(argv)
    text = rules_markdown()
    if args.check:
        current = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
        if current != text:
            print("docs/rules.md is stale: run python scripts/gen_rules_doc.py", file=sys.stderr)
            return 1
        return 0
    DOC.parent.mkdir(parents=True, exist_ok=True)
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
