#!/usr/bin/env python
"""Scaffold a new rule: the rule module with its doc skeleton, and a firing and a quiet test.

    python scripts/new_rule.py RL110 tensor-precision-wider-than-needed --severity info \\
        --summary "Tensor-core kernels in tf32 where bf16 would double the roof."

Writes ``ridgeline/rules/kernel/rl110_tensor_precision_wider_than_needed.py`` (the package of the
code's family, RL1xx -> kernel/; discovered by the engine, no list to edit) and
``tests/rules/kernel/test_rl110.py`` (two tests that fail until you fill them in).
Then: write the docstring sections and ``check``, make both tests pass, and regenerate the
reference page with ``python scripts/gen_rules_doc.py``. A published code is never reused.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CODE_RE = re.compile(r"^RL[1-9][0-9]{2}$")
NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
FAMILIES = {"1": "kernel", "2": "telemetry", "3": "run", "4": "timeline", "9": "data"}

MODULE = '''"""{code} {name}."""

from __future__ import annotations

from ridgeline.rules import kernels as K
from ridgeline.rules.base import Context, Evidence, Finding, Rule


class {cls}(Rule):
    """{summary}

    What it finds
    -------------
    TODO: the condition, in terms of normalized columns and the thresholds below.

    Why it matters
    --------------
    TODO: the physics or the cost; why an expert reading the roofline would flag it.

    What to do
    ----------
    TODO: the remedy, imperative; concrete options and commands.

    Example
    -------
    TODO: a subject and the exact message it produces.
    """

    code = "{code}"
    name = "{name}"
    severity = "{severity}"
    family = "{family}"
    thresholds = {{
        "min_time_share": (0.01, "ignore subjects holding less than this share of total GPU time"),
    }}

    def check(self, ctx: Context) -> list[Finding]:
        import polars as pl

        groups = K.kernel_groups(ctx)
        if groups is None:
            return []
        hits = groups.filter(
            pl.lit(False)  # TODO: the predicate, as polars expressions over the group columns
            & (pl.col("time_share").fill_null(1.0) >= self.params["min_time_share"])
        )
        total = K.total_gpu_time(ctx)
        out = []
        for row in hits.iter_rows(named=True):
            impact_s, share = K.impact(row, total)
            out.append(
                self.finding(
                    subject=row["subject"],
                    message="TODO: measured value vs threshold, one line",
                    remedy="TODO: one imperative line.",
                    evidence=(*K.intensity_evidence(row), *K.time_evidence(row)),
                    impact_s=impact_s,
                    impact_share=share,
                    confidence=K.confidence(row["peak_flops_source"], row["peak_bw_source"]),
                    subject_kind="kernel",
                )
            )
        return out
'''

TESTS = '''"""{code} {name}: a firing and a quiet case, numbers computed by hand."""

from __future__ import annotations

from rule_cases import launch, run  # tests/rule_cases.py (tests/conftest.py puts tests/ on sys.path)

from ridgeline.rules.engine import get_rule


def test_{slug}_fires():
    rows = [
        # TODO: launches that meet the condition, e.g.
        # launch("kernel_name", duration_s=1e-3, flops=8e9, dram_bytes=1e9),
    ]
    (f,) = run(get_rule("{code}"), rows)
    assert f.code == "{code}"
    assert f.message == "TODO: the exact message, numbers computed by hand"


def test_{slug}_quiet():
    rows = [
        # TODO: launches just on the other side of each threshold
    ]
    assert rows, "write the quiet case"
    assert run(get_rule("{code}"), rows) == []
'''


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("code", help="new rule code, e.g. RL110 (never reuse a published one)")
    ap.add_argument("name", help="kebab-case name of the condition (not the cure), e.g. l2-bandwidth-bound")
    ap.add_argument("--severity", choices=("info", "warning", "critical"), default="warning")
    ap.add_argument("--summary", default="TODO: one line: the condition this rule finds.")
    ap.add_argument("--root", default=str(ROOT), help="repository root (default: this checkout)")
    args = ap.parse_args(argv)

    code, name = args.code.upper(), args.name
    if not CODE_RE.match(code):
        ap.error(f"code {args.code!r} must look like RL110 (RL + family digit + two digits)")
    if not NAME_RE.match(name):
        ap.error(f"name {name!r} must be kebab-case, e.g. decode-gemm-memory-bound")
    family = FAMILIES.get(code[2])
    if family is None:
        ap.error(f"{code}: no family {code[2]}xx (1 kernel, 2 telemetry, 3 run-to-run, 9 data quality)")
    root = Path(args.root)
    rules_root = root / "ridgeline" / "rules"
    rules_dir = rules_root / family  # one package per family (ridgeline/rules/engine.py: FAMILY_PACKAGES)
    taken = sorted(rules_root.glob(f"*/{code.lower()}_*.py"))
    if taken:
        ap.error(f"{code} is taken by {taken[0].name}; codes are never reused")
    for other in rules_root.glob("*/rl[0-9][0-9][0-9]_*.py"):
        if re.search(rf'^\s*name = "{re.escape(name)}"', other.read_text(encoding="utf-8"), re.M):
            ap.error(f"name {name!r} is taken by {other.name}")
    slug = name.replace("-", "_")
    module = rules_dir / f"{code.lower()}_{slug}.py"
    test = root / "tests" / "rules" / family / f"test_{code.lower()}.py"
    if test.exists():
        ap.error(f"{test} exists")
    cls = "".join(part.capitalize() for part in name.split("-"))
    fields = dict(code=code, name=name, cls=cls, summary=args.summary, severity=args.severity, family=family,
                  slug=f"{code.lower()}_{slug}")
    if not (rules_dir / "__init__.py").exists():  # a family's first rule makes its package
        rules_dir.mkdir(parents=True, exist_ok=True)
        (rules_dir / "__init__.py").write_text(f'"""{code[:3]}xx: {family} rules (one rule per module)."""\n',
                                               encoding="utf-8")
        print(f"wrote {(rules_dir / '__init__.py').relative_to(root)} (add {code[2]!r}: {family!r} to "
              "FAMILY_PACKAGES in ridgeline/rules/engine.py)")
    module.write_text(MODULE.format(**fields), encoding="utf-8")
    test.parent.mkdir(parents=True, exist_ok=True)
    test.write_text(TESTS.format(**fields), encoding="utf-8")
    print(f"wrote {module.relative_to(root)}")
    print(f"wrote {test.relative_to(root)}")
    print("next: fill in the TODOs, make both tests pass, then python scripts/gen_rules_doc.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
