"""Communication on a timeline: collective kernels timed apart from compute, per device.

Which kernels are communication
-------------------------------
One table decides: :data:`ridgeline.analyzer.kernels.families.FAMILY_TABLE`, whose ``communication``
rows recognise a kernel by its full name (``docs/kernel-families.md`` lists them):

* NCCL and RCCL collectives and point-to-point kernels: ``ncclKernel_*`` (NCCL <= 2.18, RCCL),
  ``ncclDevKernel_*`` (NCCL 2.19+), SendRecv included;
* custom all-reduce: vLLM/SGLang ``cross_device_reduce_*``, PyTorch symmetric-memory
  ``multimem_all_reduce`` / ``one_shot_all_reduce`` / ``two_shot_all_reduce``, TensorRT-LLM
  ``allreduce_*`` kernels; and other custom collectives named all-gather, reduce-scatter or
  all-to-all.

A kernel that is not communication is *compute* here (copies and memsets are neither: they are
timed by the copy figures of :mod:`ridgeline.analyzer.timeline.busy`).

Figures per device (columns of TIMELINE_DEVICE_COLUMNS)
-------------------------------------------------------
* ``comm_kernels``: communication kernel launches.
* ``comm_busy_s``: length of the union of the communication kernel intervals (two collectives
  on two streams at once count once).
* ``compute_busy_s``: length of the union of the other kernels' intervals.
* ``comm_exposed_s``: the part of ``comm_busy_s`` during which no compute kernel ran on the same
  device: communication that the step waits for. ``comm_busy_s - comm_exposed_s`` is the
  communication hidden behind compute.
* ``comm_overlap_share``: ``1 - comm_exposed_s / comm_busy_s`` (null without communication).

Hence ``comm_exposed_s <= comm_busy_s <= kernel_busy_s <= busy_s``. A collective kernel's
duration includes the time it waits for the slowest peer to arrive (NCCL kernels spin until
every rank joins), so on a job with a straggler the fast ranks show long exposed communication
and the straggler short: :mod:`ridgeline.analyzer.timeline.ranks` reads exactly that.

Cost: the names are classified once per distinct name (cached), intervals are merged on polars
Series (:func:`ridgeline.analyzer.timeline.busy.merge_intervals`, passed in: this module sits below the timeline
analysis and imports nothing of it); no Python per launch.
"""

from __future__ import annotations

#: the FAMILY_TABLE family whose kernels are communication
COMM_FAMILY = "communication"

#: device-row columns this module fills (TIMELINE_DEVICE_COLUMNS documents them)
COMM_COLUMNS = ("comm_kernels", "compute_busy_s", "comm_busy_s", "comm_exposed_s", "comm_overlap_share")


def is_comm_name(name: str | None) -> bool:
    """True when the full kernel name is a communication kernel (the family table's verdict).

    A name no communication row matches is not one, whatever row comes first: that test (three
    patterns) settles most names; only the rest go through the whole table's first match."""
    from ridgeline.analyzer.kernels.families import classify_name, family_patterns

    if not name or not any(rx.search(name) for rx in family_patterns(COMM_FAMILY)):
        return False
    return classify_name(name).family == COMM_FAMILY


def comm_mask(names):
    """Boolean Series: which of ``names`` (a polars Series of full kernel names) are communication.
    Each distinct name is classified once."""
    import polars as pl

    from ridgeline.analyzer.timeline.intervals import full

    if names.len() == 0:
        return pl.Series([], dtype=pl.Boolean)
    distinct = [n for n in names.unique().to_list() if n is not None]
    comm = [n for n in distinct if is_comm_name(n)]
    if not comm:
        return full(False, names.len(), pl.Boolean)
    return pl.select(pl.lit(names).is_in(comm).fill_null(False)).to_series()


def overlap_len(as_, ae, bs, be, coverage) -> int:
    """Length of the intersection of two unions of disjoint sorted intervals (Int64 Series;
    ``coverage``: :func:`ridgeline.analyzer.timeline.busy.coverage`)."""
    if not as_.len() or not bs.len():
        return 0
    return int((coverage(bs, be, ae) - coverage(bs, be, as_)).sum())


def device_figures(names, starts, ends, is_kernel, merge_intervals, coverage) -> dict:
    """The COMM_COLUMNS of one device: ``names`` the activities' full names, ``starts``/``ends``
    their int64 ns, ``is_kernel`` which are kernels (polars Series, one row per activity).
    The interval helpers are the timeline's own (:func:`ridgeline.analyzer.timeline.busy.merge_intervals`
    and ``coverage``), passed in by that module, which calls this one."""
    is_comm = comm_mask(names) & is_kernel
    is_compute = is_kernel & ~is_comm
    cs, ce = merge_intervals(starts.filter(is_comm), ends.filter(is_comm))
    ks, ke = merge_intervals(starts.filter(is_compute), ends.filter(is_compute))
    comm = int((ce - cs).sum()) if cs.len() else 0
    exposed = comm - overlap_len(cs, ce, ks, ke, coverage)
    return {
        "comm_kernels": int(is_comm.sum()),
        "compute_busy_s": (int((ke - ks).sum()) if ks.len() else 0) / 1e9,
        "comm_busy_s": comm / 1e9,
        "comm_exposed_s": exposed / 1e9,
        "comm_overlap_share": (1.0 - exposed / comm) if comm else None,
    }
