"""HTTP for the live source: one client whose every request is bounded in time and in bytes,
retried when that can help, and whose errors are one secret-free line.

What a server cannot do to a pull (issue 35, hostile servers), and how:

* **hold it forever.** ``--timeout`` bounds a whole request, from connecting to the answer's
  last byte (each retry gets its own), not each read: the client's network backend
  (:class:`_DeadlineBackend`, put under httpx's connection pools) gives every connect, TLS
  handshake, write and read only the time left until the request's deadline, so a server that
  sends a byte a second ends at the deadline, in the headers as in the body. The body loop
  checks the deadline too. (Not bounded: the system's DNS lookup itself.)
* **fill memory.** An answer is read up to :data:`MAX_ANSWER_BYTES` (``--max-answer``; 256 MiB
  by default) *after* decoding: ridgeline asks for ``gzip`` only and inflates it itself, never
  more than the cap plus one byte, so a gzip bomb stops at the cap like a huge plain answer. A
  ``Content-Length`` above the cap is refused before reading. The error names the cap and the
  option. Other encodings (``br``, ``zstd``: unasked, unbounded to inflate) are refused.
  A redirect's body is never read.
* **redirect a query away.** Redirects are followed here (at most :data:`MAX_REDIRECTS`), with
  httpx's own rules (credentials dropped when the host changes); a 301/302/303 that would turn
  the POSTed ``query_range`` into a GET, which carries no query, is an error that says so.
* **confuse.** An answer that is not UTF-8 says so (byte and offset), not "is this the base URL?".

The URL is read once by :func:`ridgeline.sources.url.parse`; every message shows
:attr:`ServerURL.shown` and passes :meth:`Client._redact` (every form of every secret sent, as
an echoing server could return it).
"""

from __future__ import annotations

import re
import threading
import time as _time
from typing import Any

from ridgeline.errors import RidgelineError, UsageError

RETRY_AFTER_MAX_S = 30.0
MAX_ANSWER_BYTES = 256 * 2**20  # --max-answer default: one answer, decoded; see the module docstring
MAX_REDIRECTS = 10
READ_CHUNK = 64 * 1024  # raw bytes per read (httpcore reads at most this much per call too)


class PrometheusError(RidgelineError):
    """A pull that cannot go on: unreachable server, 401/403, rejected query, not Prometheus."""


class ChunkFailed(Exception):
    """A request that failed in a way another chunk might not (after retries). ``unanswered``:
    no usable answer came (timed out, no connection, larger than ``--max-answer``), as opposed
    to an answer that was an error; the pull gives up when its first requests all end so."""

    def __init__(self, text: str, *, unanswered: bool = False):
        super().__init__(text)
        self.unanswered = unanswered


class _Retry(Exception):
    """A failure worth another attempt (timeout, connection error, 429, 5xx); the reason."""


_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|KiB|MiB|GiB|k|M|G)?\s*$", re.I)
_SIZE_UNIT = {None: 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "k": 2**10, "m": 2**20, "g": 2**30,
              "kib": 2**10, "mib": 2**20, "gib": 2**30}


def parse_size(text: str, *, what: str = "--max-answer") -> int:
    """``256MiB``, ``1GiB``, ``500MB``, ``64k`` or plain bytes -> bytes (>= 1 KiB)."""
    m = _SIZE_RE.match(str(text))
    value = int(float(m.group(1)) * _SIZE_UNIT[(m.group(2) or "b").lower()]) if m else 0
    if value < 1024:
        raise UsageError(f"{what} {text!r}: expected a size of at least 1KiB such as 256MiB or 1GiB")
    return value


def size_text(n: int) -> str:
    """Bytes as the shortest exact binary unit: 268435456 -> '256 MiB'."""
    for unit, factor in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= factor and n % factor == 0:
            return f"{n // factor} {unit}"
    return f"{n:,} bytes"


# ------------------------------------------------------------------------------------------
# a deadline per request, enforced by the network backend
# ------------------------------------------------------------------------------------------
_deadline = threading.local()  # .at: time.monotonic() by which the current request must be done


def _left(timeout: float | None, error) -> float | None:
    """The time an operation may take: ``timeout`` cut to what is left of this thread's request
    deadline; ``error`` (an httpcore timeout class) raised when nothing is left."""
    at = getattr(_deadline, "at", None)
    if at is None:
        return timeout
    stop = getattr(_deadline, "stop", None)
    if stop is not None and stop.is_set():  # the pull was given up (Client.stop): end this request too
        raise error("the pull was stopped")
    left = at - _time.monotonic()
    if left <= 0:
        raise error("the request's --timeout has passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream:
    """An httpcore network stream whose every operation ends by the request's deadline."""

    def __init__(self, inner):
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        import httpcore

        return self._inner.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        import httpcore

        return self._inner.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context, server_hostname=None, timeout=None):
        import httpcore

        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname,
                                                     _left(timeout, httpcore.ConnectTimeout)))

    def get_extra_info(self, info: str):
        return self._inner.get_extra_info(info)


