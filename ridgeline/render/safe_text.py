"""Text that came from an input, made safe for the place it is written to (issue 21, escapes).

A kernel name, an NVTX range, a host or pod label, a metric name, a file name or a quoted
piece of a damaged file can hold anything: ESC sequences (OSC "set window title", CSI cursor
moves, colour resets), other C0 and C1 control characters, DEL, bidi overrides (U+202E...),
zero-width and line-separator characters (U+2028), lone surrogates from undecodable file
names, and newlines. None of them may reach a terminal, a CI log or a rendered page raw.

One rule, used by every text format: such a character is written as an escape a reader can
still recognise, ``\\n``, ``\\r``, ``\\t`` and ``\\x1b`` for C0 controls (below U+0020) and ``\\uXXXX`` for the rest (DEL,
C1 0x80-0x9f, bidi and other invisible format characters, U+2028/U+2029, surrogates). The
``\\uXXXX`` form is also a JSON escape of the same character, so applying the rule to a JSON
document (where C0 characters are already escaped by the encoder) keeps every value exact.

Where each format goes through it (one place per format):

* :func:`for_output` - the whole text of a report on its way to stdout or a file (terminal
  table, plain text, Markdown, JSON, SARIF, CSV on stdout, HTML). Keeps the newlines the
  format itself writes; escapes every other control character; and neutralises GitHub
  workflow commands a runner would execute from a log line: a line whose first non-blank
  characters are ``::`` gets ``\\u003a:``, and ``##[`` (the old command syntax, honoured
  anywhere in a line) gets ``#\\u0023[``. ``commands=False`` is for ridgeline's own
  ``--format github`` lines, which are workflow commands on purpose.
* :func:`inline` - one value inside one line: also escapes newline, CR and tab. Used for
  names in the terminal tables (so a name cannot start a fake row), in Markdown cells, and in
  the one-line error messages (``InputError``'s file and quoted content, click's messages).
* :func:`github_data` / :func:`github_property` - GitHub workflow-command escaping
  (https://docs.github.com/actions/reference/workflow-commands-for-github-actions, runner's
  ``ActionCommand``): data ``%`` -> ``%25``, CR -> ``%0D``, LF -> ``%0A``; properties also
  ``:`` -> ``%3A`` and ``,`` -> ``%2C``; every other control character escaped as above.
* :func:`csv_cell` - CSV (see ``docs/output-safety.md``): control characters escaped (the CSV
  is read by people and spreadsheets; JSON and Parquet are the exact forms), and a text cell
  that starts with ``=``, ``+``, ``-``, ``@``, TAB or CR (a spreadsheet formula) gets a leading
  ``'`` (OWASP's advice). No real kernel, host or metric name starts with one of these.

A backslash in a name is left as it is: ``\\x1b`` in the output may therefore be a literal
backslash in a name, never the character ESC itself. Printable Unicode (CJK, accents, emoji)
is kept.
"""

from __future__ import annotations

import re

# C0 except what the caller keeps, DEL, C1, Arabic letter mark, zero-width and bidi marks
# (U+200B-U+200F), line/paragraph separators and bidi embeddings/overrides (U+2028-U+202E),
# word joiner .. invisible operators and bidi isolates (U+2060-U+206F), surrogates, BOM,
# interlinear annotation controls, and the invisible tag characters (U+E0000-U+E007F, which
# can spell hidden ASCII). Visible format characters (soft hyphen, Arabic number signs) are kept.
_UNSAFE_BODY = (
    "\\x00-\\x09\\x0b-\\x1f\\x7f-\\x9f\\u061c\\u180e\\u200b-\\u200f\\u2028-\\u202e"
    "\\u2060-\\u206f\\ud800-\\udfff\\ufeff\\ufff9-\\ufffb\\U000e0000-\\U000e007f"
)
_UNSAFE_KEEP_NL = re.compile(f"[{_UNSAFE_BODY}]")  # everything but LF
_UNSAFE_ALL = re.compile(f"[{_UNSAFE_BODY}\\n]")  # LF too
# the characters of _UNSAFE_KEEP_NL an ASCII text can hold (C0 but LF, and DEL): a report is
# usually ASCII, and 32 substring searches (memchr) prove it clean ~15x faster than the regex
# scan (a 9 MB window CSV: ~4 ms instead of ~60 ms)
_ASCII_UNSAFE_KEEP_NL = tuple(chr(c) for c in (*range(0x0a), *range(0x0b, 0x20), 0x7f))
# every other byte: deleting them from an ASCII text's bytes leaves exactly its unsafe characters
_ASCII_SAFE_BYTES = bytes(b for b in range(256) if chr(b) not in _ASCII_UNSAFE_KEEP_NL)
_SCAN_CHARS = 1 << 20  # piece of text encoded at a time (a bounded copy)
_COMMAND_LINE = re.compile(r"(?m)^([ \t]*):(?=:)")  # `::cmd` at a line start (runner trims blanks)
_COMMAND_V1 = "##["
_FORMULA = re.compile(r"^[=+\-@\t\r]")


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape_char(match: re.Match) -> str:
    char = match.group(0)
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if code < 0x20:
        return f"\\x{code:02x}"
    if code > 0xFFFF:  # a tag character: as its UTF-16 pair, which JSON reads back exactly
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def has_unsafe(text: str) -> bool:
    """Whether ``text`` holds a character :func:`inline` would escape."""
    return _UNSAFE_ALL.search(text) is not None


