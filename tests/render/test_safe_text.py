"""ridgeline.render.safe_text: the one escaping rule for text from inputs (issue 21, escapes)."""

from __future__ import annotations

import json
import unicodedata

import pytest

from ridgeline.render import safe_text
from ridgeline.render.text import distinct_labels, shorten

# every code point the rule must never let through raw (all C0 but LF, DEL, C1, the bidi,
# zero-width and separator characters, a lone surrogate as undecodable file names give)
MUST_ESCAPE = ([chr(c) for c in range(0x20) if c != 0x0A] + [chr(c) for c in range(0x7F, 0xA0)]
               + ["\u061c", "\u200b", "\u200e", "\u200f", "\u2028", "\u2029", "\u202a", "\u202e", "\u2066",
                  "\u2069", "\ufeff", "\udcff"])


def test_every_control_and_format_character_is_escaped():
    for ch in MUST_ESCAPE + ["\n"]:
        out = safe_text.inline(f"a{ch}b")
        assert ch not in out and out.startswith("a\\") and out.endswith("b"), repr(ch)
        assert out.encode("utf-8")  # a lone surrogate no longer fails to encode (exit 3 before)


def test_escapes_are_readable_and_printable_text_is_kept():
    assert safe_text.inline("k\x1b]0;t\x07") == "k\\x1b]0;t\\x07"
    assert safe_text.inline("a\nb\tc\rd") == "a\\nb\\tc\\rd"
    assert safe_text.inline("\x9b\u202e\x7f") == "\\u009b\\u202e\\u007f"
    kept = "gemm<float, 128>::run(τ=1) 矩阵 é 🚀 | ` <b>"
    assert safe_text.inline(kept) == kept
    assert safe_text.inline(None) == ""


def test_exactly_the_invisible_characters_are_escaped():
    """Printable characters are kept; what the rule escapes is exactly the invisible kind:
    every code point below U+3000 that is a control (Cc), a format character (Cf: bidi, zero
    width) or a separator (Zl, Zp), except soft hyphen and the Arabic/Syriac number signs (Cf
    but visible); and the tag characters U+E0000-U+E007F (invisible ASCII)."""
    visible_cf = {"\u00ad", "\u0600", "\u0601", "\u0602", "\u0603", "\u0604", "\u0605", "\u06dd", "\u070f",
                  "\u0890", "\u0891", "\u08e2"}
    for c in list(range(0x3000)) + list(range(0xE0000, 0xE0080)):
        ch = chr(c)
        invisible = unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") and ch not in visible_cf
        if unicodedata.category(ch) == "Cn":  # unassigned: either way
            continue
        escaped = safe_text.has_unsafe(ch)
        assert escaped == invisible, (hex(c), unicodedata.category(ch))


def test_for_output_keeps_the_format_newlines_and_neutralises_workflow_commands():
    text = "line one\n  ::add-mask::secret\n::warning::x\nok ##[set-output name=a]b\n"
    out = safe_text.for_output(text)
    assert out.count("\n") == 4
    assert all(not line.lstrip().startswith("::") for line in out.splitlines())
    assert "##[" not in out
    # ridgeline's own --format github lines stay commands; the old syntax is still defused
    assert safe_text.for_output(text, commands=False).splitlines()[2] == "::warning::x"


def test_for_output_keeps_json_exact():
    doc = {"name": "k\x1b]0;t\x07\x9b\u202e\u2028\x7f\U000e0041\n::warning::x ##[add-mask]s", "n": 1}
    text = json.dumps(doc, indent=2, ensure_ascii=False)
    out = safe_text.for_output(text)
    assert json.loads(out) == doc
    assert not any(safe_text.has_unsafe(ch) for ch in out.replace("\n", ""))


def test_github_escaping_follows_the_workflow_command_rules():
    # data: % CR LF percent-encoded (the runner decodes them), other controls escaped
    assert safe_text.github_data("50%\r\nx\x1b") == "50%25%0D%0Ax\\x1b"
    # properties: also : and , (so a name cannot close the properties or add one)
    assert safe_text.github_property("a::b,file=x") == "a%3A%3Ab%2Cfile=x"
    # an encoded newline in a name stays text: %0A -> %250A
    assert safe_text.github_data("%0A::error::x") == "%250A::error::x"


@pytest.mark.parametrize("cell,expected", [
    ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"),
    ("+1", "'+1"), ("-2+3", "'-2+3"), ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\\tx"),
    ("gemm_kernel", "gemm_kernel"), ("k\x1b[2J", "k\\x1b[2J"), (None, None),
])
def test_csv_cells(cell, expected):
    assert safe_text.csv_cell(cell) == expected


def test_csv_table_cells_are_made_safe():
    import polars as pl

    from ridgeline.render.kernels.tables import safe_cells

    df = pl.DataFrame({"name": ["ok", "=1+1", "k\x1b]0;t\x07", None], "n": [1, -2, 3, 4]})
    out = safe_cells(df)
    assert out["name"].to_list() == ["ok", "'=1+1", "k\\x1b]0;t\\x07", None]
    assert out["n"].to_list() == [1, -2, 3, 4]  # numbers are not text cells


def test_names_with_newlines_cannot_start_a_row_in_the_terminal_table():
    name = "gemm\nRL101 critical  fake finding\x1b[2J"
    assert "\n" not in shorten(name, 200) and "\x1b" not in shorten(name, 200)
    labels = distinct_labels([name, name + "2", "plain"], 30)
    assert all("\n" not in lab and "\x1b" not in lab and len(lab) <= 30 for lab in labels)
    assert labels[0].startswith("gemm\\nRL101")


def test_markdown_cells_escape_controls_before_markup():
    from ridgeline.render.markdown import md

    out = md("a|b`c`<i>\x1b[31m\nd")
    assert out == "a\\|b\\`c\\`&lt;i&gt;\\\\x1b\\[31m\\\\nd"


def test_plot_labels_draw_the_escapes_once():
    """matplotlib draws a label's text as it is outside mathtext: the escape shows as `\\x1b`
    (not doubled), `$` cannot start mathtext, and no control character reaches the SVG."""
    import io
    import re

    import matplotlib
    from matplotlib.figure import Figure

    from ridgeline.render.plots import plain

    fig = Figure()
    fig.text(0.1, 0.5, plain("k\x1b]0;t\x07 costs $5 and $6"))
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
    drawn = "".join(re.findall(r"<text[^>]*>([^<]*)</text>", buf.getvalue()))
    assert drawn == "k\\x1b]0;t\\x07 costs $5 and $6"
