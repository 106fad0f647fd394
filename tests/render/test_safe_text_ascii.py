"""for_output's ASCII shortcut (issue 23 item 7: a large window CSV was scanned by the regex
character by character): an ASCII text without a control character other than LF is left as
it is, any other text takes the regex; the result is the regex's for every character."""

from __future__ import annotations

import pytest

from ridgeline.render import safe_text


def _by_regex(text: str) -> str:
    return safe_text._UNSAFE_KEEP_NL.sub(safe_text._escape_char, text)


@pytest.mark.parametrize("code", [*range(0x00, 0x100), 0x061C, 0x200B, 0x202E, 0x2028, 0xFEFF, 0xE0041, 0x4E2D])
def test_every_character_escaped_as_the_regex_does(code):
    text = f"host,gpu\nnode{chr(code)}01,3\n"
    assert safe_text.for_output(text, commands=False) == _by_regex(text)


def test_a_clean_ascii_report_is_unchanged_and_a_control_character_anywhere_is_escaped():
    clean = "window_start,host\n" + "2026-01-05 08:00:00,node001\n" * 1000
    assert safe_text.for_output(clean) == clean
    dirty = clean + "2026-01-05 08:05:00,node\x1b]0;pwned\x07\n"
    assert safe_text.for_output(dirty).endswith("node\\x1b]0;pwned\\x07\n")
    assert safe_text.for_output("a\x7fb") == "a\\u007fb"


def test_workflow_command_lines_found_by_line_starts_as_the_regex_finds_them():
    # the line-start walk (issue 32 item 11: the multiline regex tested every position of a
    # 216 MB JSON report) answers what the regex answers, on every string of these characters
    import itertools

    for size in range(7):
        for chars in itertools.product(": \tx\n\r", repeat=size):
            text = "".join(chars)
            assert safe_text._has_command_line(text) == (safe_text._COMMAND_LINE.search(text) is not None), repr(text)
    assert safe_text.for_output("a\n  ::warning::x\n::y") == "a\n  \\u003a:warning::x\n\\u003a:y"


@pytest.mark.parametrize("where", [0, (1 << 20) - 1, 1 << 20, (3 << 20) + 5])
def test_a_control_character_in_any_piece_of_a_long_report_is_escaped(where):
    # the ASCII check reads the text a piece (safe_text._SCAN_CHARS) at a time
    text = ["x"] * ((3 << 20) + 10)
    text[where] = "\x1b"
    out = safe_text.for_output("".join(text))
    assert "\x1b" not in out and out.count("\\x1b") == 1


def test_pieces_made_safe_join_to_the_whole_text_made_safe():
    # for_output_pieces (issue 32 item 11: the JSON report written piece by piece): every way of
    # cutting every short string of the characters the checks read gives the whole text's result
    import itertools

    for size in range(1, 5):
        for chars in itertools.product(": \t#[x\n\x1b", repeat=size):
            text = "".join(chars)
            whole = safe_text.for_output(text)
            for cut in range(1, size):
                pieces = [text[:cut], "", text[cut:]]
                assert "".join(safe_text.for_output_pieces(pieces)) == whole, (repr(text), cut)
    # a clean cut keeps the pieces apart; an unclean one joins them
    assert list(safe_text.for_output_pieces(['{"a":1}', ',{"b":"::x"}'])) == ['{"a":1}', ',{"b":"::x"}']
    assert list(safe_text.for_output_pieces(["x\n  ", "::y"])) == ["x\n  \\u003a:y"]
