"""AnalysisResult -> one JSON document (``ridgeline analyze --format json``).

The document's shape is versioned (:data:`ridgeline.result.JSON_SCHEMA_VERSION`) and
written down in ``docs/json-schema.md``, generated from :func:`json_schema_markdown`;
a test fails when a real document and the page disagree. NaN and infinities become
``null``; datetimes become ISO 8601 strings.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import math
import textwrap
from typing import Any, Iterator

from ridgeline.analyzer.kernels.gpus import PRECISIONS, catalogue
from ridgeline.analyzer.schema import (
    KERNEL_COLUMNS,
    KERNEL_SHARE_COLUMNS,
    STREAM_COLUMNS,
    NCU_RULE_COLUMNS,
    OP_COVERAGE_COLUMNS,
    OP_GROUP_COLUMNS,
    ROOFLINE_COLUMNS,
    SUMMARY_COLUMNS,
    TIMELINE_DEVICE_COLUMNS,
    TIMELINE_TOTALS_COLUMNS,
    WINDOW_COLUMNS,
)
from ridgeline.render.facts import gpu_label, roof_records, time_by_bound
from ridgeline.result import JSON_SCHEMA_VERSION

# top-level key -> meaning (the order of the document)
TOP_LEVEL: dict[str, str] = {
    "schema_version": "version of this document's shape (string, e.g. \"1.0\")",
    "gpu": "the GPU whose roofs were used (object, below); null fields when unidentified",
    "roofs": "every roof launches were measured against: list of Roof objects",
    "inputs": "files read: list of {path, kind, rows}",
    "total_gpu_time_s": "sum of launch durations (seconds), the denominator of every share; null without kernels",
    "kernels": "one record per profiled launch (keys below); empty list without an ncu input",
    "summary": "one record per kernel name, most GPU time first (keys below)",
    "skipped": "items not analyzed, each {source, item, reason}",
    "findings": "rule findings, most impactful first (keys below)",
    "notes": "human-readable notes about the analysis (GPU matching, missing counters, ...)",
    "telemetry": "null without telemetry input, else {\"windows\": [records of the WINDOW table], "
    "\"fleet\": {\"by_gpu\": [...], \"by_host\": [...]}} (since 1.1); with telemetry --by or --jobs also "
    "\"groups_by\": [dimensions] and \"groups\": [records, worst first] (additive)",
    "timeline": "null without a timeline input (Nsight Systems export, nsys stats CSV, PyTorch profiler trace), "
    "else the `timeline` object below (since 1.2)",
    "ncu_rules": "null without a .ncu-rep input, else ncu's own rule results stored in the reports: list of records "
    "(keys below); evidence beside ridgeline's findings, never findings themselves (since 1.2)",
    "what_if": "one object per --what-if spec, in order (keys below); empty list without one (since 1.3)",
    "time_by_bound": "bound -> share of the profiled GPU time as every view shows it (memory, compute, launch, stall, "
    "unknown: the latency class split by latency_kind; a launch without a bound counts as unknown), the figure every "
    "view's 'where the time goes' prints (ridgeline.render.facts; since 1.5)",
    "accounting": "per input: {path, kind, unit (launches, records for timelines, or samples), read, used, missing, skipped, "
    "skipped_reasons {reason: count}, balanced}; read = used + missing + skipped "
    "(ridgeline.analyzer.accounting; since 1.4)",
}

TIMELINE_KEYS: dict[str, str] = {
    "options": "thresholds used: launch_gap_s (idle gaps up to this are launch overhead), short_kernel_s (short "
    "kernel limit), plot_bins",
    "devices": "one record per file x device (keys below)",
    "streams": "one record per file x device x stream: launch delay and queue depth (keys below; since 1.6)",
    "kernels": "one record per kernel name on the timeline (two instantiations of one template are two records, "
    "kernel_label tells them apart), most time first (keys below)",
    "totals": "nsys stats summaries (totals only: no timeline, no gaps), records of the TIMELINE_TOTALS table "
    "plus kernel_label (kernels: display label, unique per full name, docs/names.md; others: the name); "
    "empty list when none",
    "join": "null unless a profile was given too, else {profiled_kernels, matched_count, matched: [{kernel_name, "
    "short_name, timeline_name, match, profiled_launches, profiled_s, launches, total_s, wall_share, busy_share}], "
    "unmatched_profile: [short names], unmatched_timeline: [short names], ambiguous: [short names]}; full names are "
    "paired by ridgeline.names.match_names (docs/names.md): equal up to spelling ('exact'), same function and "
    "template arguments with namespaces aside ('key'), or same function where one side is bare ('function'); "
    "names with several candidates are 'ambiguous' and not joined",
    "ranks": "per-rank table when at least two devices carry a rank (one job: ridgeline.analyzer.timeline.ranks), by rank: "
    "rank, source, device, rank_from, capture_s, compute_busy_s, comm_busy_s, comm_exposed_s, idle_s, "
    "compute_vs_median (compute_busy_s / the ranks' median), world_size (the job's, as the traces record it; null "
    "when none does: the table holds world_size ranks or fewer); empty list otherwise",
    "steps": "one record per step per device (ProfilerStep#N / NVTX step ranges; keys below); empty list when the "
    "trace has no step ranges (since 1.6)",
    "fusion": "fusion candidates: frequent sequences of short kernels launched back to back, per device (keys "
    "below; since 1.6)",
    "ranges": "GPU work per annotated host range name (NVTX ranges, record_function annotations), per device, "
    "most GPU time first (keys below; since 1.6)",
    "collectives": "one record per collective instance matched across two ranks or more (ridgeline.analyzer.timeline."
    "collectives: by process group and sequence number where the traces record them, else by the order of each "
    "collective per rank, said in matched_by), split into transfer and wait (keys below); empty list otherwise",
    "rank_waits": "per rank, from the matched collectives: comm_wait_s, arrived_last, imposed_wait_s (keys below); "
    "empty list otherwise",
    "op_groups": "PyTorch ops on the roofline: kernels tied to the leaf CPU op that launched them, grouped by "
    "(op, input shapes, dtypes) per device, FLOPs and bytes modelled from the recorded shapes (docs/op-models.md), "
    "most saving first (keys below); empty list without CPU ops in the trace",
    "op_coverage": "per input and device: kernel time in op groups and the share a model covers (keys below)",
}

FLEET_KEYS: dict[str, str] = {
    "host": "host name",
    "gpu": "GPU index (`by_gpu` only)",
    "gpu_instance": "MIG GPU instance, null for a whole GPU (`by_gpu` only)",
    "gpus": "GPUs (and MIG instances) in the group",
    "windows": "windows in the group",
    "span_h": "GPU-hours observed",
    "busy_tensor_idle_h": "GPU-hours busy (GPU-Util) with idle tensor cores, windows not excluded by RL205 only",
    "memory_bound_h": "the part of busy_tensor_idle_h with DRAM busy too (memory-bound: moving bytes, not idle)",
    "allocated_idle_h": "GPU-hours idle with memory allocated",
    "idle_allocated_h": "GPU-hours of windows of class idle_allocated (engine below its noise floor, memory held)",
    "unavailable_h": "GPU-hours of windows of class unavailable (a critical health event)",
    "wasted_gpu_h": "idle_allocated_h + unavailable_h: GPU time thrown away",
    "underused_gpu_h": "GPU-hours of the busy classes far from the tensor/FP roofs (memory_bound, io_bound, "
                       "busy_low_throughput, busy): work done badly, not waste",
    "wasted_share": "wasted_gpu_h / span_h (0..1), null when nothing was observed",
    "underused_share": "underused_gpu_h / span_h (0..1), null when nothing was observed",
    "rank": "1 = most wasted GPU-hours",
}

GPU_KEYS: dict[str, str] = {
    "name": "catalogue name (\"H100 SXM\"); several names joined by \", \" when the input mixes GPUs; null if none matched",
    "label": "the GPU every view names (report title and summary card, Markdown **GPU:**, the terminal's GPU line): "
    "`name` when a catalogue GPU matched, else the device names the inputs recorded (profile device_name, timeline "
    "devices, telemetry models; sorted, joined by \", \"), else \"N GPUs (model not recorded)\" for telemetry; null "
    "when nothing names a GPU (the views print \"unknown GPU\"). ridgeline.render.facts.gpu_label (additive, issue 37)",
    "match": "how the GPU was chosen (device name as recorded, or --gpu), with notes such as 'most common variant'",
    "datasheet": "the datasheet the catalogue numbers come from (null when no catalogue entry)",
    "dram_bw_bytes_per_s": "DRAM bandwidth roof used: the measured one when ncu recorded it, else the catalogue's",
    "dram_bw_source": "\"ncu\", \"ncu-device-attributes\", \"catalogue\" or \"derived-from-device-attributes\"",
    "peaks": "precision -> {flops_per_s, source, ridge_flop_per_byte}: every precision of the catalogue entry plus "
    "any the export measured; measured values win",
}

ROOF_KEYS: dict[str, str] = {
    "kind": "\"compute\" or \"bandwidth\"",
    "value": "FLOP/s or byte/s",
    "source": "\"ncu\", \"ncu-device-attributes\", \"catalogue\" or \"derived-from-device-attributes\"",
    "precision": "compute roofs: precision key; null for bandwidth",
    "level": "bandwidth roofs: \"dram\"; null for compute",
    "path": "compute roofs measured per tensor instruction path: \"hgmma\" (Hopper wgmma), \"hmma\" (mma.sync), \"hgmma+hmma\" (ops-weighted); null otherwise",
    "detail": "where exactly the number came from (datasheet, or the median over which launches)",
    "unit": "\"FLOP/s\" or \"B/s\"",
    "ridge_flop_per_byte": "compute roofs: this roof over the DRAM bandwidth roof of the same device (each tensor path its "
    "own ridge); null for bandwidth roofs or without one DRAM roof for the device (ridgeline.render.facts; since 1.5)",
}

FINDING_KEYS: dict[str, str] = {
    "code": "rule code, e.g. RL101",
    "name": "rule name, kebab-case",
    "severity": "info, warning or critical",
    "subject": "what the finding is about (kernel name group, gpu:..., host:... gpu:..., profile)",
    "message": "measured value against threshold, one line",
    "remedy": "what to do, one line",
    "evidence": "list of {metric, value, unit, source}",
    "impact_s": "upper bound of GPU seconds saved, or null",
    "impact_share": "impact_s / total GPU time (0..1), or null",
    "confidence": "measured, derived or catalogue",
    "subject_kind": "kernel, gpu, host, window, profile, telemetry or timeline (RL4xx: a device of a timeline)",
    "related": "codes of the other findings on the same subject; a saving is counted once, on the finding with the largest impact, so the others carry impact_s null",
}

KERNEL_KEYS: tuple[str, ...] = tuple(KERNEL_COLUMNS) + tuple(ROOFLINE_COLUMNS)
SUMMARY_KEYS: tuple[str, ...] = tuple(SUMMARY_COLUMNS)


def clean(value: Any) -> Any:
    """JSON-safe copy: NaN/inf -> None, datetimes -> ISO strings, tuples -> lists."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, _dt.timedelta):
        return value.total_seconds()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return clean(value.to_dict() if hasattr(value, "to_dict") else dataclasses.asdict(value))
    if value is None or isinstance(value, (str, int, bool)):
        return value
    try:  # numpy scalars and the like
        return clean(value.item())
    except AttributeError:
        return str(value)


