"""A hostile Prometheus on loopback: answers that are malformed, loop, do not decode, nest without
end, or echo the request's credentials back. Each ends in one clean line (exit 2) or in a listed,
skipped series, never in a traceback (exit 3), and no form of a secret ridgeline sent appears in
any output."""

from __future__ import annotations

import base64
import datetime as dt
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ridgeline.sources import prometheus as P

START = dt.datetime(2026, 1, 5, tzinfo=dt.timezone.utc)
GOOD_SERIES = {"metric": {"__name__": "DCGM_FI_DEV_GPU_UTIL", "Hostname": "h1", "gpu": "0"},
               "values": [[1767571200, "50"]]}


def _ok(data) -> bytes:
    return json.dumps({"status": "success", "data": data}).encode()


class _Hostile(BaseHTTPRequestHandler):
    """``mode`` picks the misbehaviour; the cheap first query and the label list answer normally
    unless the mode is about them."""

    mode = ""
    headers_seen: list = []

    def log_message(self, *args):
        pass

    def _send(self, body: bytes, code=200, headers=()):
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _answer(self):
        path = self.path.split("?")[0]
        auth = self.headers.get("Authorization") or ""
        self.headers_seen.append(auth)
        mode = self.mode
        if mode == "redirect-loop":
            return self._send(b"", 302, [("Location", self.path)])
        if mode == "deep" and path == "/api/v1/query":
            return self._send(b"[" * 100_000 + b"]" * 100_000, headers=[("Content-Type", "application/json")])
        if path == "/api/v1/query":
            return self._send(_ok({"resultType": "scalar", "result": [0, "1"]}))
        if path.startswith("/api/v1/label/"):
            return self._send(_ok(7) if mode == "hosts-number" else _ok(["h1"]))
        if mode == "bad-gzip":
            return self._send(b"this is not gzip at all", headers=[("Content-Encoding", "gzip"),
                                                                   ("Content-Type", "application/json")])
        if mode == "echo":  # an error that quotes the request's Authorization header back
            body = json.dumps({"status": "error", "errorType": "execution",
                               "error": f"rejected request with header Authorization: {auth}"}).encode()
            return self._send(body, 422)
        series = {
            "series-string": ["just a string", GOOD_SERIES],
            "labels-list": [{"metric": ["__name__", "DCGM_FI_DEV_GPU_UTIL"], "values": [[1767571200, "5"]]},
                            GOOD_SERIES],
            "point-length": [{"metric": GOOD_SERIES["metric"], "values": [[1767571200, "5", "extra"],
                                                                         [1767571215, "6"]]}],
            "result-string": "not a list",
        }.get(mode, [GOOD_SERIES])
        return self._send(_ok({"resultType": "matrix", "result": series}))

    do_GET = do_POST = _answer


@pytest.fixture
def hostile():
    pytest.importorskip("httpx", reason="httpx not installed (pip install 'ridgeline[prometheus]')")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Hostile.headers_seen = []
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _pull(url, **kw):
    return P.pull(url, start=START, end=START + dt.timedelta(seconds=15),
                  fields={"gpu_util_ratio": ("DCGM_FI_DEV_GPU_UTIL",)}, backoff_s=0.01, retries=0, **kw)


@pytest.mark.parametrize("mode, words", [
    ("redirect-loop", "too many redirects"),
    ("bad-gzip", "does not decode"),
    ("deep", "nested deeper"),
    ("hosts-number", "expected a list of Hostname values"),
    ("result-string", "expected a list of series"),
])
def test_fatal_answers_are_one_clean_line(hostile, mode, words):
    _Hostile.mode = mode
    with pytest.raises(P.PrometheusError) as err:
        _pull(hostile)
    text = str(err.value)
    assert words in text and "\n" not in text and text.startswith(hostile)


@pytest.mark.parametrize("mode, where", [
    ("series-string", "series 0"),
    ("labels-list", "series 0"),
    ("point-length", "series 0, point 0"),
])
def test_malformed_series_are_skipped_and_listed_or_strict(hostile, mode, where):
    _Hostile.mode = mode
    pulled = _pull(hostile)
    bad = [s for s in pulled.skipped if where in s.item]
    assert bad and all("skipped" in s.reason for s in bad)
    assert pulled.frame.height >= 1  # the good series / point is still read
    with pytest.raises(P.PrometheusError) as err:
        _pull(hostile, strict=True)
    assert where in str(err.value) and "without --strict" in str(err.value)


def test_cli_on_a_hostile_server_is_exit_2_never_3(hostile, capsys):
    from ridgeline.cli import main

    for mode in ("redirect-loop", "bad-gzip", "deep", "hosts-number", "result-string"):
        _Hostile.mode = mode
        with pytest.raises(SystemExit) as exc:
            main(["telemetry", "--prometheus", hostile, "--from", "2026-01-05T00:00:00Z",
                  "--to", "2026-01-05T00:00:15Z", "--retries", "0"])
        err = capsys.readouterr().err
        assert exc.value.code == 2, (mode, err)
        assert len(err.strip().splitlines()) == 1, (mode, err)


def test_basic_auth_echoed_back_never_appears(hostile, tmp_path, capsys):
    from ridgeline.cli import main

    user, password = "alice", "pa ss:w0rd/é"
    (tmp_path / "pw").write_text(password + "\n", encoding="utf-8")
    _Hostile.mode = "echo"
    sent_header = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
    outputs = []
    for extra in ([], ["--format", "json"]):
        with pytest.raises(SystemExit):
            main(["telemetry", "--prometheus", hostile, "--from", "2026-01-05T00:00:00Z",
                  "--to", "2026-01-05T00:00:15Z", "--retries", "0", "--basic-auth", user,
                  "--password-file", str(tmp_path / "pw"), *extra])
        cap = capsys.readouterr()
        outputs.append(cap.out + cap.err)
    assert sent_header in _Hostile.headers_seen  # the credentials were sent, and echoed back
    for text in outputs:
        assert "rejected request with header" in text  # the echo reached the output...
        for secret in (password, sent_header.split()[1], f"{user}:{password}", "pa%20ss"):
            assert secret not in text  # ...with every form of the secret redacted
