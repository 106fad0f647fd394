#!/usr/bin/env python
"""Regenerate docs/schema.md and docs/json-schema.md (``--check``: exit 1 if either is stale).

    python scripts/gen_schema_docs.py          # rewrite both pages
    python scripts/gen_schema_docs.py --check  # CI: fail when a schema changed and the pages did not
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _docgen import ROOT, main  # noqa: E402
from ridgeline.render.jsonout import json_schema_markdown  # noqa: E402
from ridgeline.render.schemadoc import schema_markdown  # noqa: E402

if __name__ == "__main__":
    sys.exit(main({ROOT / "docs" / "schema.md": schema_markdown, ROOT / "docs" / "json-schema.md": json_schema_markdown}, script="gen_schema_docs.py", doc=__doc__))
