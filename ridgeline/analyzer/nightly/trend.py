"""How tonight compares with the last weeks: ``ridgeline diff NIGHT... TONIGHT`` (or a folder).

:func:`trend` takes several baseline documents and tonight's (``analyze`` or ``telemetry --format
json`` output, all of one kind and schema major version) and returns a :class:`Trend`: per figure
and subject, the band the baselines draw and where tonight falls. Two documents are compared
pairwise (:func:`ridgeline.analyzer.nightly.diff.compare`), as before.

Figures
-------
* **telemetry**: the *wasted share* (wasted GPU-hours / observed GPU-hours) of the fleet, of each
  group of the document's ``groups`` list when it has one (``wasted_gpu_hours / gpu_hours`` per
  ``key``), of each host and of each GPU (host, GPU, MIG instance); and the *work measures*
  (:data:`WORK`): tensor active and DRAM active, per group (its ``tensor_active`` /
  ``dram_active``) and per fleet, host and GPU (the windows' means weighted by GPU time, excluded
  windows left out). The fleet figures of a night count only the hosts present tonight, so a host
  that sent nothing moves no band. More waste is the regression of a wasted share; less work
  (tensor activity 0.55 -> 0.30 on a training pod) is the regression of a work measure.
* **analyze**: the run's total GPU time and each kernel's GPU time, a kernel being its identity
  (:func:`ridgeline.names.join_key`: function and normalised template arguments; its launch
  shapes summed), so a batch change that moves grids does not break the series.

The band
--------
For each figure the baselines where the subject exists give ``n`` values; their median ``m`` and
their median absolute deviation ``MAD``, scaled by 1.4826 so that it estimates a standard
deviation for normal noise (``sigma``). The band is ``m +/- max(k * sigma, floor)``:

* ``k`` is ``trend_k`` (default 3) in ``[tool.ridgeline.diff]``;
* ``floor`` is ``work_activity_drop`` (0.05) for a work measure, else the pairwise threshold for
  the same figure (``fleet_waste_share`` for the fleet,
  ``host_waste_share`` for groups, hosts and GPUs, ``kernel_time_rel`` x m and at least
  ``kernel_time_abs_s`` for kernels, ``total_time_*`` for the total), so quiet baselines (MAD 0:
  the same value every night) do not turn every wiggle into a regression.

A finding tonight whose (code, subject) none of the nights had is listed, and is a regression at
or above ``new_finding_severity``, as in the pairwise diff.

Tonight above the band (more waste, more time) or below it for a work measure (less tensor or
DRAM activity) is a **regression** (exit 1, naming the subject and figure); the other side is
**better**; inside is **within**. A subject with fewer than
``trend_min_baselines`` values (default 3) gets no band ("too few nights", shown, not judged);
when the run has fewer baselines than that in all, the CLI compares tonight pairwise with the
latest baseline and says so. A subject the baselines have and tonight lacks is **missing** (named,
never a regression nor an improvement); one only tonight has is **new**. A GPU whose model tonight
differs from its baselines' is named, and its band uses only the nights on tonight's model.
Only the ``trend_window`` (default 14) latest baselines count.

Order of the baselines: by the document's time (the first telemetry window's start) when every
document has one, else as given (a folder's documents in file-name order, which is date order for
``nights/2026-01-05.json``). The order decides which baselines the window keeps and how the
history is listed; the band itself does not depend on it.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import statistics
from typing import Any, Mapping

from ridgeline.analyzer.nightly.diff import (_major, _num, _who, document_kind, gpu_name, kernel_groups, model_notices,
                                     thresholds)
from ridgeline.analyzer.robust import MAD_TO_SIGMA  # MAD x 1.4826 = a normal distribution's standard deviation
from ridgeline.errors import InputError


@dataclasses.dataclass
class Night:
    label: str
    doc: dict
    time: str | None = None  # ISO time of the document's first window, when it has one


@dataclasses.dataclass
class Trend:
    kind: str
    tonight: str
    baselines: list[dict[str, Any]]  # label, time (oldest first)
    order: str  # how the baselines were ordered
    thresholds: dict[str, Any]
    rows: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    findings: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # new tonight: in none of the nights
    regressions: list[str] = dataclasses.field(default_factory=list)
    notices: list[str] = dataclasses.field(default_factory=list)
    left_out: list[dict[str, str]] = dataclasses.field(default_factory=list)  # past nights not valid: label, reason

    @property
    def regressed(self) -> bool:
        return bool(self.regressions)

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["mode"] = "trend"
        out["regressed"] = self.regressed
        return out


# ------------------------------------------------------------------------------------------
# documents
# ------------------------------------------------------------------------------------------
def document_time(doc: dict) -> str | None:
    """The earliest ``window_start`` of a telemetry document (ISO 8601), None without one."""
    best = None
    for w in ((doc.get("telemetry") or {}).get("windows") or []):
        t = w.get("window_start")
        if not isinstance(t, str):
            continue
        try:
            parsed = _dt.datetime.fromisoformat(t)
        except ValueError:
            continue
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=_dt.timezone.utc)
        if best is None or parsed < best:
            best = parsed
    return best.isoformat() if best is not None else None


def order_nights(nights: list[Night]) -> str:
    """Sort ``nights`` in place, oldest first; returns how ("document time" or "as given")."""
    for n in nights:
        n.time = document_time(n.doc)
    if nights and all(n.time for n in nights):
        nights.sort(key=lambda n: (_dt.datetime.fromisoformat(n.time), n.label))
        return "document time"
    return "as given"


def _later(a: str, b: str) -> bool:
    return _dt.datetime.fromisoformat(a) > _dt.datetime.fromisoformat(b)


def _check_same_kind(nights: list[Night], tonight: Night) -> str:
    kind = document_kind(tonight.doc, tonight.label)
    major = _major(tonight.doc.get("schema_version"), tonight.label)
    for n in nights:
        k = document_kind(n.doc, n.label)
        if k != kind:
            raise InputError(n.label, f"expected the same kind of document as {tonight.label} ({kind}), got {k}")
        if _major(n.doc.get("schema_version"), n.label) != major:
            raise InputError(n.label, f"expected schema version {major}.x like {tonight.label}, documents of different "
                             "major versions cannot be compared", actual=n.doc.get("schema_version"))
    return kind


# ------------------------------------------------------------------------------------------
# figures: subject -> value per document
# ------------------------------------------------------------------------------------------
def _share(wasted, span) -> float | None:
    w, s = _num(wasted), _num(span)
    return w / s if w is not None and s else None


def _group_key(key: Any) -> str:
    if isinstance(key, dict):
        return ", ".join(f"{k}={v}" for k, v in key.items())
    if isinstance(key, (list, tuple)):
        return ", ".join(map(str, key))
    return str(key)


def _groups(doc: dict) -> list[dict]:
    tel = doc.get("telemetry") or {}
    groups = tel.get("groups") if isinstance(tel.get("groups"), list) else doc.get("groups")
    return [g for g in groups or [] if isinstance(g, dict) and "key" in g]


def _models(doc: dict) -> dict[tuple, str]:
    from ridgeline.analyzer.nightly.diff import _models as models

    return models((doc.get("telemetry") or {}).get("windows") or [], ("host", "gpu", "gpu_instance"))


# the work measures banded beside waste: window column -> figure name (a drop is the regression)
WORK = {"tensor_active_mean_ratio": "tensor active", "dram_active_mean_ratio": "DRAM active"}
WASTE = "wasted share"


def _work_means(windows: list, hosts: set | None) -> dict[tuple, float | None]:
    """(scope, subject, figure) -> the GPU-time-weighted mean of each :data:`WORK` column over the
    windows that have it and are not excluded: per GPU, per host and for the fleet (over ``hosts``)."""
    sums: dict[tuple, list[float]] = {}
    for w in windows:
        span = _num(w.get("span_s")) if isinstance(w, dict) else None
        if not span or w.get("excluded") is not None:
            continue
        host = str(w.get("host"))
        gpu = _who(w)
        for col, figure in WORK.items():
            v = _num(w.get(col))
            if v is None:
                continue
            subjects = [("gpu", gpu, figure), ("host", host, figure)]
            if hosts is None or host in hosts:
                subjects.append(("fleet", "fleet", figure))
            for key in subjects:
                acc = sums.setdefault(key, [0.0, 0.0])
                acc[0] += v * span
                acc[1] += span
    return {k: (n / d if d > 0 else None) for k, (n, d) in sums.items()}


def telemetry_figures(doc: dict, hosts_tonight: set | None) -> dict[tuple, float | None]:
    """(scope, subject, figure) -> value: the wasted share, and the work measures (:data:`WORK`) of
    the fleet over ``hosts_tonight`` (all when None), each group, host and GPU."""
    tel = doc.get("telemetry") or {}
    fleet = tel.get("fleet") or {}
    out: dict[tuple, float | None] = {}
    wasted = span = 0.0
    for h in fleet.get("by_host") or []:
        out[("host", str(h.get("host")), WASTE)] = _share(h.get("wasted_gpu_h"), h.get("span_h"))
        if hosts_tonight is None or str(h.get("host")) in hosts_tonight:
            wasted += _num(h.get("wasted_gpu_h")) or 0.0
            span += _num(h.get("span_h")) or 0.0
    out[("fleet", "fleet", WASTE)] = wasted / span if span > 0 else None
    for g in _groups(doc):
        key = _group_key(g["key"])
        out[("group", key, WASTE)] = _share(g.get("wasted_gpu_hours"), g.get("gpu_hours"))
        for field, figure in (("tensor_active", WORK["tensor_active_mean_ratio"]),
                              ("dram_active", WORK["dram_active_mean_ratio"])):
            if _num(g.get(field)) is not None:
                out[("group", key, figure)] = _num(g.get(field))
    for r in fleet.get("by_gpu") or []:
        out[("gpu", _who(r), WASTE)] = _share(r.get("wasted_gpu_h"), r.get("span_h"))
    out.update(_work_means(tel.get("windows") or [], hosts_tonight))
    return out


def kernel_figures(doc: dict) -> dict[tuple, float | None]:
    """(scope, subject, figure) -> GPU time (s): the total and each kernel identity (launch shapes summed)."""
    from ridgeline import names

    groups, total = kernel_groups(doc)
    out: dict[tuple, float | None] = {("total", "total GPU time", "GPU time"): total}
    for key, g in groups.items():
        fn, args = names.join_key(str(g.get("kernel_name") or key[0]))
        label = key[0] if args is None or args == "" else f"{key[0]}<{args}>"
        subject = ("kernel", label, "GPU time")
        out[subject] = (out.get(subject) or 0.0) + (g.get("time_s") or 0.0)
    return out


FIGURE = {"fleet": "wasted share", "group": "wasted share", "host": "wasted share", "gpu": "wasted share",
          "total": "GPU time", "kernel": "GPU time"}
SCOPE_ORDER = {"fleet": 0, "total": 0, "group": 1, "host": 2, "kernel": 2, "gpu": 3}


def _floor(scope: str, median: float, th: dict, figure: str | None = None) -> float:
    if figure in WORK.values():
        return th["work_activity_drop"]
    if scope == "fleet":
        return th["fleet_waste_share"]
    if scope in ("group", "host", "gpu"):
        return th["host_waste_share"]
    if scope == "total":
        return max(th["total_time_rel"] * abs(median), th["total_time_abs_s"])
    return max(th["kernel_time_rel"] * abs(median), th["kernel_time_abs_s"])


def band(values: list[float], k: float, floor: float) -> dict[str, float]:
    """Median, sigma (1.4826 x MAD) and the band ``median +/- max(k * sigma, floor)``."""
    m = statistics.median(values)
    mad = statistics.median(abs(v - m) for v in values)
    sigma = MAD_TO_SIGMA * mad
    half = max(k * sigma, floor)
    return {"median": m, "mad": mad, "sigma": sigma, "half_width": half, "low": m - half, "high": m + half}


# ------------------------------------------------------------------------------------------
# the trend
# ------------------------------------------------------------------------------------------
def trend(baselines: list[Night], tonight: Night, *, overrides: Mapping[str, Any] | None = None,
          order: str | None = None) -> Trend:
    """Tonight against the band of ``baselines``; see the module docstring."""
    th = thresholds(overrides)
    kind = _check_same_kind(baselines, tonight)
    if order is None:
        order = order_nights(baselines)
    tonight.time = tonight.time or document_time(tonight.doc)
    window = max(1, int(th["trend_window"]))
    dropped = len(baselines) - window
    nights = baselines[-window:]
    out = Trend(kind=kind, tonight=tonight.label, order=order, thresholds=th,
                baselines=[{"label": n.label, "time": n.time} for n in nights])
    if dropped > 0:
        out.notices.append(f"{dropped} older baseline(s) outside trend_window = {window} not used")
    if tonight.time and any(n.time and _later(n.time, tonight.time) for n in nights):
        later = [n.label for n in nights if n.time and _later(n.time, tonight.time)]
        out.notices.append(f"{len(later)} baseline(s) start after tonight ({', '.join(later[:3])}"
                           f"{', ...' if len(later) > 3 else ''}): is {tonight.label} the latest document?")
    if kind == "telemetry":
        hosts = {str(h.get("host")) for h in (((tonight.doc.get("telemetry") or {}).get("fleet") or {}).get("by_host") or [])}
        figs = [telemetry_figures(n.doc, hosts) for n in nights]
        now = telemetry_figures(tonight.doc, None)
        models = [_models(n.doc) for n in nights]
        models_now = _models(tonight.doc)
    else:
        figs = [kernel_figures(n.doc) for n in nights]
        now = kernel_figures(tonight.doc)
        models, models_now = [{} for _ in nights], {}
        names = {gpu_name(n.doc) for n in nights} - {None}
        gpu_now = gpu_name(tonight.doc)
        if gpu_now and names - {gpu_now}:
            out.notices.append(f"GPU model: tonight {gpu_now}, baselines {', '.join(sorted(names))} "
                               "(kernel times compare different GPUs)")
    gpu_keys = {_who(dict(zip(("host", "gpu", "gpu_instance"), key))): key for key in models_now}
    changes: list[tuple[str, str, str]] = []
    k, need = th["trend_k"], max(1, int(th["trend_min_baselines"]))
    subjects = list(now) + [s for f in figs for s in f if s not in now]
    seen: set = set()
    for subject in subjects:
        if subject in seen:
            continue
        seen.add(subject)
        scope, name, figure = subject
        lower_is_worse = figure in WORK.values()
        values = []
        model_now, gkey = None, None
        if scope == "gpu":
            gkey = gpu_keys.get(name)
            model_now = models_now.get(gkey) if gkey is not None else None
        other_models = set()
        for i, (n, f) in enumerate(zip(nights, figs)):
            v = f.get(subject)
            if v is None:
                continue
            if model_now is not None:
                m = models[i].get(gkey)
                if m is not None and m != model_now:
                    other_models.add(m)
                    continue
            values.append(v)
        row: dict[str, Any] = {"scope": scope, "subject": name, "figure": figure, "nights": len(values),
                               "values": values, "tonight": now.get(subject), "median": None, "sigma": None,
                               "low": None, "high": None, "status": None, "regression": False}
        if other_models:
            row["model"] = model_now
            row["models_before"] = sorted(other_models)
            if figure == WASTE:  # one change per GPU, whichever figures it has
                changes.append((name, ", ".join(sorted(other_models)), model_now))
        present_any = any(subject in f for f in figs)
        if len(values) >= need:
            b = band(values, k, _floor(scope, statistics.median(values), th, figure))
            row.update(median=b["median"], sigma=b["sigma"], low=b["low"], high=b["high"])
        if subject not in now:
            row["status"] = "missing"
        elif now[subject] is None:
            row["status"] = "no data"
        elif not present_any:
            row["status"] = "new"
        elif len(values) < need:
            row["status"] = "too few nights"
        else:
            t = row["tonight"]
            worse, better = (t < row["low"], t > row["high"]) if lower_is_worse else (t > row["high"], t < row["low"])
            row["status"] = "regression" if worse else "better" if better else "within"
            row["regression"] = row["status"] == "regression"
        out.rows.append(row)
    rank = {"regression": 0, "missing": 1, "better": 2, "new": 3, "too few nights": 4, "no data": 5, "within": 6}
    out.rows.sort(key=lambda r: (SCOPE_ORDER[r["scope"]], rank[r["status"]],
                                 -abs((r["tonight"] or 0.0) - (r["median"] or 0.0)), r["subject"], r["figure"]))
    out.notices += [f"{line} (their bands use only the nights on the new model)" for line in model_notices(changes)]
    out.regressions = [_message(r, k) for r in out.rows if r["regression"]]
    _new_findings(out, nights, tonight, th)
    missing = [r["subject"] for r in out.rows if r["status"] == "missing" and r["scope"] == "host" and r["figure"] == WASTE]
    if missing:
        out.notices.append(f"{len(missing)} host(s) missing tonight: {', '.join(missing)} (not judged; the fleet "
                           "figure of every night counts only the hosts present tonight)")
    return out


def fmt_value(scope: str, v: float | None, figure: str | None = None) -> str:
    """A figure's value as shown: a share in percent, a work measure as a 0..1 ratio, a time."""
    if v is None:
        return "-"
    figure = figure or FIGURE[scope]
    if figure == WASTE:
        return f"{v * 100:.0f}%"
    if figure in WORK.values():
        return f"{v:.2f}"
    from ridgeline.analyzer.nightly.diff import _us

    return _us(v)


