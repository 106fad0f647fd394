"""Option sets shared by several commands, declared once (``@RULE_OPTIONS`` ...), and the
parsing of the option values they carry (``--timeline-*`` durations, explicit ``--strict``).
"""

from __future__ import annotations

import click


def _set_isolated(ctx, _param, value):
    if value:
        ctx.meta["ridgeline.isolated"] = True
    return value


ISOLATED_OPTION = click.option("--isolated", is_flag=True, expose_value=False, is_eager=True, callback=_set_isolated,
                               help="Ignore every config file (ridgeline.toml, pyproject.toml); defaults and flags only.")


# --------------------------------------------------------------------------------------
# options shared by several commands, defined once
# --------------------------------------------------------------------------------------
def _options(*decorators):
    """Several click options applied as one decorator, in the order given."""

    def apply(func):
        for decorator in reversed(decorators):
            func = decorator(func)
        return func

    return apply


RULE_OPTIONS = _options(
    click.option("--select", multiple=True, metavar="CODES",
                 help="Only these rules (codes or prefixes, comma-separated or repeated)."),
    click.option("--ignore", multiple=True, metavar="CODES", help="Skip these rules (codes or prefixes)."),
    click.option("--config", type=click.Path(dir_okay=False),
                 help="TOML file with a [tool.ridgeline] table (default: the nearest ridgeline.toml, "
                      ".ridgeline.toml or pyproject.toml with [tool.ridgeline], here or in a parent folder)."),
    ISOLATED_OPTION,
    click.option("--threshold", "thresholds", multiple=True, metavar="CODE.NAME=VALUE",
                 help="Override a rule threshold."),
)
# projections of the measured kernels (ridgeline.analyzer.kernels.whatif)
WHAT_IF_OPTIONS = _options(
    click.option("--what-if", "what_if", multiple=True, metavar="GPU|batch=N",
                 help="Project the measured kernels onto another GPU (--what-if H200) or the decode step onto "
                      "another batch (--what-if batch=64), each at its achieved fraction of its roof; repeatable."),
    click.option("--batch", "batch", type=click.FloatRange(min=0, min_open=True), default=None, metavar="B",
                 help="The profile's decode batch for --what-if batch=N (default: from the norm launches' grids, "
                      "else the weight GEMMs' intensity)."),
)
# -o for the commands whose output goes to stdout by default (analyze, telemetry, diff)
OUTPUT_OPTION = click.option("-o", "--output", type=click.Path(dir_okay=False),
                             help="Write to this file instead of stdout.")
FAIL_ON_OPTION = click.option("--fail-on", type=click.Choice(["warning", "critical"]),
                              help="Exit 1 when a finding this severe (or worse) exists.")
STRICT_OPTION = click.option("--strict/--lenient", default=True, show_default=True,
                             help="--lenient skips (and lists) launches whose values do not parse instead of stopping, "
                                  "reads a telemetry cell that is no number as missing and skips a telemetry row "
                                  "without a usable GPU id or time (each listed with its line); "
                                  "--strict given explicitly also refuses an unreadable file found in a folder "
                                  "(default: skipped and listed).")


def _strict_folders() -> bool:
    """--strict written on the command line (not just the default): a bad file in a folder is an error."""
    ctx = click.get_current_context(silent=True)
    if ctx is None or "strict" not in ctx.params:
        return False
    from click.core import ParameterSource

    return bool(ctx.params["strict"]) and ctx.get_parameter_source("strict") == ParameterSource.COMMANDLINE
def _check_time_format(_ctx, _param, value):
    from ridgeline.parsers.telemetry.times import check_time_format

    check_time_format(value)  # a bad value is a usage error before any file is read
    return value


