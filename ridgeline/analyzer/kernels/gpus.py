"""The GPU catalogue: datasheet roofs as data (``gpus.json``), and name matching.

Each entry gives dense (non-sparse) peak FLOP/s per precision and the DRAM bandwidth, with
the datasheet it came from. Peaks ncu measured for a run always win over these numbers
(see :mod:`ridgeline.analyzer.kernels.roofline`); the catalogue is the fallback and the reference.
A device it does not know gets roofs derived from its recorded attributes
(:mod:`ridgeline.analyzer.kernels.archrates`, ``origin = "derived-from-device-attributes"``).

Coverage: NVIDIA GPUs people profile ML work on since Volta, datacenter, workstation and
GeForce (``segment``), and AMD Instinct GPUs since the MI100 (``vendor = "AMD"``), grouped in
``ridgeline gpus`` by vendor, segment and architecture (docs/gpus.md). An AMD entry names its
gfx target (``gfx``, e.g. ``gfx942``) instead of a CUDA compute capability (``cc`` is ``""``) and
counts compute units (``cu_count`` in the file, :attr:`GPU.sm_count` in code: the vendor's unit);
one entry is one device as HIP and PyTorch see it (an MI250 is two devices, one per GCD: the
entry is the GCD). Figures not printed on the named source are listed in ``derived`` and equal
units x per-unit rate (archrates.RATES by compute capability, archtable.AMD_RATES by gfx target)
x clock; tests/analyzer/kernels/test_gpus_catalogue.py holds every entry to that.
GeForce tensor figures are the FP32-accumulate rates (half the FP16-accumulate rate for
fp16/bf16, tf32 and fp8), what cuBLAS and PyTorch use; ``tensor_fp32_accumulate`` ("half" /
"full") overrides the segment's default (A10G: half; TITAN RTX: full).

Matching a name (the ncu device name, or what a user typed after ``--gpu``):

1. exact alias, compared after normalization (case, spaces, dashes and the words
   ``NVIDIA``/``GeForce``/``Tesla``/``GRID`` ignored): ``NVIDIA H100 80GB HBM3`` -> ``H100 SXM``;
   aliases hold the names ncu, nvidia-smi and DCGM record (``NVIDIA GeForce RTX 5090``,
   ``NVIDIA A800-SXM4-80GB``, ``Tesla V100S-PCIE-32GB``);
2. a bare family name picks the family's most common variant and says so:
   ``H100`` -> ``H100 SXM``, ``A100`` -> ``A100 SXM 80GB``;
3. the longest alias the name starts with (``NVIDIA A100-SXM4-80GB MIG 3g.40gb`` ->
   ``A100 SXM 80GB``), with a note;
4. otherwise :class:`~ridgeline.errors.UsageError` listing close matches.

Your own GPUs: ``[tool.ridgeline.gpus."NAME"]`` tables in ``ridgeline.toml`` / ``pyproject.toml``
with the catalogue's own keys (:data:`ENTRY_KEYS`), checked like the bundled entries (a missing,
zero or negative peak is one clear line); :func:`configure` adds them, ahead of the bundled
catalogue (a configured name or alias wins over a bundled one)::

    [tool.ridgeline.gpus."Lab GPU"]          # an illustration, not a real part's figures
    aliases = ["NVIDIA Lab GPU 48GB"]         # the device name ncu records
    cc = "8.9"
    sm_count = 100
    memory_bytes = 48e9
    dram_bw_bytes_per_s = 1.0e12
    peak_flops = { fp32 = 50e12, fp16_tensor = 200e12 }   # dense, at boost clock
    source = "where the figures come from (the vendor's datasheet)"
"""

from __future__ import annotations

import dataclasses
import functools
import re

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
from ridgeline.analyzer.kernels.precisions import LABELS as PRECISION_LABELS  # noqa: E402 (one table of names)

