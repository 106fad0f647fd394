"""A Prometheus-shaped HTTP server on 127.0.0.1 whose answers a test writes as a function.

``with serve(answer) as url:`` runs a threaded stdlib server; ``answer(handler, path, method)``
is called for every request and writes the reply itself with the helpers below (so it can send
headers and then drip a body, inflate a gzip bomb, redirect, or answer in Latin-1). The cheap
first query and the Hostname label list get well-formed answers from :func:`prometheus_like`
unless ``answer`` handles them. Every request's path, method and Authorization header is kept in
``Server.seen``. Threads are daemons and the server is shut down on exit, so a test that ends
early leaves nothing running; a handler still dripping notices the closed socket and stops.
"""

from __future__ import annotations

import contextlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

START = 1767571200  # 2026-01-05T00:00:00Z


def ok(data) -> bytes:
    return json.dumps({"status": "success", "data": data}).encode()


def matrix(series) -> bytes:
    return ok({"resultType": "matrix", "result": series})


GOOD = [{"metric": {"__name__": "DCGM_FI_DEV_GPU_UTIL", "Hostname": "h1", "gpu": "0"},
         "values": [[START, "50"], [START + 15, "60"]]}]


def send(handler, body: bytes, code: int = 200, headers=(), length: bool = True) -> None:
    handler.send_response(code)
    for k, v in headers:
        handler.send_header(k, v)
    if length:
        handler.send_header("Content-Length", str(len(body)))
    handler.send_header("Connection", "close")  # one request per connection: no reuse race
    handler.end_headers()
    handler.wfile.write(body)


def prometheus_like(handler, path: str, method: str) -> bool:
    """Answer the first query and the label list as Prometheus would; True when answered."""
    if path == "/api/v1/query":
        send(handler, ok({"resultType": "scalar", "result": [0, "1"]}), headers=[("Content-Type", "application/json")])
        return True
    if path.startswith("/api/v1/label/"):
        send(handler, ok(["h1"]), headers=[("Content-Type", "application/json")])
        return True
    return False


class Server:
    seen: list

    def __init__(self, answer):
        self.seen = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _any(self):
                path = self.path.split("?")[0]
                n = int(self.headers.get("Content-Length") or 0)
                body = self.body = self.rfile.read(n) if n else b""  # the POSTed form, for answers that need it
                outer.seen.append((path, self.command, self.headers.get("Authorization"), body))
                try:
                    answer(self, path, self.command)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a deadline, a cap): what the test wants
                self.close_connection = True

            do_GET = do_POST = _any

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        self.thread = threading.Thread(target=self.http.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)


@contextlib.contextmanager
def serve(answer):
    server = Server(answer)
    server.thread.start()
    try:
        yield server
    finally:
        server.http.shutdown()
        server.http.server_close()
