"""A hostile Prometheus cannot hold a pull, fill its memory, turn its query away or confuse it
(issue 35, classes 6 and 9, server side): hostile servers on 127.0.0.1 (tests/hostile_http.py).

* ``--timeout`` bounds a whole request: a byte every 0.2 s in the status line, the headers or the
  body, or a stall after the headers, ends at the timeout (1 s here), not at the server's pace;
* ``--max-answer`` bounds an answer after decoding: plain (with or without Content-Length),
  gzip and deflate bombs stop at the cap (64 KiB here) with memory to match, naming the cap;
  encodings ridgeline did not ask for are refused;
* a 301/302/303 that turns the POSTed query into a GET says so; 307/308 keep the POST;
* an answer that is not UTF-8 says so, wherever the bad byte is;
* points outside the asked span are dropped with a note that counts them.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import time
import tracemalloc
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hostile_http as H
from ridgeline.sources import prometheus as P

pytest.importorskip("httpx", reason="httpx not installed (pip install 'ridgeline[prometheus]')")

START = dt.datetime(2026, 1, 5, tzinfo=dt.timezone.utc)
CAP = 64 * 1024


def _pull(url, **kw):
    kw.setdefault("retries", 0)
    kw.setdefault("timeout_s", 1.0)
    return P.pull(url, start=START, end=START + dt.timedelta(seconds=15), backoff_s=0.01,
                  fields={"gpu_util_ratio": ("DCGM_FI_DEV_GPU_UTIL",)}, **kw)


def _drip(handler, data: bytes, every_s: float = 0.2, limit_s: float = 8.0) -> None:
    """Write ``data`` one byte at a time; stop when the client leaves or after ``limit_s``."""
    t0 = time.monotonic()
    for i in range(len(data)):
        if time.monotonic() - t0 > limit_s:
            return
        handler.wfile.write(data[i:i + 1])
        handler.wfile.flush()
        time.sleep(every_s)


# ------------------------------------------------------------------------------------------
# --timeout bounds the whole request
# ------------------------------------------------------------------------------------------
def _slow(where: str, on: str):
    body = H.matrix(H.GOOD) if on == "/api/v1/query_range" else H.ok({"resultType": "scalar", "result": [0, "1"]})

    def answer(handler, path, method):
        if path != on and H.prometheus_like(handler, path, method):
            return
        if path != on:
            return H.send(handler, H.matrix(H.GOOD))
        head = (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode()
        if where == "status line":
            return _drip(handler, head + body)
        if where == "headers":
            handler.wfile.write(head[:20])
            return _drip(handler, head[20:] + body)
        handler.wfile.write(head + body[:5])
        if where == "body":
            return _drip(handler, body[5:])
        time.sleep(8)  # "stall": nothing more after the first bytes of the body

    return answer


@pytest.mark.parametrize("on", ["/api/v1/query", "/api/v1/query_range"])
@pytest.mark.parametrize("where", ["status line", "headers", "body", "stall"])
def test_timeout_bounds_the_whole_request(where, on):
    with H.serve(_slow(where, on)) as server:
        t0 = time.monotonic()
        try:
            pulled = _pull(server.url, timeout_s=1.0)
        except P.PrometheusError as err:  # the first query: the pull cannot go on
            assert on == "/api/v1/query" and "timed out" in str(err) and "--timeout 1s" in str(err)
        else:  # a chunk: listed as failed, its samples missing
            assert on == "/api/v1/query_range" and "timed out" in pulled.failed[0][1]
            pulled.close()
        took = time.monotonic() - t0
    # a deadline per read would wait for the whole drip (8 s: a byte every 0.2 s never lets a read
    # time out); under 4 s is the whole request bounded, with room for a loaded machine
    assert took < 4.0, f"{where} on {on}: {took:.2f} s for --timeout 1s"


def test_every_connection_pool_is_under_the_deadline():
    """The deadline reaches httpx's pools through a private attribute: fail loudly if it moves."""
    from ridgeline.sources.client import Client, _DeadlineBackend

    client = Client("http://127.0.0.1:1", P.Auth(), timeout_s=1, retries=0, backoff_s=0)
    try:
        assert client.deadline_pools >= 1
        assert isinstance(client._http._transport._pool._network_backend, _DeadlineBackend)
    finally:
        client.close()


# ------------------------------------------------------------------------------------------
# --max-answer bounds memory
# ------------------------------------------------------------------------------------------
_BOMB_BYTES = 64 * 2**20
_BOMBS: dict = {}


