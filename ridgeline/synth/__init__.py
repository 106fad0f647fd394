"""Synthetic profiles and telemetry from first principles: tests without a GPU and without a capture.

The generator behind ``fixtures/scenarios`` as a library. A transformer step (Llama-3-8B-like or
70B-like, or your own :class:`Model` shapes) is turned into kernel launches with the FLOPs and
bytes its shapes imply, placed on the roofline of a GPU from ridgeline's catalogue with a
duration ``max(FLOPs / peak, bytes / bandwidth) / fraction`` (never below a launch floor, +-2%
seeded jitter), and written as Nsight Compute would have exported it; telemetry is written as
``dcgmi dmon`` or dcgm-exporter would have sampled it. Every file says SYNTHETIC in its first
line. Output is deterministic (seeded by the workload unless you pass ``seed``).

    from ridgeline import synth

    synth.decode_step(batch=8, gpu="H100").write_ncu("profiles/decode-b8.ncu-raw.csv")
    synth.decode_step(batch=512, gpu="H100", context=512).write_ncu("decode-b512.ncu-raw.csv")
    synth.prefill(tokens=2048, gpu="H100").write_ncu("prefill.ncu-raw.csv")
    synth.launch_bound_step(launches=2000).write_ncu("tiny.ncu-raw.csv")
    synth.write_telemetry("node01.dmon", ["memory_bound"] * 6 + ["idle_allocated", "busy_tensor_idle"],
                          minutes=30, interval_s=15)     # analyze with --interval 15s

then ``ridgeline analyze``, ``ridgeline check`` or the pytest helpers read them like captures
(``ridgeline.testing``). What the physics leaves out: tile padding of small-batch MMAs, cache
effects between kernels; L1/L2 bytes are simple multiples of DRAM bytes (fixtures/README.md).
"""

from __future__ import annotations

import dataclasses
import random
import zlib
from pathlib import Path
from typing import Sequence

from ridgeline.synth.workload import DEVICES, LLAMA_8B, LLAMA_70B, Launch, Model

GPUS = tuple(DEVICES)  # "H100", "H200", "A100", "B200"
MODELS = {"llama-3-8b": LLAMA_8B, "llama-3-70b": LLAMA_70B}
WEIGHTS = ("bf16", "fp8")
NCU_LAYOUTS = ("raw", "details", "details-2021")
# GPU behaviours for write_telemetry (DCGM activity ratios; see BEHAVIOURS' comments)
BEHAVIOURS = ("memory_bound", "serving_mix", "training", "busy_tensor_idle", "idle_allocated", "no_profiling",
              "stuck_profiler")


def _device(gpu: str):
    from ridgeline.errors import UsageError
    from ridgeline.synth.workload import device

    for key, facts in DEVICES.items():
        if gpu.strip().lower() in (key.lower(), facts.catalogue_name.lower(), facts.display_name.lower()):
            return device(key)
    raise UsageError(f"synth: GPU {gpu!r}: expected one of {', '.join(GPUS)}")


def _model(model: str | Model) -> Model:
    from ridgeline.errors import UsageError

    if isinstance(model, Model):
        return model
    found = MODELS.get(str(model).lower())
    if found is None:
        raise UsageError(f"synth: model {model!r}: expected one of {', '.join(MODELS)} or a synth.Model")
    return found


def _rng(seed: int | str) -> random.Random:
    return random.Random(zlib.crc32(seed.encode("utf-8")) if isinstance(seed, str) else seed)


@dataclasses.dataclass
class Step:
    """Synthetic launches on one GPU, ready to be written as an Nsight Compute export."""

    launches: list[Launch]
    device: object  # ridgeline.synth.workload.Device
    description: str
    weights: str = "bf16"

    @property
    def gpu_time_s(self) -> float:
        return sum(k.duration_s for k in self.launches)

    def ncu_text(self, *, layout: str = "raw", note: str | None = None, command: str | None = None) -> str:
        """The export as text: ``layout`` "raw" (``--page raw``), "details" (2023+ details page) or
        "details-2021" (the 12-column 2019-2021 layout); ``note`` replaces the SYNTHETIC first line
        (keep the word SYNTHETIC in it)."""
        from ridgeline.errors import UsageError
        from ridgeline.synth.ncu import SYNTHETIC_NOTE, Capture, ncu_details_text, ncu_raw_text

        if layout not in NCU_LAYOUTS:
            raise UsageError(f"synth: layout {layout!r}: expected one of {', '.join(NCU_LAYOUTS)}")
        cap = Capture(dev=self.device, precisions=("bf16", "fp8") if self.weights == "fp8" else ("bf16",))
        page = "raw" if layout == "raw" else "details"
        command = command or (f"LC_ALL=C ncu --set roofline --csv --page {page} --print-units base "
                              f"--log-file profile.csv python step.py  # {self.description}")
        note = note or SYNTHETIC_NOTE
        if layout == "raw":
            return ncu_raw_text(self.launches, cap, command, note=note)
        if layout == "details-2021":
            cap.new_units = False
            cap.device_attributes = False
        return ncu_details_text(self.launches, cap, command, layout="old" if layout == "details-2021" else "new",
                                note=note)

    def write_ncu(self, path: str | Path, *, layout: str = "raw", note: str | None = None) -> Path:
        """Write :meth:`ncu_text` to ``path`` (folders created); returns the path."""
        return _write(path, self.ncu_text(layout=layout, note=note))

    def activity(self, *, gap_s: float = 0.35e-3) -> dict[str, float]:
        """DCGM activity ratios (gr/sm/tensor/dram active) of this step repeated with ``gap_s`` idle."""
        from ridgeline.synth.dcgm import step_activity

        return step_activity(self.launches, self.device, gap_s=gap_s)


