"""RL401 gpu-idle-between-work."""

from __future__ import annotations

from ridgeline.rules import kernels as K
from ridgeline.rules.timeline import common as T
from ridgeline.analyzer.timeline.idle_causes import IDLE_CAUSE_WORDS
from ridgeline.rules.base import Context, Evidence, Finding, Rule


class GpuIdleBetweenWork(Rule):
    """The GPU sat idle between its own kernels and copies for a large share of the capture.

    What it finds
    -------------
    Devices of a timeline (Nsight Systems, PyTorch profiler) whose idle time — capture time
    (first to last GPU activity on the device) minus the union of kernel, copy and memset
    intervals — is at least ``min_idle_share`` of the capture. The message splits the idle
    time by cause (:mod:`ridgeline.analyzer.timeline.idle_causes`, from the launch record of the work
    that ends each gap): launch gaps (up to ``--timeline-launch-gap``, default 10 us), host
    synchronizing (the host blocked in a synchronizing call before launching the next work),
    host late (the GPU ran dry before the host launched the next work), queued (the next work
    was launched and waited on another stream, an event or a collective) and, where a gap's
    work has no launch record, other (the word every view uses for that column).

    Why it matters
    --------------
    The roofline judges kernels one at a time and cannot see the time between them: a decode
    step whose kernels all sit near their roofs still wastes what the GPU spends waiting.
    Idle time is lost wall time no kernel optimization recovers, and each cause has its own
    remedy: feeding the GPU ahead helps only when the host was late.

    What to do
    ----------
    The remedy names the largest cause first: launch gaps -> fewer, larger launches (CUDA
    graphs, HIP graphs on ROCm, fusion, ``torch.compile``); host synchronizing -> remove
    ``.item()``, ``.cpu()``, ``cudaDeviceSynchronize`` (``hipDeviceSynchronize``) and blocking
    copies (``cudaMemcpy``; ``hipMemcpy``/``hipMemcpyWithStream``) from the step; host late ->
    the CPU is the bottleneck: speed up or overlap what it does between launches (data loading,
    Python overhead; graphs and ``torch.compile`` cut the per-launch host cost), and where the
    trace records CPU work (Kineto ``cpu_op``, ``user_annotation``, ``python_function``) the
    remedy names the ops covering most of the time before the late launches (their own time,
    children apart: ``idle_host_cpu``); queued -> the
    host was ahead: find the dependency the work waited on (cross-stream event waits,
    collectives and the ranks they wait for) rather than feeding the GPU more; other -> the
    file has no launch records for that work (an nsys stats CSV: export the sqlite).

    Example
    -------
    ``gpu:0``: ``idle 64% of the 1.23 s capture (>= 20%): 793 ms, of which queued 669 ms
    (launched, waiting on a dependency), host late 10 ms, launch gaps 24 ms, host
    synchronizing 293 us, other 90 ms (work with no launch record: ...)``.
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
                message=f"idle {got} of the {K.fmt_s(r['capture_s'])} capture (>= {limit}): {K.fmt_s(r['idle_s'])}, "
                        f"of which {_split(r)}",
                remedy=_remedy(r),
                evidence=(
                    Evidence("capture_s", r["capture_s"], "s", "measured"),
                    Evidence("busy_s", r["busy_s"], "s", "measured"),
                    Evidence("idle_s", r["idle_s"], "s", "derived"),
                    Evidence("idle_share", share, "ratio", "derived"),
                    Evidence("idle_launch_s", r["idle_launch_s"], "s", "derived"),
                    Evidence("idle_sync_s", r["idle_sync_s"], "s", "derived"),
                    Evidence("idle_host_s", r.get("idle_host_s") or 0.0, "s", "derived"),
                    Evidence("idle_queued_s", r.get("idle_queued_s") or 0.0, "s", "derived"),
                    Evidence("idle_other_s", r["idle_other_s"], "s", "derived"),
                    *((Evidence("launch_delay_median_s", r["launch_delay_median_s"], "s", "measured"),
                       Evidence("queue_depth_median", r["queue_depth_median"], "launches", "measured"))
                      if r.get("launch_delay_median_s") is not None else ()),
                ),
                impact_s=r["idle_s"],
                impact_share=share,
                confidence="measured",
                subject_kind="timeline",
            ))
        return out


def _causes(r) -> list[tuple[str, float]]:
    """(cause, seconds), largest first; only the causes the file can tell apart."""
    if not T.has_host_calls(r):
        return [("launch", r["idle_launch_s"]), ("other", r["idle_other_s"])]
    out = [("launch", r["idle_launch_s"]), ("sync", r["idle_sync_s"]), ("host", r.get("idle_host_s") or 0.0),
           ("queued", r.get("idle_queued_s") or 0.0), ("other", r["idle_other_s"])]
    return sorted(out, key=lambda c: -c[1])


#: a cause gets its remedy line from this share of the idle time (the largest cause always does)
MIN_REMEDY_SHARE = 0.05

_WORDS = {"launch": "launch gaps", "sync": "host synchronizing", "host": "host late",
          "queued": "queued", "other": IDLE_CAUSE_WORDS["other"]}


def _split(r) -> str:
    if not T.has_host_calls(r):
        return (f"launch gaps {K.fmt_s(r['idle_launch_s'])}, longer gaps {K.fmt_s(r['idle_other_s'])} (the file records "
                "no host calls, so synchronization, a late host and queued work are not told apart)")
    parts = []
    for cause, s in _causes(r):
        if not s:  # a cause with no idle time is left out of the sentence
            continue
        text = f"{_WORDS[cause]} {K.fmt_s(s)}"
        if cause == "queued" and s:
            text += " (launched, waiting on a dependency)"
        if cause == "other":
            text += " (work with no launch record: launched before the capture or by an untraced call)"
        parts.append(text)
    return ", ".join(parts)


def _remedy(r) -> str:
    """One remedy per cause, the largest cause first; only causes with idle time."""
    lines = {
        "launch": f"launch gaps -> {T.graphs(r)}, fusion",
        "sync": f"host synchronizing -> drop {T.sync_calls(r)}",
        "host": "host late -> the CPU is the bottleneck: speed up or overlap what it does between launches "
                + (f"(before the late launches it was in {r['idle_host_cpu']} of the time; " if r.get("idle_host_cpu")
                   else "(") + "data loading in worker processes, less Python per step; graphs cut the per-launch cost)",
        "queued": "queued -> the host was ahead: find what the queued work waited on (cross-stream event waits, "
                  "collectives and the ranks they wait for), not more host speed",
        "other": f"{IDLE_CAUSE_WORDS['other']} -> capture longer (from before the work was launched) to see its launch calls",
    }
    if not T.has_host_calls(r):
        return (f"Attack the largest part: launch gaps -> {T.graphs(r)}, fusion; longer gaps -> capture host calls "
                "(nsys sqlite export, Kineto with cuda_runtime) to tell a late host from queued work and syncs.")
    ranked = [(c, s) for c, s in _causes(r) if s > 0]
    # the largest cause always; the others from MIN_REMEDY_SHARE of the idle time
    causes = [c for i, (c, s) in enumerate(ranked) if i == 0 or s >= MIN_REMEDY_SHARE * (r["idle_s"] or 0)]
    return "By cause, largest first: " + "; ".join(lines[c] for c in causes) + "." if causes else \
        "Attack the largest part of the split."
