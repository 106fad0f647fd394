"""RL403 copy-and-sync-overhead."""

from __future__ import annotations

from ridgeline.rules import kernels as K
from ridgeline.rules.timeline import common as T
from ridgeline.rules.base import Context, Evidence, Finding, Rule


class CopyAndSyncOverhead(Rule):
    """Host-device copies and synchronization take a large share of the step.

    What it finds
    -------------
    Devices of a timeline where copies that run with no kernel beside them (``copy_only_s``)
    plus the idle time spent while the host was in a synchronizing call (``idle_sync_s``) are
    at least ``min_share`` of the capture.

    Why it matters
    --------------
    A copy with no kernel running and a GPU waiting for the host to come back from
    ``cudaStreamSynchronize`` are both time the SMs do no work. In a training or decode step
    they usually come from ``.item()``/``.cpu()`` calls, pageable-memory copies and
    per-step uploads that could overlap compute.

    What to do
    ----------
    Keep data on the GPU between steps; copy with ``non_blocking=True`` from pinned memory on
    a side stream so copies overlap kernels; remove per-step ``.item()``/``print`` of GPU
    values and explicit synchronizations from the hot loop.

    Example
    -------
    ``gpu:0``: ``copies alone and synchronization hold 26% of the 1.10 s capture (>= 10%):
    copies with no kernel 285 ms (HtoD 186 ms, DtoH 98.7 ms), idle while synchronizing 1.14 ms``.
    """

    code = "RL403"
    name = "copy-and-sync-overhead"
    severity = "warning"
    family = "timeline"
    thresholds = {
        "min_share": (0.1, "fires when copy-only time plus synchronizing idle time is at least this share of the capture"),
    }

    def check(self, ctx: Context) -> list[Finding]:
        out = []
        for r in T.devices(ctx):
            cost = (r["copy_only_s"] or 0.0) + (r["idle_sync_s"] or 0.0)
            share = cost / r["capture_s"]
            if share < self.params["min_share"]:
                continue
            got, limit = K.fmt_pct_vs(share, self.params["min_share"])
            out.append(self.finding(
                subject=T.subject(ctx, r),
                message=(f"copies alone and synchronization hold {got} of the {K.fmt_s(r['capture_s'])} capture "
                         f"(>= {limit}): copies with no kernel {K.fmt_s(r['copy_only_s'])} (HtoD {K.fmt_s(r['htod_s'])}, "
                         f"DtoH {K.fmt_s(r['dtoh_s'])}), idle while synchronizing "
                         + (K.fmt_s(r["idle_sync_s"]) if T.has_host_calls(r) else "unknown (the file records no host calls)")),
                remedy=(f"Overlap copies with compute ({T.async_copies(r)}) and drop per-step syncs "
                        f"({T.sync_calls(r)})."),
                evidence=(
                    Evidence("copy_only_s", r["copy_only_s"], "s", "derived"),
                    Evidence("idle_sync_s", r["idle_sync_s"], "s", "derived"),
                    Evidence("htod_s", r["htod_s"], "s", "measured"),
                    Evidence("dtoh_s", r["dtoh_s"], "s", "measured"),
                    Evidence("sync_api_s", r["sync_api_s"], "s", "measured"),
                    Evidence("capture_s", r["capture_s"], "s", "measured"),
                ),
                impact_s=cost,
                impact_share=share,
                confidence="measured",
                subject_kind="timeline",
            ))
        return out