# how an nvidia-smi CSV's timestamps are spelled, when the data cannot say (every command reading telemetry)
TIME_FORMAT_OPTION = click.option(
    "--time-format", "time_format", default=None, metavar="ORDER|PATTERN", callback=_check_time_format,
    help="Telemetry: how nvidia-smi CSV timestamps are spelled when the file cannot say: month-first or "
         "day-first for 03-11-2026 15:13:16 (read from the data when a day above 12 appears), or a strftime "
         "pattern such as '%d.%m.%Y %H:%M:%S' (with %z the times carry their offset). ISO 8601 times "
         "(2025-09-08T17:26:50+08:00) and nvidia-smi's own 2026/03/11 15:13:16.507 need none.")
# telemetry inputs given next to a profile (analyze, report)
TELEMETRY_INPUT_OPTIONS = _options(
    click.option("--window", default="5m", show_default=True, help="Telemetry window when telemetry files are given."),
    click.option("--warmup", default=None, help="Telemetry: leading span to drop per GPU (e.g. 2m)."),
    click.option("--tz", default=None, help="Telemetry: zone of naive timestamps (nvidia-smi CSV)."),
    TIME_FORMAT_OPTION,
    click.option("--start", default=None, metavar="TIME",
                 help="Telemetry: time of the first tick for inputs without timestamps (dcgmi dmon), ISO 8601."),
    click.option("--interval", default=None, metavar="DURATION",
                 help="Telemetry: tick interval of dcgmi/nvidia-smi dmon (their -d; default from the file, else 1s)."),
    click.option("--host", default=None, help="Telemetry: host name for inputs that name none (default: the file name)."),
)


# a live Prometheus as the telemetry source (ridgeline.sources.prometheus)
PROMETHEUS_OPTIONS = _options(
    click.option("--prometheus", "prom_url", metavar="URL",
                 help="Pull DCGM telemetry from this Prometheus (Thanos, Mimir, VictoriaMetrics) base URL."),
    click.option("--from", "prom_from", metavar="TIME",
                 help="Prometheus: start, RFC 3339 (2026-01-05T00:00:00Z), a date, or relative (-24h, now-1d)."),
    click.option("--to", "prom_to", default="now", show_default=True, metavar="TIME", help="Prometheus: end."),
    click.option("--step", "prom_step", default="15s", show_default=True, metavar="DURATION",
                 help="Prometheus: query resolution; use your scrape interval (dcgm-exporter collects every 30s by default)."),
    click.option("--match", "prom_match", metavar="SELECTOR",
                 help="Prometheus: label selector added to every query, e.g. '{cluster=\"a\",Hostname=~\"node-.*\"}'."),
    click.option("--save", "prom_save", type=click.Path(file_okay=False), metavar="DIR",
                 help="Prometheus: also keep what was pulled in DIR (date=/host=/part-0.parquet), which "
                      "`ridgeline telemetry DIR` reads; a re-run fills only what is missing."),
    click.option("--bearer-token-file", "prom_token_file", type=click.Path(dir_okay=False), metavar="FILE",
                 help="Prometheus: read a bearer token from FILE."),
    click.option("--bearer-token-env", "prom_token_env", metavar="VAR",
                 help="Prometheus: read a bearer token from environment variable VAR."),
    click.option("--basic-auth", "prom_user", metavar="USER",
                 help="Prometheus: basic auth user; the password comes from --password-file or "
                      "$RIDGELINE_PROMETHEUS_PASSWORD."),
    click.option("--password-file", "prom_password_file", type=click.Path(dir_okay=False), metavar="FILE",
                 help="Prometheus: basic auth password from FILE."),
    click.option("--ca-bundle", "prom_ca", type=click.Path(dir_okay=False), metavar="FILE",
                 help="Prometheus: CA certificates (PEM) to verify the server with."),
    click.option("--client-cert", "prom_cert", type=click.Path(dir_okay=False), metavar="FILE",
                 help="Prometheus: client certificate (PEM), with --client-key unless it holds the key."),
    click.option("--client-key", "prom_key", type=click.Path(dir_okay=False), metavar="FILE",
                 help="Prometheus: client private key (PEM)."),
    click.option("--insecure", "prom_insecure", is_flag=True, help="Prometheus: do not verify the server's TLS certificate."),
    click.option("--timeout", "prom_timeout", default="60s", show_default=True, metavar="DURATION",
                 help="Prometheus: time limit of each request, from connecting to the answer's last byte "
                      "(each retry gets its own)."),
    click.option("--max-answer", "prom_max_answer", default="256MiB", show_default=True, metavar="SIZE",
                 help="Prometheus: largest answer read for one request, after gzip is inflated (e.g. 1GiB); a "
                      "larger one fails that request."),
    click.option("--retries", "prom_retries", type=click.IntRange(min=0), default=3, show_default=True,
                 help="Prometheus: retries of a request after a timeout, connection error, 429 or 5xx (backoff doubles)."),
    click.option("--concurrency", "prom_concurrency", type=click.IntRange(min=1), default=4, show_default=True,
                 help="Prometheus: requests in flight at once."),
    click.option("--max-points", "prom_max_points", type=click.IntRange(min=2, max=11000), default=11000,
                 show_default=True, help="Prometheus: points per series per request (the server allows 11,000)."),
    click.option("--hosts-per-query", "prom_hosts", type=click.IntRange(min=1), default=32, show_default=True,
                 help="Prometheus: split fleets with more Hostname values than this into groups per request."),
    click.option("--strict", "prom_strict", is_flag=True,
                 help="Refuse instead of listing: a Prometheus request that still fails after its retries, an "
                      "unreadable file found in a folder (default: listed, the rest read; exit 2 only when "
                      "nothing usable is left)."),
    click.option("--lenient", "lenient", is_flag=True,
                 help="A cell that is no number is read as missing, a row without a usable GPU id or time "
                      "(or a Prometheus point of the wrong shape) is skipped; each is listed with its line "
                      "(default: exit 2 naming FILE:LINE and the column)."),
)


