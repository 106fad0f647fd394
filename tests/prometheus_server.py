"""A real Prometheus for the live-source tests, loaded with a generated fixture day.

GENERATED at test time, never committed: :func:`write_fixture_day` writes the same synthetic
DCGM day twice, as OpenMetrics (loaded into Prometheus with
``promtool tsdb create-blocks-from openmetrics``) and as a long telemetry CSV (read by
``ridgeline telemetry FILE``), so a pull and a file read of the same data can be compared.
Regenerate by running the tests; the generator is deterministic (no randomness, fixed day).

The day: 2026-01-05 00:00..24:00 UTC at 30 s, three hosts of two GPUs (H100), dcgm-exporter 3.x
names and units (GPU_UTIL in percent, FB_USED in MiB, clocks in MHz, profiling ratios 0..1):

* node01 gpu0 busy with idle tensor cores most of the day (RL201), gpu1 idle with memory
  allocated (RL203);
* node02 both GPUs working (tensor active), with a quiet night;
* node03 exports no profiling fields at all (no DCGM_FI_PROF_*: a missing field).

:class:`PrometheusServer` starts ``prometheus`` on a free loopback port with a temporary data
folder, a long retention (the day is in the past) and optionally a ``--web.config.file``.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

DAY_START = 1767571200  # 2026-01-05T00:00:00Z
STEP_S = 30  # dcgm-exporter's default collect interval
DAY_POINTS = 86400 // STEP_S  # 2880 evaluation points
HOSTS = ("node01", "node02", "node03")
MODEL = "NVIDIA H100 80GB HBM3"
PROFILING = ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
             "DCGM_FI_PROF_DRAM_ACTIVE")
FIELDS = ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_SM_CLOCK",
          *PROFILING)


def _value(field: str, host: str, gpu: int, k: int) -> float:
    """Deterministic value of ``field`` at point ``k`` (DCGM units), rounded to what text keeps."""
    hour = (k * STEP_S) / 3600.0
    wave = 0.5 + 0.5 * math.sin(k / 48.5 + gpu)
    night = hour < 6.0
    if host == "node01" and gpu == 1:  # idle, memory held
        util, gr, sm, tensor, dram, fb = 0.0, 0.0, 0.0, 0.0, 0.0, 40000.0
    elif host == "node01":  # busy, tensor idle
        util, gr, sm, tensor, dram, fb = 95.0, 0.9, 0.6, 0.02 + 0.03 * wave, 0.3 + 0.1 * wave, 60000.0
    elif night:
        util, gr, sm, tensor, dram, fb = 0.0, 0.0, 0.0, 0.0, 0.0, 500.0
    else:
        util, gr, sm, tensor, dram, fb = 90.0 + 9 * wave, 0.85, 0.8, 0.45 + 0.3 * wave, 0.5, 70000.0
    value = {
        "DCGM_FI_DEV_GPU_UTIL": round(util),
        "DCGM_FI_DEV_FB_USED": fb,
        "DCGM_FI_DEV_POWER_USAGE": round(100 + 500 * gr * (0.8 + 0.2 * wave), 3),
        "DCGM_FI_DEV_SM_CLOCK": 1980.0 if util else 345.0,
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE": gr,
        "DCGM_FI_PROF_SM_ACTIVE": sm,
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": tensor,
        "DCGM_FI_PROF_DRAM_ACTIVE": dram,
    }[field]
    return float(f"{value:.6g}")


def series(hosts=HOSTS, gpus=2):
    """(field, host, gpu) of every series in the day."""
    for field in FIELDS:
        for host in hosts:
            if host == "node03" and field in PROFILING:
                continue
            for gpu in range(gpus):
                yield field, host, gpu


def write_fixture_day(folder: Path, hosts=HOSTS, *, days: int = 1, gpus: int = 2,
                      csv: bool = True) -> tuple[Path, Path | None]:
    """Write ``day.om`` (OpenMetrics) and ``day.csv`` (long telemetry CSV) of the same samples
    (``hosts``: more for benchmarks; names other than node01/node03 behave like node02).
    ``days``, ``gpus`` (per host), ``csv=False``: for benchmarks (``days`` consecutive copies of
    the day's pattern; GPUs past 1 behave like GPU 0 of their host, in their own phase)."""
    folder.mkdir(parents=True, exist_ok=True)
    om, csv_path = folder / "day.om", (folder / "day.csv" if csv else None)
    with open(om, "w", encoding="utf-8") as o, open(csv_path or os.devnull, "w", encoding="utf-8") as c:
        c.write("timestamp,host,gpu,uuid,model,field,value\n")
        current = None
        for field, host, gpu in series(hosts, gpus):
            if field != current:
                o.write(f"# TYPE {field} gauge\n")
                current = field
            uuid = f"GPU-{hosts.index(host):04d}{gpu:04d}-0000-0000-0000-000000000000"
            labels = f'gpu="{gpu}",UUID="{uuid}",device="nvidia{gpu}",modelName="{MODEL}",Hostname="{host}"'
            for k in range(DAY_POINTS * days):
                t = DAY_START + k * STEP_S
                v = _value(field, host, gpu, k % DAY_POINTS)
                o.write(f"{field}{{{labels}}} {v:g} {t}\n")
                if csv:
                    c.write(f"{t},{host},{gpu},{uuid},{MODEL},{field},{v!r}\n")  # 95.0, not 95: a float column
        o.write("# EOF\n")
    return om, csv_path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def load_blocks(om: Path, data_dir: Path, *, timeout_s: float = 300) -> None:
    """``promtool tsdb create-blocks-from openmetrics`` into ``data_dir`` (a benchmark's many days
    may need a longer ``timeout_s``: promtool writes one 2-hour block at a time)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    subprocess.run([shutil.which("promtool"), "tsdb", "create-blocks-from", "openmetrics", str(om), str(data_dir)],
                   check=True, capture_output=True, timeout=timeout_s)


class PrometheusServer:
    """``prometheus`` on 127.0.0.1:<free port>; ``stop()`` ends the process it started."""

    def __init__(self, data_dir: Path, work: Path, *, web_config: Path | None = None, extra_args=(),
                 tls: bool = False):
        self.port = free_port()
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"
        self.tls = tls
        config = work / "prometheus.yml"
        config.write_text("global:\n  scrape_interval: 15s\nscrape_configs: []\n", encoding="utf-8")
        args = [shutil.which("prometheus"), f"--config.file={config}", f"--storage.tsdb.path={data_dir}",
                "--storage.tsdb.retention.time=100y", f"--web.listen-address=127.0.0.1:{self.port}",
                "--log.level=warn"]
        if web_config is not None:
            args.append(f"--web.config.file={web_config}")
        args += list(extra_args)
        self.log = open(work / f"prometheus-{self.port}.log", "wb")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
        self._wait_ready(auth=web_config is not None)

    def _wait_ready(self, *, auth: bool, timeout_s: float = 60.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"prometheus exited with {self.proc.returncode}; see {self.log.name}")
            if self.tls:  # client certificates required: listening is all that can be asked here
                try:
                    socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                    return
                except OSError:
                    time.sleep(0.2)
                    continue
            try:
                with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as resp:
                    if resp.status == 200:
                        return
            except urllib.error.HTTPError as err:
                if auth and err.code == 401:  # up, and asking for credentials
                    return
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"prometheus did not become ready in {timeout_s:.0f} s")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def make_certificates(folder: Path) -> dict[str, Path]:
    """A throw-away CA, a server certificate for 127.0.0.1 and a client certificate (openssl CLI).
    GENERATED at test time; regenerate by running the tests."""
    folder.mkdir(parents=True, exist_ok=True)
    openssl = shutil.which("openssl")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

    def run(*args):
        subprocess.run([openssl, *args], check=True, capture_output=True, cwd=folder, timeout=60)

    run("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=ridgeline-test-ca",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    for name, usage, san in (("server", "serverAuth", "subjectAltName=IP:127.0.0.1\n"), ("client", "clientAuth", "")):
        run("req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN=ridgeline-test-{name}")
        (folder / f"{name}.ext").write_text(
            san + "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n"
            f"extendedKeyUsage={usage}\nauthorityKeyIdentifier=keyid\nsubjectKeyIdentifier=hash\n", encoding="utf-8")
        run("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", f"{name}.crt", "-days", "2", "-extfile", f"{name}.ext")
    return {n: folder / n for n in ("ca.crt", "server.crt", "server.key", "client.crt", "client.key")}


# ---- fake Prometheus HTTP APIs on loopback (tests that script the answers themselves) ---------
class JsonApiHandler(BaseHTTPRequestHandler):
    """A quiet request handler whose ``_send(data)`` answers like Prometheus' HTTP API:
    ``{"status": "success", "data": data}`` as JSON. Subclasses write ``do_GET``."""

    def log_message(self, *args):
        pass

    def _send(self, data):
        body = json.dumps({"status": "success", "data": data}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextlib.contextmanager
def serve(handler):
    """``handler`` served on a loopback port in a thread; yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
