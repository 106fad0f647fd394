"""The one reading of a server URL (``--prometheus URL``), its user info kept apart and hidden.

``urllib.parse.urlsplit`` follows RFC 3986: user info ends at the first ``/``, ``?`` or ``#``.
A password pasted raw into a URL often holds one of them (``http://u:S3cr3t/x@prom:9090``), and
then urlsplit takes ``u`` for the host and ``S3cr3t`` for its port: the password went into a DNS
lookup, into an error line, into an exit-3 message ("Port could not be cast to integer value as
'S3cr3t'") and a ``--debug`` traceback. So ridgeline reads the URL itself, by one rule:

* ``scheme://`` must be ``http`` or ``https``;
* **the last ``@`` ends the user info**: everything between ``://`` and it is user info, raw
  ``/ ? # @ : %`` included (an ``@`` after the host, which no Prometheus base URL has, must be
  written ``%40``); the user name ends at the first ``:``; valid ``%XX`` escapes are decoded
  (RFC 3986), a ``%`` that starts none is kept as it is;
* after it comes the host (a name, an IPv4 address or ``[IPv6]``), an optional ``:port``
  (1..65535), and the path; a query or fragment is dropped (a base URL has none).

What is shown of a URL, anywhere (errors, notes, ``inputs``, JSON, HTML, progress, tracebacks),
is :attr:`ServerURL.shown`: scheme, host, port and path, never the user info. A URL refused is
shown the same way (``http://***@host...``, or only its scheme when even the host does not
read), so no refusal quotes a secret. Every secret form is also handed to
:func:`ridgeline.redact.remember`, the process-wide backstop for texts ridgeline did not build.
User info that cannot be used (not UTF-8 once decoded) is refused with a hint to
``--basic-auth USER --password-file FILE``, which never puts a secret on a command line.
"""

from __future__ import annotations

import dataclasses
import re

from ridgeline.errors import UsageError

_SCHEME_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")
_PORT_RE = re.compile(r"[0-9]{1,5}")
# a host name or IPv4 address: letters (any script: IDNA), digits, '-', '.', '_' ('%' for an
# escaped name); never '@', ':', '/', whitespace or a control character
_HOST_RE = re.compile(r"[^\s@:/?#\[\]\\\"'<>`{}|^\x00-\x1f\x7f]+")
_IPV6_RE = re.compile(r"\[[0-9A-Fa-f:.]+(?:%25[A-Za-z0-9._~%-]+)?\]")
HINT = ("give the user with --basic-auth USER and the password in --password-file FILE "
        "(or $RIDGELINE_PROMETHEUS_PASSWORD), or a token with --bearer-token-file FILE")


@dataclasses.dataclass(frozen=True)
class ServerURL:
    """A parsed server URL. ``str()`` and :attr:`shown` never include the user info; the
    credentials are fields hidden from ``repr``."""

    scheme: str
    host: str  # lower-case; IPv6 in brackets
    port: int | None
    path: str  # without a trailing '/'; '' for the root
    username: str | None = dataclasses.field(default=None, repr=False)
    password: str | None = dataclasses.field(default=None, repr=False)
    written: tuple[str, ...] = dataclasses.field(default=(), repr=False)  # spellings on the command line

    @property
    def shown(self) -> str:
        """What may be printed: ``scheme://host[:port]/path``."""
        return f"{self.scheme}://{self.host}" + (f":{self.port}" if self.port else "") + self.path

    def __str__(self) -> str:
        return self.shown

    def join(self, location: str) -> str:
        """A redirect target (``Location``), absolute or relative, shown without user info."""
        if _SCHEME_RE.match(location or ""):
            return shown(location)
        if location.startswith("//"):
            return shown(f"{self.scheme}:{location}")
        base = f"{self.scheme}://{self.host}" + (f":{self.port}" if self.port else "")
        return base + (location if location.startswith("/") else f"{self.path}/{location}").split("?")[0].split("#")[0]


def shown(text: str) -> str:
    """What may be printed of ``text``, a URL that may not even parse: the scheme, then
    ``***@`` when there was user info, then what follows the last ``@`` (no query or fragment)."""
    text = str(text).strip()
    m = _SCHEME_RE.match(text)
    scheme, rest = (m.group(1).lower(), text[m.end():]) if m else ("", text)
    at = rest.rfind("@")
    hidden = "***@" if at >= 0 else ""
    rest = rest[at + 1:]
    rest = re.split(r"[?#]", rest, maxsplit=1)[0]
    return (f"{scheme}://" if m else "") + hidden + rest


def parse(text: str, *, option: str = "--prometheus") -> ServerURL:
    """Read ``text`` by the rule of the module docstring; UsageError (secret-free) otherwise."""
    from urllib.parse import unquote

    raw = str(text)
    written = (raw, raw.strip())
    text = raw.strip()

    def refuse(why: str) -> UsageError:
        _remember_written(written, None)
        return UsageError(f"{option} {shown(text)!r}: {why}")

    m = _SCHEME_RE.match(text)
    if not m or m.group(1).lower() not in ("http", "https"):
        raise refuse("expected an http:// or https:// URL such as http://prometheus:9090")
    scheme = m.group(1).lower()
    rest = text[m.end():]
    at = rest.rfind("@")
    userinfo, rest = (rest[:at], rest[at + 1:]) if at >= 0 else (None, rest)
    if userinfo is not None:
        _remember_written(written, userinfo)
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    path = re.split(r"[?#]", rest[len(authority):], maxsplit=1)[0].rstrip("/")
    if authority.startswith("["):
        hm = _IPV6_RE.match(authority)
        if not hm:
            raise refuse("expected an IPv6 address in brackets such as [::1] as the host")
        host, after = hm.group(0).lower(), authority[hm.end():]
    else:
        host, _, port_text = authority.partition(":")
        after = f":{port_text}" if _ else ""
        if not host or not _HOST_RE.fullmatch(host):
            raise refuse("expected a host name or address after '://'"
                         + (" and the user info's last '@'" if userinfo is not None else ""))
        host = host.lower()
    port = None
    if after:
        port_text = after[1:]
        if not after.startswith(":") or not _PORT_RE.fullmatch(port_text) or not 1 <= int(port_text) <= 65535:
            raise refuse(f"expected a port number 1..65535 after the host, got {port_text or after!r}")
        port = int(port_text)
    if re.search(r"[\s\x00-\x1f\x7f]", path):
        raise refuse("expected a path without spaces or control characters (write them %20, %0A...)")
    username = password = None
    if userinfo is not None:
        user_text, colon, pass_text = userinfo.partition(":")
        try:
            username = unquote(user_text, errors="strict")
            password = unquote(pass_text, errors="strict") if colon else None
        except UnicodeDecodeError:
            raise refuse(f"the user info's %XX escapes do not decode as UTF-8; {HINT}") from None
        if not username and not password:
            username = None  # 'http://@host' or 'http://:@host': nothing to send
    url = ServerURL(scheme, host, port, path, username, password, written)
    if userinfo is not None:
        from ridgeline.redact import remember, secret_forms

        remember(*secret_forms(username=username, password=password,
                               written=(*written, userinfo, user_text if password is None else None)))
    return url


def _remember_written(written, userinfo) -> None:
    """Before any refusal: the URL as typed and its user info are secrets too (a traceback or a
    library message may quote them), so the process-wide redaction learns them first."""
    from ridgeline.redact import remember

    texts = [w for w in written if "@" in w]
    if userinfo:
        texts += [userinfo, userinfo.partition(":")[2]]
    remember(*texts)