def inline(value: object) -> str:
    """``value`` as one safe line: every control character escaped, newlines included."""
    text = "" if value is None else str(value)
    return _UNSAFE_ALL.sub(_escape_char, text)


def for_output(text: str, *, commands: bool = True) -> str:
    """A rendered document made safe to print or save: control characters other than LF
    escaped; workflow commands neutralised unless ``commands=False``."""
    if not (text.isascii() and not _ascii_has_unsafe(text)):
        text = _UNSAFE_KEEP_NL.sub(_escape_char, text)
    if "#" in text and _COMMAND_V1 in text:  # one character: memchr, ~10x the 3-character search
        text = text.replace(_COMMAND_V1, "#\\u0023[")
    if commands and "::" in text and _has_command_line(text):
        text = _COMMAND_LINE.sub(lambda m: m.group(1) + "\\u003a", text)
    return text


def for_output_pieces(pieces, *, commands: bool = True):
    """:func:`for_output` over a document given in pieces (an iterable of str), yielding the
    safe pieces: their join is ``for_output("".join(pieces))``. Escaping is per character;
    the two checks that read more than one character (a line start's blanks and ``::``, and
    ``##[``) could change at a cut, so a piece is joined to the next one unless the cut is
    clean: the piece ends with a line break, or it ends with a character other than ``#``,
    blank or TAB and the next one starts with none of blank, TAB, ``:``, ``#``, ``[``."""
    pending = None
    for piece in pieces:
        if not piece:
            continue
        if pending is not None and not _clean_cut(pending, piece):
            pending += piece
            continue
        if pending is not None:
            yield for_output(pending, commands=commands)
        pending = piece
    if pending is not None:
        yield for_output(pending, commands=commands)


def _clean_cut(before: str, after: str) -> bool:
    """Whether :func:`for_output` of ``before`` and ``after`` apart equals that of their join."""
    return before[-1] == "\n" or (before[-1] not in "# \t" and after[0] not in " \t:#[")


def _ascii_has_unsafe(text: str) -> bool:
    """Whether an ASCII ``text`` holds one of _ASCII_UNSAFE_KEEP_NL: one pass of
    ``bytes.translate`` per MB piece (the 32 substring searches took 1.2 s on a 216 MB JSON
    report, this 0.44 s)."""
    return any(text[i:i + _SCAN_CHARS].encode("ascii").translate(None, _ASCII_SAFE_BYTES)
               for i in range(0, len(text), _SCAN_CHARS))


def _has_command_line(text: str) -> bool:
    """Whether a line of ``text`` starts with blanks and ``::`` (what _COMMAND_LINE finds), by
    jumping from line break to line break (``str.find``): the multiline regex tests every
    position, 6 s on a 216 MB JSON report whose kernel names hold ``::`` everywhere."""
    pos, n = 0, len(text)
    while pos < n:
        i = pos
        while i < n and text[i] in " \t":
            i += 1
        if text.startswith("::", i):
            return True
        nl = text.find("\n", i)
        if nl < 0:
            return False
        pos = nl + 1
    return False


def github_data(text: str) -> str:
    """Workflow-command data (the message after ``::``): ``%``, CR, LF encoded, others escaped."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return inline(text)


def github_property(text: str) -> str:
    """Workflow-command property value (``file=``, ``title=``): also ``:`` and ``,``."""
    return github_data(text).replace(":", "%3A").replace(",", "%2C")


def csv_cell(value: str | None) -> str | None:
    """One text cell of a CSV: control characters escaped, a formula start defused with ``'``."""
    if value is None:
        return None
    text = inline(value)
    return "'" + text if _FORMULA.match(value) else text


# for polars' regex engine (str.contains): its strings are UTF-8, so no surrogates
CONTROL_PATTERN = "[" + _UNSAFE_BODY.replace("\\ud800-\\udfff", "") + "\\n]"
FORMULA_PATTERN = r"^[=+\-@\t\r]"