class _DeadlineBackend:
    """httpcore's network backend, its connections made into :class:`_DeadlineStream`s."""

    def __init__(self, inner):
        self._inner = inner

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        import httpcore

        return _DeadlineStream(self._inner.connect_tcp(host, port, _left(timeout, httpcore.ConnectTimeout),
                                                       local_address, socket_options))

    def connect_unix_socket(self, path, timeout=None, socket_options=None):
        import httpcore

        return _DeadlineStream(self._inner.connect_unix_socket(path, _left(timeout, httpcore.ConnectTimeout),
                                                               socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def bound_by_deadlines(http) -> int:
    """Put :class:`_DeadlineBackend` under every connection pool of the httpx client ``http``
    (its transport and the proxy transports it mounted from the environment); returns how many.
    httpx has no public way to give a pool a network backend: this reaches ``transport._pool``,
    and a test fails if a new httpx moves it (the body loop's deadline check still holds then)."""
    done = 0
    transports = [getattr(http, "_transport", None), *getattr(http, "_mounts", {}).values()]
    for transport in transports:
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if backend is None or isinstance(backend, _DeadlineBackend):
            continue
        pool._network_backend = _DeadlineBackend(backend)
        done += 1
    return done


# ------------------------------------------------------------------------------------------
# the client
# ------------------------------------------------------------------------------------------
class Client:
    """httpx.Client with per-request deadlines and byte caps, retries with backoff, and
    one-line, secret-free errors (see the module docstring)."""

    def __init__(self, url, auth, *, timeout_s: float, retries: int, backoff_s: float,
                 max_answer_bytes: int = MAX_ANSWER_BYTES):
        try:
            import httpx
        except ImportError:
            raise UsageError("--prometheus needs the httpx package: pip install 'ridgeline[prometheus]'") from None
        from ridgeline.redact import remember, secret_forms
        from ridgeline.sources.url import HINT, parse

        parsed = parse(url)
        username, password = auth.username, auth.password
        if parsed.username is not None or parsed.password is not None:
            if auth.username or auth.bearer_token:
                raise UsageError(f"--prometheus {parsed.shown!r} holds user info and --basic-auth or a bearer "
                                 "token is given too: give the credentials once (" + HINT + ")")
            username, password = parsed.username or "", parsed.password or ""
        self._secrets = secret_forms(*auth.secrets(), username=username, password=password,
                                     written=parsed.written if (parsed.username or parsed.password) else ())
        remember(*self._secrets)
        self.parsed = parsed
        self.url = parsed.shown
        self.timeout_s = timeout_s
        self.max_answer_bytes = max_answer_bytes
        headers = {"Accept": "application/json", "User-Agent": "ridgeline", "Accept-Encoding": "gzip"}
        if auth.bearer_token:
            headers["Authorization"] = f"Bearer {auth.bearer_token}"
        verify: Any = True
        if auth.ca_bundle or auth.client_cert:  # one SSL context carries the CA bundle and the client cert
            verify = _ssl_context(auth)
        elif auth.insecure:
            verify = False
        try:
            self._http = httpx.Client(
                base_url=self.url + "/", headers=headers, verify=verify, timeout=timeout_s,
                auth=httpx.BasicAuth(username, password or "") if username or password else None,
                follow_redirects=False, trust_env=True,  # redirects: followed by _send, bodies unread
            )
        except (OSError, ValueError) as err:
            raise UsageError(f"cannot set up the HTTP client for {self.url}: {self._redact(str(err))}") from None
        self.deadline_pools = bound_by_deadlines(self._http)
        self._stop = threading.Event()  # set by stop(): requests in flight end at their next read
        self._httpx = httpx
        self.retries = retries
        self.backoff_s = backoff_s

    def close(self) -> None:
        self._http.close()

    def stop(self) -> None:
        """Give up: every request in flight ends at its next network operation (a read waits
        at most until its next byte or its deadline), none starts."""
        self._stop.set()

    def _redact(self, text: str) -> str:
        for s in self._secrets:
            text = text.replace(s, "***")
        return text

    def _fatal(self, text: str) -> PrometheusError:
        return PrometheusError(self._redact(f"{self.url}: {text}"))

    # -- one attempt ------------------------------------------------------------------------
    def _send(self, path: str, *, params=None, data=None):
        """One attempt: ``(response, body bytes)``, redirects followed, everything by the deadline."""
        httpx = self._httpx
        _deadline.at = _time.monotonic() + self.timeout_s
        _deadline.stop = self._stop
        try:
            method = "POST" if data is not None else "GET"
            request = self._http.build_request(method, path, params=params, data=data)
            resp = self._http.send(request, stream=True)  # the client's auth on the first request only
            for _hop in range(MAX_REDIRECTS + 1):
                nxt = getattr(resp, "next_request", None)
                if nxt is None:
                    break
                code, where = resp.status_code, self.parsed.join(resp.headers.get("location", ""))
                resp.close()  # a redirect's body is never read
                if nxt.method != request.method:
                    raise self._fatal(f"{path}: HTTP {code} redirects to {where} and turns the POSTed query into "
                                      f"a {nxt.method} without it; give --prometheus the URL it redirects to (a "
                                      "307/308 redirect would keep the POST)")
                # httpx's redirect rules: credentials kept on the same origin only (auth=None: the
                # client's own auth is not sent again to wherever the server points)
                resp = self._http.send(nxt, stream=True, auth=None)
            else:
                resp.close()
                raise self._fatal(f"too many redirects from {path} (a redirect loop?); give the server's "
                                  "final base URL")
            try:
                body = self._read(resp, path)
            finally:
                resp.close()
            return resp, body
        except httpx.TimeoutException:
            raise _Retry(f"timed out (no whole answer within --timeout {self.timeout_s:g}s)") from None
        except httpx.TransportError as err:  # connection refused, reset, DNS, TLS
            tls = _tls_failure(err)
            if tls:  # retrying does not change a certificate
                raise self._fatal(tls) from None
            raise _Retry(_transport_reason(err)) from None
        finally:
            _deadline.at = _deadline.stop = None

    def _read(self, resp, path: str) -> bytes:
        """The body, decoded, at most ``max_answer_bytes``; by the deadline."""
        import zlib

        cap = self.max_answer_bytes
        too_big = (f"the answer from {path} is larger than the {size_text(cap)} cap (--max-answer); ask for "
                   "less per request with --max-points or --hosts-per-query, or raise --max-answer")
        codings = [c.strip().lower() for c in resp.headers.get("content-encoding", "").split(",") if c.strip()]
        codings = [c for c in codings if c != "identity"]
        if len(codings) > 1 or (codings and codings[0] not in ("gzip", "x-gzip", "deflate")):
            raise self._fatal(f"the answer from {path} is encoded as {', '.join(codings)!r}; ridgeline asks for "
                              "gzip only (Accept-Encoding) and reads gzip, deflate or plain answers")
        length = resp.headers.get("content-length", "")
        if not codings and length.isdigit() and int(length) > cap:
            raise ChunkFailed(self._redact(too_big + f" (Content-Length {int(length):,})"), unanswered=True)
        dec = None
        if codings:
            dec = zlib.decompressobj(16 + zlib.MAX_WBITS if codings[0] != "deflate" else zlib.MAX_WBITS)
        out = bytearray()
        first = True
        for raw in resp.iter_raw(READ_CHUNK):
            _left(None, self._httpx.ReadTimeout)  # the deadline between reads too
            if dec is not None:
                if first and codings[0] == "deflate" and raw[:1] and (raw[0] & 0x0F) != 8:
                    dec = zlib.decompressobj(-zlib.MAX_WBITS)  # raw deflate, as some servers send it
                first = False
                try:
                    raw = dec.decompress(raw, cap - len(out) + 1)  # never more than the cap + 1 byte
                except zlib.error:
                    raise self._fatal(f"the answer from {path} does not decode (its Content-Encoding does not "
                                      "match the body: a damaged gzip body?)") from None
            out += raw
            if len(out) > cap:
                raise ChunkFailed(self._redact(too_big), unanswered=True)
        if dec is not None and not dec.eof and out:
            raise self._fatal(f"the answer from {path} does not decode (the gzip body is cut short)")
        return bytes(out)

    # -- a request, retried -----------------------------------------------------------------
    def get_json(self, path: str, *, params=None, data=None) -> Any:
        """``data`` of a Prometheus answer; retries transient failures, raises PrometheusError for
        fatal ones and ChunkFailed for what survives the retries."""
        last = ""
        unanswered = True  # every attempt so far timed out or could not connect
        for attempt in range(self.retries + 1):
            if self._stop.is_set():
                raise ChunkFailed("not asked: the pull was stopped")
            if attempt:
                _time.sleep(min(self.backoff_s * 2 ** (attempt - 1), RETRY_AFTER_MAX_S))
            try:
                resp, body = self._send(path, params=params, data=data)
            except _Retry as why:
                last = str(why)
                continue
            unanswered = False
            if resp.status_code in (401, 403):
                raise self._fatal(f"HTTP {resp.status_code} {resp.reason_phrase}: the server refused the "
                                  "credentials (check --bearer-token-file/--bearer-token-env or --basic-auth)")
            if resp.status_code == 429 or resp.status_code >= 500:
                last = f"HTTP {resp.status_code} {resp.reason_phrase}".strip()
                wait = _retry_after(resp.headers.get("Retry-After"))
                if wait and attempt < self.retries:
                    _time.sleep(min(wait, RETRY_AFTER_MAX_S))
                doc = _json_or_none(body)
                if resp.status_code == 503 and isinstance(doc, dict):
                    last += f": {_error_text(doc)}"
                continue
            return self._answer(resp, body, path)
        tries = self.retries + 1
        raise ChunkFailed(self._redact(f"{last} (after {tries} attempt{'s' if tries > 1 else ''})"),
                          unanswered=unanswered)

    def _answer(self, resp, body: bytes, path: str) -> Any:
        try:
            text = body.decode("utf-8-sig")
        except UnicodeDecodeError as err:
            raise self._fatal(f"the answer from {path} is not UTF-8 (byte 0x{body[err.start]:02x} at offset "
                              f"{err.start:,}); Prometheus answers in UTF-8: is a proxy re-encoding it?") from None
        from ridgeline.parsers.jsontext import MAX_JSON_DEPTH, JSONLimitError, loads

        try:
            doc = loads(text, max_bytes=None)  # the answer's size: --max-answer
        except JSONLimitError:
            raise self._fatal(f"expected a Prometheus API answer from {path}, got JSON nested deeper than "
                              f"{MAX_JSON_DEPTH} levels") from None
        except ValueError:
            kind = resp.headers.get("content-type", "no content type").split(";")[0]
            raise self._fatal(f"expected a Prometheus API answer (JSON) from {path}, got HTTP {resp.status_code} "
                              f"{kind}; is this the Prometheus base URL?") from None
        del text
        if not isinstance(doc, dict) or doc.get("status") not in ("success", "error"):
            raise self._fatal(f"expected a Prometheus API answer from {path} "
                              "({'status': ..., 'data': ...}), got other JSON; is this the Prometheus base URL?")
        if doc["status"] == "error":
            text = _error_text(doc)
            if resp.status_code == 422:  # execution error (too many samples, timeout...): this chunk only
                raise ChunkFailed(self._redact(f"query failed: {text}"))
            raise self._fatal(f"the server rejected the query ({self._redact(text)})")
        if resp.status_code >= 400:
            raise self._fatal(f"HTTP {resp.status_code} from {path}")
        return doc.get("data")


def _ssl_context(auth):
    """An SSL context with ``--ca-bundle`` (else the system's CAs), ``--client-cert``/``--client-key``
    and, with ``--insecure``, no verification of the server."""
    import ssl

    try:
        ctx = ssl.create_default_context(cafile=auth.ca_bundle) if auth.ca_bundle else ssl.create_default_context()
    except (OSError, ssl.SSLError) as err:
        raise UsageError(f"--ca-bundle {auth.ca_bundle}: cannot read it as PEM certificates "
                         f"({getattr(err, 'strerror', None) or type(err).__name__})") from None
    if auth.insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if auth.client_cert:
        try:
            ctx.load_cert_chain(auth.client_cert, auth.client_key)
        except (OSError, ssl.SSLError) as err:
            raise UsageError(f"--client-cert {auth.client_cert}: cannot load the certificate and key "
                             f"({getattr(err, 'strerror', None) or type(err).__name__})") from None
    return ctx


def _tls_failure(err) -> str | None:
    """A one-line reason when ``err`` is a TLS handshake failure, else None."""
    text = str(err)
    reason = re.sub(r"\s*\(_ssl\.c:\d+\)", "", re.sub(r"^\[SSL[^\]]*\]\s*", "", text)).strip()
    if "CERTIFICATE_VERIFY_FAILED" in text or "certificate verify failed" in text:
        return f"TLS: the server's certificate is not trusted ({reason[:120]}); give --ca-bundle FILE (or --insecure)"
    if "alert" in text and "certificate" in text:
        return f"TLS: the server refused the client certificate ({reason[:120]}); give --client-cert/--client-key"
    if "[SSL" in text or "SSLError" in type(err.__cause__ or err.__context__ or err).__name__:
        return f"TLS handshake failed ({reason[:120]})"
    return None


def _transport_reason(err) -> str:
    text = str(err).strip() or type(err).__name__
    m = re.search(r"\[Errno -?\d+\]\s*([^\]]+?)\s*$", text) or re.search(r"\]\s*(.+)$", text)
    reason = m.group(1) if m else text
    return f"cannot connect ({reason[:120]})"


def _retry_after(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _json_or_none(body: bytes):
    from ridgeline.parsers.jsontext import loads

    try:
        return loads(body, max_bytes=None)
    except ValueError:  # not JSON, not UTF-8, or over the nesting limit
        return None


def _error_text(doc: dict) -> str:
    return f"{doc.get('errorType', 'error')}: {doc.get('error', '?')}"