def _write(path: str | Path, text: str) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
    return path


def decode_step(batch: int = 8, *, gpu: str = "H100", context: int = 1024, model: str | Model = "llama-3-8b",
                weights: str = "bf16", seed: int | str | None = None) -> Step:
    """One decode step at ``batch`` sequences with ``context`` cached tokens each: embedding, per layer
    norm / QKV GEMM / rotary / KV-cache write / split-KV attention + combine / O GEMM / norm /
    gate-up GEMM / SiLU-mul / down GEMM, then LM head and sampling. GEMM intensity ~ batch (bf16)
    or ~ 2 x batch (fp8 ``weights``); attention ~ 4 FLOP/B at every batch (Llama-3-8B-like)."""
    from ridgeline.errors import UsageError
    from ridgeline.synth.workload import decoder_step, finish

    if weights not in WEIGHTS:
        raise UsageError(f"synth: weights {weights!r}: expected one of {', '.join(WEIGHTS)}")
    m, dev = _model(model), _device(gpu)
    # the default seed is the workload's (as fixtures/generate.py seeds its decode scenarios): the same
    # step on two GPUs gets the same jitter
    rng = _rng(seed if seed is not None else f"decode/{m.name}/{batch}/{context}/{weights}")
    launches = finish(decoder_step(m, dev, phase="decode", batch=batch, context=context, wprec=weights), dev, rng)
    return Step(launches, dev, f"{m.name} decode, batch {batch}, context {context}, {weights} weights, on "
                               f"{dev.facts.catalogue_name} (SYNTHETIC)", weights)


def prefill(tokens: int = 2048, *, gpu: str = "H100", model: str | Model = "llama-3-8b",
            seed: int | str | None = None) -> Step:
    """Prefill of one sequence of ``tokens`` tokens (causal attention, logits of the last token):
    GEMMs and attention compute-bound at 2048 tokens, the 1-row LM head memory-bound."""
    from ridgeline.synth.workload import decoder_step, finish

    m, dev = _model(model), _device(gpu)
    rng = _rng(seed if seed is not None else f"prefill/{m.name}/{tokens}")
    launches = finish(decoder_step(m, dev, phase="prefill", tokens=tokens), dev, rng)
    return Step(launches, dev, f"{m.name} prefill of {tokens} tokens on {dev.facts.catalogue_name} (SYNTHETIC)")


def launch_bound_step(launches: int = 2000, *, gpu: str = "H100", seed: int | str | None = None) -> Step:
    """``launches`` tiny one-block kernels of a few KB each, ~3 us apiece (launch/latency floor)."""
    from ridgeline.synth.workload import finish, tiny_launches

    dev = _device(gpu)
    rng = _rng(seed if seed is not None else f"launch-bound/{launches}")
    return Step(finish(tiny_launches(launches), dev, rng), dev,
                f"{launches} tiny launches on {dev.facts.catalogue_name} (SYNTHETIC)")


