"""The GPU catalogue: datasheet roofs as data (``gpus.json``), and name matching.

Each entry gives dense (non-sparse) peak FLOP/s per precision and the DRAM bandwidth, with
the datasheet it came from. Peaks ncu measured for a run always win over these numbers
(see :mod:`ridgeline.analyzer.roofline`); the catalogue is the fallback and the reference.

Matching a name (the ncu device name, or what a user typed after ``--gpu``):

1. exact alias, compared after normalization (case, spaces, dashes and the words
   ``NVIDIA``/``GeForce``/``Tesla`` ignored): ``NVIDIA H100 80GB HBM3`` -> ``H100 SXM``;
2. a bare family name picks the family's most common variant and says so:
   ``H100`` -> ``H100 SXM``, ``A100`` -> ``A100 SXM 80GB``;
3. the longest alias the name starts with (``NVIDIA A100-SXM4-80GB MIG 3g.40gb`` ->
   ``A100 SXM 80GB``), with a note;
4. otherwise :class:`~ridgeline.errors.UsageError` listing close matches.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import json
import re
from importlib import resources

from ridgeline.errors import UsageError

PRECISIONS = (
    "fp64",
    "fp32",
    "fp16",
    "tf32_tensor",
    "fp16_tensor",
    "fp8_tensor",
    "int8_tensor",
    "fp64_tensor",
)
TENSOR_PRECISIONS = tuple(p for p in PRECISIONS if p.endswith("_tensor"))
CUDA_CORE_PRECISIONS = tuple(p for p in PRECISIONS if not p.endswith("_tensor"))

# labels for tables: what people call each precision key
PRECISION_LABELS = {
    "fp64": "FP64",
    "fp32": "FP32",
    "fp16": "FP16",
    "tf32_tensor": "TF32 TC",
    "fp16_tensor": "BF16/FP16 TC",
    "fp8_tensor": "FP8 TC",
    "int8_tensor": "INT8 TC",
    "fp64_tensor": "FP64 TC",
}

_NOISE_WORDS = ("nvidia", "geforce", "tesla")


@dataclasses.dataclass(frozen=True)
class GPU:
    """One catalogue entry. FLOP/s are dense peaks at boost clock."""

    name: str
    family: str
    aliases: tuple[str, ...]
    cc: str
    sm_count: int
    memory_bytes: int
    dram_bw_bytes_per_s: float
    peak_flops: dict[str, float]
    source: str
    notes: str = ""
    derived: tuple[str, ...] = ()
    family_default: bool = False
    # SM clock each datasheet figure assumes (precision key or "default" -> Hz), where known:
    # lets a datasheet roof be scaled to the clock an export recorded, as ncu's own peaks are
    datasheet_clock_hz: dict[str, float] = dataclasses.field(default_factory=dict)

    def datasheet_clock(self, precision: str) -> float | None:
        """SM clock (Hz) the datasheet's figure for ``precision`` assumes; None when not known."""
        return self.datasheet_clock_hz.get(precision, self.datasheet_clock_hz.get("default"))

    def peak(self, precision: str) -> float | None:
        """Dense peak FLOP/s for a precision key, None when the GPU cannot run it."""
        return self.peak_flops.get(precision)

    def ridge(self, precision: str) -> float | None:
        """Ridge point in FLOP/byte: peak FLOP/s for ``precision`` / DRAM bandwidth."""
        peak = self.peak_flops.get(precision)
        if peak is None or not self.dram_bw_bytes_per_s:
            return None
        return peak / self.dram_bw_bytes_per_s

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "family": self.family,
            "aliases": list(self.aliases),
            "cc": self.cc,
            "sm_count": self.sm_count,
            "memory_bytes": self.memory_bytes,
            "dram_bw_bytes_per_s": self.dram_bw_bytes_per_s,
            "peak_flops_per_s": {p: self.peak_flops[p] for p in PRECISIONS if p in self.peak_flops},
            "ridge_flop_per_byte": {p: self.ridge(p) for p in PRECISIONS if p in self.peak_flops},
            "derived": list(self.derived),
            "datasheet_clock_hz": dict(self.datasheet_clock_hz),
            "source": self.source,
            "notes": self.notes,
        }


def _word_ends(name: str) -> set[int]:
    """Offsets in ``normalize(name)`` where a word of ``name`` ends (letters/digits runs)."""
    text = name.lower()
    for word in _NOISE_WORDS:
        text = re.sub(rf"\b{word}\b", " ", text)
    ends, n = set(), 0
    for word in re.findall(r"[a-z0-9]+", text):
        n += len(word)
        ends.add(n)
    return ends