def _records(df, columns=None) -> list[dict[str, Any]]:
    if df is None:
        return []
    if columns is not None:
        import polars as pl

        df = df.select([pl.col(c) if c in df.columns else pl.lit(None).alias(c) for c in columns])
    return [clean(r) for r in df.to_dicts()]


def _catalogue_entry(name: str | None):
    return next((g for g in catalogue() if g.name == name), None) if name else None


def gpu_section(result) -> dict[str, Any]:
    """The ``gpu`` object: catalogue peaks overlaid with the roofs actually used."""
    entry = _catalogue_entry(result.gpu_name)
    bw_roofs = [r for r in result.roofs if r.kind == "bandwidth" and r.level == "dram"]
    if len({r.value for r in bw_roofs}) == 1:
        bw, bw_src = bw_roofs[0].value, bw_roofs[0].source
    elif entry is not None:
        bw, bw_src = entry.dram_bw_bytes_per_s, "catalogue"
    else:
        bw, bw_src = None, None
    peaks: dict[str, dict[str, Any]] = {}
    for p in PRECISIONS:
        used = [r for r in result.roofs if r.kind == "compute" and r.precision == p]
        if len({r.value for r in used}) == 1:
            value, src = used[0].value, used[0].source
        elif entry is not None and entry.peak(p) is not None:
            value, src = entry.peak(p), "catalogue"
        else:
            continue
        peaks[p] = {"flops_per_s": value, "source": src, "ridge_flop_per_byte": (value / bw) if bw else None}
    return {
        "name": result.gpu_name,
        "label": gpu_label(result),
        "match": result.gpu_match,
        "datasheet": entry.source if entry else None,
        "dram_bw_bytes_per_s": bw,
        "dram_bw_source": bw_src,
        "peaks": peaks,
    }


