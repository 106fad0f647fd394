"""The telemetry figure: per GPU, GPU-Util against tensor-active and DRAM-active over time,
the spans that rules flagged shaded, and a time axis that says what its ticks are."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from ridgeline.render.plot_style import OKABE_ITO, _new_figure, fit_text_width, plain


# ----------------------------------------------------------------------------------------
# telemetry
# ----------------------------------------------------------------------------------------
TELEMETRY_SERIES = (
    ("gpu_util_ratio", "GPU-Util (NVML)", OKABE_ITO["black"], "-"),
    ("tensor_active_ratio", "tensor active (DCGM)", OKABE_ITO["vermillion"], "-"),
    ("dram_active_ratio", "DRAM active (DCGM)", OKABE_ITO["blue"], "--"),
    ("sm_active_ratio", "SM active (DCGM)", OKABE_ITO["green"], ":"),
)

# Telemetry rules judge per-window states; a finding names the GPU, and the WINDOW table says
# which windows were in the state the rule counts. Rule code -> WINDOW share column.
WINDOW_STATE_COLUMNS = {
    "RL201": "busy_tensor_idle_share",
    "RL202": "memory_bound_share",
    "RL203": "allocated_idle_share",
}

_HOST_RE = re.compile(r"host:(\S+)")
_GI_RE = re.compile(r"\bgi:(\S+)")
_GPU_RE = re.compile(r"gpu:(\S+)")
_WINDOW_RE = re.compile(r"window:(\S+?)(?:/|\.\.)(\S+)")


def _parse_time(value):
    from datetime import datetime, timezone

    if value is None:
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    try:
        t = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def finding_span(finding) -> dict[str, Any] | None:
    """Where a telemetry finding points: ``{"host", "gpu", "start", "end"}`` (any may be None).

    Read from the subject (``host:node1 gpu:3 window:<start>/<end>``) and from evidence named
    ``window_start`` / ``window_end`` (ISO-8601 or datetime). None for non-telemetry findings.
    """
    kind = getattr(finding, "subject_kind", "")
    subject = str(getattr(finding, "subject", "") or "")
    if kind not in ("telemetry", "window", "gpu", "host") and "window:" not in subject:
        return None
    host = _HOST_RE.search(subject)
    gpu = _GPU_RE.search(subject)
    gi = _GI_RE.search(subject)
    span = {
        "host": host.group(1) if host else None,
        "gpu": gpu.group(1) if gpu else None,
        "gpu_instance": gi.group(1) if gi else None,
        "start": None,
        "end": None,
    }
    win = _WINDOW_RE.search(subject)
    if win:
        span["start"], span["end"] = _parse_time(win.group(1)), _parse_time(win.group(2))
    for ev in getattr(finding, "evidence", ()) or ():
        if ev.metric in ("window_start", "start", "start_time"):
            span["start"] = _parse_time(ev.value) or span["start"]
        elif ev.metric in ("window_end", "end", "end_time"):
            span["end"] = _parse_time(ev.value) or span["end"]
    return span


def _downsample(series, max_points: int):
    """At most ``max_points`` (timestamp, value) rows: means over equal time bins (a fleet-day at
    1 s would otherwise put 86,400 points per line into the SVG)."""
    import polars as pl

    if series.height <= max_points:
        return series
    t0 = series["timestamp"].min()
    span_us = (series["timestamp"].max() - t0).total_seconds() * 1e6 or 1.0
    idx = ((pl.col("timestamp") - t0).dt.total_microseconds() / span_us * (max_points - 1)).floor().cast(pl.Int64)
    return (
        series.group_by(idx.alias("_bin"))
        .agg(pl.col("timestamp").min(), pl.col("value").mean())
        .sort("_bin")
        .drop("_bin")
    )


def _span_matches(span, host, gpu, inst) -> bool:
    """Does a finding's subject (host/gpu/gi, any may be absent) name this GPU panel?"""
    if span["host"] is None and span["gpu"] is None and span["start"] is None:
        return False
    if span["host"] is not None and host is not None and span["host"] != str(host):
        return False
    if span["gpu"] not in (None, "?") and gpu is not None and span["gpu"] != str(gpu):
        return False
    if span["gpu_instance"] is not None and span["gpu_instance"] != str(inst):
        return False
    return True


