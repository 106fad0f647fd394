"""RL402 launch-bound."""

from __future__ import annotations

from ridgeline.rules import kernels as K
from ridgeline.rules.timeline import common as T
from ridgeline.rules.base import Context, Evidence, Finding, Rule


class LaunchBound(Rule):
    """Many kernels of a few microseconds with gaps between them as long as the kernels: launch-bound.

    What it finds
    -------------
    Devices of a timeline with at least ``min_short_kernels`` kernels shorter than the short
    kernel limit (``--timeline-short-kernel``, default 10 us), making up at least
    ``min_short_fraction`` of the device's launches, where the median gap before a short
    kernel is at least ``min_gap_ratio`` times the median short kernel's duration.

    Why it matters
    --------------
    When kernels finish faster than the host can launch the next one, the GPU runs at the
    speed of the launch path (CPU, driver, Python), not of its SMs: halving the kernels' time
    changes nothing. The roofline calls such kernels latency- or memory-bound one by one; only
    the timeline shows the gaps.

    What to do
    ----------
    Launch less: capture the steady-state step in a CUDA graph (a HIP graph on ROCm; ``torch.cuda.graphs``,
    ``torch.compile(mode="reduce-overhead")``, vLLM/TensorRT-LLM graph mode), fuse chains of
    elementwise and normalization kernels (``torch.compile``, fused RMSNorm/rotary/SwiGLU), and
    batch more work per launch.

    Example
    -------
    ``gpu:0``: ``5,359 kernels shorter than 10 us (88% of launches); median 3.84 us with a
    median gap of 3.84 us before each (>= 0.5x the kernel)``.
    """

    code = "RL402"
    name = "launch-bound"
    severity = "warning"
    family = "timeline"
    thresholds = {
        "min_short_kernels": (100, "fires only with at least this many short kernels on the device"),
        "min_short_fraction": (0.5, "short kernels must be at least this share of the device's launches"),
        "min_gap_ratio": (0.5, "median gap before a short kernel / median short kernel duration at least this"),
    }

    def check(self, ctx: Context) -> list[Finding]:
        p = self.params
        limit_s = T.option(ctx, "short_kernel_s")
        out = []
        for r in T.devices(ctx):
            n, total = r["short_kernels"] or 0, r["kernels"] or 0
            med, gap = r["median_short_kernel_s"], r["median_gap_before_short_s"]
            if n < p["min_short_kernels"] or not total or n / total < p["min_short_fraction"] or not med or gap is None:
                continue
            ratio = gap / med
            if ratio < p["min_gap_ratio"]:
                continue
            impact = r["idle_launch_s"]
            out.append(self.finding(
                subject=T.subject(ctx, r),
                message=(f"{K.plural(n, 'kernel')} shorter than {K.fmt_s(limit_s)} ({K.fmt_pct(n / total)} of launches); "
                         f"median {K.fmt_s(med)} with a median gap of {K.fmt_s(gap)} before each "
                         f"(>= {p['min_gap_ratio']:g}x the kernel)"),
                remedy=f"Launch less: {T.graphs(r)}, fuse small kernels, batch work.",
                evidence=(
                    Evidence("short_kernels", n, "launches", "measured"),
                    Evidence("kernels", total, "launches", "measured"),
                    Evidence("median_short_kernel_s", med, "s", "derived"),
                    Evidence("median_gap_before_short_s", gap, "s", "derived"),
                    Evidence("gap_to_kernel_ratio", ratio, "ratio", "derived"),
                    Evidence("idle_launch_s", r["idle_launch_s"], "s", "derived"),
                ),
                impact_s=impact,
                impact_share=impact / r["capture_s"],
                confidence="measured",
                subject_kind="timeline",
            ))
        return out