def telemetry_section(windows, *, records: bool = True, groups=None) -> dict[str, Any]:
    """``{"windows": [...], "fleet": {"by_gpu": [...], "by_host": [...]}}`` (fleet ranked by waste;
    ``records=False``: windows left empty, for :func:`render_json` to write them), and with ``groups``
    (a :class:`ridgeline.analyzer.fleet.groups.GroupReport`) ``"groups"``, ``"groups_by"``."""
    from ridgeline.analyzer.fleet.summary import fleet_summary

    gpu_keys = list(FLEET_KEYS)
    host_keys = [k for k in FLEET_KEYS if k not in ("gpu", "gpu_instance")]
    return {
        "windows": _records(windows) if records else [],
        "fleet": {
            "by_gpu": _records(fleet_summary(windows, by="gpu"), gpu_keys),
            "by_host": _records(fleet_summary(windows, by="host"), host_keys),
        },
        **({} if groups is None else group_section(groups)),
    }


GROUP_KEYS = {
    "key": "the group: its --by values joined by ' / ' ('(no pod)' for GPUs without that label or job)",
    "keys": "{dimension: value} of the key",
    "gpus": "distinct GPUs (or MIG instances) with time in the group",
    "gpu_hours": "GPU-hours observed in the group (a window shared by groups split by time overlap)",
    "wasted_gpu_hours": "idle_allocated + unavailable GPU-hours (time thrown away), as telemetry.fleet's wasted_gpu_h",
    "wasted_share": "wasted_gpu_hours / gpu_hours",
    "wasted_split": "{idle_allocated_h: engine below its noise floor with memory held, unavailable_h: a critical "
                    "health event}",
    "underused_gpu_hours": "GPU-hours busy far from the tensor/FP roofs (classes memory_bound, io_bound, "
                           "busy_low_throughput, busy): work done badly, not waste",
    "underused_share": "underused_gpu_hours / gpu_hours",
    "underused_split": "{memory_bound_h, io_bound_h, busy_low_throughput_h, busy_h}",
    "underused_remedy": "'<class>: <remedy>' for the group's largest underused class, or null",
    "gpu_hours_by_class": "{class: GPU-hours} over every class of ridgeline.analyzer.fleet.classes.CLASS_ORDER (0.0 when none)",
    "states_h": "{allocated_idle_h, tensor_idle_h, memory_bound_h}: GPU-hours of the per-sample states (evidence; "
                "busy with idle tensor cores is underuse, not waste)",
    "tensor_active": "mean PIPE_TENSOR_ACTIVE weighted by GPU time (windows with profiling data), 0..1; null: none",
    "dram_active": "mean DRAM_ACTIVE likewise",
    "first": "start of the group's first window (ISO 8601 UTC)",
    "last": "end of its last window",
    "alloc_gpus": "GPUs the Slurm job allocated (AllocTRES), --by job with --jobs; else null",
    "notes": "short sentences a person can forward ('Tensor Core activity was 0% on all 4 GPUs of this pod for 2.0 h')",
}


