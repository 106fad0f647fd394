"""RL404 capture-dominated-by-copies."""

from __future__ import annotations

from ridgeline.rules import kernels as K
from ridgeline.rules.timeline import common as T
from ridgeline.rules.base import Context, Evidence, Finding, Rule


class CaptureDominatedByCopies(Rule):
    """Most of the GPU's busy time is copies with the SMs idle: a data-movement problem, not compute.

    What it finds
    -------------
    Devices of a timeline where copies running with no kernel or memset beside them
    (``copy_only_s``) are at least ``min_copy_share`` of the device's busy time (kernels,
    copies and memsets together).

    Why it matters
    --------------
    Copies are not compute. A window where the copy engines are busy and the SMs idle is a
    data-loading or data-placement problem: the roofline of the kernels, however good, covers
    only the minority of the GPU's busy time.

    What to do
    ----------
    Move less data: keep weights and activations resident on the GPU, upload inputs once,
    batch small copies into large ones, use pinned memory and asynchronous copies that
    overlap compute, and check that nothing round-trips through the host each step.

    Example
    -------
    ``gpu:0``: ``copies with no kernel running are 76% of the GPU's 373 ms busy time
    (>= 50%): HtoD 186 ms, DtoH 98.7 ms, DtoD 0 s; kernels 88.6 ms``.
    """

    code = "RL404"
    name = "capture-dominated-by-copies"
    severity = "warning"
    family = "timeline"
    thresholds = {
        "min_copy_share": (0.5, "fires when copy-only time is at least this share of the device's busy time"),
    }

    def check(self, ctx: Context) -> list[Finding]:
        out = []
        for r in T.devices(ctx):
            if not r["busy_s"]:
                continue
            share = (r["copy_only_s"] or 0.0) / r["busy_s"]
            if share < self.params["min_copy_share"]:
                continue
            got, limit = K.fmt_pct_vs(share, self.params["min_copy_share"])
            out.append(self.finding(
                subject=T.subject(ctx, r),
                message=(f"copies with no kernel running are {got} of the GPU's {K.fmt_s(r['busy_s'])} busy time "
                         f"(>= {limit}): HtoD {K.fmt_s(r['htod_s'])}, DtoH {K.fmt_s(r['dtoh_s'])}, "
                         f"DtoD {K.fmt_s(r['dtod_s'])}; kernels {K.fmt_s(r['kernel_busy_s'])}"),
                remedy="Move less data: keep tensors on the GPU, batch and overlap copies (pinned, async).",
                evidence=(
                    Evidence("copy_only_s", r["copy_only_s"], "s", "derived"),
                    Evidence("busy_s", r["busy_s"], "s", "measured"),
                    Evidence("copy_share_of_busy", share, "ratio", "derived"),
                    Evidence("kernel_busy_s", r["kernel_busy_s"], "s", "measured"),
                    Evidence("copy_bytes", r["copy_bytes"], "B", "measured"),
                ),
                impact_s=r["copy_only_s"],
                impact_share=(r["copy_only_s"] or 0.0) / r["capture_s"],
                confidence="measured",
                subject_kind="timeline",
            ))
        return out
