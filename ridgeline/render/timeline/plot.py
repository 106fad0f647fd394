"""The timeline figure: GPU busy/idle per device over the capture (matplotlib, lazy imports).

One panel per device (at most ``max_panels``), x = time since the device's first activity,
y = the share of each time bin the GPU was busy: shaded = any activity (kernels, copies,
memsets; overlaps once), line = kernels only, orange = copies. Bins come from
:attr:`ridgeline.analyzer.timeline.busy.TimelineAnalysis.bins` (``plot_bins`` per device).
"""

from __future__ import annotations

from pathlib import Path

BUSY = "#0072B2"
KERNEL = "#003f63"
COPY = "#E69F00"


def timeline_figure(result, *, max_panels: int = 8, title: str | None = None):
    """A matplotlib Figure, or None when the result has no timeline with GPU activity."""
    import polars as pl

    from ridgeline.render.plot_style import _new_figure, fit_text_width
    from ridgeline.render.text import fmt_seconds as si

    tl = getattr(result, "timeline", None)
    if tl is None or tl.bins is None or not tl.bins.height or tl.devices is None or not tl.devices.height:
        return None
    devices = tl.devices.head(max_panels).to_dicts()
    several = tl.devices.get_column("source").n_unique() > 1
    longest = max(d["capture_s"] or 0.0 for d in devices)
    scale, unit = (1e6, "us") if longest < 2e-3 else ((1e3, "ms") if longest < 2 else (1.0, "s"))
    fig = _new_figure(9.5, 1.35 + 1.5 * len(devices))
    axes = fig.subplots(len(devices), 1, squeeze=False)[:, 0]
    for ax, d in zip(axes, devices):
        b = tl.bins.filter((pl.col("source") == d["source"]) & (pl.col("device") == d["device"]))
        x = b.get_column("t0_s").to_list() + [b.get_column("t1_s")[-1]]
        cap = d["capture_s"] or 0.0
        xs = [v * scale for v in x]
        busy = b.get_column("busy_ratio").to_list()
        ax.stairs(busy, xs, fill=True, color=BUSY, alpha=0.35, label="busy (any activity)")
        ax.stairs(b.get_column("kernel_ratio").to_list(), xs, color=KERNEL, linewidth=0.8, label="kernels")
        copy = b.get_column("copy_ratio").to_list()
        if any(c > 0 for c in copy):
            ax.stairs(copy, xs, color=COPY, linewidth=0.8, label="copies")
        ax.set_ylim(0, 1.05)
        ax.set_xlim(xs[0], xs[-1])
        ax.set_ylabel("busy")
        name = ("gpu:?" if d["device"] is None else f"gpu:{d['device']}") + (f" {d['device_name']}" if d["device_name"] else "")
        if several:
            name = f"{Path(d['source']).name} {name}"
        idle = d["idle_s"] / cap if cap else 0.0
        known = bool(d.get("host_api"))
        causes = (f"sync {si(d['idle_sync_s'])}, host late {si(d.get('idle_host_s') or 0.0)}, "
                  f"queued {si(d.get('idle_queued_s') or 0.0)}, " if known else "sync n/a, ")
        panel_title = ax.set_title(f"{name}: idle {idle:.0%} of {si(cap)} (launch {si(d['idle_launch_s'])}, {causes}"
                     f"other {si(d['idle_other_s'])})", fontsize=9, loc="left")
        fit_text_width(fig, panel_title, width_px=fig.bbox.width - 60, min_size=7.5)
        ax.tick_params(labelsize=8)
    axes[-1].set_xlabel(f"time since the device's first activity ({unit})")
    # below the panels, never over the data (a busy GPU fills a panel's top right corner)
    handles, labels = axes[0].get_legend_handles_labels()
    for ax in axes[1:]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    leg = fig.legend(handles, labels, loc="outside lower center", fontsize=8, ncols=len(labels), frameon=False)
    leg.set_gid("legend:timeline")
    if len(tl.devices) > max_panels:
        fig.suptitle(f"first {max_panels} of {len(tl.devices)} devices", fontsize=9)
    elif title:
        fit_text_width(fig, fig.suptitle(title, fontsize=10))
    return fig