def _flagged_spans(finding, span, windows, host, gpu, inst, sub):
    """(start, end, strength 0..1) to shade on one GPU's panel for one finding."""
    import polars as pl

    if span["start"] is not None or span["end"] is not None:
        return [(span["start"] or sub["timestamp"].min(), span["end"] or sub["timestamp"].max(), 1.0)]
    col = WINDOW_STATE_COLUMNS.get(finding.code)
    if windows is None or col is None or col not in getattr(windows, "columns", ()):
        return []
    w = windows.filter(
        pl.col("host").eq_missing(host) & pl.col("gpu").eq_missing(gpu) & pl.col("gpu_instance").eq_missing(inst)
        & (pl.col(col) > 0)
    )
    if "excluded" in w.columns:
        w = w.filter(pl.col("excluded").is_null())
    return [(r["window_start"], r["window_end"], float(r[col])) for r in w.select("window_start", "window_end", col).iter_rows(named=True)]


def telemetry_figure(result, *, max_panels: int = 16, max_points: int = 1500, title: str | None = None):
    """Small multiples, one panel per GPU: GPU-Util vs tensor-active / DRAM-active over time.

    Spans that telemetry findings point at (see :func:`finding_span`) are shaded. Returns a
    Figure, or None when the result holds no telemetry.
    """
    import polars as pl

    tel = result.telemetry
    if tel is None or not getattr(tel, "height", 0):
        return None
    fields = [s[0] for s in TELEMETRY_SERIES]
    tel = tel.filter(pl.col("field").is_in(fields) & pl.col("value").is_not_null())
    if not tel.height:
        return None
    keys = (
        tel.group_by("host", "gpu", "gpu_instance")
        .agg(pl.len().alias("n"))
        .sort("host", "gpu", "gpu_instance", nulls_last=True)
    )
    groups = keys.select("host", "gpu", "gpu_instance").rows()
    flagged = [(f, sp) for f, sp in ((f, finding_span(f)) for f in result.findings or []) if sp]
    hits = {g: [(f, sp) for f, sp in flagged if _span_matches(sp, *g)] for g in groups}
    # flagged GPUs first (a fleet has more GPUs than panels), then the rest, in name order
    groups.sort(key=lambda g: 0 if hits[g] else 1)
    shown = groups[:max_panels]
    n = len(shown)
    parts = tel.partition_by("host", "gpu", "gpu_instance", as_dict=True, maintain_order=False)
    ncols = 1 if n == 1 else 2
    nrows = math.ceil(n / ncols)
    fig = _new_figure(10.0 if ncols == 2 else 9.0, max(3.2, 2.5 * nrows + 0.8))
    axes = fig.subplots(nrows, ncols, sharex=True, sharey=True, squeeze=False)
    flagged_by_panel: dict[int, list[str]] = {}
    handles = {}
    for k, (host, gpu, inst) in enumerate(shown):
        ax = axes[k // ncols][k % ncols]
        sub = parts[(host, gpu, inst)].sort("timestamp")
        for field, label, color, style in TELEMETRY_SERIES:
            s = sub.filter(pl.col("field") == field)
            if not s.height:
                continue
            s = _downsample(s.group_by("timestamp").agg(pl.col("value").mean()).sort("timestamp"), max_points)
            (ln,) = ax.plot(
                s["timestamp"].to_list(), (s["value"] * 100).to_list(), color=color, linestyle=style,
                linewidth=1.4, label=label, marker="o" if s.height <= 3 else None, markersize=4,
            )  # a series of a sample or three is drawn as points: a line through one point is invisible
            ln.set_gid(f"telemetry:{k}:{field}")
            handles.setdefault(label, ln)
        shade: dict[tuple, list] = {}
        for f, span in hits[(host, gpu, inst)]:
            flagged_by_panel.setdefault(k, []).append(f.code)
            for t0, t1, strength in _flagged_spans(f, span, result.windows, host, gpu, inst, sub):
                entry = shade.setdefault((t0, t1), [0.0, []])
                entry[0] = max(entry[0], strength)
                entry[1].append(f.code)
        for (t0, t1), (strength, codes) in shade.items():  # one patch per span, however many rules
            patch = ax.axvspan(t0, t1, color=OKABE_ITO["yellow"], alpha=0.15 + 0.4 * min(1.0, strength), zorder=0,
                               linewidth=0)
            patch.set_gid(f"flagged:{k}:{','.join(sorted(set(codes)))}")
            handles.setdefault("span flagged by a rule", patch)
        name = f"{host or 'host ?'} \u00b7 GPU {gpu if gpu is not None else '?'}"
        if inst is not None:
            name += f" \u00b7 GI {inst}"
        codes = sorted(set(flagged_by_panel.get(k, [])))
        if codes:
            name += "  [" + ", ".join(codes) + "]"
        fit_text_width(fig, ax.set_title(plain(name), fontsize=10, loc="left"), width_px=fig.bbox.width / ncols - 60, min_size=8)
        ax.set_ylim(-3, 105)
        ax.grid(True, color="#E5E5E5", linewidth=0.6)
        ax.tick_params(labelsize=9)
        if k % ncols == 0:
            ax.set_ylabel("% of time", fontsize=10)
    for k in range(n, nrows * ncols):
        axes[k // ncols][k % ncols].set_visible(False)
    t0, t1 = tel.select(pl.col("timestamp").min().alias("a"), pl.col("timestamp").max().alias("b")).row(0)
    xlabel = _time_axis(axes, t0, t1)
    for ax in axes[-1]:
        ax.set_xlabel(xlabel, fontsize=10)
    if handles:
        fig.legend(
            handles=list(handles.values()), labels=list(handles.keys()), loc="outside lower center",
            ncols=min(5 if ncols == 2 else 3, len(handles)), fontsize=9, frameon=False,
        )
    if title is None:
        from ridgeline.render.facts import gpu_title

        gpu_txt = gpu_title(result)  # the JSON's gpu.label, as the page's title names it
        srcs = sorted({Path(str(s)).name for s in tel["source"].unique().to_list() if s is not None})
        src_txt = srcs[0] if len(srcs) == 1 else f"{len(srcs)} files"
        title = f"Busy vs. working \u2014 {gpu_txt} \u2014 {src_txt}"
        if len(groups) > n:
            title += f" ({n} of {len(groups)} GPUs, flagged first)"
    fit_text_width(fig, fig.suptitle(plain(title), fontsize=13, x=0.01, ha="left"))
    return fig


SHORT_SPAN_S = 600.0  # up to this span a time axis counts seconds from the start


def _time_axis(axes, t0, t1) -> str:
    """Tick the panels' time axes so the ticks say what they are, and return the axis label.

    Spans up to :data:`SHORT_SPAN_S` tick in seconds from the first sample (``+5 s``), where
    clock times would be ``:05, :10`` that read like hours; inputs without absolute time (their
    clock starts at the epoch: ``--start`` was not given) tick in elapsed time and say
    "relative time", never a 1970 date; the rest use concise UTC dates.
    """
    import matplotlib.dates as mdates
    import matplotlib.ticker as mticker

    relative = t0 is not None and getattr(t0, "year", 2000) <= 1970
    span = (t1 - t0).total_seconds() if t0 is not None and t1 is not None else 0.0
    if t0 is not None and (relative or span <= SHORT_SPAN_S):
        origin = mdates.date2num(t0)
        unit, scale = ("s", 1.0) if span <= SHORT_SPAN_S else (("min", 60.0) if span <= 6 * 3600 else ("h", 3600.0))

        def fmt(x, _pos):
            v = (x - origin) * 86400.0 / scale
            return f"{v:+.0f} {unit}" if abs(v) >= 1 or v == 0 else f"{v:+.1f} {unit}"

        # ticks at round numbers of the unit from the first sample (a locator in days would not be)
        length = span / scale
        if length <= 0:  # one sample time: one tick
            ticks = [origin]
        raw = max(length, 1e-9) / 5
        mag = 10 ** math.floor(math.log10(raw))
        step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
        if length > 0:
            ticks = [origin + k * step * scale / 86400.0 for k in range(int(length // step) + 1)]
        for row in axes:
            for ax in row:
                ax.xaxis.set_major_locator(mticker.FixedLocator(ticks))
                ax.xaxis.set_major_formatter(mticker.FuncFormatter(fmt))
        if relative:
            return f"elapsed {unit} (relative time: no clock in the input; see --start)"
        return f"{unit} since {t0:%Y-%m-%d %H:%M:%S} UTC"
    for row in axes:
        for ax in row:
            loc = mdates.AutoDateLocator(maxticks=6)
            ax.xaxis.set_major_locator(loc)
            ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(loc))
    return "time (UTC)"