def _bomb(kind: str) -> bytes:
    """64 MiB of a JSON-looking answer, compressed (a few hundred KiB)."""
    if kind not in _BOMBS:
        raw = b'{"status":"success","data":{"resultType":"matrix","result":[' + b" " * _BOMB_BYTES
        _BOMBS[kind] = gzip.compress(raw, 9) if kind == "gzip" else zlib.compress(raw, 9)
    return _BOMBS[kind]


def _big(kind: str):
    def answer(handler, path, method):
        if H.prometheus_like(handler, path, method):
            return
        if kind in ("gzip", "deflate"):
            return H.send(handler, _bomb(kind), headers=[("Content-Encoding", kind)])
        if kind == "br":
            return H.send(handler, b"\x0b\x02\x80{}\x03", headers=[("Content-Encoding", "br")])
        piece = b" " * 65536
        if kind == "length":  # announced: refused before a byte is read
            handler.send_response(200)
            handler.send_header("Content-Length", str(_BOMB_BYTES))
            handler.end_headers()
        else:  # "plain": no length, the body runs until the server closes
            handler.send_response(200)
            handler.send_header("Connection", "close")
            handler.end_headers()
        for _ in range(_BOMB_BYTES // len(piece)):
            handler.wfile.write(piece)

    return answer


@pytest.mark.parametrize("kind", ["plain", "length", "gzip", "deflate"])
def test_an_answer_over_the_cap_stops_there(kind):
    if kind in ("gzip", "deflate"):
        _bomb(kind)  # made before memory is traced
    with H.serve(_big(kind)) as server:
        tracemalloc.start()
        try:
            pulled = _pull(server.url, max_answer_bytes=CAP, timeout_s=10)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    reason = pulled.failed[0][1]
    pulled.close()
    assert "larger than the 64 KiB cap (--max-answer)" in reason and "--max-points" in reason
    assert peak < 8 * 2**20, f"{kind}: {peak / 2**20:.1f} MiB traced for a 64 KiB cap"  # 64 MiB sent


def test_an_encoding_not_asked_for_is_refused():
    with H.serve(_big("br")) as server:
        with pytest.raises(P.PrometheusError, match="encoded as 'br'; ridgeline asks for gzip only"):
            _pull(server.url)


def test_an_answer_within_the_cap_is_read_gzip_or_not():
    def answer(handler, path, method):
        if H.prometheus_like(handler, path, method):
            return
        H.send(handler, gzip.compress(H.matrix(H.GOOD)), headers=[("Content-Encoding", "gzip")])

    with H.serve(answer) as server:
        pulled = _pull(server.url, max_answer_bytes=CAP)
        assert pulled.frame.height == 2 and not pulled.failed
        pulled.close()
        assert {s[0] for s in server.seen}  # the request went


# ------------------------------------------------------------------------------------------
# redirects
# ------------------------------------------------------------------------------------------
def _redirecting(code: int):
    def answer(handler, path, method):
        if path.startswith("/new/"):
            if H.prometheus_like(handler, path[4:], method):
                return
            if method != "POST":  # what a real Prometheus does with a GET query_range and no query
                return H.send(handler, H.matrix([]))
            return H.send(handler, H.matrix(H.GOOD))
        H.send(handler, b"", code, [("Location", "/new" + path)])

    return answer


@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
def test_a_redirect_that_drops_the_post_says_so(code):
    with H.serve(_redirecting(code)) as server:
        if code in (307, 308):
            pulled = _pull(server.url)
            assert pulled.frame.height == 2
            pulled.close()
            return
        with pytest.raises(P.PrometheusError) as err:
            _pull(server.url)
    text = str(err.value)
    assert f"HTTP {code} redirects to {server.url}/new/api/v1/query_range" in text
    assert "turns the POSTed query into a GET" in text and "found none" not in text


def test_credentials_do_not_follow_a_redirect_to_another_host():
    seen = []

    def answer(handler, path, method):
        seen.append((handler.headers.get("Host"), handler.headers.get("Authorization")))
        if handler.headers.get("Host", "").startswith("127.0.0.1"):
            port = handler.headers["Host"].split(":")[1]
            return H.send(handler, b"", 307, [("Location", f"http://localhost:{port}{path}")])
        if H.prometheus_like(handler, path, method):
            return
        H.send(handler, H.matrix(H.GOOD))

    with H.serve(answer) as server:
        pulled = _pull(server.url, auth=P.Auth(username="u", password="QXsecret"))
        pulled.close()
    assert all(a for h, a in seen if h.startswith("127.0.0.1"))
    assert not any(a for h, a in seen if h.startswith("localhost"))


# ------------------------------------------------------------------------------------------
# not UTF-8
# ------------------------------------------------------------------------------------------
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=st.integers(0, 200), bad=st.sampled_from([b"\xff", b"\xc3(", b"\xe9", b"\xed\xa0\x80", b"\x80"]),
       path=st.sampled_from(["/api/v1/query", "/api/v1/query_range"]))
