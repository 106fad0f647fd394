"""Compare two ridgeline JSON documents (``ridgeline diff BASE NEW``): what changed, and is it a
regression?

:func:`compare` takes two parsed documents (``analyze --format json`` or ``telemetry --format json``
output, see ``docs/json-schema.md``) and returns a :class:`Comparison`: plain rows the renderers
(:mod:`ridgeline.render.nightly.diff`) print as text, Markdown or JSON. Pure Python over the documents:
nothing is re-analyzed.

What is compared
----------------
* **analyze** (documents with kernels): kernels grouped by name and launch shape (short name, grid,
  block): launches, GPU time, share of the run's GPU time, DRAM intensity (total FLOPs / total
  DRAM bytes), bound (the bound holding most of the group's time, as every view shows it: ``memory``,
  ``compute``, ``launch`` and ``stall`` for the two kinds of latency-bound launch, ``latency`` for a
  document from before that split, ``unknown``; any other string is compared as it is)
  and roof fraction (time-weighted); groups that appeared or vanished; the total GPU time; the
  headline (share of GPU time per bound) before and after.
* **kernel identity**: groups only one run has are matched by kernel identity
  (:mod:`ridgeline.analyzer.nightly.identity`: same kernel with another launch shape, then same
  function with other template arguments), so a batch change is one row per kernel, not every
  kernel vanished and appeared.
* **telemetry** (documents with a ``telemetry`` section): per GPU and per host, wasted GPU-hours,
  busy-with-idle-tensor and idle-while-allocated GPU-hours, observed GPU-hours, wasted share and
  coverage (seconds covered / window seconds); the fleet totals over the hosts both runs have. A
  host or GPU only the base has is ``missing`` (named in ``notices``, its waste not compared: its
  absence is no change of any GPU), one only the new run has ``appeared``; a GPU whose model
  differs between the runs is named in ``notices``.
* **findings** (both kinds), matched by rule code and subject: new, resolved, changed severity.

A document with both kernels and telemetry gets both comparisons; two documents must be of the
same kind (both with kernels, or both telemetry only) and the same schema major version.

Regression thresholds (:data:`DIFF_THRESHOLDS`; ``[tool.ridgeline.diff]`` overrides them)
-------------------------------------------------------------------------------------------
=========================  ========  =================================================================
name                       default   a regression when
=========================  ========  =================================================================
kernel_time_rel            0.10      a kernel group's GPU time grew by more than this fraction ...
kernel_time_abs_s          50e-6     ... and by more than this many seconds (both must hold)
total_time_rel             0.10      the run's total GPU time grew by more than this fraction ...
total_time_abs_s           50e-6     ... and by more than this many seconds
new_finding_severity       warning   a finding at or above this severity is new, or rose to it
fleet_waste_share          0.05      fleet waste grew by more than this share of observed GPU-hours
host_waste_share           0.10      a host's waste grew by more than this share of its GPU-hours
trend_k                    3         several baselines: band = median +/- max(k x 1.4826 x MAD, floor)
trend_min_baselines        3         several baselines: nights a subject needs for a band
trend_window               14        several baselines: only the latest this many count
=========================  ========  =================================================================

Several baselines (``diff NIGHT... TONIGHT``) are compared by :mod:`ridgeline.analyzer.nightly.trend`.

Changes below the thresholds are shown but are not regressions (noise). A kernel group that
appeared or vanished is shown; the time it adds counts through ``total_time_*``.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
from typing import Any, Mapping

from ridgeline.errors import InputError, UsageError
from ridgeline.analyzer.kernels.latency import VIEW_BOUNDS, view_bound

SEVERITY_RANK = {"info": 0, "warning": 1, "critical": 2}

DIFF_THRESHOLDS: dict[str, Any] = {
    "kernel_time_rel": 0.10,
    "kernel_time_abs_s": 50e-6,
    "total_time_rel": 0.10,
    "total_time_abs_s": 50e-6,
    "new_finding_severity": "warning",
    "fleet_waste_share": 0.05,
    "host_waste_share": 0.10,
    "work_activity_drop": 0.05,
    "trend_k": 3.0,
    "trend_min_baselines": 3,
    "trend_window": 14,
}
THRESHOLD_DOCS: dict[str, str] = {
    "kernel_time_rel": "a kernel group's GPU time grew by more than this fraction (and kernel_time_abs_s)",
    "kernel_time_abs_s": "... and by more than this many seconds",
    "total_time_rel": "the run's total GPU time grew by more than this fraction (and total_time_abs_s)",
    "total_time_abs_s": "... and by more than this many seconds",
    "new_finding_severity": "a finding at or above this severity (info, warning, critical) is new or rose to it",
    "fleet_waste_share": "fleet wasted GPU-hours grew by more than this share of observed GPU-hours",
    "host_waste_share": "a host's wasted GPU-hours grew by more than this share of its observed GPU-hours",
    "work_activity_drop": "several baselines: the least half-width of the band of a work measure (tensor / DRAM "
                          "active, a 0..1 ratio); tonight below the band is a regression",
    "trend_k": "several baselines: the band is median +/- max(k x 1.4826 x MAD, the pairwise threshold)",
    "trend_min_baselines": "several baselines: nights a subject needs for a band (fewer: pairwise with the latest)",
    "trend_window": "several baselines: only the latest this many count",
}


def thresholds(overrides: Mapping[str, Any] | None = None, *, where: str = "diff") -> dict[str, Any]:
    """:data:`DIFF_THRESHOLDS` with ``overrides`` (``[tool.ridgeline.diff]``, ``--threshold``) applied;
    an unknown name, a wrongly typed value or a number outside its bounds (:data:`ridgeline.bounds.BOUNDS`:
    finite, and a share at most 1, a window at most 10,000 nights...) is a UsageError naming
    ``where`` (the file and table, or the flag) and the key."""
    from ridgeline import bounds

    out = dict(DIFF_THRESHOLDS)
    if not isinstance(overrides, Mapping) and overrides is not None:
        raise UsageError(f"{where}: expected a table of thresholds, e.g. kernel_time_rel = 0.2")
    for key, value in (overrides or {}).items():
        if key not in out:
            raise UsageError(f"{where}: threshold {str(key)[:40]!r} unknown; known: {', '.join(DIFF_THRESHOLDS)}")
        if key == "new_finding_severity":
            if not isinstance(value, str) or value not in SEVERITY_RANK:
                raise UsageError(f"{where}: {key} must be one of {', '.join(SEVERITY_RANK)}, got {str(value)[:40]!r}")
        else:
            value = bounds.check(key, value, where=where, strings=True)
        out[key] = value
    return out


@dataclasses.dataclass
class Comparison:
    """What :func:`compare` returns. Rows are plain dicts (JSON-ready)."""

    kind: str  # "analyze" or "telemetry"
    base: str  # labels of the two documents (file names)
    new: str
    schema_versions: tuple[str, str]
    thresholds: dict[str, Any]
    kernels: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    totals: dict[str, Any] | None = None
    headline: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    findings: dict[str, list[dict[str, Any]]] = dataclasses.field(default_factory=dict)
    gpus: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    hosts: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    fleet: dict[str, Any] | None = None
    regressions: list[str] = dataclasses.field(default_factory=list)
    notices: list[str] = dataclasses.field(default_factory=list)  # named, not regressions: missing hosts, GPU model changes

    @property
    def regressed(self) -> bool:
        return bool(self.regressions)

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["schema_versions"] = {"base": self.schema_versions[0], "new": self.schema_versions[1]}
        out["regressed"] = self.regressed
        return out


# ------------------------------------------------------------------------------------------
# documents
# ------------------------------------------------------------------------------------------
REQUIRED_KEYS = ("schema_version", "kernels", "findings", "telemetry")


def document_kind(doc: Any, label: str) -> str:
    """``"analyze"`` (kernels), ``"telemetry"`` (telemetry only); InputError if not a ridgeline document."""
    if not isinstance(doc, dict) or any(k not in doc for k in REQUIRED_KEYS):
        raise InputError(label, "expected a ridgeline JSON document (analyze/telemetry --format json) with keys "
                         + ", ".join(REQUIRED_KEYS),
                         actual=", ".join(list(doc)[:6]) if isinstance(doc, dict) else type(doc).__name__)
    if doc.get("kernels") or doc.get("summary"):
        return "analyze"
    if doc.get("telemetry"):
        return "telemetry"
    raise InputError(label, "expected kernels or telemetry in the document; it holds neither")


def gpu_name(doc: dict) -> str | None:
    """The document's ``gpu.name`` when it is a non-empty string."""
    gpu = doc.get("gpu")
    name = gpu.get("name") if isinstance(gpu, dict) else None
    return name if isinstance(name, str) and name else None