def group_section(groups) -> dict[str, Any]:
    """``{"groups_by": [dims], "groups": [rows, worst first]}`` (keys :data:`GROUP_KEYS`)."""
    return {"groups_by": list(groups.by), "groups": clean(groups.rows())}


def timeline_section(tl) -> dict[str, Any] | None:
    """The ``timeline`` object (see TIMELINE_KEYS), or None without a timeline input."""
    if tl is None:
        return None
    from ridgeline.analyzer.timeline.ranks import rank_table

    ranks = rank_table(tl.devices)
    join = None
    if tl.join is not None:
        matched = _records(tl.join)
        join = {"profiled_kernels": getattr(tl, "profiled_kernels", len(matched)),
                "matched_count": len(matched), "matched": matched, "unmatched_profile": list(tl.unmatched_profile),
                "unmatched_timeline": list(tl.unmatched_timeline), "ambiguous": list(getattr(tl, "ambiguous", []))}
    return {
        "options": dict(tl.options),
        "devices": _records(tl.devices),
        "streams": _records(tl.streams) if getattr(tl, "streams", None) is not None else [],
        "kernels": _records(tl.kernel_shares),
        "ranks": _records(ranks) if ranks is not None else [],
        "totals": [dict(r, kernel_label=(getattr(tl, "totals_labels", {}) or {}).get(r.get("name")) or r.get("short_name"))
                   for r in _records(tl.totals)] if tl.totals is not None else [],
        "join": join,
        "steps": _records(tl.steps) if getattr(tl, "steps", None) is not None else [],
        "fusion": _records(tl.fusion) if getattr(tl, "fusion", None) is not None else [],
        "ranges": _records(tl.ranges) if getattr(tl, "ranges", None) is not None else [],
        "collectives": _records(tl.collectives) if getattr(tl, "collectives", None) is not None else [],
        "rank_waits": _records(tl.rank_waits) if getattr(tl, "rank_waits", None) is not None else [],
        **_op_sections(tl),
    }