def _message(row: dict, k: float) -> str:
    scope, figure = row["scope"], row["figure"]
    who = "fleet" if scope == "fleet" else f"{scope} {row['subject']}" if scope != "total" else "total GPU time"
    shown = "" if scope == "total" else f" {figure}"
    side = "below" if figure in WORK.values() else "above"
    return (f"{who}:{shown} {fmt_value(scope, row['tonight'], figure)} tonight, {side} the band "
            f"{fmt_value(scope, max(row['low'], 0.0), figure)}-{fmt_value(scope, row['high'], figure)} "
            f"(median {fmt_value(scope, row['median'], figure)} of {row['nights']} nights, k={k:g})")


def _new_findings(out: Trend, nights: list[Night], tonight: Night, th: dict) -> None:
    """Findings tonight whose (code, subject) none of the nights had; at or above
    ``new_finding_severity`` they are regressions, as in the pairwise diff."""
    from ridgeline.analyzer.nightly.diff import SEVERITY_RANK

    def keys(doc):
        return {(f.get("code"), str(f.get("subject"))) for f in doc.get("findings") or [] if isinstance(f, dict)}

    seen = set().union(*(keys(n.doc) for n in nights)) if nights else set()
    limit = SEVERITY_RANK[th["new_finding_severity"]]
    done = set()
    for f in tonight.doc.get("findings") or []:
        if not isinstance(f, dict):
            continue
        key = (f.get("code"), str(f.get("subject")))
        if key in seen or key in done:
            continue
        done.add(key)
        reg = SEVERITY_RANK.get(f.get("severity"), -1) >= limit
        out.findings.append({"code": f.get("code"), "subject": f.get("subject"), "severity": f.get("severity"),
                             "message": f.get("message"), "regression": reg})
        if reg:
            out.regressions.append(f"new {f.get('severity')} finding {f.get('code')} on {f.get('subject')} "
                                   f"(in none of the {len(nights)} nights)")
