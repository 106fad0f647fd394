"""Terminal output (issue 14): rule docs as plain text, precision column, terminal width,
host names given room, a legend for every column abbreviation."""

from __future__ import annotations

from pathlib import Path

import pytest

from ridgeline.cli import main
from ridgeline.render.doctext import doc_to_text, plain

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "ridgeline" / "data" / "demo"


def run_cli(args, capsys):
    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in args])
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def test_plain_drops_rest_markup():
    assert plain("see ``docs/x.md`` and :class:`~ridgeline.errors.InputError` or `x`") == \
        "see docs/x.md and InputError or x"


def test_paragraphs_are_wrapped_whole_and_literals_kept():
    text = ("What it finds\n"
            "    A first line that goes on and on about kernels, and a second\n"
            "    line that continues the same sentence.\n"
            "\n"
            "    - an item that is long enough to need wrapping when the width is small enough\n"
            "      and its continuation\n"
            "    - a second item\n"
            "\n"
            "Override in ridgeline.toml:\n"
            "    [tool.ridgeline.rules.RL101]\n"
            "    max_ridge_fraction = 0.25\n")
    out = doc_to_text(text, width=40)
    lines = out.splitlines()
    assert all(len(line) <= 40 for line in lines)
    assert "second line that continues" in " ".join(out.split())  # one paragraph, not line by line
    assert "    [tool.ridgeline.rules.RL101]" in lines and "    max_ridge_fraction = 0.25" in lines
    item = lines.index(next(ln for ln in lines if ln.startswith("    - an item")))
    assert lines[item + 1].startswith("      ") and not lines[item + 1].startswith("      -")
    assert any(ln.startswith("    - a second item") for ln in lines)


def test_rules_code_renders_every_rule_as_plain_text(capsys):
    from ridgeline.rules import engine

    for cls in engine.all_rules():
        code, out, _err = run_cli(["rules", cls.code], capsys)
        assert code == 0
        assert "``" not in out, cls.code
        assert max(map(len, out.splitlines())) <= 80, cls.code


def test_precision_column_tells_fp8_from_bf16(capsys):
    code, out, err = run_cli(["analyze", ROOT / "fixtures" / "scenarios" / "decode-b8-fp8-h100"], capsys)
    assert code == 0, err
    table = out.split("Top kernels by GPU time", 1)[1].split("\n\n", 1)[0].splitlines()
    assert " prec " in table[1]
    at = table[1].index("prec")
    precs = {ln[at:at + 5].strip() for ln in table[2:] if ln[:3].strip().isdigit()}
    assert {"fp8", "bf16"} <= precs
    assert "prec:" in out


def test_kernel_names_use_a_wider_terminal():
    from ridgeline.pipeline import analyze_paths
    from ridgeline.render.terminal import format_result

    res = analyze_paths([DEMO / "decode-b8-h100.ncu-raw.csv"])
    narrow = format_result(res, width=80)
    wide = format_result(res, width=140)
    assert max(map(len, narrow.splitlines())) <= 80
    row = lambda text: next(ln for ln in text.splitlines() if ln.startswith(" 1 "))  # noqa: E731
    assert len(row(wide)) > len(row(narrow)) and "~" not in row(wide)[:60]


def test_long_host_names_get_room_when_there_is_some():
    from ridgeline.pipeline import analyze_paths
    from ridgeline.render.fleet.telemetry import format_telemetry_report

    host = "gpu-node-0042.us-east-1.cluster.example.com"
    res = analyze_paths([DEMO / "infer-0.dmon"], host=host)
    assert host in format_telemetry_report(res, width=120)
    narrow = format_telemetry_report(res)
    # at 80 columns the name is never cut (issue 23: two cut hosts look alike): it goes on a line
    # of its own above its rows, whose host cell is blank
    assert max(map(len, narrow.splitlines())) <= 80
    rows = [ln for ln in narrow.splitlines() if ln.startswith(host[:8])]
    assert rows and all(ln == host for ln in rows)
    assert "~" not in "".join(ln[:11] for ln in narrow.splitlines())


def test_every_column_abbreviation_has_a_legend(capsys):
    code, out, _err = run_cli(["telemetry", DEMO / "infer-0.dmon"], capsys)
    assert code == 0
    legend = " ".join(out.split("util = ", 1)[1].split())
    for word in ("cov =", "gract / tens / dram =", "power =", "waste ="):
        assert word in legend


def test_colour_only_on_a_tty_and_never_with_no_color(monkeypatch):
    from ridgeline.render import colour

    class Tty:
        def isatty(self):
            return True

    class Pipe:
        def isatty(self):
            return False

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert colour.wanted(Tty()) and not colour.wanted(Pipe())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not colour.wanted(Tty())
    text = "RL101 warning  kernel x\n    message\n"
    coloured = colour.colourize(text)
    assert "\033[33mwarning\033[0m" in coloured and coloured.replace("\033[1m", "").replace("\033[33m", "") \
        .replace("\033[0m", "") == text


def test_piped_report_has_no_escape_codes(capsys):
    code, out, _err = run_cli(["analyze", DEMO / "decode-b8-h100.ncu-raw.csv"], capsys)
    assert code == 0 and "\033[" not in out