def _op_sections(tl) -> dict[str, list]:
    g = getattr(tl, "op_groups", None)
    if g is None:
        return {"op_groups": [], "op_coverage": []}
    from ridgeline.analyzer.ops.groups import coverage

    return {"op_groups": _records(g), "op_coverage": _records(coverage(g))}


def finding_codes_by_kernel(result) -> dict[str, list[str]]:
    """Kernel short name -> codes of ridgeline's findings on it (a finding's subject is the kernels'
    label, else short name: ``ridgeline.rules.timeline.common.subject_names`` maps it back)."""
    from ridgeline.rules.timeline.common import finding_subject, subject_names

    names = subject_names(result.kernels)
    out: dict[str, list[str]] = {}
    for f in result.findings:
        if f.subject_kind != "kernel":
            continue
        subject = finding_subject(f.subject)
        for short in names.get(subject, {subject: 0.0}):
            if f.code not in out.setdefault(short, []):
                out[short].append(f.code)
    return out


def ncu_rules_section(result) -> list[dict[str, Any]] | None:
    """NCU_RULES records, each with ``findings``: ridgeline's finding codes on the same kernel."""
    rules = getattr(result, "ncu_rules", None)
    if rules is None:
        return None
    codes = finding_codes_by_kernel(result)
    records = _records(rules)
    for r in records:
        r["findings"] = codes.get(r.get("short_name"), [])
    return records


def to_document(result) -> dict[str, Any]:
    """The JSON document as a dict (keys exactly :data:`TOP_LEVEL`)."""
    windows = getattr(result, "windows", None)
    doc = {
        "schema_version": JSON_SCHEMA_VERSION,
        "gpu": gpu_section(result),
        "roofs": roof_records(result),
        "inputs": [dataclasses.asdict(i) for i in result.inputs],
        "total_gpu_time_s": result.total_gpu_time_s,
        "kernels": _records(result.kernels, KERNEL_KEYS),
        "summary": _records(result.summary, SUMMARY_KEYS),
        "skipped": [s.to_dict() for s in result.skipped],
        "findings": [f.to_dict() for f in result.findings],
        "notes": list(result.notes),
        "telemetry": None if windows is None else telemetry_section(windows, groups=getattr(result, "groups", None)),
        "timeline": timeline_section(getattr(result, "timeline", None)),
        "ncu_rules": ncu_rules_section(result),
        "what_if": _what_if_records(result),
        "time_by_bound": time_by_bound(result),
        "accounting": _accounting(result),
    }
    assert list(doc) == list(TOP_LEVEL)
    return clean(doc)


def _what_if_records(result) -> list[dict[str, Any]]:
    if not getattr(result, "what_if", None):  # (the what-if model is not loaded without projections)
        return []
    from ridgeline.render.kernels.whatif import records

    return records(result)


def _accounting(result) -> list[dict[str, Any]]:
    from ridgeline.analyzer.accounting import accounting

    return accounting(result)


_KERNELS_MARK = "__ridgeline_kernels_records__"


_RECORDS_PER_PIECE = 2048  # launches per piece of the kernels array (~9 MB of JSON on a full raw page)


def _records_json(df, columns) -> Iterator[str]:
    """Records as the pieces of a compact JSON array, written by polars itself (NaN/inf ->
    null), a slice of launches at a time: a 50,000-launch report's 210 MB array is never one
    string. polars writes a record the same in ``write_json`` and ``write_ndjson``, so the
    pieces join to what ``df.write_json()`` writes; every cut is between two records
    (``}`` | ``,{``), which :func:`ridgeline.render.safe_text.for_output_pieces` relies on."""
    import polars as pl

    df = df.select([pl.col(c) if c in df.columns else pl.lit(None).alias(c) for c in columns])
    for start in range(0, df.height, _RECORDS_PER_PIECE):
        lines = df.slice(start, _RECORDS_PER_PIECE).write_ndjson()
        body = lines.rstrip("\n").replace("\n", ",")  # JSON strings hold no raw newline
        del lines
        yield ("[" if start == 0 else ",") + body
    yield "]"


