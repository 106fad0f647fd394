"""Credentials in a ``--prometheus`` URL (issue 35, class 1): one parser (ridgeline.sources.url)
reads user info whose password holds ``/ # @ % : ?`` by the last-``@`` rule, sends it intact, and
no part of it appears anywhere: stdout, stderr, files written, exception texts, ``--debug``
tracebacks, for runs that fail at every stage (bad port, bad host, DNS, refused connection,
HTTP errors, an answer that is no Prometheus answer or echoes the request, a bug) and for a run
that succeeds. Passwords are generated over that hostile alphabet (hypothesis)."""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import io
import json
import tempfile
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hostile_http as H
from prometheus_server import free_port
from ridgeline import redact
from ridgeline.errors import UsageError
from ridgeline.sources import url as U

pytest.importorskip("httpx", reason="httpx not installed (pip install 'ridgeline[prometheus]')")

# upper-case letters no host, path or message of these tests holds (hosts and paths are lower
# case), no hex digit (so a '%' never starts an escape and the password is sent as typed), and
# the characters that broke urlsplit
HOSTILE = "QXZJKW/#@%:?"
passwords = st.text(alphabet=HOSTILE, min_size=6, max_size=24).filter(lambda p: sum(c in "QXZJKW" for c in p) >= 2)
users = st.text(alphabet="abcdefghij_", min_size=1, max_size=8)


def _pieces(secret: str, n: int = 4) -> set[str]:
    return {secret[i:i + n] for i in range(len(secret) - n + 1)}


def assert_no_part(secret: str, *texts: str) -> None:
    """No substring of ``secret`` of length >= 4 (nor its percent-encoded form) in any text."""
    forms = _pieces(secret) | {quote(secret, safe="")}
    for text in texts:
        hit = [f for f in forms if f in text]
        assert not hit, f"{hit[:3]} of the secret in {text[:300]!r}"


# ------------------------------------------------------------------------------------------
# the parser
# ------------------------------------------------------------------------------------------
@settings(max_examples=300, deadline=None)
@given(user=users, password=passwords, host=st.sampled_from(["prom", "127.0.0.1", "prom.example.org", "[::1]"]),
       port=st.one_of(st.none(), st.integers(1, 65535)), path=st.sampled_from(["", "/", "/prometheus", "/a/b/"]),
       tail=st.sampled_from(["", "?x=1", "#frag"]))
def test_the_last_at_ends_the_user_info(user, password, host, port, path, tail):
    text = f"http://{user}:{password.replace('%', '%25')}@{host}" + (f":{port}" if port else "") + path + tail
    url = U.parse(text)
    assert (url.username, url.password) == (user, password)
    assert (url.host, url.port, url.path) == (host, port, path.rstrip("/"))
    assert url.shown == f"http://{host}" + (f":{port}" if port else "") + path.rstrip("/")
    assert_no_part(password, url.shown, str(url), repr(url), U.shown(text))


@settings(max_examples=200, deadline=None)
@given(password=passwords, bad=st.sampled_from([":99999", ":0", ":S3cr", ":", ":80x", "/[zz", "@", ""]))
def test_a_refused_url_quotes_no_secret(password, bad):
    """Bad port, bad host, nothing after the '@': one UsageError, nothing of the password."""
    text = f"http://alice:{password}@" + ("prom" + bad if not bad.startswith(("/", "@")) and bad else bad)
    try:
        U.parse(text)
    except UsageError as err:
        assert "--prometheus" in str(err)
        assert_no_part(password, str(err), repr(err))
    else:
        assert bad == ":"  # 'prom:' is prom with no port: nothing to refuse


@pytest.mark.parametrize("text, user, password", [
    ("http://u:p%2Fw%40rd@h", "u", "p/w@rd"),  # escaped, as RFC 3986 wants
    ("http://u:p/w@rd@h", "u", "p/w@rd"),  # raw: the last '@' ends the user info
    ("http://u:50%off@h", "u", "50%off"),  # a '%' that starts no escape is kept
    ("http://u:a:b@h", "u", "a:b"),  # the first ':' ends the user name
    ("http://TOKEN1234@h", "TOKEN1234", None),  # a user alone (a token as user name)
    ("http://:pw@h", "", "pw"),
])
def test_user_info_spellings(text, user, password):
    url = U.parse(text)
    assert (url.username, url.password, url.shown) == (user, password, "http://h")


def test_user_info_that_does_not_decode_is_refused_with_the_hint():
    with pytest.raises(UsageError, match="--password-file") as err:
        U.parse("http://u:S3cr%ff3tQQ@prom:9090")
    assert "S3cr" not in str(err.value) and "'http://***@prom:9090'" in str(err.value)


def test_user_info_and_basic_auth_together_are_refused():
    from ridgeline.sources import prometheus as P

    with pytest.raises(UsageError, match="give the credentials once"):
        P.pull("http://u:QXpw@127.0.0.1:1", start=dt.datetime(2026, 1, 5, tzinfo=dt.timezone.utc),
               end=dt.datetime(2026, 1, 6, tzinfo=dt.timezone.utc), auth=P.Auth(username="v", password="w"))