# words device names carry that say nothing about the part ("GRID A100-10C" is a vGPU on an A100;
# "AMD Instinct MI300X" is the MI300X)
_NOISE_WORDS = ("nvidia", "geforce", "tesla", "grid", "amd", "instinct")
SEGMENTS = ("datacenter", "workstation", "geforce")
VENDORS = ("NVIDIA", "AMD")


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
    # "datacenter", "workstation" or "geforce" ("" when not said): groups the listing, and a
    # GeForce part runs fp16/bf16/tf32/fp8 tensor work with FP32 accumulate at half rate
    segment: str = ""
    # "half" or "full": the rate of fp16/bf16/tf32/fp8 tensor work with FP32 accumulate ("" ->
    # half on GeForce parts, full elsewhere; the A10G and TITAN RTX say so explicitly)
    tensor_fp32_accumulate: str = ""
    # "catalogue" (bundled or configured entry) or "derived-from-device-attributes"
    origin: str = "catalogue"
    # precision -> the formula a derived figure came from (derived GPUs only)
    derivation: dict[str, str] = dataclasses.field(default_factory=dict)
    # "NVIDIA" or "AMD"; an AMD GPU has a gfx target ("gfx942") and no CUDA compute capability (cc "")
    vendor: str = "NVIDIA"
    gfx: str = ""

    @property
    def arch(self) -> str:
        """Architecture name from the compute capability ("Hopper") or the AMD gfx target ("CDNA 3");
        "CC x.y" / the gfx target when not tabled."""
        from ridgeline.analyzer.kernels.archtable import amd_arch_name, arch_name

        if self.vendor == "AMD":
            return amd_arch_name(self.gfx) or self.gfx
        return arch_name(self.cc) or f"CC {self.cc}"

    @property
    def unit(self) -> str:
        """What :attr:`sm_count` counts: "SM" (NVIDIA) or "CU" (AMD compute units)."""
        return "CU" if self.vendor == "AMD" else "SM"

    @property
    def target(self) -> str:
        """The architecture key the per-unit rates are filed under: "CC 9.0" or "gfx942"."""
        return self.gfx if self.vendor == "AMD" else f"CC {self.cc}"

    @property
    def hip_cc(self) -> str | None:
        """The major.minor HIP reports for an AMD GPU (Kineto's computeMajor/Minor): gfx942 -> "9.4"."""
        from ridgeline.analyzer.kernels.archtable import hip_version

        return hip_version(self.gfx) if self.vendor == "AMD" else None

    @property
    def half_rate_accumulate(self) -> bool:
        """True for parts that run FP32-accumulate tensor work at half rate (GeForce)."""
        if self.tensor_fp32_accumulate:
            return self.tensor_fp32_accumulate == "half"
        return self.segment == "geforce"

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
            "vendor": self.vendor,
            "family": self.family,
            "aliases": list(self.aliases),
            "cc": self.cc or None,
            "gfx": self.gfx or None,
            "sm_count": self.sm_count,
            "unit": self.unit,
            "memory_bytes": self.memory_bytes,
            "dram_bw_bytes_per_s": self.dram_bw_bytes_per_s,
            "peak_flops_per_s": {p: self.peak_flops[p] for p in PRECISIONS if p in self.peak_flops},
            "ridge_flop_per_byte": {p: self.ridge(p) for p in PRECISIONS if p in self.peak_flops},
            "derived": list(self.derived),
            "arch": self.arch,
            "segment": self.segment or None,
            "origin": self.origin,
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


# suffix words that make a different part of a catalogue name (checked on normalized text)
_OTHER_CHIP = re.compile(r"laptop|mobile|notebook|^ti|^super|^d\b", re.IGNORECASE)


def normalize(name: str) -> str:
    """Lower-case, drop vendor words and everything but letters and digits."""
    text = name.lower()
    for word in _NOISE_WORDS:
        text = re.sub(rf"\b{word}\b", " ", text)
    return re.sub(r"[^a-z0-9]", "", text)


