"""ridgeline.sources.prometheus without a Prometheus: times, selectors, the chunk plan, and the
HTTP behaviour (retries, backoff, secrets) against a small stdlib HTTP server that misbehaves on
purpose. The real server is exercised in test_prometheus_live.py."""

from __future__ import annotations

import datetime as dt
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ridgeline.errors import UsageError
from ridgeline.sources import prometheus as P

NOW = dt.datetime(2026, 1, 6, 3, 0, tzinfo=dt.timezone.utc)


@pytest.mark.parametrize("text, expected", [
    ("now", NOW),
    ("-24h", NOW - dt.timedelta(hours=24)),
    ("now-1d", NOW - dt.timedelta(days=1)),
    ("now - 30m", NOW - dt.timedelta(minutes=30)),
    ("2026-01-05T00:00:00Z", dt.datetime(2026, 1, 5, tzinfo=dt.timezone.utc)),
    ("2026-01-05T01:00:00+01:00", dt.datetime(2026, 1, 5, tzinfo=dt.timezone.utc)),
    ("2026-01-05", dt.datetime(2026, 1, 5, tzinfo=dt.timezone.utc)),
    ("1767571200", dt.datetime(2026, 1, 5, tzinfo=dt.timezone.utc)),
])
def test_parse_time(text, expected):
    assert P.parse_time(text, now=NOW) == expected


@pytest.mark.parametrize("text", ["yesterday", "-24x", "2026-13-01", ""])
def test_parse_time_rejects(text):
    with pytest.raises(UsageError, match="--from"):
        P.parse_time(text, now=NOW)


def test_selector_and_query():
    assert P.selector_matchers('{cluster="a",Hostname=~"node-.*"}') == 'cluster="a",Hostname=~"node-.*"'
    assert P.selector_matchers('cluster="a"') == 'cluster="a"'
    for bad in ("{cluster", "cluster", "{a}"):
        with pytest.raises(UsageError, match="--match"):
            P.selector_matchers(bad)
    chunk = P.Chunk("gpu_util_ratio", ("DCGM_FI_DEV_GPU_UTIL", "dcgm_gpu_utilization"), ("node.1", 'we"ird'), 0, 60)
    q = P.chunk_query(chunk, 'cluster="a"')
    assert q == ('{__name__=~"DCGM_FI_DEV_GPU_UTIL|dcgm_gpu_utilization",cluster="a",'
                 'Hostname=~"node\\\\.1|we\\"ird"}')
    assert P.chunk_query(P.Chunk("f", ("X",), (), 0, 1), "").endswith(',Hostname=""}')


@settings(max_examples=200, deadline=None)
@given(points=st.integers(1, 50_000), max_points=st.integers(2, 11_000), step=st.sampled_from([1.0, 15.0, 30.0, 60.0]),
       offset=st.integers(0, 86399), slice_s=st.sampled_from([None, 7000.0, 86400.0]))
