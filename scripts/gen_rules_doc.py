#!/usr/bin/env python
"""Regenerate docs/rules.md from the rule classes (``--check``: exit 1 if the file is stale).

    python scripts/gen_rules_doc.py          # rewrite docs/rules.md
    python scripts/gen_rules_doc.py --check  # CI: fail when a rule changed and the page did not
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _docgen import ROOT, main  # noqa: E402
from ridgeline.rules.engine import rules_markdown  # noqa: E402

if __name__ == "__main__":
    sys.exit(main({ROOT / "docs" / "rules.md": rules_markdown}, script="gen_rules_doc.py", doc=__doc__))
