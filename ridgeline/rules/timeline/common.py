"""Helpers shared by the timeline rules (RL4xx): the per-device rows and their subject."""

from __future__ import annotations

from typing import Any

from ridgeline.rules.base import Context


def devices(ctx: Context) -> list[dict[str, Any]]:
    """Rows of the timeline's per-device table (TIMELINE_DEVICE_COLUMNS) with a capture."""
    tl = ctx.timeline
    if tl is None or tl.devices is None or not tl.devices.height:
        return []
    return [r for r in tl.devices.iter_rows(named=True) if r["capture_s"] and r["capture_s"] > 0]


def has_host_calls(row: dict[str, Any]) -> bool:
    """The input records host API calls (the reader's ``host_api`` flag, the one the legend reads)."""
    return bool(row.get("host_api"))


def graphs(row: dict[str, Any]) -> str:
    """Graph capture in the vendor's words (ROCm: HIP graphs, which torch.cuda.graphs wraps there);
    PyTorch's switch for it only for PyTorch programs (``framework``)."""
    vendor = row.get("vendor")
    torch = row.get("framework") == "pytorch"
    if vendor == "amd":
        return ("HIP graphs (torch.compile mode='reduce-overhead' uses them on ROCm)" if torch
                else "HIP graphs (hipStreamBeginCapture, hipGraphLaunch)")
    if vendor == "nvidia":
        return ("CUDA graphs (torch.compile mode='reduce-overhead')" if torch
                else "CUDA graphs (cudaStreamBeginCapture, cudaGraphLaunch)")
    return "GPU graph capture (CUDA/HIP graphs)"


def sync_calls(row: dict[str, Any]) -> str:
    """Synchronizing calls to remove from a step, in the vendor's API names (PyTorch's .item()/.cpu()
    for PyTorch programs)."""
    vendor = row.get("vendor")
    torch = ".item()/.cpu(), " if row.get("framework") == "pytorch" else ""
    if vendor == "amd":
        return torch + "hipDeviceSynchronize, blocking copies (hipMemcpy, hipMemcpyWithStream)"
    if vendor == "nvidia":
        return torch + "cudaDeviceSynchronize, blocking copies (cudaMemcpy)"
    return torch + "device synchronizations, blocking copies"


def async_copies(row: dict[str, Any]) -> str:
    """How to overlap copies with compute, in the program's words."""
    if row.get("framework") == "pytorch":
        return "pinned memory, non_blocking=True, a side stream"
    api = "hipMemcpyAsync" if row.get("vendor") == "amd" else "cudaMemcpyAsync" if row.get("vendor") == "nvidia" else "async copies"
    return f"pinned host memory, {api} on a side stream"


def several_sources(ctx: Context) -> bool:
    tl = ctx.timeline
    return tl is not None and tl.devices is not None and tl.devices.get_column("source").n_unique() > 1


def subject(ctx: Context, row: dict[str, Any]) -> str:
    """``gpu:<device>`` (``<file> gpu:<device>`` with several timeline files)."""
    from pathlib import Path

    dev = "gpu:?" if row["device"] is None else f"gpu:{row['device']}"
    return f"{Path(row['source']).name} {dev}" if several_sources(ctx) else dev


def option(ctx: Context, name: str) -> float:
    from ridgeline.analyzer.timeline.busy import DEFAULT_OPTIONS

    tl = ctx.timeline
    return float((tl.options if tl is not None else DEFAULT_OPTIONS).get(name, DEFAULT_OPTIONS[name]))


def subject_names(kernels) -> dict[str, dict[str, float]]:
    """Kernel finding subject (as the kernel rules name it: label, else short name, else the name)
    -> {kernel name (else short name): profiled seconds} of the launches behind it (the key
    :func:`ridgeline.analyzer.timeline.busy.wall_shares` uses)."""
    import polars as pl

    if kernels is None or not kernels.height:
        return {}
    cols = [c for c in ("kernel_label", "short_name", "kernel_name") if c in kernels.columns]
    subj = pl.coalesce([pl.col(c) for c in cols]).fill_null("<unnamed kernel>")
    name = pl.coalesce(pl.col("kernel_name"), pl.col("short_name")) if "kernel_name" in kernels.columns \
        else pl.col("short_name")
    g = kernels.group_by(subj.alias("subject"), name.alias("name")).agg(pl.col("duration_s").sum().fill_null(0.0))
    out: dict[str, dict[str, float]] = {}
    for subject, short, secs in g.iter_rows():
        out.setdefault(subject, {})[short] = float(secs or 0.0)
    return out


def finding_subject(subject: str) -> str:
    """A kernel finding's subject without the ``[precision, GPU]`` tag that tells groups apart."""
    import re

    return re.sub(r" \[[^\]]*\]$", "", subject)


def weight_by_wall_time(findings: list, timeline, kernels) -> list:
    """Kernel findings re-weighted by the timeline's wall time, most impactful first.

    With a profile and a timeline joined by kernel name (:func:`ridgeline.analyzer.timeline.busy.
    join_roofline`), a kernel finding's ``impact_share`` becomes ``impact_s / profiled time of the
    finding's kernels x their wall_share`` (the kernels: the launches whose label, else short
    name, is the finding's subject; their wall shares summed over the kernel names matched on the
    timeline): the share of the real run's wall time the finding could save, instead of the share
    of the profiled time. ``impact_s`` stays in profiled seconds; a ``wall_share`` evidence item
    is added. Findings of unmatched kernels and of other subjects keep their share. The list is
    re-sorted (Finding.sort_key).
    """
    import dataclasses

    from ridgeline.analyzer.timeline.busy import wall_shares
    from ridgeline.rules.base import Evidence

    shares = wall_shares(timeline)
    if not shares or kernels is None or not kernels.height:
        return findings
    names = subject_names(kernels)
    out = []
    for f in findings:
        behind = names.get(finding_subject(f.subject), {}) if f.subject_kind == "kernel" else {}
        matched = {n: t for n, t in behind.items() if n in shares}
        profiled = sum(behind.values())
        if matched and f.impact_s is not None and profiled > 0:
            wall = sum(shares[n] for n in matched)
            share = min(1.0, f.impact_s / profiled) * wall
            f = dataclasses.replace(f, impact_share=share, evidence=tuple(f.evidence) + (
                Evidence("wall_share", wall, "ratio", "measured: timeline"),))
        out.append(f)
    return sorted(out, key=lambda f: f.sort_key)