def _major(version: Any, label: str) -> int:
    try:
        return int(str(version).split(".")[0])
    except ValueError:
        raise InputError(label, "expected schema_version such as \"1.1\"", actual=version) from None


def compare(base: dict, new: dict, *, base_label: str = "BASE", new_label: str = "NEW",
            overrides: Mapping[str, Any] | None = None) -> Comparison:
    """Compare two documents; see the module docstring."""
    th = thresholds(overrides)
    kb, kn = document_kind(base, base_label), document_kind(new, new_label)
    if kb != kn:
        raise InputError(new_label, f"expected the same kind of document as {base_label} ({kb}), got {kn}")
    vb, vn = str(base["schema_version"]), str(new["schema_version"])
    if _major(vb, base_label) != _major(vn, new_label):
        raise InputError(new_label, f"expected schema version {_major(vb, base_label)}.x like {base_label} ({vb}), "
                         "documents of different major versions cannot be compared", actual=vn)
    cmp = Comparison(kind=kb, base=base_label, new=new_label, schema_versions=(vb, vn), thresholds=th)
    if kb == "analyze":
        _compare_kernels(cmp, base, new, th)
        gpu_b, gpu_n = gpu_name(base), gpu_name(new)
        if gpu_b and gpu_n and gpu_b != gpu_n:
            cmp.notices.append(f"GPU model changed: {gpu_b} -> {gpu_n} (kernel times compare two GPUs)")
    if base.get("telemetry") and new.get("telemetry"):
        _compare_telemetry(cmp, base["telemetry"], new["telemetry"], th)
    _compare_findings(cmp, base.get("findings") or [], new.get("findings") or [], th)
    _set_aside_missing_hosts(cmp)
    return cmp