_WINDOWS_MARK = "__ridgeline_windows_records__"


def _windows_json(windows) -> list[str]:
    """The WINDOW records as the pieces of a JSON array, one record per line, written by polars
    (NaN/inf -> null; datetimes in ISO 8601 as :func:`clean` writes them): no Python object per
    window, so rendering a long pull's telemetry takes a few times its text, not ~10x it."""
    if not windows.height:
        return ["[]"]
    import polars as pl

    # datetimes as Python's isoformat writes them (polars writes 08:03:00.500, isoformat
    # 08:03:00.500000; whole seconds alike): a first sample at a fraction of a second
    def iso(c):
        t = pl.col(c)
        return (pl.when(t.dt.microsecond() == 0).then(t.dt.strftime("%Y-%m-%dT%H:%M:%S%:z"))
                .otherwise(t.dt.strftime("%Y-%m-%dT%H:%M:%S%.6f%:z")).alias(c))

    stamps = [c for c, t in windows.schema.items() if isinstance(t, pl.Datetime) and t.time_zone]
    if stamps:
        windows = windows.with_columns([iso(c) for c in stamps])
    lines = windows.write_ndjson()
    body = lines.rstrip("\n").replace("\n", ",\n")  # JSON strings hold no raw newline
    del lines
    return ["[\n", body, "\n]"]


def render_json(result, *, indent: int | None = 2) -> str:
    """The document as text: :func:`json_pieces` joined."""
    return "".join(json_pieces(result, indent=indent))


def json_pieces(result, *, indent: int | None = 2) -> Iterator[str]:
    """The document as pieces of text, for a writer that never holds it whole. The per-launch
    records are serialized by polars (one compact line, written a slice of launches at a time)
    and the telemetry windows too (one line per window) because Python-level conversion
    dominates on 100k+ launches and windows."""
    kernels = result.kernels
    windows = getattr(result, "windows", None)
    has_windows = windows is not None and windows.height > 0
    if (kernels is None or kernels.height == 0) and not has_windows:
        yield json.dumps(to_document(result), indent=indent, allow_nan=False, ensure_ascii=False) + "\n"
        return
    result_wo = dataclasses.replace(result, kernels=None)
    if has_windows:
        result_wo = dataclasses.replace(result_wo, windows=windows.head(0))
    doc = to_document(result_wo)
    doc["accounting"] = clean(_accounting(result))  # counted from the launches, which result_wo leaves out
    doc["time_by_bound"] = clean(time_by_bound(result))  # likewise
    doc["gpu"] = clean(gpu_section(result))  # its label names the devices the launches and windows recorded
    marks = []
    if kernels is not None and kernels.height:
        doc["kernels"] = _KERNELS_MARK
        marks.append(_KERNELS_MARK)
    if has_windows:
        doc["telemetry"] = telemetry_section(windows, records=False, groups=getattr(result, "groups", None))
        doc["telemetry"]["windows"] = _WINDOWS_MARK
        marks.append(_WINDOWS_MARK)
    rest = json.dumps(doc, indent=indent, allow_nan=False, ensure_ascii=False)
    for mark in sorted(marks, key=lambda m: rest.index(json.dumps(m))):  # in document order
        head, rest = rest.split(json.dumps(mark), 1)
        yield head
        if mark == _KERNELS_MARK:
            yield from _records_json(kernels, KERNEL_KEYS)
        else:
            yield from _windows_json(windows)
    yield rest + "\n"


def _key_table(keys: dict[str, str]) -> str:
    lines = ["| key | meaning |", "|---|---|"]
    lines += [f"| `{k}` | {v} |" for k, v in keys.items()]
    return "\n".join(lines)


def _column_table(columns: dict[str, tuple[str, str]]) -> str:
    lines = ["| key | type | meaning |", "|---|---|---|"]
    for name, (kind, doc) in columns.items():
        jtype = {"str": "string", "i64": "integer", "f64": "number", "list[str]": "list of strings"}.get(kind, kind)
        lines.append(f"| `{name}` | {jtype} or null | {doc} |")
    return "\n".join(lines)


