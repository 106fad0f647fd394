"""telemetry --prometheus against a REAL Prometheus (Debian's `prometheus` 2.42 package).

One server per test session (tests/prometheus_server.py), loaded with a generated fixture day via
``promtool tsdb create-blocks-from openmetrics``; the same day is also written as a long CSV, so
every pull is compared with reading the equivalent file. Two more servers (copies of the same
blocks) cover basic auth (``--web.config.file``) and a server that refuses large queries.
Skipped, with the reason, only when the binaries (or the httpx extra) are absent.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

import prometheus_server as ps  # noqa: E402

pytestmark = [
    pytest.mark.early,  # one worker runs the module (a real Prometheus): started first, never the run's tail
    pytest.mark.skipif(not (shutil.which("prometheus") and shutil.which("promtool")),
                       reason="prometheus/promtool not installed (apt-get install prometheus)"),
]
httpx = pytest.importorskip("httpx", reason="httpx not installed (pip install 'ridgeline[prometheus]')")

FROM = "2026-01-05T00:00:00Z"
TO = "2026-01-05T23:59:30Z"  # the day's last sample: query_range would repeat it 5 more minutes
PASSWORD = "nightly-test-pw"
# bcrypt of PASSWORD, made with: python -c "import bcrypt; print(bcrypt.hashpw(b'nightly-test-pw', bcrypt.gensalt(10)).decode())"
PASSWORD_HASH = "$2b$10$UqSgVR5OYmOz5STrr6ZqfuttFHLweGH2sJMXu3PRiLIJgN3GtXt6C"


@pytest.fixture(scope="session")
def day(tmp_path_factory):
    """(day.om, day.csv, folder of loaded blocks)."""
    work = tmp_path_factory.mktemp("prom-day")
    om, csv = ps.write_fixture_day(work / "fixture")
    blocks = work / "blocks"
    ps.load_blocks(om, blocks)
    return om, csv, blocks


def _server(tmp_path_factory, blocks, name, **kw):
    work = tmp_path_factory.mktemp(name)
    data = work / "data"
    shutil.copytree(blocks, data)
    return ps.PrometheusServer(data, work, **kw), work


@pytest.fixture(scope="session")
def prom(tmp_path_factory, day):
    server, _ = _server(tmp_path_factory, day[2], "prom")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def prom_auth(tmp_path_factory, day):
    work = tmp_path_factory.mktemp("prom-auth-conf")
    web = work / "web.yml"
    web.write_text(f"basic_auth_users:\n  nightly: {PASSWORD_HASH}\n", encoding="utf-8")
    server, _ = _server(tmp_path_factory, day[2], "prom-auth", web_config=web)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def file_doc(day, run_cli):
    """The fixture day read from the equivalent CSV file."""
    res = run_cli("telemetry", str(day[1]), "--format", "json")
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


@pytest.fixture(scope="session")
def run_cli():
    """``ridgeline ARGS`` in this process (no interpreter start per call), through ``main`` so exit
    codes and one-line errors are the real ones; ``env`` is set for the call only."""
    import subprocess

    from click.testing import CliRunner

    from ridgeline.cli import main

    def run(*args, env=None):
        try:
            runner = CliRunner(mix_stderr=False)  # click 8.1
        except TypeError:
            runner = CliRunner()  # click >= 8.2 keeps stderr apart
        with runner.isolation(env=env) as (out, err, *_):
            try:
                main(list(args))
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
            stdout, stderr = out.getvalue().decode(), err.getvalue().decode()
        return subprocess.CompletedProcess(args, code, stdout, stderr)

    return run


def _pull(run_cli, url, *extra, env=None):
    res = run_cli("telemetry", "--prometheus", url, "--from", FROM, "--to", TO, "--step", "30s", "--format", "json",
                  *extra, env=env)
    return res, (json.loads(res.stdout) if res.returncode == 0 else None)


@pytest.mark.parametrize("extra", [(), ("--max-points", "500", "--hosts-per-query", "1", "--concurrency", "3")],
                         ids=["one-request-per-field", "chunked-by-time-and-host"])
def test_pull_gives_the_same_windows_and_findings_as_the_file(prom, run_cli, file_doc, extra):
    res, doc = _pull(run_cli, prom.url, *extra)
    assert res.returncode == 0, res.stderr
    assert doc["inputs"] == [{"path": prom.url, "kind": "prometheus-api", "rows": file_doc["inputs"][0]["rows"]}]
    assert doc["telemetry"] == file_doc["telemetry"]
    assert doc["findings"] == file_doc["findings"]
    assert {f["code"] for f in doc["findings"]} >= {"RL201", "RL203"}  # the day has something to find
    assert doc["skipped"] == []


def test_chunk_plan_really_splits(prom):
    import datetime as dt

    from ridgeline.sources.prometheus import parse_time, pull

    start, end = parse_time(FROM), parse_time(TO)
    one = pull(prom.url, start=start, end=end, step_s=ps.STEP_S)
    many = pull(prom.url, start=start, end=end, step_s=ps.STEP_S, max_points=500, hosts_per_query=1)
    from ridgeline.parsers.telemetry.dcgm_fields import FIELDS

    n_fields = len(FIELDS)  # 24 activity/clock/memory fields + 13 health fields (XID, ECC, remap, links)
    assert one.chunks == n_fields  # one request per field
    # 2880 points in spans of 500 -> 6 spans; 3 hosts in groups of 1 + the no-Hostname group
    assert many.chunks == n_fields * 6 * 4
    assert many.frame.sort(many.frame.columns).equals(one.frame.sort(one.frame.columns))
    assert many.frame.get_column("timestamp").min() == start and many.frame.get_column("timestamp").max() == end
    assert end - start == dt.timedelta(seconds=ps.STEP_S * (ps.DAY_POINTS - 1))


def test_missing_field_is_missing_not_zero(prom, run_cli):
    # node03 exports no profiling fields at all
    res, doc = _pull(run_cli, prom.url, "--match", '{Hostname="node03"}')
    assert res.returncode == 0, res.stderr
    windows = doc["telemetry"]["windows"]
    assert windows and {w["host"] for w in windows} == {"node03"}
    assert all(w["tensor_active_mean_ratio"] is None and w["gpu_util_mean_ratio"] is not None for w in windows)
    assert all(not w["has_profiling"] for w in windows)
    note = next(n for n in doc["notes"] if "no series for" in n)
    assert "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE" in note and "DCGM_FI_DEV_GPU_UTIL" not in note
    assert any(f["code"] == "RL205" and "no DCGM profiling fields" in f["message"] for f in doc["findings"])


def test_save_writes_a_store_that_reads_back_the_same(prom, run_cli, file_doc, tmp_path):
    store = tmp_path / "store"
    res, _ = _pull(run_cli, prom.url, "--save", str(store), "--to", "2026-01-05T11:59:30Z")  # half the day
    assert res.returncode == 0, res.stderr
    parts = sorted(p.relative_to(store).as_posix() for p in store.rglob("*") if p.is_file())
    assert parts == [f"date=2026-01-05/host={h}/part-0.parquet" for h in ps.HOSTS]
    first = {p: (store / p).stat().st_mtime_ns for p in parts}
    res, _ = _pull(run_cli, prom.url, "--save", str(store))  # the whole day: fills the second half
    assert res.returncode == 0, res.stderr
    assert "3 extended" in res.stderr
    res, _ = _pull(run_cli, prom.url, "--save", str(store))  # nothing missing: nothing rewritten
    assert "3 already complete" in res.stderr
    assert not [p for p in store.rglob("*") if p.name.startswith(".")]  # no temporary left behind
    assert all((store / p).stat().st_mtime_ns != first[p] for p in parts)
    res = run_cli("telemetry", str(store), "--format", "json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["telemetry"] == file_doc["telemetry"]
    assert doc["findings"] == file_doc["findings"]


def test_basic_auth(prom_auth, run_cli, tmp_path):
    res, _ = _pull(run_cli, prom_auth.url)
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and "HTTP 401" in res.stderr and "Traceback" not in res.stderr
    res, _ = _pull(run_cli, prom_auth.url, "--basic-auth", "nightly", env={"RIDGELINE_PROMETHEUS_PASSWORD": "wrong-pw-xyz"})
    assert res.returncode == 2 and "HTTP 401" in res.stderr and "wrong-pw-xyz" not in res.stderr + res.stdout
    secret = tmp_path / "pw"
    secret.write_text(PASSWORD + "\n", encoding="utf-8")
    res, doc = _pull(run_cli, prom_auth.url, "--basic-auth", "nightly", "--password-file", str(secret))
    assert res.returncode == 0, res.stderr
    assert doc["telemetry"]["windows"] and PASSWORD not in res.stdout + res.stderr
    # credentials in the URL work and are never shown
    url = prom_auth.url.replace("http://", f"http://nightly:{PASSWORD}@")
    res, doc = _pull(run_cli, url)
    assert res.returncode == 0, res.stderr
    assert PASSWORD not in res.stdout + res.stderr and doc["inputs"][0]["path"] == prom_auth.url


def test_dead_server_is_one_line_exit_2(run_cli):
    url = f"http://127.0.0.1:{ps.free_port()}"
    res, _ = _pull(run_cli, url, "--retries", "1")
    assert res.returncode == 2
    assert res.stderr.startswith(f"ridgeline: error: {url}: cannot connect") and res.stderr.count("\n") == 1


def test_query_the_server_rejects_is_exit_2(prom, run_cli):
    res, _ = _pull(run_cli, prom.url, "--match", '{Hostname=~"node0[12"}')
    assert res.returncode == 2 and "rejected the query" in res.stderr and res.stderr.count("\n") == 1


def test_not_prometheus_is_exit_2(prom, run_cli):
    res, _ = _pull(run_cli, prom.url + "/graph")
    assert res.returncode == 2 and "expected a Prometheus API answer" in res.stderr


@pytest.fixture(scope="session")
def prom_small(tmp_path_factory, day):
    """A server that refuses queries loading more than 4500 samples: a chunk of 800 points fails for
    the fields with 6 series (3 hosts x 2 GPUs), passes for the profiling ones (4 series)."""
    work = tmp_path_factory.mktemp("prom-small")
    data = work / "data"
    shutil.copytree(day[2], data)
    server = ps.PrometheusServer(data, work, extra_args=["--query.max-samples=4500"])
    yield server
    server.stop()


def test_failed_chunks_are_listed_and_missing(prom_small, run_cli):
    res, doc = _pull(run_cli, prom_small.url, "--max-points", "800", "--retries", "0")
    assert res.returncode == 0, res.stderr
    failed = [s for s in doc["skipped"] if "request failed" in s["reason"]]
    assert failed and all("missing (null), not 0" in s["reason"] for s in failed)
    assert any(s["item"].startswith("field gpu_util_ratio (DCGM_FI_DEV_GPU_UTIL), all hosts, 2026-01-05T")
               for s in failed)
    assert not any("tensor_active_ratio" in s["item"] for s in failed)
    # chunks of 800 points (6h40m): the first three fail, the last (480 points x 6 series) passes
    assert len({s["item"].rsplit(", ", 1)[1] for s in failed}) == 3
    windows = doc["telemetry"]["windows"]
    early = [w for w in windows if w["window_start"] < "2026-01-05T20:00"]
    late = [w for w in windows if w["window_start"] >= "2026-01-05T20:00"]
    assert early and all(w["gpu_util_mean_ratio"] is None for w in early)  # missing, never 0
    assert late and all(w["gpu_util_mean_ratio"] is not None for w in late)
    assert all(w["tensor_active_mean_ratio"] is not None for w in windows if w["host"] != "node03")
    res, _ = _pull(run_cli, prom_small.url, "--max-points", "800", "--retries", "0", "--strict")
    assert res.returncode == 2 and "field " in res.stderr and res.stderr.count("\n") == 1


def test_atomic_writes_keep_devices_and_leave_no_temporaries(tmp_path):
    from ridgeline.atomic import atomic_path, write_text

    target = tmp_path / "report.html"
    write_text(target, "old")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("half", encoding="utf-8")
            raise RuntimeError("died midway")
    assert target.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]
    link = tmp_path / "latest.html"
    link.symlink_to(target)
    write_text(link, "new")
    assert link.is_symlink() and target.read_text(encoding="utf-8") == "new"
    write_text(os.devnull, "nothing")
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


@pytest.fixture(scope="session")
def prom_tls(tmp_path_factory, day):
    """HTTPS with a throw-away CA, client certificates required."""
    if not shutil.which("openssl"):
        pytest.skip("openssl not installed: cannot make test certificates")
    work = tmp_path_factory.mktemp("prom-tls-conf")
    certs = ps.make_certificates(work / "certs")
    web = work / "web.yml"
    web.write_text("tls_server_config:\n"
                   f"  cert_file: {certs['server.crt']}\n  key_file: {certs['server.key']}\n"
                   f"  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: {certs['ca.crt']}\n",
                   encoding="utf-8")
    server, _ = _server(tmp_path_factory, day[2], "prom-tls", web_config=web, tls=True)
    yield server, certs
    server.stop()


def test_tls_ca_bundle_and_client_certificate(prom_tls, run_cli, file_doc):
    server, certs = prom_tls
    client = ("--client-cert", str(certs["client.crt"]), "--client-key", str(certs["client.key"]))
    res, doc = _pull(run_cli, server.url, "--ca-bundle", str(certs["ca.crt"]), *client)
    assert res.returncode == 0, res.stderr
    assert doc["telemetry"] == file_doc["telemetry"] and doc["inputs"][0]["path"] == server.url
    # the server's certificate is not trusted without the CA bundle ...
    res, _ = _pull(run_cli, server.url, *client, "--retries", "0")
    assert res.returncode == 2 and "not trusted" in res.stderr and "--ca-bundle" in res.stderr and res.stderr.count("\n") == 1
    # ... unless verification is switched off on purpose
    res, _ = _pull(run_cli, server.url, *client, "--insecure")
    assert res.returncode == 0, res.stderr
    # the server requires a client certificate
    res, _ = _pull(run_cli, server.url, "--ca-bundle", str(certs["ca.crt"]), "--retries", "0")
    assert res.returncode == 2 and "refused the client certificate" in res.stderr and res.stderr.count("\n") == 1


def test_a_range_without_dcgm_series_is_exit_2(prom, run_cli):
    res = run_cli("telemetry", "--prometheus", prom.url, "--from", "2025-01-01", "--to", "2025-01-02")
    assert res.returncode == 2
    assert "expected DCGM series" in res.stderr and "2025-01-01T00:00:00Z..2025-01-02T00:00:00Z" in res.stderr