# ------------------------------------------------------------------------------------------
# kernels
# ------------------------------------------------------------------------------------------
def _num(v) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def kernel_groups(doc: dict) -> tuple[dict[tuple, dict[str, Any]], float | None]:
    """(name, grid, block) -> aggregates, and the run's total GPU time."""
    records = doc.get("kernels") or []
    groups: dict[tuple, dict[str, Any]] = {}
    if records:
        for r in records:
            name = r.get("short_name") or r.get("kernel_name") or "?"
            key = (name, r.get("grid_size"), r.get("block_size"))
            g = groups.setdefault(key, {"launches": 0, "time_s": 0.0, "flops": 0.0, "dram_bytes": 0.0, "_fd": False,
                                        "_bound": {}, "_rf_t": 0.0, "_rf": 0.0, "kernel_name": r.get("kernel_name")})
            d = _num(r.get("duration_s")) or 0.0
            g["launches"] += 1
            g["time_s"] += d
            f, b = _num(r.get("flops")), _num(r.get("dram_bytes"))
            if f is not None and b is not None:
                g["flops"] += f
                g["dram_bytes"] += b
                g["_fd"] = True
            bound = view_bound(r.get("bound"), r.get("latency_kind")) or "unknown"
            g["_bound"][bound] = g["_bound"].get(bound, 0.0) + d
            rf = _num(r.get("roof_fraction"))
            if rf is not None:
                g["_rf"] += rf * d
                g["_rf_t"] += d
    else:  # documents without per-launch records: one group per name from the summary
        for s in doc.get("summary") or []:
            key = (s.get("short_name") or s.get("kernel_name") or "?", None, None)
            t = _num(s.get("total_duration_s")) or 0.0
            groups[key] = {"launches": s.get("launches") or 0, "time_s": t, "intensity": _num(s.get("intensity_dram")),
                           "bound": view_bound(s.get("bound"), s.get("latency_kind")) or "unknown", "roof_fraction": _num(s.get("roof_fraction")),
                           "kernel_name": s.get("kernel_name")}
    total = _num(doc.get("total_gpu_time_s"))
    if total is None:
        total = sum(g["time_s"] for g in groups.values()) or None
    for g in groups.values():
        if "_bound" in g:
            g["intensity"] = (g["flops"] / g["dram_bytes"]) if g["_fd"] and g["dram_bytes"] > 0 else None
            g["bound"] = max(sorted(g["_bound"]), key=lambda b: g["_bound"][b]) if g["_bound"] else "unknown"
            g["roof_fraction"] = g["_rf"] / g["_rf_t"] if g["_rf_t"] > 0 else None
            g["bound_time_s"] = dict(g["_bound"])
            g["roof_time_s"] = g["_rf_t"]
            if not g["_fd"]:
                g["flops"] = g["dram_bytes"] = None
            for k in ("_fd", "_bound", "_rf", "_rf_t"):
                g.pop(k)
        g["share"] = g["time_s"] / total if total else None
    return groups, total


