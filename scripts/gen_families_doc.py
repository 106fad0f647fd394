#!/usr/bin/env python
"""Regenerate docs/kernel-families.md and ridgeline/analyzer/kernels/family_literals.py from the kernel-family table (``--check``: exit 1 if stale).

    python scripts/gen_families_doc.py          # rewrite docs/kernel-families.md
    python scripts/gen_families_doc.py --check  # CI: fail when the table changed and the page did not
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _docgen import ROOT, main  # noqa: E402
from ridgeline.analyzer.kernels.families import families_markdown, family_literals_module  # noqa: E402

if __name__ == "__main__":
    sys.exit(main({ROOT / "docs" / "kernel-families.md": families_markdown,
                     ROOT / "ridgeline" / "analyzer" / "kernels" / "family_literals.py": family_literals_module}, script="gen_families_doc.py", doc=__doc__))
