"""RL410 exposed-communication."""

from __future__ import annotations

from ridgeline.rules import kernels as K
from ridgeline.rules.timeline import common as T
from ridgeline.rules.base import Context, Evidence, Finding, Rule


class ExposedCommunication(Rule):
    """Communication kernels run with no compute beside them for a large share of the capture.

    What it finds
    -------------
    Devices of a timeline whose exposed communication (``comm_exposed_s``: the time a
    communication kernel — NCCL/RCCL collective or send/recv, custom all-reduce, multimem
    all-reduce — runs while no compute kernel runs on the same device) is at least
    ``min_exposed_share`` of the device's capture. The message gives the communication time,
    the share hidden behind compute and the share of kernel time communication takes. The
    subject is the device's communication (``gpu:0 communication``): exposed communication is
    busy time, disjoint from the idle time RL401/RL403 count, so its saving is its own and is
    not folded into theirs (the engine shares one saving among findings on one subject).

    Why it matters
    --------------
    Exposed communication is time the SMs wait for the network or NVLink: every step of the job
    is that much longer, and no kernel optimization recovers it. Communication that overlaps
    compute costs (almost) nothing. A collective kernel also waits for the slowest rank, so on
    a job with a straggler (RL411) much of the exposed time is that rank's lateness.

    What to do
    ----------
    Hide it behind compute: DDP gradient bucketing with overlap in backward (``bucket_cap_mb``,
    ``gradient_as_bucket_view``), FSDP ``forward_prefetch``/``backward_prefetch``, async tensor
    parallelism (compute-communication overlap in torch.compile / TransformerEngine); send
    fewer, larger collectives (gradient accumulation with ``no_sync``, bucketed all-gathers);
    if one rank is late (RL411), fix that rank first. Programs that are not PyTorch (``framework``
    null: MPI/NCCL codes) get the same levers in their terms: collectives on their own stream
    overlapping independent work, chunked so each exchange hides behind the next chunk's compute,
    and fused small messages.

    Example
    -------
    ``gpu:0 communication``: ``communication exposed 51% of the 14.6 ms capture (>= 10%): 7.4 ms of 8.0 ms
    communication (80 NCCL/collective kernels) ran with no compute kernel beside it (overlap
    8%); communication is 57% of kernel time``.
    """

    code = "RL410"
    name = "exposed-communication"
    severity = "warning"
    family = "timeline"
    thresholds = {
        "min_exposed_share": (0.1, "fires when communication with no compute beside it is at least this share of the "
                                   "device's capture"),
    }

    def check(self, ctx: Context) -> list[Finding]:
        out = []
        for r in T.devices(ctx):
            exposed = r.get("comm_exposed_s") or 0.0
            comm = r.get("comm_busy_s") or 0.0
            share = exposed / r["capture_s"]
            if not comm or share < self.params["min_exposed_share"]:
                continue
            got, limit = K.fmt_pct_vs(share, self.params["min_exposed_share"])
            overlap = r.get("comm_overlap_share") or 0.0
            kernel = r.get("kernel_busy_s") or 0.0
            of_kernel = f"; communication is {K.fmt_pct(comm / kernel)} of kernel time" if kernel else ""
            rank = f"rank {r['rank']}: " if r.get("rank") is not None else ""
            out.append(self.finding(
                subject=f"{T.subject(ctx, r)} communication",
                message=(f"{rank}communication exposed {got} of the {K.fmt_s(r['capture_s'])} capture (>= {limit}): "
                         f"{K.fmt_s(exposed)} of {K.fmt_s(comm)} communication ({r.get('comm_kernels') or 0} "
                         f"NCCL/collective kernels) ran with no compute kernel beside it (overlap "
                         f"{K.fmt_pct(overlap)}){of_kernel}"),
                remedy=(("Overlap communication with compute: DDP bucketing with overlap in backward (bucket_cap_mb), "
                         "FSDP forward/backward prefetch, async tensor parallelism; send fewer, larger collectives "
                         "(gradient accumulation with no_sync)" if r.get("framework") == "pytorch" else
                         "Overlap communication with compute: issue collectives on their own stream while independent "
                         "work runs (split the computation so each chunk's exchange hides behind the next chunk); "
                         "send fewer, larger collectives (fuse small messages)")
                        + "; if one rank is late (RL411), fix that rank first."),
                evidence=(
                    Evidence("comm_busy_s", comm, "s", "measured"),
                    Evidence("comm_exposed_s", exposed, "s", "derived"),
                    Evidence("comm_overlap_share", overlap, "ratio", "derived"),
                    Evidence("compute_busy_s", r.get("compute_busy_s"), "s", "measured"),
                    Evidence("capture_s", r["capture_s"], "s", "measured"),
                    Evidence("exposed_share", share, "ratio", "derived"),
                ),
                impact_s=exposed,
                impact_share=share,
                confidence="measured",
                subject_kind="timeline",
            ))
        return out