def _grew(before: float, after: float, rel: float, abs_s: float) -> bool:
    delta = after - before
    return delta > abs_s and (before <= 0 or delta / before > rel)


def _compare_kernels(cmp: Comparison, base: dict, new: dict, th: dict) -> None:
    from ridgeline.analyzer.nightly.identity import match_by_identity

    gb, tb = kernel_groups(base)
    gn, tn = kernel_groups(new)
    rows = []
    pairs: list[tuple] = []  # (key, base group, new group, how matched, base shapes, new shapes)
    identity = match_by_identity(gb, tb, gn, tn)
    merged_b = {k for _, _, kb, _, _, _ in identity for k in kb}
    merged_n = {k for _, _, _, kn, _, _ in identity for k in kn}
    for key in list(gb) + [k for k in gn if k not in gb]:
        if key in merged_b or key in merged_n:
            continue
        pairs.append((key, gb.get(key), gn.get(key), None, None, None))
    for how, label, kb, kn, b, n in identity:
        pairs.append(((label, None, None), b, n, how, [_shape_text(k) for k in kb], [_shape_text(k) for k in kn]))
    for key, b, n, how, shapes_b, shapes_n in pairs:
        status = "vanished" if n is None else "appeared" if b is None else "both"
        bt, nt = (b or {}).get("time_s"), (n or {}).get("time_s")
        row = {
            "kernel": key[0], "grid": key[1], "block": key[2], "status": status,
            "matched_by": how, "shapes_base": shapes_b, "shapes_new": shapes_n,
            "launches_base": (b or {}).get("launches"), "launches_new": (n or {}).get("launches"),
            "time_base_s": bt, "time_new_s": nt,
            "time_delta_s": (nt or 0.0) - (bt or 0.0),
            "time_delta_rel": ((nt - bt) / bt) if status == "both" and bt else None,
            "share_base": (b or {}).get("share"), "share_new": (n or {}).get("share"),
            "intensity_base": (b or {}).get("intensity"), "intensity_new": (n or {}).get("intensity"),
            "bound_base": (b or {}).get("bound"), "bound_new": (n or {}).get("bound"),
            "roof_fraction_base": (b or {}).get("roof_fraction"), "roof_fraction_new": (n or {}).get("roof_fraction"),
            "regression": False,
        }
        if status == "both" and _grew(bt, nt, th["kernel_time_rel"], th["kernel_time_abs_s"]):
            row["regression"] = True
            rel = f"+{row['time_delta_rel']:.0%}, " if row["time_delta_rel"] is not None else "from none, "
            cmp.regressions.append(f"kernel {_kernel_label(row)}: GPU time {_us(bt)} -> {_us(nt)} "
                                   f"({rel}+{_us(nt - bt)})")
        rows.append(row)
    rows.sort(key=lambda r: (-abs(r["time_delta_s"]), r["kernel"], str(r["grid"]), str(r["block"])))
    cmp.kernels = rows
    cmp.totals = {"time_base_s": tb, "time_new_s": tn, "regression": False,
                  "kernels_base": len(gb), "kernels_new": len(gn),
                  "appeared": sum(r["status"] == "appeared" for r in rows),
                  "vanished": sum(r["status"] == "vanished" for r in rows),
                  "matched_by_identity": sum(r["matched_by"] is not None for r in rows)}
    if tb is not None and tn is not None and _grew(tb, tn, th["total_time_rel"], th["total_time_abs_s"]):
        cmp.totals["regression"] = True
        cmp.regressions.append(f"total GPU time {_us(tb)} -> {_us(tn)} "
                               f"({f'+{(tn - tb) / tb:.0%}' if tb > 0 else 'from none'})")  # (a base of 0 s grows by no %)
    cmp.headline = _headline(gb, tb, gn, tn)