# keys of one catalogue entry: required ones (an NVIDIA GPU's; an AMD GPU's), then optional ones
REQUIRED_KEYS = ("cc", "sm_count", "memory_bytes", "dram_bw_bytes_per_s", "peak_flops", "source")
AMD_REQUIRED_KEYS = ("gfx", "cu_count", "memory_bytes", "dram_bw_bytes_per_s", "peak_flops", "source")
OPTIONAL_KEYS = ("name", "vendor", "family", "family_default", "aliases", "datasheet_clock_hz", "derived", "notes",
                 "segment", "tensor_fp32_accumulate")
ENTRY_KEYS = REQUIRED_KEYS + ("gfx", "cu_count") + OPTIONAL_KEYS
_CC_RE = re.compile(r"^[0-9]+\.[0-9]+$")


def _positive(value, what: str, where: str) -> float:
    """A figure inside its physical range (:data:`ridgeline.bounds.BOUNDS`, by the key's first part)."""
    from ridgeline import bounds

    return float(bounds.check(what.split(".")[0], value, where=where, name=what))


def parse_entry(name: str, entry, *, where: str) -> GPU:
    """One catalogue entry (bundled or configured) as a :class:`GPU`; UsageError naming ``where``
    and the key for anything missing, unknown, zero, negative or of the wrong type."""
    if not isinstance(entry, dict):
        raise UsageError(f"{where}: expected a table of {', '.join(REQUIRED_KEYS)}, got {entry!r}")
    unknown = sorted(set(entry) - set(ENTRY_KEYS))
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0]!r}; known: {', '.join(ENTRY_KEYS)}")
    vendor = str(entry.get("vendor", "NVIDIA") or "NVIDIA")
    if vendor not in VENDORS:
        raise UsageError(f"{where}: vendor must be one of {', '.join(VENDORS)}, got {entry.get('vendor')!r}")
    amd = vendor == "AMD"
    required = AMD_REQUIRED_KEYS if amd else REQUIRED_KEYS
    missing = [k for k in required if k not in entry]
    if missing:
        whose = "every AMD GPU needs" if amd else "every GPU needs"
        raise UsageError(f"{where}: missing {', '.join(missing)} ({whose} {', '.join(required)})")
    if amd and ("cc" in entry or "sm_count" in entry):
        raise UsageError(f"{where}: an AMD GPU has no CUDA compute capability and no SMs: give gfx (e.g. \"gfx942\") "
                         "and cu_count (compute units)")
    if not amd and ("gfx" in entry or "cu_count" in entry):
        raise UsageError(f"{where}: gfx and cu_count describe an AMD GPU: add vendor = \"AMD\" (and drop cc, sm_count)")
    peaks_raw = entry["peak_flops"]
    if not isinstance(peaks_raw, dict) or not peaks_raw:
        raise UsageError(f"{where}: peak_flops must be a table of precision = FLOP/s "
                         f"(keys {', '.join(PRECISIONS)}), got {peaks_raw!r}")
    bad = sorted(set(peaks_raw) - set(PRECISIONS))
    if bad:
        raise UsageError(f"{where}: peak_flops: unknown precision {bad[0]!r}; known: {', '.join(PRECISIONS)}")
    peaks = {k: _positive(v, f"peak_flops.{k}", where) for k, v in peaks_raw.items() if v is not None}
    if not peaks:
        raise UsageError(f"{where}: peak_flops has no peak")
    if amd:
        from ridgeline.analyzer.kernels.archtable import hip_version

        cc, gfx, units_key = "", str(entry["gfx"]).strip().lower(), "cu_count"
        if hip_version(gfx) is None:
            raise UsageError(f"{where}: gfx must be an AMD gfx target such as \"gfx942\", got {entry['gfx']!r}")
    else:
        cc, gfx, units_key = str(entry["cc"]).strip(), "", "sm_count"
        if not _CC_RE.match(cc):
            raise UsageError(f"{where}: cc must be a compute capability such as \"8.9\", got {entry['cc']!r}")
    sm = _positive(entry[units_key], units_key, where)
    source = entry["source"]
    if not isinstance(source, str) or not source.strip():
        raise UsageError(f"{where}: source must name the datasheet the figures come from")
    aliases = entry.get("aliases", [])
    if isinstance(aliases, str) or not isinstance(aliases, (list, tuple)) or not all(isinstance(a, str) for a in aliases):
        raise UsageError(f"{where}: aliases must be a list of names, got {aliases!r}")
    segment = str(entry.get("segment", "") or "")
    if segment and segment not in SEGMENTS:
        raise UsageError(f"{where}: segment must be one of {', '.join(SEGMENTS)}, got {segment!r}")
    accumulate = str(entry.get("tensor_fp32_accumulate", "") or "")
    if accumulate not in ("", "half", "full"):
        raise UsageError(f"{where}: tensor_fp32_accumulate must be \"half\" or \"full\", got {accumulate!r}")
    derived = entry.get("derived", ())
    if not isinstance(derived, (list, tuple)) or not all(isinstance(d, str) and d in peaks_raw for d in derived):
        raise UsageError(f"{where}: derived must list precision keys of peak_flops, got {derived!r}")
    clocks = entry.get("datasheet_clock_hz", {})
    if not isinstance(clocks, dict):
        raise UsageError(f"{where}: datasheet_clock_hz must be a table of precision (or default) = Hz")
    return GPU(
        name=str(entry.get("name", name)),
        family=str(entry.get("family", name)),
        aliases=tuple(aliases),
        cc=cc,
        sm_count=int(sm),
        memory_bytes=int(_positive(entry["memory_bytes"], "memory_bytes", where)),
        dram_bw_bytes_per_s=_positive(entry["dram_bw_bytes_per_s"], "dram_bw_bytes_per_s", where),
        peak_flops=peaks,
        datasheet_clock_hz={k: _positive(v, f"datasheet_clock_hz.{k}", where) for k, v in clocks.items()},
        source=source.strip(),
        notes=str(entry.get("notes", "")),
        derived=tuple(entry.get("derived", ())),
        family_default=bool(entry.get("family_default", False)),
        segment=segment,
        tensor_fp32_accumulate=accumulate,
        vendor=vendor,
        gfx=gfx,
    )