def _classifier_doc() -> str:
    """The decisions section of ridgeline.analyzer.kernels.roofline's docstring, as Markdown."""
    from ridgeline.analyzer.kernels import roofline

    text = (roofline.__doc__ or "").split("Decisions, written down once:", 1)[-1]
    return textwrap.dedent(text).strip()


def _steps_columns():
    from ridgeline.analyzer.timeline.steps import STEP_COLUMNS

    return STEP_COLUMNS


def _fusion_columns():
    from ridgeline.analyzer.timeline.fusion import FUSION_COLUMNS

    return FUSION_COLUMNS


def _collective_columns():
    from ridgeline.analyzer.timeline.collectives import COLLECTIVE_COLUMNS, RANK_WAIT_COLUMNS

    return COLLECTIVE_COLUMNS, RANK_WAIT_COLUMNS


def _ranges_columns():
    from ridgeline.analyzer.timeline.ranges import RANGE_COLUMNS

    return RANGE_COLUMNS


def _timeline_doc() -> str:
    """How the per-device figures are computed: ridgeline.analyzer.timeline.busy's docstring, as Markdown."""
    from ridgeline.analyzer.timeline import busy as timeline

    from ridgeline.analyzer.schema import SYNC_CALLS

    text = textwrap.dedent((timeline.__doc__ or "").split("\n", 2)[-1]).strip()
    return (text + "\n\nSynchronizing host calls (`SYNC_CALLS`; nsys' `_vNNNN`, `_ptds`, `_ptsz` suffixes "
            "ignored): " + ", ".join(f"`{n}`" for n in SYNC_CALLS) + ".")
def _whatif_doc() -> str:
    from ridgeline.analyzer.kernels import whatif

    text = (whatif.__doc__ or "").split("The model, written down once:", 1)[-1]
    return textwrap.dedent(text).strip()


def _what_if_keys() -> dict[str, str]:
    from ridgeline.render.kernels.whatif import WHAT_IF_KEYS

    return WHAT_IF_KEYS


def _what_if_kernel_keys() -> dict[str, str]:
    from ridgeline.analyzer.kernels.whatif import KERNEL_KEYS

    return KERNEL_KEYS