def telemetry_text(behaviours: Sequence[str | dict], *, host: str = "node01", gpu: str = "H100",
                   minutes: float = 10, interval_s: float = 1.0, format: str = "dmon",
                   low_traffic: tuple[float, float] | None = None, seed: int | str | None = None,
                   note: str | None = None, start_ms: int = 1767225600000,
                   labels: Sequence[dict | list | None] | None = None,
                   throttled: dict[int, str] | None = None, clocks: bool | None = None) -> str:
    """Telemetry of one host: GPU ``i`` behaves as ``behaviours[i]``, one of :data:`BEHAVIOURS`:

    ``memory_bound`` (decode serving: DRAM busy, tensor cores light), ``serving_mix`` (prefill +
    decode batching), ``training`` (tensor-heavy), ``busy_tensor_idle`` (GPU-Util ~100%, tensor
    ~0), ``idle_allocated`` (memory held, nothing running), ``no_profiling`` (DCGM profiling
    fields not reported), ``stuck_profiler`` (memory_bound, then GPU-Util 100 with every
    profiling ratio 0 from 3/4 of the run), or a dict of DCGM ratios (``gr_active``,
    ``sm_active``, ``tensor_active``, ``dram_active``).
    ``low_traffic=(0.5, 0.6)``: serving GPUs (memory_bound, serving_mix) do ~5x less work per busy
    second in that part of the run. ``throttled={3: "power_cap"}``: GPU 3 is a throttled straggler
    (``"power_cap"``, ``"thermal"`` or ``"hw_slowdown"``: its SM clock falls, and the power limit,
    temperature and clock throttle reasons say why; see ``ridgeline.synth.dcgm.THROTTLE_CAUSES``).
    ``clocks``: also write SM clock, temperature, power limit and the clock throttle reasons
    bitmask for every GPU (on by default when ``throttled`` is given). ``format``: "dmon" (``dcgmi dmon`` text: no timestamps, give
    ridgeline ``--interval``) or "exporter" (dcgm-exporter scrapes with timestamps from ``start_ms``).
    ``labels`` (exporter only): per GPU, the workload labels the exporter's Kubernetes mapping adds
    (``{"namespace": "team-a", "pod": "train-0", "container": "main"}``), or a list of ``(from
    fraction of the run, dict or None)`` for a GPU that changes hands (None: no pod).
    """
    from ridgeline.errors import UsageError
    from ridgeline.synth.dcgm import (ARCHETYPE_FB_MIB, ARCHETYPES, DEFAULT_FB_MIB, LOW_TRAFFIC, PROF, SYNTHETIC_NOTE,
                                      CLOCK_FIELDS, DMON_FIELDS, THROTTLE_CAUSES, GpuSeries, _uuid, clock_series,
                                      dmon_text, exporter_text, pin_gpu_util, stick_profiler, synth_series)

    if format not in ("dmon", "exporter"):
        raise UsageError(f"synth: format {format!r}: expected dmon or exporter")
    if labels is not None and format != "exporter":
        raise UsageError("synth: labels need format='exporter' (dcgmi dmon carries no labels)")
    throttled = dict(throttled or {})
    for g, cause in throttled.items():
        if cause not in THROTTLE_CAUSES:
            raise UsageError(f"synth: throttle cause {cause!r} of GPU {g}: expected one of {', '.join(THROTTLE_CAUSES)}")
    clocks = bool(throttled) if clocks is None else clocks
    dev = _device(gpu)
    n = max(1, int(round(minutes * 60 / interval_s)))
    rng = _rng(seed if seed is not None else f"telemetry/{host}/{gpu}/{minutes}/{interval_s}")
    serving = decode_step(16, gpu=gpu, context=2048).activity(gap_s=0.4e-3)
    ratios = {"memory_bound": dict(serving), **ARCHETYPES}
    sag = None
    if low_traffic is not None:
        sag = [LOW_TRAFFIC if low_traffic[0] <= i / n < low_traffic[1] else 1.0 for i in range(n)]
    series = []
    for g, kind in enumerate(behaviours):
        if isinstance(kind, dict):
            vals = synth_series(rng, n, kind, fb_mib=DEFAULT_FB_MIB)
        else:
            base = {"no_profiling": "training", "stuck_profiler": "memory_bound"}.get(kind, kind)
            if base not in ratios:
                raise UsageError(f"synth: behaviour {kind!r} of GPU {g}: expected one of {', '.join(BEHAVIOURS)} "
                                 "or a dict of DCGM ratios")
            scale = sag if base in ("memory_bound", "serving_mix") else None
            vals = synth_series(rng, n, ratios[base], fb_mib=ARCHETYPE_FB_MIB.get(base, DEFAULT_FB_MIB), scale=scale)
            if kind == "busy_tensor_idle":
                pin_gpu_util(rng, vals, n)
            elif kind == "no_profiling":
                for f in PROF:
                    vals[f] = [None] * n
            elif kind == "stuck_profiler":
                stick_profiler(vals, n)
        lab = labels[g] if labels is not None and g < len(labels) else None
        if isinstance(lab, list):  # (fraction of the run, labels) -> (first tick, labels)
            lab = [(int(round(frac * n)), d) for frac, d in lab]
        if clocks:
            clock_series(rng, vals, n, cause=throttled.get(g))
        series.append(GpuSeries(host, g, _uuid(host, g), dev.facts.display_name, vals, labels=lab))
    note = note or SYNTHETIC_NOTE
    if format == "dmon":
        names = ", ".join(k if isinstance(k, str) else "custom" for k in behaviours)
        return dmon_text(series, interval_ms=int(round(interval_s * 1000)), note=note,
                         fields=DMON_FIELDS + (CLOCK_FIELDS if clocks else ()),
                         banner=f"host {host}: {len(series)} x {dev.facts.display_name}: {names}")
    return exporter_text(series, start_ms=start_ms, interval_ms=int(round(interval_s * 1000)), note=note,
                         fields=("gpu_util", "fb_used", "power", "gr_active", "sm_active", "tensor_active",
                                 "dram_active") + (CLOCK_FIELDS if clocks else ()))


def write_telemetry(path: str | Path, behaviours: Sequence[str | dict], **options) -> Path:
    """Write :func:`telemetry_text` to ``path`` (for dmon, the file stem is the host name ridgeline
    uses); ``host`` defaults to the file stem. Returns the path."""
    options.setdefault("host", Path(path).stem)
    return _write(path, telemetry_text(behaviours, **options))


__all__ = ["BEHAVIOURS", "GPUS", "MODELS", "Model", "Step", "decode_step", "launch_bound_step", "prefill",
           "telemetry_text", "write_telemetry"]