def test_an_answer_not_in_utf8_says_so(where, bad, path):
    body = H.matrix(H.GOOD)
    at = min(where, len(body))
    hostile = body[:at] + bad + body[at:]

    def answer(handler, p, method):
        if p != path and H.prometheus_like(handler, p, method):
            return
        H.send(handler, hostile if p == path else H.matrix(H.GOOD))

    with H.serve(answer) as server:
        with pytest.raises(P.PrometheusError) as err:
            _pull(server.url)
    text = str(err.value)
    assert f"is not UTF-8 (byte 0x{bad[0]:02x} at offset {at:,})" in text and "base URL" not in text


# ------------------------------------------------------------------------------------------
# points outside the asked span
# ------------------------------------------------------------------------------------------
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(offsets=st.lists(st.one_of(st.sampled_from([0, 15]), st.integers(-10**9, 10**9)), min_size=1, max_size=30,
                        unique=True))
def test_points_outside_the_asked_span_are_dropped_and_counted(offsets):
    t0 = int(START.timestamp())
    points = [[t0 + o, "50"] for o in offsets if 0 <= t0 + o < 7258118400]
    inside = sum(1 for t, _ in points if t0 <= t <= t0 + 15)
    series = [{"metric": {"__name__": "DCGM_FI_DEV_GPU_UTIL", "Hostname": "h1", "gpu": "0"}, "values": points}]

    def answer(handler, path, method):
        if H.prometheus_like(handler, path, method):
            return
        H.send(handler, H.matrix(series))

    with H.serve(answer) as server:
        try:
            pulled = _pull(server.url)
        except Exception as err:  # nothing inside: the CLI says "found none"; the library returns none
            raise AssertionError(err) from err
        rows = pulled.rows
        notes = pulled.notes
        pulled.close()
    assert rows == inside
    out = len(points) - inside
    assert any(f"{out} points were outside the time span" in n for n in notes) == (out > 0)


# ------------------------------------------------------------------------------------------
# a pull whose first requests all go unanswered stops there
# ------------------------------------------------------------------------------------------
FIELDS = {f"f{i}": ("DCGM_FI_DEV_GPU_UTIL",) for i in range(12)}  # 12 requests


@pytest.mark.parametrize("kind", ["body", "stall", "over the cap", "query error"])
def test_a_pull_whose_first_requests_all_go_unanswered_stops(kind):
    def answer(handler, path, method):
        if H.prometheus_like(handler, path, method):
            return
        if kind == "over the cap":
            return H.send(handler, b" " * (CAP + 1))
        if kind == "query error":  # an answer: the server works, this query does not; no reason to stop
            return H.send(handler, json.dumps({"status": "error", "errorType": "execution",
                                               "error": "too many samples"}).encode(), 422)
        return _slow(kind, "/api/v1/query_range")(handler, path, method)

    with H.serve(answer) as server:
        t0 = time.monotonic()
        kw = dict(start=START, end=START + dt.timedelta(seconds=15), fields=FIELDS, retries=0, timeout_s=1.0,
                  concurrency=3, max_answer_bytes=CAP)
        if kind == "query error":
            pulled = P.pull(server.url, **kw)
            assert len(pulled.failed) == len(FIELDS)  # every request asked, each listed
            pulled.close()
            return
        with pytest.raises(P.PrometheusError) as err:
            P.pull(server.url, **kw)
        took = time.monotonic() - t0
        asked = sum(1 for p, *_ in server.seen if p == "/api/v1/query_range")
    text = str(err.value)
    assert "the first 3 requests all ended without a usable answer" in text and "stopped before the other" in text
    # about one wave of --concurrency, not 12 requests (the count decides; the time only says it never
    # hangs, with room for a loaded machine: 12 timeouts would take 4 s and more)
    assert asked <= 6 and took < 6.0, (asked, took)


@pytest.mark.parametrize("text, expected", [("256MiB", 256 * 2**20), ("1GiB", 2**30), ("500MB", 500 * 10**6),
                                            ("64k", 65536), ("4096", 4096)])
def test_max_answer_sizes(text, expected):
    from ridgeline.sources.client import parse_size

    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "lots", "10", "-5MiB", "1TiB"])
def test_max_answer_refuses_what_is_no_size(text):
    from ridgeline.errors import UsageError
    from ridgeline.sources.client import parse_size

    with pytest.raises(UsageError, match="--max-answer"):
        parse_size(text)
