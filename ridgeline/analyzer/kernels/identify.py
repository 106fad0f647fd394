"""Which catalogue GPU a device is, from its name, or from its properties when the name says nothing.

ROCm names a device from a table keyed by PCI device and revision id; a device the table lacks
is called "AMD Radeon Graphics", Instinct GCDs included (the shared MI250 trace from ROCm 6.2
names all four of its devices so), and one name can stand for two parts ("AMD Instinct
MI250X/MI250"). Such names are data in gpus.json (``generic_names``, ``shared_names``). For them,
and only for them, the GPU is identified from the properties the file records with the name
(Kineto's ``deviceProperties``): a specific name always wins, and a name the catalogue does not
know is not guessed from its properties (an unknown part can share an SM count with a known one).

Readers record the properties under these keys (vendor spellings stay in the reader):

``unit_count``
    SMs (NVIDIA) or compute units (AMD): Kineto ``numSms``, which HIP fills with the CU count.
``memory_bytes``
    device memory (Kineto ``totalGlobalMem``); compared with the entry's nominal memory within
    :data:`MEMORY_TOLERANCE` (devices report GiB less a reserve: 64 GB nominal reads 63.98 GiB).
``compute_capability``
    ``"major.minor"`` (Kineto ``computeMajor``/``computeMinor``): CUDA's compute capability, or
    the pair HIP reports for a gfx target (gfx90a: 9.0, gfx942: 9.4; ``GPU.hip_cc``).
``warp_size``
    64 on AMD Instinct (wavefronts), 32 on NVIDIA: says the vendor.
``gfx``
    the gfx target where recorded (``gcnArchName`` "gfx90a:sramecc+:xnack-"; the part before ':').

A match is every catalogue entry of the device's vendor with the recorded unit count, memory,
compute capability and gfx target (each compared where recorded; the unit count is required).
One entry: identified. Several whose roofs are the same within datasheet rounding
(:data:`SAME_ROOF_TOLERANCE`): identified, named by all of them ("MI250 GCD / MI210": one MI250 GCD
and an MI210 have 104 CUs at 1.7 GHz, 64 GB and 1.64 TB/s each), with the first entry's roofs.
Several with other roofs (an MI350X and an MI355X differ only in clock), or none: not identified,
and the note says which and why.
"""

from __future__ import annotations

import dataclasses
import re

from ridgeline.analyzer.kernels.gpus import GPU, catalogue, is_generic_name, lookup, shared_name, try_lookup

#: recorded memory / nominal memory accepted as the same memory (GiB vs GB and the driver's reserve)
MEMORY_TOLERANCE = (0.90, 1.15)
#: relative difference under which two entries' peaks and bandwidth count as the same roof
SAME_ROOF_TOLERANCE = 0.01

PROPERTY_KEYS = ("unit_count", "memory_bytes", "compute_capability", "warp_size", "gfx")

_AMD_WORDS = re.compile(r"(?i)\b(amd|radeon|instinct)\b|^gfx[0-9]")
_NVIDIA_WORDS = re.compile(r"(?i)\bnvidia\b")


@dataclasses.dataclass(frozen=True)
class Identified:
    """What :func:`identify` found for one device."""

    gpu: GPU | None  # the catalogue entry whose roofs apply; None: not identified
    label: str | None  # what to call it: the entry's name, or several names sharing the roofs
    how: str  # "name", "properties" or "none"
    note: str  # one line for people: how it was identified, or why not
    candidates: tuple[str, ...] = ()  # entries the properties fit (several: ambiguous)


def describe(props: dict | None, vendor: str | None = None) -> str:
    """The recorded properties in words: "104 CUs, 64.0 GiB, HIP 9.0, wavefront 64"."""
    p = props or {}
    unit = "CUs" if vendor == "AMD" else "SMs" if vendor == "NVIDIA" else "SMs/CUs"
    parts = []
    if p.get("unit_count"):
        parts.append(f"{int(p['unit_count'])} {unit}")
    if p.get("memory_bytes"):
        parts.append(f"{p['memory_bytes'] / 2**30:.1f} GiB")
    if p.get("gfx"):
        parts.append(str(p["gfx"]).split(":")[0])
    if p.get("compute_capability"):
        parts.append(f"{'HIP' if vendor == 'AMD' else 'CC'} {p['compute_capability']}")
    if p.get("warp_size"):
        parts.append(f"{'wavefront' if vendor == 'AMD' else 'warp'} {int(p['warp_size'])}")
    return ", ".join(parts) or "no properties"