def test_chunk_plan_covers_every_point_once(points, max_points, step, offset, slice_s):
    start = 1767571200.0 + offset * step % 86400
    end = start + (points - 1) * step
    chunks = P.plan_chunks({"f": ("X",)}, [None], start=start, end=end, step=step, max_points=max_points,
                           slice_s=slice_s)
    assert chunks[0].start == start and chunks[-1].end == end
    for a, b in zip(chunks, chunks[1:]):
        assert b.start == a.end + step  # no gap, no overlap on the step grid
    assert all(round((c.end - c.start) / step) + 1 <= max_points for c in chunks)
    assert sum(round((c.end - c.start) / step) + 1 for c in chunks) == points
    if slice_s:  # no request crosses a time slice boundary (each answer falls in one slice of the spill)
        assert all(c.start // slice_s == c.end // slice_s for c in chunks)


def test_safe_url_hides_user_info():
    assert P.safe_url("https://u:secret@prom.example:9443/prometheus/?x=1") == "https://prom.example:9443/prometheus"
    assert "secret" not in repr(P.Auth(bearer_token="secret", password="secret"))


class _Stub(BaseHTTPRequestHandler):
    """Answers like Prometheus after ``fail`` failures (status ``code``) per path."""

    script: dict = {}
    seen: list = []
    names: tuple = ("DCGM_FI_DEV_GPU_UTIL",)
    extra: dict = {}  # more labels on every series (a pod, a namespace)

    def log_message(self, *args):  # quiet
        pass

    def _answer(self):
        path = self.path.split("?")[0]
        self.seen.append((path, self.headers.get("Authorization")))
        left = self.script.get(path, 0)
        if left:
            self.script[path] = left - 1
            self.send_response(self.script.get("code", 503))
            self.send_header("Retry-After", "0")
            self.end_headers()
            return
        if path == "/api/v1/query":
            body = {"status": "success", "data": {"resultType": "scalar", "result": [0, "1"]}}
        elif path.startswith("/api/v1/label/"):
            body = {"status": "success", "data": ["h1"]}
        else:
            body = {"status": "success", "data": {"resultType": "matrix", "result": [
                {"metric": {"__name__": name, "Hostname": "h1", "gpu": "0", **self.extra},
                 "values": [[1767571200, "50"], [1767571215, "NaN"]]} for name in self.names]}}
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _answer


@pytest.fixture
def stub():
    pytest.importorskip("httpx", reason="httpx not installed (pip install 'ridgeline[prometheus]')")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Stub.script, _Stub.seen, _Stub.names, _Stub.extra = {}, [], ("DCGM_FI_DEV_GPU_UTIL",), {}
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _pull(url, **kw):
    start = dt.datetime(2026, 1, 5, tzinfo=dt.timezone.utc)
    return P.pull(url, start=start, end=start + dt.timedelta(seconds=15), fields={"gpu_util_ratio": ("DCGM_FI_DEV_GPU_UTIL",)},
                  backoff_s=0.01, **kw)


@pytest.mark.parametrize("code", [503, 429, 500])
def test_transient_errors_are_retried(stub, code):
    _Stub.script = {"/api/v1/query_range": 2, "code": code}
    done = []
    pulled = _pull(stub, retries=2, progress=lambda d, t: done.append((d, t)))
    assert not pulled.failed and pulled.frame.height == 2
    assert pulled.frame.get_column("value").to_list() == [0.5, None]  # NaN is missing, never 0
    assert sum(1 for p, _ in _Stub.seen if p == "/api/v1/query_range") == 3
    assert done == [(1, 1)]


def test_a_chunk_failing_after_retries_is_listed_or_strict(stub):
    _Stub.script = {"/api/v1/query_range": 10, "code": 502}
    pulled = _pull(stub, retries=1)
    assert [c.field for c, _ in pulled.failed] == ["gpu_util_ratio"]
    assert "HTTP 502" in pulled.failed[0][1] and "after 2 attempts" in pulled.failed[0][1]
    assert pulled.skipped[0].item.startswith("field gpu_util_ratio (DCGM_FI_DEV_GPU_UTIL), all hosts, 2026-01-05T00:00:00Z")
    _Stub.script = {"/api/v1/query_range": 10, "code": 502}
    with pytest.raises(P.PrometheusError, match="gpu_util_ratio.*HTTP 502"):
        _pull(stub, retries=0, strict=True)


def test_token_is_sent_and_never_shown(stub):
    token = "tok-0123456789-secret"
    _Stub.script = {"/api/v1/query": 1, "code": 401}
    with pytest.raises(P.PrometheusError) as err:
        _pull(stub, auth=P.Auth(bearer_token=token))
    assert "HTTP 401" in str(err.value) and token not in str(err.value)
    assert _Stub.seen[0][1] == f"Bearer {token}"


def test_cli_reads_token_from_env_and_file(stub, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from ridgeline.cli import cli

    token = "tok-from-file-987"
    (tmp_path / "token").write_text(token + "\n", encoding="utf-8")
    args = ["telemetry", "--prometheus", stub, "--from", "2026-01-05T00:00:00Z", "--to", "2026-01-05T00:00:15Z",
            "--format", "json"]
    res = CliRunner().invoke(cli, [*args, "--bearer-token-file", str(tmp_path / "token")])
    assert res.exit_code == 0, res.output
    assert {a for _, a in _Stub.seen} == {f"Bearer {token}"} and token not in res.output
    monkeypatch.setenv("PROM_TOKEN_TEST", "tok-env-555")
    _Stub.seen.clear()
    res = CliRunner().invoke(cli, [*args, "--bearer-token-env", "PROM_TOKEN_TEST"])
    assert res.exit_code == 0 and {a for _, a in _Stub.seen} == {"Bearer tok-env-555"}
    res = CliRunner().invoke(cli, [*args, "--bearer-token-env", "NOT_SET_ANYWHERE_X"])
    assert res.exit_code != 0 and "NOT_SET_ANYWHERE_X" in str(res.exception)


def test_a_field_under_two_names_is_kept_once(stub):
    _Stub.names = ("DCGM_FI_DEV_GPU_UTIL", "dcgm_gpu_utilization")  # exporter 3.x and 1.x names at once
    pulled = _pull(stub, retries=0)
    assert pulled.frame.height == 2 and pulled.info.rows == 4
    assert any("came twice" in n for n in pulled.notes)


def test_a_pull_keeps_the_workload_labels_for_by_pod(stub, tmp_path):
    from click.testing import CliRunner

    from ridgeline.cli import cli

    # the exporter's own pod (the scrape's labels) and the workload's (exported_*, honorLabels off)
    _Stub.extra = {"namespace": "gpu-operator", "pod": "dcgm-exporter-abc", "exported_namespace": "ml",
                   "exported_pod": "train-0", "job": "dcgm"}
    store = tmp_path / "store"
    args = ["telemetry", "--prometheus", stub, "--from", "2026-01-05T00:00:00Z", "--to", "2026-01-05T00:00:15Z",
            "--by", "pod", "--by", "job", "--format", "json"]
    res = CliRunner().invoke(cli, [*args, "--save", str(store)])
    assert res.exit_code == 0, res.output
    groups = json.loads(res.stdout)["telemetry"]["groups"]  # (stderr: "saved to ...")
    assert [g["keys"] for g in groups] == [{"pod": "ml/train-0", "job": "dcgm"}]
    # the store it saved keeps the labels: the same groups read back from it
    res = CliRunner().invoke(cli, ["telemetry", str(store), "--by", "pod", "--by", "job", "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["telemetry"]["groups"] == groups
