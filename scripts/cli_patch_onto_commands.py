"""Re-target a patch written against the one-file ``ridgeline/cli.py`` onto the split CLI.

A merge aid for the split of ``cli.py`` into ``ridgeline/commands/`` (issue 24 item 5): branches
that started before the split change a few lines inside functions that now live in
``ridgeline/commands/<command>.py``. This script reads a unified diff (``git diff A B --
ridgeline/cli.py``), finds for each hunk the file of the split tree that holds the hunk's old
lines (``@cli.command(`` is read as ``@click.command(``, the one line the split changed per
command, and the ``-o/--output`` declaration as ``@OUTPUT_OPTION``, see ``RENAMED``), and
writes the same hunks addressed to those files, context spelled as the tree spells it, for
``patch -p1``:

    git diff $(git merge-base main w-x) w-x -- ridgeline/cli.py \\
        | python scripts/cli_patch_onto_commands.py | patch -p1

A hunk whose old lines span two modules now, or are found nowhere, is reported on stderr
(exit 1) and left out; apply it by hand. Added top-level ``def``/``@cli.command`` lines are
reported too: a new helper may need an import in the modules that use it, a new command a line
in ``cli.py``'s registration. Standard library only; it reads nothing but the diff and the tree.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")


# lines the split spelled differently: old spelling -> new spelling
RENAMED = {
    '@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to this file instead of stdout.")':
        "@OUTPUT_OPTION",
}


def _norm(line: str) -> str:
    line = line.replace("@cli.command(", "@click.command(")
    return RENAMED.get(line, line)


def _hunks(diff: str) -> list[list[str]]:
    """The hunks of the diff's ridgeline/cli.py section, each as its body lines (' ', '-', '+')."""
    hunks: list[list[str]] = []
    in_cli = False
    for line in diff.splitlines():
        if line.startswith("diff --git ") or line.startswith("--- "):
            if line.startswith("diff --git "):
                in_cli = line.endswith(" b/ridgeline/cli.py")
            continue
        if line.startswith("+++ "):
            in_cli = line[4:].strip() in ("b/ridgeline/cli.py", "ridgeline/cli.py")
            continue
        if not in_cli:
            continue
        if HUNK.match(line):
            hunks.append([])
        elif hunks and line[:1] in (" ", "-", "+", "\\"):
            hunks[-1].append(line)
        elif hunks and line == "":
            hunks[-1].append(" ")
    return hunks


def _find(block: list[str], files: dict[str, list[str]]) -> list[tuple[str, int]]:
    """(file, 0-based line) where ``block`` occurs verbatim (after _norm)."""
    want = [_norm(b) for b in block]
    hits = []
    for name, lines in files.items():
        norm = [_norm(x) for x in lines]
        for i in range(len(norm) - len(want) + 1):
            if norm[i:i + len(want)] == want:
                hits.append((name, i))
    return hits


def retarget(diff: str, root: Path) -> tuple[dict[str, list[str]], list[str]]:
    files = {str(p.relative_to(root)): p.read_text(encoding="utf-8").splitlines()
             for p in [root / "ridgeline" / "cli.py", *sorted((root / "ridgeline" / "commands").glob("*.py"))]}
    out: dict[str, list[tuple[int, list[str]]]] = {}
    problems: list[str] = []
    for body in _hunks(diff):
        body = [b for b in body if not b.startswith("\\")]
        # drop context from the ends, fewest lines first, until the old lines are found exactly
        # once (a context line may now sit in the neighbouring module)
        lead = next((i for i, b in enumerate(body) if b[:1] != " "), len(body))
        trail = next((i for i, b in enumerate(reversed(body)) if b[:1] != " "), len(body))
        hits: list[tuple[str, int]] = []
        lo, hi = 0, len(body)
        for cut in range(lead + trail + 1):
            for lo in range(max(0, cut - trail), min(lead, cut) + 1):
                hi = len(body) - (cut - lo)
                old = [b[1:] for b in body[lo:hi] if b[:1] in (" ", "-")]
                hits = _find(old, files) if old else []
                if len(hits) == 1:
                    break
            if len(hits) == 1:
                break
        first_change = next((b for b in body if b[:1] in "+-"), "")
        if len(hits) != 1:
            problems.append(f"hunk not placed ({'ambiguous' if hits else 'old lines not found'}): {first_change!r}")
            continue
        name, at = hits[0]
        part = body[lo:hi]
        n_old = sum(1 for b in part if b[:1] in (" ", "-"))
        n_new = sum(1 for b in part if b[:1] in (" ", "+"))
        lines = [f"@@ -{at + 1},{n_old} +{at + 1},{n_new} @@"]
        k = at  # context and removed lines as the split tree spells them
        for b in part:
            if b.startswith("+") and re.match(r"\+(def |@cli\.command\(|@click\.command\(|class )", b):
                problems.append(f"{name}: adds top-level {b[1:].strip()!r}: check imports / cli.py registration")
            if b.startswith("+"):
                lines.append("+" + _norm(b[1:]))
            else:
                lines.append(b[0] + files[name][k])
                k += 1
        out.setdefault(name, []).append((at, lines))
    return {name: [x for _at, h in sorted(hs) for x in h] for name, hs in out.items()}, problems


def main() -> int:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd()
    hunks, problems = retarget(sys.stdin.read(), root)
    for name, lines in hunks.items():
        sys.stdout.write(f"--- a/{name}\n+++ b/{name}\n" + "\n".join(lines) + "\n")
    for p in problems:
        print(f"cli_patch_onto_commands: {p}", file=sys.stderr)
    return 1 if any(p.startswith("hunk not placed") for p in problems) else 0


if __name__ == "__main__":
    sys.exit(main())