def _headline(gb, tb, gn, tn) -> list[dict[str, Any]]:
    """Share of GPU time per bound, before and after (bounds are open strings)."""
    def by_bound(groups, total):
        out: dict[str, float] = {}
        for g in groups.values():
            for bound, t in (g.get("bound_time_s") or {g["bound"]: g["time_s"]}).items():
                out[bound] = out.get(bound, 0.0) + t
        return {k: (v, v / total if total else None) for k, v in out.items()}

    b, n = by_bound(gb, tb), by_bound(gn, tn)
    order = list(VIEW_BOUNDS)
    bounds = [x for x in order if x in b or x in n] + sorted((set(b) | set(n)) - set(order))
    return [{"bound": x, "time_base_s": b.get(x, (None, None))[0], "share_base": b.get(x, (None, None))[1],
             "time_new_s": n.get(x, (None, None))[0], "share_new": n.get(x, (None, None))[1]} for x in bounds]


def _kernel_label(row) -> str:
    shape = f" grid {row['grid']} block {row['block']}" if row.get("grid") or row.get("block") else ""
    if row.get("matched_by"):
        shape = f" ({row['matched_by']} changed: {len(row['shapes_base'])} -> {len(row['shapes_new'])} groups)"
    return f"{row['kernel']}{shape}"


def _shape_text(key: tuple) -> dict[str, Any]:
    """A group key as {kernel, grid, block} (what identity-matched rows list)."""
    return {"kernel": key[0], "grid": key[1], "block": key[2]}


def _us(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if abs(seconds) >= 1.0:
        return f"{seconds:.3g} s"
    if abs(seconds) >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} us"


# ------------------------------------------------------------------------------------------
# telemetry
# ------------------------------------------------------------------------------------------
WASTE_KEYS = ("span_h", "wasted_gpu_h", "busy_tensor_idle_h", "allocated_idle_h", "wasted_share")


def _coverage(windows: list[dict], keys: tuple[str, ...]) -> dict[tuple, float | None]:
    """Per group: seconds covered / seconds of its windows."""
    acc: dict[tuple, list[float]] = {}
    for w in windows:
        try:
            length = (_dt.datetime.fromisoformat(w["window_end"]) - _dt.datetime.fromisoformat(w["window_start"])).total_seconds()
        except (KeyError, TypeError, ValueError):
            continue
        a = acc.setdefault(tuple(w.get(k) for k in keys), [0.0, 0.0])
        a[0] += _num(w.get("span_s")) or 0.0
        a[1] += max(length, 0.0)
    return {k: (v[0] / v[1] if v[1] > 0 else None) for k, v in acc.items()}


def _fleet_rows(section: dict, which: str) -> dict[tuple, dict]:
    keys = ("host", "gpu", "gpu_instance") if which == "by_gpu" else ("host",)
    rows = ((section.get("fleet") or {}).get(which)) or []
    return {tuple(r.get(k) for k in keys): r for r in rows}


def _models(windows: list[dict], keys: tuple[str, ...]) -> dict[tuple, str]:
    """Per group: the GPU model its windows name most (ties: the first in name order)."""
    count: dict[tuple, dict[str, int]] = {}
    for w in windows:
        if w.get("model"):
            c = count.setdefault(tuple(w.get(k) for k in keys), {})
            c[str(w["model"])] = c.get(str(w["model"]), 0) + 1
    return {k: max(sorted(c), key=lambda m: c[m]) for k, c in count.items()}


