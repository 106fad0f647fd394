"""What a timeline file that yields no GPU records holds, and the advice that fits it.

One place decides, for every timeline reader (Kineto traces, Nsight Systems exports): a file
whose GPU side comes out empty is never passed as an empty analysis. From the counts of what the
file does hold (Kineto event categories; an Nsight Systems export's host tables, counted by the
same function) it is one of (:func:`judge`):

* **another accelerator's trace** (refused, exit 2): PyTorch's profiler on Meta's MTIA writes
  its device work as ``mtia_ccp_events`` (with ``mtia_runtime`` host calls, ``mtia_insight``,
  ``mtia_counters``); Intel Gaudi (``hpu_op``), Intel XPU (``xpu_runtime``/``xpu_driver``),
  Cambricon MLU (``mlu_*``), Enflame GCU (``gcu_*``) and out-of-tree backends
  (``privateuse1_*``) have categories of their own. None is a CUDA or ROCm GPU's timeline;
* **CUPTI range-profiler counters** (refused, exit 2): Kineto's ``cuda_profiler_range`` events
  (PyTorch's ``experimental_config`` ``profiler_metrics``) carry counter values per range or per
  kernel, and the range profiler runs *instead of* the activity trace: Kineto spreads the ranges
  evenly over the capture, so their times are not measured and there is no timeline in them;
* **no events at all** (read, a note): an empty capture;
* **runtime calls but no GPU activity** (read, a note): the host launched work the device side
  never recorded (activity tracing off, or its records lost);
* **host-side events only** (read, a note): a profile taken without the GPU activity
  (``ProfilerActivity.CPU`` alone; ``nsys`` without ``-t cuda``);
* **GPU records all damaged** (read, a note): every one skipped (``--lenient``) and listed.

The note starts ``<file>: nothing analysed on the GPU:`` and says what the file holds (the
largest categories with their counts) and what to do; the refusal is one line with the same.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter

#: category prefix -> the accelerator whose trace it is (device work or runtime calls of a non-GPU backend)
ACCELERATOR_CATEGORIES = {
    "mtia_": "MTIA (Meta's training and inference accelerator)",
    "hpu_": "Intel Gaudi (HPU)",
    "xpu_": "Intel XPU",
    "mlu_": "Cambricon MLU",
    "gcu_": "Enflame GCU",
    "privateuse1_": "a PrivateUse1 accelerator backend",
}
#: CUPTI range profiler (counters per range or per kernel; Kineto gives them no measured times)
RANGE_PROFILER_CATEGORIES = frozenset({"cuda_profiler_range"})
#: host calls into the GPU runtime or driver (``Runtime``: early Kineto; ``runtime``/``driver``: Kineto's
#: accelerator-agnostic names)
RUNTIME_CATEGORIES = frozenset({"cuda_runtime", "cuda_driver", "Runtime", "runtime", "driver",
                                "CUPTI_ACTIVITY_KIND_RUNTIME"})  # (the last: an nsys export's table)

_CAT = re.compile(rb'"cat"\s*:\s*"([^"\\]{0,80})"')
_SCAN_CHUNK = 4 << 20


@dataclasses.dataclass(frozen=True)
class Holding:
    """What a file without GPU records holds (:func:`judge`)."""

    kind: str  # accelerator, range-profiler, empty, runtime-only, host-only, damaged
    what: str  # what the file holds, in words, with counts
    advice: str  # what to do, chosen from what it holds
    refuse: bool  # True: not a GPU timeline at all (exit 2); False: read, and a note says this

    def note(self, path) -> str:
        return f"{path}: nothing analysed on the GPU: {self.what}; {self.advice}"

    def error(self, path):
        from ridgeline.errors import InputError

        return InputError(path, f"expected a GPU timeline (kernel, gpu_memcpy or gpu_memset records); {self.what}: "
                          f"{self.advice}")


def scan_categories(open_text) -> Counter:
    """Counts of the ``"cat"`` values of a Chrome trace, read in bounded pieces (``open_text()``: a
    context manager giving a file object of the decompressed JSON, e.g. the Kineto reader's
    bounded reader). Run only for a trace that gave no GPU record, so no reading path pays for it."""
    counts: Counter = Counter()
    carry = b""
    with open_text() as fh:
        while True:
            piece = fh.read(_SCAN_CHUNK)
            data = carry + piece
            if not piece:  # the end: every match left
                counts.update(m for m in _CAT.findall(data))
                break
            keep = max(0, len(data) - 256)  # a match may run past the piece: left for the next round
            last = 0
            for m in _CAT.finditer(data, 0, keep + 128):
                if m.start() >= keep:
                    break
                counts[m.group(1)] += 1
                last = m.end()
            carry = data[max(last, keep):]
    return Counter({k.decode("utf-8", "replace"): v for k, v in counts.items()})


def _listed(counts: dict[str, int], limit: int = 4) -> str:
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    text = ", ".join(f"{n:,} {cat}" for cat, n in top[:limit])
    return text + (f" and {len(top) - limit} more categor{'ies' if len(top) - limit > 1 else 'y'}"
                   if len(top) > limit else "")


def judge(categories: dict[str, int], *, events: int | None = None, skipped: int = 0,
          tool: str = "kineto", unit: str = "trace event") -> Holding:
    """What a file that gave no GPU record holds (module docstring). ``categories``: event category
    -> count (an export's host tables by name: ``CUPTI_ACTIVITY_KIND_RUNTIME``, ``NVTX_EVENTS``,
    ``OSRT_API``); ``events``: all its trace events, categorised or not; ``skipped``: GPU records
    dropped as damaged; ``tool``: ``kineto`` or ``nsys`` (the advice names that tool's options);
    ``unit``: what the file is made of (``data row`` for an nsys stats CSV)."""
    cats = {c: n for c, n in categories.items() if n}
    total = events if events is not None else sum(cats.values())
    if skipped:
        return Holding("damaged", f"all {skipped:,} of its GPU records are damaged and were skipped (listed)",
                       "see the skipped records for what is wrong with them", False)
    accelerators: dict[str, dict[str, int]] = {}
    for cat, n in cats.items():
        for prefix, who in ACCELERATOR_CATEGORIES.items():
            if cat.lower().startswith(prefix):
                accelerators.setdefault(who, {})[cat] = n
    if accelerators:
        who, found = max(accelerators.items(), key=lambda kv: sum(kv[1].values()))
        return Holding("accelerator", f"this is a trace of {who}, not of a GPU: {_listed(found)} event(s)",
                       "ridgeline reads NVIDIA (CUDA) and AMD (ROCm/HIP) GPU timelines; other accelerators' "
                       "activity is not read", True)
    ranges = {c: n for c, n in cats.items() if c in RANGE_PROFILER_CATEGORIES}
    if ranges:
        n = sum(ranges.values())
        return Holding("range-profiler", f"it holds {n:,} CUPTI range-profiler range(s) ({_listed(ranges)}): counter "
                       "values per range or kernel, which the range profiler records instead of the activity "
                       "trace, with times Kineto spreads evenly over the capture (not measured)",
                       "for a timeline, profile with ProfilerActivity.CUDA and without experimental_config's "
                       "profiler_metrics; for per-kernel counters on the roofline, an Nsight Compute export "
                       "(ncu --set roofline) is read", True)
    if not total:
        return Holding("empty", f"the file holds no {unit}s at all (an empty capture)",
                       ("check that the profiled region ran GPU work while the profiler was active (its schedule's "
                        "active steps)") if tool == "kineto" else "check that the profiled process ran GPU work "
                       "during the capture", False)
    held = f"it holds {total:,} event(s), none of them GPU activity" + (f" ({_listed(cats)})" if cats else "")
    runtime = sum(n for c, n in cats.items() if c in RUNTIME_CATEGORIES)
    if runtime:
        return Holding("runtime-only", f"{held}: {runtime:,} GPU runtime/driver call(s) but no kernel, copy or memset "
                       "record",
                       ("the device side was not recorded or was lost: check that ProfilerActivity.CUDA is in the "
                        "profiler's activities and its log for CUPTI errors or dropped records") if tool == "kineto"
                       else "the device side was not recorded: trace CUDA (nsys profile -t cuda)", False)
    return Holding("host-only", f"{held}: host-side work only",
                   "profile with ProfilerActivity.CUDA (beside ProfilerActivity.CPU) to record the GPU side"
                   if tool == "kineto" else "trace CUDA (nsys profile -t cuda) to record the GPU side", False)