@functools.lru_cache(maxsize=1)
def _raw() -> dict:
    import json
    from pathlib import Path  # the file beside this module (importlib.resources costs ~4 ms of start-up)

    return json.loads(Path(__file__).with_name("gpus.json").read_text("utf-8"))


@functools.lru_cache(maxsize=1)
def _bundled() -> tuple[GPU, ...]:
    return tuple(parse_entry(e.get("name", "?"), e, where=f"gpus.json: {e.get('name', '?')}") for e in _raw()["gpus"])


@functools.lru_cache(maxsize=1)
def _generic_patterns() -> tuple[re.Pattern, ...]:
    return tuple(re.compile(p, re.IGNORECASE) for p in _raw().get("generic_names", []))


def is_generic_name(name: str | None) -> bool:
    """True for a device name that names no part: empty, or one of gpus.json's ``generic_names``
    ("AMD Radeon Graphics": what ROCm reports for a device its name table lacks, an Instinct GCD
    among them; "NVIDIA Graphics Device"; a bare gfx target)."""
    text = " ".join(str(name or "").split())
    return not text or any(p.fullmatch(text) for p in _generic_patterns())


def shared_name(name: str | None) -> tuple[str, ...]:
    """The catalogue names a device name stands for when it names more than one part (gpus.json
    ``shared_names``: ROCm calls both an MI250X GCD and an MI250 GCD "AMD Instinct MI250X/MI250");
    () for any other name."""
    key = normalize(str(name or ""))
    for spelling, names in _raw().get("shared_names", {}).items():
        if key and normalize(spelling) == key:
            return tuple(names)
    return ()