def _pair_rows(b_rows: dict, n_rows: dict, b_cov: dict, n_cov: dict, keys: tuple[str, ...],
               b_model: dict | None = None, n_model: dict | None = None) -> list[dict]:
    """Rows of both runs by key. A row only the base has is ``missing`` (its waste is not compared:
    a host that sent nothing tonight neither improved nor regressed), one only the new run has is
    ``appeared``; ``wasted_delta_h`` is None for both."""
    out = []
    for key in list(b_rows) + [k for k in n_rows if k not in b_rows]:
        b, n = b_rows.get(key), n_rows.get(key)
        row: dict[str, Any] = dict(zip(keys, key))
        row["status"] = "missing" if n is None else "appeared" if b is None else "both"
        for k in WASTE_KEYS:
            row[f"{k}_base"] = _num((b or {}).get(k))
            row[f"{k}_new"] = _num((n or {}).get(k))
        row["coverage_base"] = b_cov.get(key)
        row["coverage_new"] = n_cov.get(key)
        if b_model is not None and n_model is not None:
            row["model_base"], row["model_new"] = b_model.get(key), n_model.get(key)
        row["wasted_delta_h"] = (row["wasted_gpu_h_new"] or 0.0) - (row["wasted_gpu_h_base"] or 0.0) \
            if row["status"] == "both" else None
        row["regression"] = False
        out.append(row)
    order = {"both": 0, "missing": 1, "appeared": 2}
    out.sort(key=lambda r: (order[r["status"]], -(r["wasted_delta_h"] or 0.0), *(str(r[k]) for k in keys)))
    return out


def _totals(rows: dict) -> dict[str, float | None]:
    span = sum(_num(r.get("span_h")) or 0.0 for r in rows.values())
    out = {k: sum(_num(r.get(k)) or 0.0 for r in rows.values()) for k in WASTE_KEYS if k != "wasted_share"}
    out["wasted_share"] = out["wasted_gpu_h"] / span if span > 0 else None
    out["gpus"] = sum(int(r.get("gpus") or 0) for r in rows.values())
    return out


def _who(row: dict) -> str:
    parts = [str(row.get("host"))]
    if row.get("gpu") is not None:
        parts.append(f"gpu {row['gpu']}")
    if row.get("gpu_instance") is not None:
        parts.append(f"instance {row['gpu_instance']}")
    return " ".join(parts)


def model_notices(changes: list[tuple[str, str, str]], *, most: int = 4) -> list[str]:
    """``(subject, model before, model now)`` as one line per change of model, naming at most
    ``most`` subjects (a fleet refreshed to a new GPU is one line, not one per GPU)."""
    by: dict[tuple[str, str], list[str]] = {}
    for who, old, new in changes:
        by.setdefault((old, new), []).append(who)
    out = []
    for (old, new), subjects in by.items():
        named = ", ".join(subjects[:most]) + (f" and {len(subjects) - most} more" if len(subjects) > most else "")
        out.append(f"GPU model changed on {len(subjects)} GPU(s) ({named}): {old} -> {new}")
    return out