# ------------------------------------------------------------------------------------------
# the CLI, failing at every stage
# ------------------------------------------------------------------------------------------
def _answer(handler, path, method):
    """The mode is the base URL's first path segment: /ok, /http500, /http401, /echo, /html, /latin1."""
    mode, _, rest = path.lstrip("/").partition("/")
    auth = handler.headers.get("Authorization") or ""
    rest = "/" + rest
    if mode == "http500":
        return H.send(handler, f"<h1>500 for {handler.requestline} {auth}</h1>".encode(), 500)
    if mode == "http401":
        return H.send(handler, f"denied {auth}".encode(), 401)
    if mode == "echo":  # an error that quotes the request line and its Authorization header back
        body = json.dumps({"status": "error", "errorType": "bad_data",
                           "error": f"cannot parse {handler.requestline} with {auth}"}).encode()
        return H.send(handler, body, 400, [("Content-Type", "application/json")])
    if mode == "html":
        return H.send(handler, f"<html>login as {auth} at {handler.requestline}</html>".encode(), 200,
                      [("Content-Type", "text/html")])
    if mode == "latin1":
        return H.send(handler, f'{{"status": "success", "data": "\xe9 {auth}"}}'.encode("latin-1"), 200)
    if H.prometheus_like(handler, rest, method):
        return
    return H.send(handler, H.matrix(H.GOOD), headers=[("Content-Type", "application/json")])


@pytest.fixture(scope="module")
def server():
    with H.serve(_answer) as s:
        yield s


STAGES = ["port", "port-word", "host", "dns", "refused", "http500", "http401", "echo", "html", "latin1", "bug", "ok"]


def _url(stage: str, server, user: str, password: str) -> str:
    base = server.url.replace("http://", f"http://{user}:{password}@")
    return {
        "port": f"http://{user}:{password}@127.0.0.1:99999",
        "port-word": f"http://{user}:{password}@prom:abc",
        "host": f"http://{user}:{password}@[zz]:1",
        "dns": f"http://{user}:{password}@nonexistent.invalid:9090",
        "refused": f"http://{user}:{password}@127.0.0.1:{free_port()}"  # nothing listens there,
    }.get(stage, f"{base}/{stage}")


def _run_cli(args, monkeypatch=None):
    from ridgeline.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(args)
        except SystemExit as exc:
            code = exc.code
        else:
            code = 0
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("stage", STAGES)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(user=users, password=passwords, fmt=st.sampled_from(["json", "table", "csv"]))
def test_no_part_of_a_secret_in_any_output(server, monkeypatch, stage, user, password, fmt):
    redact._forget_all()  # each example on its own: the backstop only knows this run's secrets
    url = _url(stage, server, user, password)
    with tempfile.TemporaryDirectory() as tmp, monkeypatch.context() as m:
        if stage == "bug":  # a bug whose exception quotes the URL and the password as given
            from ridgeline.sources import prometheus as P

            def boom(*a, **k):
                raise RuntimeError(f"boom while planning {url} with {password}")

            m.setattr(P, "plan_chunks", boom)
        out_file = Path(tmp) / f"out.{fmt}"
        server.seen.clear()
        code, out, err = _run_cli(["--debug", "telemetry", "--prometheus", url, "--from", "2026-01-05T00:00:00Z",
                                   "--to", "2026-01-05T00:00:15Z", "--retries", "0", "--timeout", "5s",
                                   "--format", fmt, "-o", str(out_file)])
        written = "".join(p.read_text(encoding="utf-8", errors="replace") for p in Path(tmp).iterdir())
    expected = {"ok": 0, "bug": 3}.get(stage, 2)
    assert code == expected, (stage, err)
    if stage not in ("port", "port-word", "host", "dns", "refused"):
        sent = {a for _p, _m, a, _b in server.seen}
        assert sent == {"Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}  # intact
    if stage == "bug":
        assert "Traceback" in err and "boom while planning" in err
    if stage == "ok":
        assert json.loads(written)["inputs"][0]["path"] == server.url + "/ok" if fmt == "json" else written
    b64 = base64.b64encode(f"{user}:{password}".encode()).decode()
    assert b64 not in out + err + written
    assert_no_part(password, out, err, written)


@pytest.mark.parametrize("stage", ["http500", "http401", "echo", "html", "latin1", "dns", "refused", "ok"])
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(user=users, password=passwords)
def test_no_part_of_a_secret_in_exceptions_notes_or_inputs(server, stage, user, password):
    """The library: PrometheusError texts, notes, skipped and inputs of a pull."""
    from ridgeline.sources import prometheus as P

    start = dt.datetime(2026, 1, 5, tzinfo=dt.timezone.utc)
    try:
        pulled = P.pull(_url(stage, server, user, password), start=start, end=start + dt.timedelta(seconds=15),
                        retries=0, timeout_s=5, fields={"gpu_util_ratio": ("DCGM_FI_DEV_GPU_UTIL",)})
    except P.PrometheusError as err:
        texts = [str(err), repr(err)]
    else:
        texts = [pulled.info.path, *pulled.notes, *(repr(s) for s in pulled.skipped),
                 *pulled.frame.get_column("source").to_list()]
        pulled.close()
    assert_no_part(password, *texts)
