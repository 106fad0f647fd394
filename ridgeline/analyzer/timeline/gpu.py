"""The GPU of a run of timelines alone (no Nsight Compute export): one resolved fact for every line.

A timeline records no peaks, so ``--gpu NAME`` is what gives such a run its roofs: the GPU it
names (:func:`ridgeline.analyzer.kernels.roofline.resolve_gpu`), checked against the device
names the timelines record, is the run's GPU, and its datasheet roofs are the run's roofs
(:func:`datasheet_roofs`): the header's ``GPU:`` line, the ``Roofs`` lines, the JSON's ``gpu`` and
``roofs``, the rules' ``ctx.gpu`` and the what-if all read that one answer (before, ``GPU: A100
SXM 80GB`` came with ``Roofs: none (... pass --gpu NAME)``).

As for profiles, ``--gpu`` never relabels a GPU the file names: a family name (``A100``) on a
trace recording one of that family's variants (``NVIDIA A100-SXM4-40GB``) is that variant, and a
GPU the trace names as another one is an error naming both (``--what-if`` projects onto
another GPU). A device name the catalogue does not know, or none, leaves ``--gpu``'s GPU,
with a note.
"""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass
class TimelineGpu:
    entry: Any  # the catalogue entry (ridgeline.analyzer.kernels.gpus.GPU)
    gpu_name: str
    gpu_match: str
    roofs: list
    notes: list[str]


def datasheet_roofs(entry) -> list:
    """The roofs of a catalogue entry (``Roof``, source = its origin: ``catalogue``, or a GPU
    configured by the user): DRAM bandwidth, then compute per precision, as the datasheet gives them."""
    from ridgeline.analyzer.kernels.gpus import PRECISIONS
    from ridgeline.result import Roof

    detail = f"{entry.name} datasheet (--gpu; a timeline records no peaks)"
    roofs = []
    if entry.dram_bw_bytes_per_s:
        roofs.append(Roof(kind="bandwidth", value=float(entry.dram_bw_bytes_per_s), source=entry.origin, level="dram",
                          detail=detail))
    for p in PRECISIONS:
        peak = entry.peak(p)
        if peak:
            roofs.append(Roof(kind="compute", value=float(peak), source=entry.origin, precision=p, detail=detail))
    return roofs


def timeline_gpu(devices, gpu) -> TimelineGpu:
    """``--gpu`` (a name or a GPU) resolved against the device names ``devices`` (the timeline's
    TIMELINE_DEVICE_COLUMNS frame, or None) record (module docstring). UsageError when the trace
    names another GPU."""
    from ridgeline.analyzer.kernels.gpus import normalize, try_lookup
    from ridgeline.analyzer.kernels.roofline import resolve_gpu
    from ridgeline.errors import UsageError

    forced, note = resolve_gpu(gpu)
    names = []
    if devices is not None and devices.height and "device_name" in devices.columns:
        names = [n for n in devices.get_column("device_name").unique(maintain_order=True).to_list() if n]
    entry, notes, refined = forced, [], []
    for name in names:
        recorded, _why = try_lookup(name)
        if recorded is None or recorded.name == forced.name:
            if recorded is None:
                notes.append(f"the trace names its device {name!r}, which the GPU catalogue does not know: the roofs "
                             f"are {forced.name}'s, as --gpu says")
            continue
        family_named = isinstance(gpu, str) and normalize(gpu) == normalize(forced.family or "")
        if family_named and recorded.family == forced.family:
            refined.append((name, recorded))
            continue
        raise UsageError(f"--gpu {gpu if isinstance(gpu, str) else forced.name!s} ({forced.name}) contradicts the trace, "
                         f"which names its device {name!r} ({recorded.name}): drop --gpu, or name that GPU; to see "
                         f"this work on {forced.name}, use --what-if \"{forced.name}\"")
    chosen = {g.name: g for _n, g in refined}
    if len(chosen) == 1:
        entry = next(iter(chosen.values()))
        note = (f"--gpu '{gpu}' -> {entry.name}, the {forced.family} variant the trace records "
                f"({', '.join(repr(n) for n, _g in refined)})")
    elif len(chosen) > 1:
        notes.append(f"the trace records several {forced.family} variants ({', '.join(sorted(chosen))}): the roofs "
                     f"are {forced.name}'s, as --gpu says")
    return TimelineGpu(entry, entry.name, note, datasheet_roofs(entry), notes)
