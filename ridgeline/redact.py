"""Secrets this process was given, kept out of everything it writes (issue 35, credentials).

A password or token reaches ridgeline in a file (``--password-file``, ``--bearer-token-file``),
the environment, or inside a ``--prometheus`` URL's user info. The live source never puts one
in a message it builds (:mod:`ridgeline.sources.url` shows every URL without its user info),
but a message is not only built by us: a library's exception can quote the URL it was given,
a server can echo a request back, a ``--debug`` traceback prints exception texts. So whoever
takes a secret also calls :func:`remember` with every form in which it could come back, and
every line ridgeline writes to stderr (error lines, warnings, ``--debug`` tracebacks:
:func:`ridgeline.commands.common._tell` and :func:`ridgeline.cli._report_bug`) passes through
:func:`redact`, which replaces each form with ``***``.

Reports (stdout, ``-o`` files) are kept secret-free by construction instead (they show URLs by
:attr:`ridgeline.sources.url.ServerURL.shown` and a server's words after the live source's own
redaction): a blanket replacement there could turn a password such as ``true`` or ``0.5`` into
``***`` inside a JSON document. Forms shorter than :data:`MIN_LEN` characters are not replaced
(a one-letter password would blank every such letter of a line); the live source still redacts
them in what a server sends back (:meth:`ridgeline.sources.prometheus._Client._redact`).
Nothing is ever written to disk or printed by this module; the set lives as long as the process.
"""

from __future__ import annotations

import threading
from typing import Iterable

MIN_LEN = 4  # shorter forms are not redacted process-wide (see the module docstring)
MASK = "***"

_lock = threading.Lock()
_forms: tuple[str, ...] = ()  # longest first, so a longer form is replaced before its parts


def remember(*forms: str | None) -> None:
    """Keep ``forms`` (a secret and the spellings it can come back in) out of every output."""
    global _forms
    new = {f for f in forms if f and len(f) >= MIN_LEN}
    if not new:
        return
    with _lock:
        _forms = tuple(sorted(new | set(_forms), key=len, reverse=True))


def redact(text: str) -> str:
    """``text`` with every remembered form replaced by ``***`` (unchanged when none is known)."""
    forms = _forms
    if not forms or not text:
        return text
    for f in forms:
        if f in text:
            text = text.replace(f, MASK)
    return text


def secret_forms(*secrets: str | None, username: str | None = None, password: str | None = None,
                 written: Iterable[str | None] = ()) -> list[str]:
    """Every form in which a secret sent to a server can come back from one that echoes its
    request: the raw token and password, ``user:password``, its base64 (a Basic header), the
    percent-encoded forms, and the spellings ``written`` on the command line (user info as
    typed in a URL, the URL itself). Longest first, so a longer form is replaced before its parts."""
    import base64

    forms = {s for s in (*secrets, password, *written) if s}
    if username is not None and password:
        pair = f"{username}:{password}"
        forms |= {pair, base64.b64encode(pair.encode("utf-8", "surrogatepass")).decode(),
                  f"{_quoted(username)}:{_quoted(password)}"}
    forms |= {_quoted(f) for f in list(forms)}
    return sorted((f for f in forms if f), key=len, reverse=True)


def _quoted(text: str) -> str:
    """``text`` percent-encoded as in a URL's user info (undecodable characters kept escaped)."""
    from urllib.parse import quote

    return quote(text, safe="", errors="surrogateescape")


def _forget_all() -> None:
    """Tests only: start from no remembered secret."""
    global _forms
    with _lock:
        _forms = ()

