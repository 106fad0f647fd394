"""scripts/cli_patch_onto_commands.py: a hunk written against the one-file cli.py lands in the
command module that now holds its lines (the merge aid for the commands/ split)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _tool():
    spec = importlib.util.spec_from_file_location("cli_patch_tool", ROOT / "scripts" / "cli_patch_onto_commands.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _hunk_around(path: Path, needle: str, *, before: int = 3, after: int = 3, extra_before: list[str] = ()) -> tuple[str, int]:
    """A diff against 'ridgeline/cli.py' replacing the line holding ``needle`` in ``path``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    i = next(n for n, x in enumerate(lines) if needle in x)
    ctx_before = [*extra_before, *lines[i - before:i]]
    ctx_after = lines[i + 1:i + 1 + after]
    body = ([f" {x}" for x in ctx_before] + [f"-{lines[i]}", f"+{lines[i]}  # changed"]
            + [f" {x}" for x in ctx_after])
    n = len(ctx_before) + len(ctx_after) + 1
    return (f"diff --git a/ridgeline/cli.py b/ridgeline/cli.py\n--- a/ridgeline/cli.py\n+++ b/ridgeline/cli.py\n"
            f"@@ -900,{n} +900,{n} @@ def something\n" + "\n".join(body) + "\n"), i


def test_hunk_lands_in_the_module_holding_its_lines():
    diff, i = _hunk_around(ROOT / "ridgeline/commands/diff.py", "def _read_json_document")
    out, problems = _tool().retarget(diff, ROOT)
    assert list(out) == ["ridgeline/commands/diff.py"], out
    assert out["ridgeline/commands/diff.py"][0].startswith(f"@@ -{i - 3 + 1},7 ")
    assert any(x.endswith("  # changed") and x.startswith("+def _read_json_document") for x in out["ridgeline/commands/diff.py"])
    assert any("adds top-level" in p for p in problems)  # a changed def line is reported for a look


def test_command_decorator_is_matched_and_rewritten():
    diff, _i = _hunk_around(ROOT / "ridgeline/commands/gpus.py", '@click.command("gpus")', before=0)
    diff = diff.replace('@click.command("gpus")', '@cli.command("gpus")')  # as the old cli.py spelled it
    out, _problems = _tool().retarget(diff, ROOT)
    assert list(out) == ["ridgeline/commands/gpus.py"]
    assert '+@click.command("gpus")  # changed' in out["ridgeline/commands/gpus.py"]


def test_context_from_the_neighbouring_module_is_dropped_and_unknown_lines_refused():
    foreign = ["this line was in the function above, now in another module"]
    diff, i = _hunk_around(ROOT / "ridgeline/commands/check.py", "def check_cmd", extra_before=foreign)
    out, problems = _tool().retarget(diff, ROOT)
    assert list(out) == ["ridgeline/commands/check.py"]
    assert out["ridgeline/commands/check.py"][0].startswith(f"@@ -{i - 3 + 1},7 ")
    bad = diff.replace("-def check_cmd", "-def no_such_function")
    out, problems = _tool().retarget(bad, ROOT)
    assert out == {} and any(p.startswith("hunk not placed") for p in problems)


def test_old_output_option_line_in_context_is_matched_and_written_as_the_tree_has_it():
    tool = _tool()
    old_o = next(iter(tool.RENAMED))
    diff, i = _hunk_around(ROOT / "ridgeline/commands/telemetry.py", "@RULE_OPTIONS", before=2)
    assert " @OUTPUT_OPTION" in diff  # the line above @RULE_OPTIONS in telemetry
    diff = diff.replace(" @OUTPUT_OPTION", " " + old_o)  # as the one-file cli.py spelled it
    out, _problems = tool.retarget(diff, ROOT)
    hunk = out["ridgeline/commands/telemetry.py"]
    assert " @OUTPUT_OPTION" in hunk and " " + old_o not in hunk
