#!/usr/bin/env python
"""Regenerate docs/schema.md and docs/json-schema.md (``--check``: exit 1 if either is stale).

    python scripts/gen_schema_docs.py          # rewrite both pages
    python scripts/gen_schema_docs.py --check  # CI: fail when a schema changed and the pages did not
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ridgeline.render.jsonout import json_schema_markdown  # noqa: E402
from ridgeline.render.schemadoc import schema_markdown  # noqa: E402

PAGES = {
    ROOT / "docs" / "schema.md": schema_markdown,
    ROOT / "docs" / "json-schema.md": json_schema_markdown,
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when a page is stale")
    args = ap.parse_args(argv)
    stale = []
    for path, make in PAGES.items():
        text = make()
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path.relative_to(ROOT))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        print("stale: " + ", ".join(map(str, stale)) + "; run python scripts/gen_schema_docs.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