def vendor_of(name: str | None, props: dict | None) -> str | None:
    """"AMD", "NVIDIA" or None from what the device records: a gfx target or 64-wide wavefronts
    mean AMD, 32-wide warps NVIDIA; else the vendor word in the name."""
    p = props or {}
    if p.get("gfx") or p.get("warp_size") == 64:
        return "AMD"
    if p.get("warp_size") == 32:
        return "NVIDIA"
    if name and _AMD_WORDS.search(str(name)):
        return "AMD"
    if name and _NVIDIA_WORDS.search(str(name)):
        return "NVIDIA"
    return None


def _fits(gpu: GPU, props: dict, vendor: str | None) -> bool:
    if vendor and gpu.vendor != vendor:
        return False
    if int(props["unit_count"]) != gpu.sm_count:
        return False
    mem = props.get("memory_bytes")
    if mem and gpu.memory_bytes:
        lo, hi = MEMORY_TOLERANCE
        if not lo <= mem / gpu.memory_bytes <= hi:
            return False
    cc = props.get("compute_capability")
    if cc and cc != (gpu.hip_cc if gpu.vendor == "AMD" else gpu.cc):
        return False
    gfx = str(props.get("gfx") or "").split(":")[0].strip().lower()
    return not (gfx and gfx != gpu.gfx)


def same_roofs(gpus: list[GPU]) -> bool:
    """True when every GPU has the same precisions, peaks and DRAM bandwidth within
    :data:`SAME_ROOF_TOLERANCE` (datasheets round differently: 22.6 vs 45.3 / 2)."""
    first = gpus[0]

    def close(a: float, b: float) -> bool:
        return abs(a - b) <= SAME_ROOF_TOLERANCE * max(abs(a), abs(b))

    return all(set(g.peak_flops) == set(first.peak_flops)
               and all(close(g.peak_flops[p], first.peak_flops[p]) for p in first.peak_flops)
               and close(g.dram_bw_bytes_per_s, first.dram_bw_bytes_per_s) for g in gpus[1:])


def identify(name: str | None, props: dict | None = None) -> Identified:
    """The catalogue GPU of a device: by its name (:func:`~ridgeline.analyzer.kernels.gpus.lookup`),
    or, when the name is generic or shared by several parts, by the properties recorded with it
    (see the module docstring)."""
    shared = shared_name(name)
    if not shared and not is_generic_name(name):
        gpu, note = try_lookup(name)
        return Identified(gpu, gpu.name if gpu else None, "name" if gpu else "none", note)
    shown = repr(name) if name and str(name).strip() else "unnamed"
    props = {k: v for k, v in (props or {}).items() if v not in (None, "", 0)}
    vendor = vendor_of(name, props)
    what = describe(props, vendor)
    kind = "shared by several GPUs" if shared else "generic"
    if not props.get("unit_count"):
        return Identified(None, None, "none", f"device {shown}: the name is {kind} and the file records no unit count "
                                              f"({what}) to identify it by; pass --gpu NAME")
    pool = [lookup(n)[0] for n in shared] if shared else catalogue()
    fits = [g for g in pool if _fits(g, props, vendor)]
    names = tuple(g.name for g in fits)
    if not fits:
        return Identified(None, None, "none", f"device {shown}: the name is {kind}, and no catalogue GPU has its "
                                              f"properties ({what}); pass --gpu NAME")
    if len(fits) == 1 or same_roofs(fits):
        label = " / ".join(names)
        same = (f"; {' and '.join(names)} have the same roofs, so the roofs are certain and the model is not"
                if len(fits) > 1 else "")
        return Identified(fits[0], label, "properties",
                          f"device {shown} identified from its properties ({what}) as {label}, not from its name "
                          f"(the name is {kind}){same}", names)
    return Identified(None, None, "none", f"device {shown}: the name is {kind}, and its properties ({what}) fit "
                                          f"{', '.join(names)}, whose roofs differ; pass --gpu NAME", names)


def identification_notes(names: dict, props: dict, *, source: str, devices=None) -> list[str]:
    """Notes for the devices of one file (``names``/``props``: device index -> name / recorded
    properties; ``devices``: the indexes to cover, default all named) whose name is generic or
    shared: how each was identified from its properties, or why it was not. Devices with the same
    name and properties share one note. A device named specifically gets none (its name says it),
    nor one the file names nowhere."""
    groups: dict[tuple, list] = {}
    for dev in sorted(devices if devices is not None else names, key=lambda d: (d is None, d)):
        if dev not in names:  # a device the file names nowhere: nothing to say about its name
            continue
        name = names[dev]
        if not (is_generic_name(name) or shared_name(name)):
            continue
        p = props.get(dev) or {}
        groups.setdefault((name, tuple(sorted(p.items()))), []).append(dev)
    notes = []
    for (name, items), devs in groups.items():
        found = identify(name, dict(items))
        which = f"device{'s' if len(devs) > 1 else ''} {', '.join(str(d) for d in devs)}"
        notes.append(f"{source}: {found.note} ({which})")
    return notes
