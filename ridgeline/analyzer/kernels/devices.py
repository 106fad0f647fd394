"""Which GPU an analysis is about: device names -> catalogue entries, and what to tell the user.

Beside :mod:`ridgeline.analyzer.kernels.gpus` (the catalogue and name matching): these functions take the
finished ROOFLINE table (and telemetry windows) and decide the GPU named in a result's header,
how it was chosen, and the notes a person needs when it could not be (a device the catalogue
does not know, an export that names none, several GPUs in one input, telemetry from other
machines than the profile). ``--gpu`` never relabels a GPU the export names, nor one of another
compute capability than the export records (:func:`ridgeline.analyzer.kernels.roofline.match_devices`
refuses both). A device the catalogue lacks gets a GPU derived from its recorded attributes
(:func:`ridgeline.analyzer.kernels.roofline.device_entries`), named in the header with how it was derived.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ridgeline.analyzer.kernels.gpus import GPU, catalogue, try_lookup
from ridgeline.analyzer.kernels.roofline import device_entries


@dataclasses.dataclass
class GpuChoice:
    entry: GPU | None  # the catalogue entry rules use (None: unknown, or several GPUs)
    gpu_name: str | None  # for the header: one name, or several joined
    gpu_match: str | None  # how it was chosen
    notes: list[str]


def resolve_gpu_choice(roofline: Any, roofs: list, *, gpu: Any = None) -> GpuChoice:
    """The GPU of a classified profile (``roofline``: ROOFLINE table; ``roofs``: the roofs used)."""
    names = roofline.get_column("device_name").unique(maintain_order=True).to_list()
    # catalogue entries, or GPUs derived from the device attributes for devices it lacks
    matches = device_entries(roofline, gpu=gpu)
    matched = [(n, g, note) for n, g, note in matches if g is not None]
    gpus = list(dict.fromkeys(g.name for _n, g, _note in matched))
    notes: list[str] = []
    entry, gpu_name, gpu_match = None, None, None
    if gpu is not None and matched:
        entry = matched[0][1]
        gpu_name, gpu_match = entry.name, matched[0][2]
    elif len(gpus) == 1:
        entry = matched[0][1]
        gpu_name = entry.name
        gpu_match = matched[0][2] if len(matched) == 1 else f"{len(matched)} device names -> {entry.name}"
    elif len(gpus) > 1:
        gpu_name = ", ".join(gpus)
        gpu_match = "several GPUs in the input: each launch uses its own device's roofs"
        notes.append("several GPUs in the input (" + ", ".join(gpus) + "): each launch is classified against its own device")
    else:
        unnamed = [n for n in names if n]
        gpu_match = f"device {unnamed[0]!r} is not in the GPU catalogue" if unnamed else "the export does not name the device"
    for name, g, _note in matches:
        if g is not None and g.origin != "catalogue":
            from ridgeline.analyzer.kernels.gpus import HOW_TO_ADD

            named = try_lookup(name)[0] if name else None
            if named is not None:  # matched by name, but another SM count: MIG slice or another part
                notes.append(f"device {name!r} records {g.sm_count} SMs where the catalogue's {named.name} has "
                             f"{named.sm_count}: its roofs are derived from the device attributes ncu recorded "
                             f"(SMs x per-SM rate of CC {g.cc} x clock; see each roof's detail)")
                continue
            notes.append(f"device {name or 'unnamed'!r} is not in the GPU catalogue: its roofs are derived from the "
                         f"device attributes ncu recorded ({g.sm_count} SMs x per-SM rate of CC {g.cc} x clock; see "
                         f"each roof's detail), not datasheet figures; for datasheet roofs "
                         f"{HOW_TO_ADD.replace('NAME', name or 'NAME')}")
        if g is None and name:
            from ridgeline.analyzer.kernels.gpus import HOW_TO_ADD

            notes.append(f"device {name!r} is not in the GPU catalogue; pass --gpu NAME to use datasheet roofs, "
                         f"or {HOW_TO_ADD.replace('NAME', name)}")
    if not gpus and not roofs:
        notes.append("no roofs: the export recorded no peaks and names no known GPU; pass --gpu NAME")
    if not gpus:
        ccs = roofline.get_column("cc").drop_nulls().unique().sort().to_list()
        for cc in ccs:
            same = [g.name for g in catalogue() if g.cc == cc]
            if same:
                shown = ", ".join(same[:8]) + (f" and {len(same) - 8} more ('ridgeline gpus')" if len(same) > 8 else "")
                notes.append(
                    f"the export records compute capability {cc}: catalogue GPUs with it are "
                    f"{shown} (pass --gpu NAME; ridgeline does not guess)"
                )
    return GpuChoice(entry, gpu_name, gpu_match, notes)


def machine_mismatch_notes(windows: Any, kernels: Any) -> list[str]:
    """A note when the telemetry's GPU models are none of the profiled GPUs (the two inputs then
    come from different machines, and comparing them says little)."""
    if windows is None or not windows.height or "model" not in windows.columns or kernels is None:
        return []
    models = [m for m in windows.get_column("model").drop_nulls().unique().sort().to_list() if m]
    if not models:
        return []
    tel_gpus = {g.name for g in (try_lookup(m)[0] for m in models) if g is not None}
    prof_names = kernels.get_column("device_name").drop_nulls().unique().to_list()
    prof_gpus = {g.name for g in (try_lookup(n)[0] for n in prof_names) if g is not None}
    if not tel_gpus or not prof_gpus or tel_gpus & prof_gpus:
        return []
    return [
        f"the telemetry's GPUs ({', '.join(sorted(tel_gpus))}) are not the profiled GPU(s) "
        f"({', '.join(sorted(prof_gpus))}): profile-vs-telemetry findings (RL206) compare different machines"
    ]