def normalize(name: str) -> str:
    """Lower-case, drop vendor words and everything but letters and digits."""
    text = name.lower()
    for word in _NOISE_WORDS:
        text = re.sub(rf"\b{word}\b", " ", text)
    return re.sub(r"[^a-z0-9]", "", text)


@functools.lru_cache(maxsize=1)
def _load() -> tuple[GPU, ...]:
    raw = json.loads(resources.files("ridgeline.analyzer").joinpath("gpus.json").read_text("utf-8"))
    out = []
    for entry in raw["gpus"]:
        peaks = {k: float(v) for k, v in entry["peak_flops"].items() if v is not None}
        unknown = set(peaks) - set(PRECISIONS)
        if unknown:  # pragma: no cover - guarded by tests on the shipped file
            raise ValueError(f"gpus.json: {entry['name']}: unknown precision keys {sorted(unknown)}")
        out.append(
            GPU(
                name=entry["name"],
                family=entry["family"],
                aliases=tuple(entry.get("aliases", ())),
                cc=str(entry["cc"]),
                sm_count=int(entry["sm_count"]),
                memory_bytes=int(entry["memory_bytes"]),
                dram_bw_bytes_per_s=float(entry["dram_bw_bytes_per_s"]),
                peak_flops=peaks,
                datasheet_clock_hz={k: float(v) for k, v in entry.get("datasheet_clock_hz", {}).items()},
                source=entry["source"],
                notes=entry.get("notes", ""),
                derived=tuple(entry.get("derived", ())),
                family_default=bool(entry.get("family_default", False)),
            )
        )
    return tuple(out)


def catalogue() -> list[GPU]:
    """Every GPU the catalogue knows, in file order."""
    return list(_load())


@functools.lru_cache(maxsize=1)
def _indexes() -> tuple[dict[str, GPU], dict[str, GPU]]:
    aliases: dict[str, GPU] = {}
    families: dict[str, GPU] = {}
    for gpu in _load():
        for alias in (gpu.name, *gpu.aliases):
            aliases.setdefault(normalize(alias), gpu)
        if gpu.family_default:
            families[normalize(gpu.family)] = gpu
    return aliases, families


def lookup(name: str) -> tuple[GPU, str]:
    """Find a catalogue entry for a device name or a user spelling.

    Returns ``(gpu, note)``; the note says how the name was matched (shown to users).
    Raises :class:`UsageError` with close matches when nothing fits.
    """
    if name is None or not str(name).strip():
        raise UsageError("empty GPU name; run 'ridgeline gpus' for the known names")
    key = normalize(str(name))
    aliases, families = _indexes()
    gpu = aliases.get(key)
    if gpu is not None:
        return gpu, f"'{name}' -> {gpu.name}"
    gpu = families.get(key)
    if gpu is not None:
        others = [g.name for g in _load() if g.family == gpu.family and g is not gpu]
        extra = f"; other variants: {', '.join(others)} (pass --gpu to pick one)" if others else ""
        return gpu, f"'{name}' -> {gpu.name} (most common {gpu.family} variant{extra})"
    # longest alias the name starts with: device names with suffixes (MIG profile, memory size);
    # the alias must end where a word of the name ends ('h1000' / RTX A1000 is not an H100 / A100)
    bounds = _word_ends(str(name))
    best = max((a for a in aliases if len(a) >= 3 and key.startswith(a) and len(a) in bounds), key=len, default=None)
    if best is not None:
        gpu = aliases[best]
        return gpu, f"'{name}' -> {gpu.name} (closest catalogue name; pass --gpu if wrong)"
    fam = max((f for f in families if len(f) >= 3 and key.startswith(f) and len(f) in bounds), key=len, default=None)
    if fam is not None:
        gpu = families[fam]
        return gpu, f"'{name}' -> {gpu.name} (family match, most common variant; pass --gpu if wrong)"
    names = [g.name for g in _load()]
    spelled = {normalize(n): n for n in names}
    for alias, g in aliases.items():
        spelled.setdefault(alias, g.name)
    close = difflib.get_close_matches(key, list(spelled), n=5, cutoff=0.5)
    close_names = list(dict.fromkeys(spelled[c] for c in close))
    hint = f"did you mean {', '.join(close_names)}? " if close_names else ""
    raise UsageError(f"unknown GPU {name!r}; {hint}known: {', '.join(names)}")


def try_lookup(name: str | None) -> tuple[GPU | None, str]:
    """Like :func:`lookup` but returns ``(None, reason)`` instead of raising."""
    if name is None or not str(name).strip():
        return None, "no device name recorded"
    try:
        return lookup(name)
    except UsageError:
        return None, f"device {name!r} is not in the GPU catalogue"