# GPUs from [tool.ridgeline.gpus."NAME"] (ridgeline.toml / pyproject.toml), ahead of the bundled ones
_CONFIGURED: tuple[GPU, ...] = ()


def configure(table, *, origin: str = "config") -> list[GPU]:
    """Add the GPUs of a ``[tool.ridgeline.gpus]`` table (``{name: entry}``) ahead of the bundled
    catalogue, replacing any configured before; returns them. ``None`` or ``{}`` clears them."""
    global _CONFIGURED
    if table is None:
        table = {}
    if not isinstance(table, dict):
        raise UsageError(f"{origin}: [tool.ridgeline.gpus] must hold one table per GPU, e.g. [tool.ridgeline.gpus.\"H20\"]")
    gpus = tuple(parse_entry(str(name), entry, where=f'{origin}: [tool.ridgeline.gpus."{name}"]')
                 for name, entry in table.items())
    if gpus != _CONFIGURED:
        _CONFIGURED = gpus
        _load.cache_clear()
        _indexes.cache_clear()
    return list(gpus)


@functools.lru_cache(maxsize=1)
def _load() -> tuple[GPU, ...]:
    return _CONFIGURED + _bundled()


def configured() -> list[GPU]:
    """The GPUs added with :func:`configure`."""
    return list(_CONFIGURED)


def catalogue() -> list[GPU]:
    """Every GPU known: configured ones first, then the bundled catalogue in file order."""
    return list(_load())


HOW_TO_ADD = ('add it to ridgeline.toml as [tool.ridgeline.gpus."NAME"] with cc, sm_count (AMD: vendor = "AMD", '
              "gfx, cu_count), memory_bytes, dram_bw_bytes_per_s, peak_flops and source (see 'ridgeline gpus --help')")


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
    shared = shared_name(name)
    if shared:
        raise UsageError(f"{name!r} is the device name of more than one GPU ({', '.join(shared)}): the device's "
                         "properties tell them apart where the file records them; else pass --gpu NAME")
    if is_generic_name(name):
        raise UsageError(f"{name!r} is a generic device name, not a GPU model (ROCm reports it for devices its name "
                         "table lacks): the GPU is identified from the device's properties where the file records "
                         "them; else pass --gpu NAME")
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
    # ... unless what follows names another chip: a laptop part, or a Ti/SUPER the catalogue lacks
    # ('RTX 4090 Laptop GPU' is an AD103 with 76 SMs, not the desktop RTX 4090's 128)
    bounds = {b for b in bounds if not _OTHER_CHIP.search(key[b:])}
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
    import difflib

    close = difflib.get_close_matches(key, list(spelled), n=5, cutoff=0.5)
    close_names = list(dict.fromkeys(spelled[c] for c in close))
    hint = f"did you mean {', '.join(close_names)}? " if close_names else ""
    # ~90 names do not fit one line: configured ones, then a few common parts, then where the rest are
    common = ("H100 SXM", "H200", "B200", "A100 SXM 80GB", "L40S", "L4", "RTX 4090", "RTX 5090")
    shown = list(dict.fromkeys([g.name for g in _CONFIGURED] + [n for n in common if n in names]))
    listed = ", ".join(shown) if len(shown) < len(names) else ", ".join(names)
    more = f" and {len(names) - len(shown)} more ('ridgeline gpus' lists them)" if len(shown) < len(names) else ""
    raise UsageError(f"unknown GPU {name!r}; {hint}known: {listed}{more}; or {HOW_TO_ADD}")


def try_lookup(name: str | None) -> tuple[GPU | None, str]:
    """Like :func:`lookup` but returns ``(None, reason)`` instead of raising."""
    if name is None or not str(name).strip():
        return None, "no device name recorded"
    try:
        return lookup(name)
    except UsageError as err:
        if shared_name(name) or is_generic_name(name):
            return None, str(err)
        return None, f"device {name!r} is not in the GPU catalogue"
