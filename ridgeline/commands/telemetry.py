"""``ridgeline telemetry``: busy vs. working per GPU and window, from files or a live Prometheus.
"""

from __future__ import annotations

import sys

import click

from ridgeline.commands.common import (
    _ci_text, _config, _emit, _exit_on_findings, _os_error_text, _parse_start, _refuse_overwriting_inputs,
    _relabel_stdin, _split_codes, _stdin_inputs, _tell, _terminal_width,
)
from ridgeline.commands.options import (
    FAIL_ON_OPTION, GROUP_OPTIONS, OUTPUT_OPTION, PROMETHEUS_OPTIONS, RULE_OPTIONS, TIME_FORMAT_OPTION,
)


@click.command("telemetry")
@click.argument("paths", nargs=-1, required=False, type=click.Path())
@click.option("--window", default="5m", show_default=True, help="Window length (30s, 5m, 1h) or 'all' for one row per GPU.")
@click.option("--warmup", default=None, metavar="DURATION", help="Leading span dropped per GPU (e.g. 2m).")
@click.option("--tz", default=None, metavar="ZONE", help="Zone of naive timestamps, e.g. Europe/Berlin (nvidia-smi CSV); default UTC.")
@TIME_FORMAT_OPTION
@click.option("--interval", "interval", default=None, metavar="DURATION",
              help="Tick interval of dcgmi dmon / nvidia-smi dmon (their -d; default 1s) and of exporter scrapes without timestamps.")
@click.option("--start", default=None, metavar="TIME", help="Time of the first tick for inputs without timestamps (ISO 8601, UTC if no zone).")
@click.option("--host", default=None, help="Host name for inputs that name none (default: the file name).")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv", "parquet", "sarif", "github"]),
              default="table", show_default=True,
              help="table: readable report; json: one document; csv/parquet: the per-window table; "
                   "sarif / github: findings for code scanning / GitHub Actions annotations.")
@OUTPUT_OPTION
@RULE_OPTIONS
@FAIL_ON_OPTION
@click.option("--all-windows", is_flag=True,
              help="Table: every window row (up to --max-rows) instead of per-GPU totals and the worst windows.")
@click.option("--worst", type=click.IntRange(min=0), default=10, show_default=True,
              help="Table: worst windows by wasted time shown under the per-GPU totals.")
@click.option("--max-rows", type=click.IntRange(min=1), default=40, show_default=True,
              help="Table: at most this many GPU rows (or window rows with --all-windows).")