# timeline inputs (Nsight Systems exports, PyTorch profiler traces) given to analyze or report
TIMELINE_INPUT_OPTIONS = _options(
    click.option("--timeline-launch-gap", "timeline_launch_gap", default=None, metavar="DURATION",
                 help="Timeline: idle gaps up to this are launch overhead (default 10us)."),
    click.option("--timeline-short-kernel", "timeline_short_kernel", default=None, metavar="DURATION",
                 help="Timeline: kernels shorter than this count as short (launch-bound check; default 10us)."),
)


def _parse_short_duration(text, what):
    """'10us' / '5 ms' / '2e-5' (seconds) -> seconds; None -> None."""
    import re

    from ridgeline.errors import UsageError

    if text is None:
        return None
    m = re.match(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(ns|us|µs|μs|ms|s)?\s*$", str(text))
    if not m:
        raise UsageError(f"{what} {text!r}: expected a duration such as 10us, 2ms or 0.5s")
    scale = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, None: 1.0}[m.group(2)]
    return float(m.group(1)) * scale


def _timeline_options(launch_gap, short_kernel):
    return {"launch_gap_s": _parse_short_duration(launch_gap, "--timeline-launch-gap"),
            "short_kernel_s": _parse_short_duration(short_kernel, "--timeline-short-kernel")}



#: --by / --jobs: attribution of telemetry to workloads (ridgeline.analyzer.fleet.groups), for telemetry,
#: analyze and report alike
GROUP_OPTIONS = _options(
    click.option("--by", "by", multiple=True, metavar="KEY",
                 help="Group GPUs by workload: pod, namespace, container, job, host, label=NAME, or user/account "
                      "with --jobs; repeat to nest (--by namespace --by pod)."),
    click.option("--jobs", "jobs", type=click.Path(dir_okay=False), default=None, metavar="FILE",
                 help="Slurm accounting (sacct --parsable2 with JobID, User, Account, NodeList, Start, End, "
                      "AllocTRES) joined on host, GPU and time; groups by job unless --by says otherwise."),
)