def json_schema_markdown() -> str:
    """docs/json-schema.md, generated (``python scripts/gen_schema_docs.py``)."""
    parts = [
        "# `ridgeline analyze --format json`: the document",
        "",
        "<!-- generated by scripts/gen_schema_docs.py from ridgeline/render/jsonout.py and "
        "ridgeline/analyzer/schema.py; do not edit by hand -->",
        "",
        f"Schema version **{JSON_SCHEMA_VERSION}**. One JSON object per run. Numbers are SI base units "
        "(seconds, bytes, FLOP, FLOP/s, byte/s; ratios 0..1). A value that was not measured is `null`, "
        "never 0; NaN and infinities are written as `null` (an intensity with zero DRAM bytes is infinite "
        "and appears as `null` next to `bound: \"compute\"`). Adding a key bumps the minor version; "
        "renaming or removing one bumps the major version.",
        "",
        "## Top-level keys (always all present, in this order)",
        "",
        _key_table(TOP_LEVEL),
        "",
        "## `gpu`",
        "",
        _key_table(GPU_KEYS),
        "",
        "## `roofs[]`",
        "",
        _key_table(ROOF_KEYS),
        "",
        "## `inputs[]`",
        "",
        _key_table({"path": "file as given", "kind": "detected format (ncu-raw, ncu-details, dcgm-dmon, ...)",
                    "rows": "launches or samples read"}),
        "",
        "## `kernels[]`: one record per launch",
        "",
        "The KERNEL columns (what the profiler measured) followed by the ROOFLINE columns (where the "
        "launch sits on the roofline). `bound` is `memory`, `compute`, `latency` (no roof explains the time; "
        "`latency_kind` says `launch` or `stall`, docs/latency.md) or `unknown`; `bound_source` says what "
        "decided it: `roofline` (measured counters and roofs), `ncu-speed-of-light` (ncu's SM and memory "
        "throughputs, where the roofline could not place the launch: docs/speed-of-light.md) or null. A launch "
        "the roofline could not place lists what is absent in `missing` and the ncu option that collects it in "
        "`missing_hint`. "
        "`time_to_roof_s = max(flops / peak_flops_per_s, dram_bytes / peak_bw_bytes_per_s)`: the duration "
        "at 100% of the roof; `duration_s - time_to_roof_s` is an upper bound on what a better kernel saves.",
        "",
        _column_table({k: (KERNEL_COLUMNS | ROOFLINE_COLUMNS)[k] for k in KERNEL_KEYS}),
        "",
        "## How launches are classified",
        "",
        _classifier_doc(),
        "",
        "## `summary[]`: one record per kernel name",
        "",
        _column_table(SUMMARY_COLUMNS),
        "",
        "## `skipped[]`",
        "",
        _key_table({"source": "input file", "item": "what was skipped (launch, line, series, file)",
                    "reason": "why",
                    "count": "only on an entry that stands for several: `\"item\": \"N more like this\"` after the "
                             "first 20 alike items (same source and reason; a Prometheus pull, `ridgeline.skiplog`); "
                             "the accounting adds it"}),
        "",
        "## `findings[]`",
        "",
        _key_table(FINDING_KEYS),
        "",
        "## `telemetry.fleet`",
        "",
        "GPUs (`by_gpu`) and hosts (`by_host`) ranked by wasted GPU-hours over the whole input "
        "(`ridgeline.analyzer.fleet.summary.fleet_summary`). `by_host` records have no `gpu` and `gpu_instance`.",
        "",
        _key_table(FLEET_KEYS),
        "",
        "## `telemetry.groups[]`",
        "",
        "Only with `ridgeline telemetry --by ...` or `--jobs FILE`: one record per workload group, most wasted "
        "GPU-hours first (`ridgeline.analyzer.fleet.groups`); `telemetry.groups_by` lists the `--by` dimensions. "
        "The groups partition the windows: their `gpu_hours` add up to the fleet's, and so do their "
        "`wasted_gpu_hours`.",
        "",
        _key_table(GROUP_KEYS),
        "",
        "## `telemetry.windows[]`",
        "",
        "One record per host / GPU / GPU instance / window (the WINDOW table; timestamps as ISO 8601 UTC).",
        "",
        _column_table(WINDOW_COLUMNS),
        "",
        "## `timeline`",
        "",
        _key_table(TIMELINE_KEYS),
        "",
        "### `timeline.devices[]`",
        "",
        _timeline_doc(),
        "",
        _column_table(TIMELINE_DEVICE_COLUMNS),
        "",
        "### `timeline.streams[]`",
        "",
        _column_table(STREAM_COLUMNS),
        "",
        "### `timeline.kernels[]`",
        "",
        _column_table(KERNEL_SHARE_COLUMNS),
        "",
        "### `timeline.totals[]`",
        "",
        _column_table(TIMELINE_TOTALS_COLUMNS),
        "",
        "### `timeline.steps[]`",
        "",
        _column_table(_steps_columns()),
        "",
        "### `timeline.fusion[]`",
        "",
        _column_table(_fusion_columns()),
        "",
        "### `timeline.ranges[]`",
        "",
        _column_table(_ranges_columns()),
        "",
        "### `timeline.collectives[]`",
        "",
        _column_table(_collective_columns()[0]),
        "",
        "### `timeline.rank_waits[]`",
        "",
        _column_table(_collective_columns()[1]),
        "",
        "### `timeline.op_groups[]`",
        "",
        _column_table(OP_GROUP_COLUMNS),
        "",
        "### `timeline.op_coverage[]`",
        "",
        _column_table(OP_COVERAGE_COLUMNS),
        "",
        "## `ncu_rules[]`",
        "",
        "ncu's own rule results, one record per rule per launch, read from `.ncu-rep` reports. "
        "`estimated_speedup_pct` is ncu's estimate with its own model, not ridgeline's impact. "
        "Each record also has `findings`: the codes of ridgeline's findings on the same kernel "
        "(short name), so the two can be read side by side; they are never merged.",
        "",
        _column_table(NCU_RULE_COLUMNS),
        "",
        "## `what_if[]`",
        "",
        "One object per `--what-if` spec (`ridgeline.analyzer.kernels.whatif`): the same measured launches re-timed on "
        "another GPU, or the decode step at another batch, each launch at its achieved fraction of the roof that "
        "bounds it. The model:",
        "",
        _whatif_doc(),
        "",
        _key_table(_what_if_keys()),
        "",
        "### `what_if[].kernels[]`",
        "",
        _key_table(_what_if_kernel_keys()),
        "",
    ]
    return "\n".join(parts)