@GROUP_OPTIONS
@click.option("--engine", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="Reduce the partitions (hosts) here, or with dask.distributed (needs ridgeline[dask]).")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="--engine dask: scheduler address (tcp://host:8786); default a LocalCluster on this machine.")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="--engine dask without --scheduler: LocalCluster worker processes (default 2).")
@click.option("-q", "--quiet", is_flag=True, help="No progress line on stderr (shown only when stderr is a terminal).")
@PROMETHEUS_OPTIONS
@click.pass_context
def telemetry_cmd(ctx, paths, window, warmup, tz, interval, start, host, fmt, output, select, ignore, config,
                  thresholds, fail_on, max_rows, all_windows=False, worst=10, engine="local", scheduler=None,
                  workers=None, quiet=False, by=(), jobs=None, time_format=None, **prom):
    """Busy vs. working: GPU-Util against Tensor-Core, SM and DRAM activity, per GPU and window.

    PATHS are dcgmi dmon captures, dcgm-exporter scrapes, Prometheus query JSON,
    nvidia-smi --query-gpu CSV or nvidia-smi dmon text, long/wide telemetry CSV or
    Parquet, or folders of them (hive-partitioned Parquet folders stay one lazy scan).
    Each file's format is detected from its content.

    \b
    Examples:
      ridgeline telemetry dcgm-dmon.txt --interval 1s --start 2026-01-05T08:00:00Z
      ridgeline telemetry scrapes/ --window 1h --warmup 2m
      ridgeline telemetry gpu_log.csv --tz Europe/Berlin --window all
      ridgeline telemetry smi_log.csv --time-format day-first
      ridgeline telemetry fleet/ --format csv -o windows.csv --fail-on warning
      ridgeline telemetry fleet/ --all-windows --max-rows 200
      ridgeline telemetry --prometheus http://prom:9090 --from -24h --to now \\
          --match '{cluster="a"}' --save store/ --format json -o night.json

    \b
    Exit codes: 0 clean, 1 findings at or above --fail-on, 2 bad input or usage,
    3 a bug in ridgeline (one line; --debug for the traceback).
    """
    from ridgeline.analyzer.fleet.telemetry import parse_duration_s
    from ridgeline.errors import UsageError
    from ridgeline.pipeline import reduce_telemetry
    from ridgeline.progress import Progress
    from ridgeline.result import AnalysisResult
    from ridgeline.rules.base import Context
    from ridgeline.rules.engine import load_config, run_rules

    interval_s = parse_duration_s(interval, what="--interval")
    start_dt = _parse_start(start)
    from ridgeline.attribution import check_by, telemetry_groups

    check_by(by, jobs)  # a bad --by before any file is read
    if fmt == "parquet" and (not output or output == "-"):  # before any file is read
        raise UsageError("--format parquet needs -o PATH (Parquet is binary)")
    _refuse_overwriting_inputs(output, paths, also=(jobs, config))
    if prom.get("prom_save"):
        from ridgeline.outpaths import refuse_store_over_inputs

        refuse_store_over_inputs("--save", prom["prom_save"], [*paths, jobs])
    cfg = load_config(_config(config))
    notes: list[str] = []
    if engine != "dask" and (scheduler or workers):
        raise UsageError("--scheduler and --workers go with --engine dask")
    if not paths and not prom.get("prom_url"):
        raise UsageError("give telemetry PATHS, or --prometheus URL --from START to pull from a server")
    if prom.get("lenient") and prom.get("prom_strict"):
        raise UsageError("--strict and --lenient exclude each other")
    pulled = _pull_prometheus(prom) if prom.get("prom_url") else None
    if pulled is not None:
        ctx.call_on_close(pulled.close)  # the pull's temporary files, once the output is written
    paths, stdin_dir = _stdin_inputs(paths)
    counts: dict = {}  # samples per input, counted by the reduction
    lf, inputs, skipped, windows = reduce_telemetry(
        paths, window=window, warmup=warmup, tz=tz, interval_s=interval_s, host=host, start=start_dt, notes=notes,
        time_format=time_format,
        engine=engine, scheduler=scheduler, workers=workers, progress=Progress(enabled=False if quiet else None),
        extra=[] if pulled is None else [pulled.source()],
        strict=not prom.get("lenient"), strict_folders=bool(prom.get("prom_strict")), sample_counts=counts,
        classes=cfg.get("classes"),
    )
    if pulled is not None:
        inputs.append(pulled.info)
        skipped += pulled.skipped
        notes += [n for n in pulled.notes if n not in notes]
    if not inputs:
        from ridgeline.errors import InputError

        why = f"; {len(skipped)} file(s) skipped, e.g. {skipped[0].source}: {skipped[0].reason}" if skipped else ""
        raise InputError(", ".join(paths), "expected telemetry files (dcgmi dmon, dcgm-exporter, Prometheus JSON, "
                         "nvidia-smi CSV/dmon, telemetry CSV/Parquet); none found" + why)
    from ridgeline.pipeline import check_window, empty_windows_notes, silent_telemetry_notes

    check_window(window, windows)
    notes += [n for n in empty_windows_notes(windows, inputs, warmup) if n not in notes]
    notes += [n for n in silent_telemetry_notes(windows) if n not in notes]
    groups = telemetry_groups(lf, inputs, windows, by=by, jobs_path=jobs, tz=tz, notes=notes, skipped=skipped)
    context = Context(telemetry=lf, windows=windows if groups is None else groups.windows,
                      extra={} if groups is None else {"group_keys": groups.key_columns})
    findings = run_rules(context, select=_split_codes(select), ignore=_split_codes(ignore), config=cfg,
                         family="telemetry", thresholds=thresholds)
    result = AnalysisResult(inputs=inputs, windows=windows, findings=findings, skipped=skipped, notes=notes,
                            sample_counts=counts, groups=groups)
    _relabel_stdin(result, stdin_dir)
    if fmt == "parquet":
        from ridgeline.atomic import write_parquet

        try:
            write_parquet(windows, output)
        except OSError as err:
            raise UsageError(f"cannot write {output}: {_os_error_text(err)}") from None
    else:
        if fmt == "csv":
            from ridgeline.render.kernels.tables import safe_cells

            text = safe_cells(windows).write_csv()
        elif fmt == "json":
            from ridgeline.render.jsonout import render_json

            text = render_json(result)
        elif fmt in ("sarif", "github"):
            text = _ci_text(result, fmt)
        else:
            from ridgeline.render.fleet.telemetry import format_telemetry_report

            text = format_telemetry_report(result, max_rows=max_rows, all_windows=all_windows, worst=worst,
                                           width=_terminal_width() if not output or output == "-" else 80)
        _emit(text, output, colour=fmt == "table", commands=fmt != "github")
    if output and output != "-":
        _tell(f"ridgeline: wrote {output}")
    _exit_on_findings(ctx, findings, fail_on)