def _compare_telemetry(cmp: Comparison, base: dict, new: dict, th: dict) -> None:
    """Per GPU and host; the fleet totals over the hosts both runs have (a missing host is named,
    not counted: its absence would move the totals without any GPU changing)."""
    gpu_keys = ("host", "gpu", "gpu_instance")
    bw, nw = base.get("windows") or [], new.get("windows") or []
    cmp.gpus = _pair_rows(_fleet_rows(base, "by_gpu"), _fleet_rows(new, "by_gpu"), _coverage(bw, gpu_keys),
                          _coverage(nw, gpu_keys), gpu_keys, _models(bw, gpu_keys), _models(nw, gpu_keys))
    cmp.notices += model_notices([(_who(r), r["model_base"], r["model_new"]) for r in cmp.gpus
                                  if r["status"] == "both" and r.get("model_base") and r.get("model_new")
                                  and r["model_base"] != r["model_new"]])
    bh, nh = _fleet_rows(base, "by_host"), _fleet_rows(new, "by_host")
    cmp.hosts = _pair_rows(bh, nh, _coverage(bw, ("host",)), _coverage(nw, ("host",)), ("host",))
    for row in cmp.hosts:
        sb, sn = row["wasted_share_base"], row["wasted_share_new"]
        if row["status"] == "both" and sb is not None and sn is not None and sn - sb > th["host_waste_share"]:
            row["regression"] = True
            cmp.regressions.append(f"host {row['host']}: wasted share {sb:.0%} -> {sn:.0%} of its GPU-hours "
                                   f"(+{(sn - sb) * 100:.0f} points > {th['host_waste_share'] * 100:g})")
    common = [k for k in bh if k in nh]
    missing = [k[0] for k in bh if k not in nh]
    appeared = [k[0] for k in nh if k not in bh]
    if missing:
        cmp.notices.append(f"{len(missing)} host(s) missing from {cmp.new}: {', '.join(map(str, missing))} "
                           "(not compared; the totals cover the hosts both runs have)")
    if appeared:
        cmp.notices.append(f"{len(appeared)} host(s) new in {cmp.new}: {', '.join(map(str, appeared))} "
                           "(not compared; the totals cover the hosts both runs have)")
    tb, tn = _totals({k: bh[k] for k in common}), _totals({k: nh[k] for k in common})
    hosts_b = {k[0] for k in common}
    cov_b = _coverage([w for w in bw if w.get("host") in hosts_b], ()).get((), None)
    cov_n = _coverage([w for w in nw if w.get("host") in hosts_b], ()).get((), None)
    fleet = {f"{k}_base": v for k, v in tb.items()} | {f"{k}_new": v for k, v in tn.items()}
    fleet |= {"coverage_base": cov_b, "coverage_new": cov_n, "regression": False, "hosts_compared": len(common),
              "hosts_missing": missing, "hosts_appeared": appeared}
    sb, sn = tb["wasted_share"], tn["wasted_share"]
    if sb is not None and sn is not None and sn - sb > th["fleet_waste_share"]:
        fleet["regression"] = True
        scope = f" ({len(common)} hosts in both)" if missing or appeared else ""
        cmp.regressions.append(f"fleet{scope}: wasted {tb['wasted_gpu_h']:.1f} -> {tn['wasted_gpu_h']:.1f} GPU-h, "
                               f"{sb:.0%} -> {sn:.0%} of observed GPU-hours (+{(sn - sb) * 100:.0f} points > "
                               f"{th['fleet_waste_share'] * 100:g})")
    cmp.fleet = fleet


# ------------------------------------------------------------------------------------------
# findings
# ------------------------------------------------------------------------------------------
def _compare_findings(cmp: Comparison, base: list[dict], new: list[dict], th: dict) -> None:
    def index(findings):
        out: dict[tuple, dict] = {}
        for f in findings:
            out.setdefault((f.get("code"), f.get("subject")), f)
        return out

    ib, inn = index(base), index(new)
    limit = SEVERITY_RANK[th["new_finding_severity"]]

    def brief(f, **extra):
        return {"code": f.get("code"), "name": f.get("name"), "subject": f.get("subject"),
                "severity": f.get("severity"), "message": f.get("message"), **extra}

    added, resolved, changed = [], [], []
    for key, f in inn.items():
        if key not in ib:
            reg = SEVERITY_RANK.get(f.get("severity"), -1) >= limit
            added.append(brief(f, regression=reg))
            if reg:
                cmp.regressions.append(f"new {f.get('severity')} finding {f.get('code')} on {f.get('subject')}")
        else:
            old = ib[key]
            if old.get("severity") != f.get("severity"):
                rb, rn = SEVERITY_RANK.get(old.get("severity"), -1), SEVERITY_RANK.get(f.get("severity"), -1)
                reg = rn > rb and rn >= limit
                changed.append(brief(f, severity_base=old.get("severity"), regression=reg))
                if reg:
                    cmp.regressions.append(f"finding {f.get('code')} on {f.get('subject')}: severity "
                                           f"{old.get('severity')} -> {f.get('severity')}")
    for key, f in ib.items():
        if key not in inn:
            resolved.append(brief(f, regression=False))
    cmp.findings = {"new": added, "resolved": resolved, "changed": changed}


def _set_aside_missing_hosts(cmp: Comparison) -> None:
    """A finding on a host missing from the new run was not resolved: nothing was heard from the
    host. Such findings move from ``resolved`` to ``missing`` (subjects ``host:NAME ...``)."""
    hosts = set(map(str, (cmp.fleet or {}).get("hosts_missing") or []))
    if not hosts or not cmp.findings:
        return

    def on_missing(f: dict) -> bool:
        subject = str(f.get("subject") or "")
        return subject.startswith("host:") and subject[5:].split(" ", 1)[0] in hosts

    resolved = cmp.findings.get("resolved", [])
    cmp.findings["missing"] = [f for f in resolved if on_missing(f)]
    cmp.findings["resolved"] = [f for f in resolved if not on_missing(f)]
