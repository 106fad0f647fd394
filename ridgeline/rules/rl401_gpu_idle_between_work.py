"""RL401 gpu-idle-between-work."""

from __future__ import annotations

from ridgeline.rules import kernels as K
from ridgeline.rules import timeline_common as T
from ridgeline.rules.base import Context, Evidence, Finding, Rule


class GpuIdleBetweenWork(Rule):
    """The GPU sat idle between its own kernels and copies for a large share of the capture.

    What it finds
    -------------
    Devices of a timeline (Nsight Systems, PyTorch profiler) whose idle time — capture time
    (first to last GPU activity on the device) minus the union of kernel, copy and memset
    intervals — is at least ``min_idle_share`` of the capture. The message splits the idle
    time the way Holistic Trace Analysis does: gaps no longer than the launch threshold
    (``--timeline-launch-gap``, default 10 us: launch overhead), longer gaps while the host
    sat in a synchronizing call, and the rest.

    Why it matters
    --------------
    The roofline judges kernels one at a time and cannot see the time between them: a decode
    step whose kernels all sit near their roofs still wastes what the GPU spends waiting for
    the host. Idle time is lost wall time no kernel optimization recovers.

    What to do
    ----------
    Follow the largest part of the split: launch overhead -> fewer, larger launches (CUDA
    graphs, HIP graphs on ROCm, fusion, ``torch.compile``); host synchronization -> remove
    ``.item()``, ``.cpu()``, ``cudaDeviceSynchronize`` (``hipDeviceSynchronize``) and blocking copies
    (``cudaMemcpy``; ``hipMemcpy``/``hipMemcpyWithStream``) from the step; other -> the host
    is not feeding the GPU (data loading, Python overhead, communication waits): overlap them
    with GPU work (prefetching data loaders, pinned memory, async copies, more work per step).

    Example
    -------
    ``gpu:0``: ``idle 64% of the 1.23 s capture (>= 20%): 0.79 s, of which launch gaps 23 ms,
    host synchronizing 100 ms, other 670 ms``.
    """

    code = "RL401"
    name = "gpu-idle-between-work"
    severity = "warning"
    family = "timeline"
    thresholds = {
        "min_idle_share": (0.2, "fires when idle time is at least this share of the device's capture"),
    }

    def check(self, ctx: Context) -> list[Finding]:
        out = []
        for r in T.devices(ctx):
            share = r["idle_s"] / r["capture_s"]
            if share < self.params["min_idle_share"]:
                continue
            got, limit = K.fmt_pct_vs(share, self.params["min_idle_share"])
            out.append(self.finding(
                subject=T.subject(ctx, r),
                message=(f"idle {got} of the {K.fmt_s(r['capture_s'])} capture (>= {limit}): {K.fmt_s(r['idle_s'])}, "
                         f"of which launch gaps {K.fmt_s(r['idle_launch_s'])}, " + (
                             f"host synchronizing {K.fmt_s(r['idle_sync_s'])}, other {K.fmt_s(r['idle_other_s'])}"
                             if T.has_host_calls(r) else
                             f"longer gaps {K.fmt_s(r['idle_other_s'])} (the file records no host calls, so synchronization "
                             "is not told apart)")),
                remedy=(f"Attack the largest part: launch gaps -> {T.graphs(r)}, fusion; synchronizing -> drop "
                        f"{T.sync_calls(r)}; other -> feed the GPU ahead (prefetch, async copies)."),
                evidence=(
                    Evidence("capture_s", r["capture_s"], "s", "measured"),
                    Evidence("busy_s", r["busy_s"], "s", "measured"),
                    Evidence("idle_s", r["idle_s"], "s", "derived"),
                    Evidence("idle_share", share, "ratio", "derived"),
                    Evidence("idle_launch_s", r["idle_launch_s"], "s", "derived"),
                    Evidence("idle_sync_s", r["idle_sync_s"], "s", "derived"),
                    Evidence("idle_other_s", r["idle_other_s"], "s", "derived"),
                ),
                impact_s=r["idle_s"],
                impact_share=share,
                confidence="measured",
                subject_kind="timeline",
            ))
        return out