def _pull_prometheus(prom: dict):
    """telemetry --prometheus: pull, report progress on a terminal, --save the store."""
    import os

    from ridgeline.errors import UsageError
    from ridgeline.sources import prometheus as P
    from ridgeline.sources.client import parse_size

    from ridgeline.sources.url import parse

    parse(prom["prom_url"])  # first: a bad URL refused, its secrets kept out of every message (issue 35)
    if not prom.get("prom_from"):
        raise UsageError("--prometheus needs --from START (e.g. --from -24h or 2026-01-05T00:00:00Z)")
    import datetime as _dt

    now = _dt.datetime.now(_dt.timezone.utc)  # one "now" for both ends
    start = P.parse_time(prom["prom_from"], what="--from", now=now).astimezone(_dt.timezone.utc)
    end = P.parse_time(prom["prom_to"], what="--to", now=now).astimezone(_dt.timezone.utc)
    token = None
    if prom.get("prom_token_file") and prom.get("prom_token_env"):
        raise UsageError("give --bearer-token-file or --bearer-token-env, not both")
    if prom.get("prom_token_file"):
        token = _read_secret(prom["prom_token_file"], "--bearer-token-file")
    elif prom.get("prom_token_env"):
        token = os.environ.get(prom["prom_token_env"], "").strip()
        if not token:
            raise UsageError(f"--bearer-token-env {prom['prom_token_env']}: the variable is not set or empty")
        from ridgeline.redact import remember

        remember(token)
    password = None
    if prom.get("prom_password_file"):
        password = _read_secret(prom["prom_password_file"], "--password-file")
    elif prom.get("prom_user"):
        password = os.environ.get("RIDGELINE_PROMETHEUS_PASSWORD")
        if password is None:
            raise UsageError("--basic-auth needs a password: --password-file FILE or $RIDGELINE_PROMETHEUS_PASSWORD")
    if password is not None and not prom.get("prom_user"):
        raise UsageError("--password-file needs --basic-auth USER")
    if token and prom.get("prom_user"):
        raise UsageError("give a bearer token or --basic-auth, not both")
    if prom.get("prom_key") and not prom.get("prom_cert"):
        raise UsageError("--client-key needs --client-cert")
    auth = P.Auth(bearer_token=token, username=prom.get("prom_user"), password=password, ca_bundle=prom.get("prom_ca"),
                  client_cert=prom.get("prom_cert"), client_key=prom.get("prom_key"),
                  insecure=bool(prom.get("prom_insecure")))
    progress = None
    if sys.stderr.isatty():
        def progress(done, total):
            click.echo(f"\rridgeline: {done}/{total} requests", err=True, nl=done == total)
    pulled = P.pull(prom["prom_url"], start=start, end=end, step_s=P.parse_duration(prom["prom_step"], what="--step"),
                    match=prom.get("prom_match"), auth=auth, concurrency=prom["prom_concurrency"],
                    timeout_s=P.parse_duration(prom["prom_timeout"], what="--timeout"), retries=prom["prom_retries"],
                    max_points=prom["prom_max_points"], hosts_per_query=prom["prom_hosts"],
                    strict=bool(prom.get("prom_strict")), progress=progress,
                    max_answer_bytes=parse_size(prom.get("prom_max_answer") or "256MiB", what="--max-answer"))
    if not pulled.rows:
        pulled.close()
        from ridgeline.errors import InputError

        why = f"; {len(pulled.failed)} of {pulled.chunks} requests failed, e.g. {pulled.skipped[0].item}: " \
              f"{pulled.failed[0][1]}" if pulled.failed else ""
        span = f"{start:%Y-%m-%dT%H:%M:%SZ}..{end:%Y-%m-%dT%H:%M:%SZ}"
        raise InputError(pulled.info.path, f"expected DCGM series (DCGM_FI_DEV_GPU_UTIL, DCGM_FI_PROF_*, ...) in {span}"
                         + (f" matching {prom['prom_match']}" if prom.get("prom_match") else "")
                         + "; found none" + why)
    if pulled.failed:
        click.echo(f"ridgeline: {len(pulled.failed)} of {pulled.chunks} requests failed; listed under skipped, "
                   "their samples missing", err=True)
    if prom.get("prom_save"):
        report = pulled.save(prom["prom_save"])  # host by host: never the whole pull in memory
        _tell(f"ridgeline: {report.summary(prom['prom_save'])}")
    return pulled


def _read_secret(path: str, option: str) -> str:
    """The first line of a secret file, stripped; never echoed."""
    from ridgeline.errors import UsageError

    try:
        with open(path, encoding="utf-8") as fh:
            value = fh.read().strip()
    except (OSError, UnicodeDecodeError) as err:
        raise UsageError(f"{option} {path}: cannot read it ({getattr(err, 'strerror', None) or type(err).__name__})") from None
    if not value:
        raise UsageError(f"{option} {path}: the file is empty")
    from ridgeline.redact import remember

    remember(value)  # never in an error line or traceback either (ridgeline.redact)
    return value

