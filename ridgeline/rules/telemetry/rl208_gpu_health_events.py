"""RL208 gpu-health-events."""

from __future__ import annotations

from ridgeline.rules.telemetry import common as T
from ridgeline.rules.base import Context, Evidence, Finding, Rule

# window columns summed per GPU (evidence, never critical alone)
_EVIDENCE = (
    ("ecc_sbe_increase_count", "single-bit ECC errors", "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL / _AGG_TOTAL"),
    ("remapped_rows_correctable_increase_count", "rows remapped (correctable)", "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS"),
    ("remapped_rows_uncorrectable_increase_count", "rows remapped (uncorrectable)",
     "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"),
    ("nvlink_crc_increase_count", "NVLink CRC errors", "DCGM_FI_DEV_NVLINK_CRC_FLIT/DATA_ERROR_COUNT_TOTAL"),
    ("nvlink_replay_increase_count", "NVLink replays", "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL"),
    ("pcie_replay_increase_count", "PCIe replays", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER"),
)
_HEALTH_COLUMNS = ("xid_codes", "xid_at_start_code", "ecc_dbe_increase_count", "row_remap_pending",
                   "row_remap_failure", *(c for c, _l, _s in _EVIDENCE))


def _time(t) -> str:
    from ridgeline.fmt import clock, is_relative

    return clock(t, "%Y-%m-%dT%H:%M:%SZ", seconds=True) + (" (relative time)" if is_relative(t) else "")


def _count(x: float) -> str:
    return f"{x:.0f}" if float(x).is_integer() else f"{x:g}"


class GpuHealthEvents(Rule):
    """A GPU reported a new XID, a double-bit ECC error or a pending or failed row remap.

    What it finds
    -------------
    Per GPU, over all its windows (excluded ones too: health does not depend on the profiling
    counters being sound), the health columns of the WINDOW table
    (:mod:`ridgeline.analyzer.fleet.health`):

    * critical: a new XID of the GPU, its memory, links or driver (``xid_codes``: the XID gauge
      changed to a non-zero code during the capture; 48, 63, 64, 74, 79, 92, 94, 95, ... and any
      code ridgeline's table does not know), double-bit ECC errors added
      (``ecc_dbe_increase_count`` > 0), a pending row remap (``row_remap_pending``) or a failed one
      (``row_remap_failure``); each named with the first time it was seen, and each XID with
      NVIDIA's documented meaning and action (:data:`ridgeline.analyzer.fleet.xids.XIDS`);
    * warning: no critical event, but a new application XID (13, 31, 43, 45, 68, 69: the
      application faulted, the GPU is fine), or the XID gauge already held a code at the GPU's
      first sample (``xid_at_start_code``; it may predate the capture). The gauge holds the last
      code seen: a repeat of the same XID changes nothing and cannot be seen;
    * info: none of the above, but single-bit ECC errors, remapped rows, NVLink CRC errors or
      replays, or PCIe replays were added during the capture.

    The counts added (and counter resets) are listed in every finding of the GPU as evidence.
    A GPU whose input carries no health series gets no finding: ridgeline says nothing about its
    health (it never calls a GPU healthy).

    Why it matters
    --------------
    An XID is the driver reporting a GPU fault; 48 (double-bit ECC), 79 (fallen off the bus), 94/95
    (contained/uncontained ECC) and 63/64 (row remap) mean the card, not the job, is the problem.
    A double-bit ECC error corrupted data the job read; a pending row remap takes effect only
    after a GPU reset, and until then the bad row is still in use. A synchronous job scheduled on
    such a GPU fails or hangs, and is rescheduled onto it again unless someone drains it.

    What to do
    ----------
    Drain the GPU's node (cordon in Kubernetes, ``scontrol update nodename=... state=drain`` in
    Slurm), reset the GPU (``nvidia-smi -r`` or a reboot, which applies a pending row remap),
    run ``dcgmi diag -r 3``, and send the card for repair when the XID repeats, a remap failed or
    double-bit errors keep appearing. Rising single-bit ECC or link replay counts are worth
    watching (reseat, check cables and risers) but need no drain alone.

    Example
    -------
    ``host:hnode gpu:0``: ``XID 79 (GPU has fallen off the bus) first seen 2026-01-05T10:00:30Z;
    double-bit ECC errors +2 first seen 2026-01-05T10:00:40Z; row remap pending since
    2026-01-05T10:00:50Z; also single-bit ECC errors +2, PCIe replays +2``.
    """

    code = "RL208"
    name = "gpu-health-events"
    severity = "critical"
    severities = ("info", "warning")
    family = "telemetry"
    thresholds = {
        "min_info_count": (1, "counted errors (single-bit ECC, link replays...) added before an info finding"),
    }

    def check(self, ctx: Context) -> list[Finding]:
        import polars as pl

        from ridgeline.analyzer.fleet import xids as X
        from ridgeline.analyzer.fleet.health import xid_meaning

        w = T.windows(ctx)
        if w is None or "health_fields" not in w.columns:
            return []
        c = pl.col
        w = w.filter(c("health_fields").fill_null(0) > 0)
        if not w.height:
            return []
        cols = [x for x in _HEALTH_COLUMNS if x in w.columns]
        event = pl.any_horizontal([
            c(x).is_not_null() & (c(x) != "") if w.schema[x] == pl.String
            else c(x).fill_null(False) if w.schema[x] == pl.Boolean
            else c(x).fill_null(0) > 0
            for x in cols
        ])
        w = w.filter(event | (c("counter_resets").fill_null(0) > 0)).sort([*T.KEYS, "window_start"], nulls_last=True)
        groups: dict[tuple, list[dict]] = {}
        for r in w.iter_rows(named=True):  # windows with a health event only: few rows
            groups.setdefault(tuple(r[k] for k in T.KEYS), []).append(r)
        out = []
        for key, rows in groups.items():
            xids: dict[int, object] = {}  # code -> first time seen
            for r in rows:
                codes = [int(x) for x in (r.get("xid_codes") or "").split(",") if x]
                for i, code in enumerate(codes):
                    # the window gives the time of its first new code; later codes of the same
                    # window are dated by the window (at or after that time)
                    xids.setdefault(code, r["xid_first_seen"] if i == 0 else r["window_start"])
            at_start = next((r["xid_at_start_code"] for r in rows if r.get("xid_at_start_code")), None)
            dbe = sum(r.get("ecc_dbe_increase_count") or 0.0 for r in rows)
            dbe_t = min((r["ecc_dbe_first_seen"] for r in rows if r.get("ecc_dbe_first_seen") is not None), default=None)
            pending = any(r.get("row_remap_pending") for r in rows)
            failure = any(r.get("row_remap_failure") for r in rows)
            remap_t = min((r["row_remap_first_seen"] for r in rows if r.get("row_remap_first_seen") is not None),
                          default=None)
            resets = sum(r.get("counter_resets") or 0 for r in rows)
            counts = {col: sum(r.get(col) or 0.0 for r in rows) for col, _l, _s in _EVIDENCE}

            app = {code: t for code, t in xids.items() if X.severity(code) == "warning"}
            parts = [f"XID {code} ({xid_meaning(code)}) first seen {_time(t)}" for code, t in xids.items()
                     if code not in app]
            if dbe > 0:
                parts.append(f"double-bit ECC errors +{_count(dbe)} first seen {_time(dbe_t)}")
            if failure:
                parts.append(f"row remap failure reported {_time(remap_t)}")
            if pending:
                parts.append(f"row remap pending since {_time(remap_t)}")
            critical = bool(parts)
            # application XIDs: the application faulted, the GPU is fine (a warning, named after the rest)
            parts += [f"XID {code} ({xid_meaning(code)}) first seen {_time(t)}: an application fault, the GPU is fine"
                      for code, t in app.items()]
            if not parts and at_start:
                parts.append(f"XID {at_start} ({xid_meaning(at_start)}) already set at the first sample "
                             "(it may predate the capture)")
            added = [f"{label} +{_count(counts[col])}" for col, label, _s in _EVIDENCE if counts[col] > 0]
            if not parts and sum(counts.values()) < self.params["min_info_count"]:
                continue
            if resets:
                added.append(f"{resets} counter reset{'s' if resets != 1 else ''} (driver reload or exporter restart)")
            if parts:
                message = "; ".join(parts) + (("; also " + ", ".join(added)) if added else "")
            else:
                message = "errors counted during the capture: " + ", ".join(added)
            severity = "critical" if critical else "warning" if (app or at_start) else "info"
            subject = T.subject(dict(zip(T.KEYS, key)))
            if critical:
                actions = "; ".join(dict.fromkeys(f"XID {c}: {X.action(c)}" for c in xids if c not in app))
                remedy = (f"Drain {subject} (cordon the node), reset the GPU (applies a pending row remap), run "
                          "dcgmi diag -r 3, and send the card for repair if the XID repeats or double-bit errors recur"
                          + (f" ({actions})." if actions else "."))
            elif app:
                remedy = (f"Check the application that ran on {subject} at that time: "
                          + "; ".join(f"XID {c}: {X.action(c)}" for c in app)
                          + ". The XID gauge shows a change of code only: repeats of the same XID are not visible "
                          "in telemetry (count them with dmesg | grep -i xid).")
            elif at_start:
                remedy = ("Check the node's kernel log (dmesg | grep -i xid) for when this XID happened; if it is "
                          "recent, drain the node and run dcgmi diag -r 3.")
            else:
                remedy = ("Watch these counters: a rising rate of single-bit ECC errors or link replays precedes "
                          "failures; reseat the card or check links and run dcgmi diag -r 2 if it keeps rising.")
            out.append(self.finding(
                subject=subject,
                severity=severity,
                message=message,
                remedy=remedy,
                evidence=(
                    Evidence("xid_codes", ",".join(map(str, xids)) or None, "code", "telemetry: DCGM_FI_DEV_XID_ERRORS"),
                    Evidence("xid_at_start_code", at_start, "code", "telemetry: DCGM_FI_DEV_XID_ERRORS"),
                    Evidence("ecc_dbe_increase_count", dbe, "count", "telemetry: DCGM_FI_DEV_ECC_DBE_VOL_TOTAL / _AGG_TOTAL"),
                    Evidence("row_remap_pending", pending, "flag", "telemetry: DCGM_FI_DEV_ROW_REMAP_PENDING"),
                    Evidence("row_remap_failure", failure, "flag", "telemetry: DCGM_FI_DEV_ROW_REMAP_FAILURE"),
                    *[Evidence(col, counts[col], "count", f"telemetry: {src}") for col, _l, src in _EVIDENCE],
                    Evidence("counter_resets", resets, "count", "derived: cumulative counters that went down"),
                ),
                impact_s=None,
                confidence="measured",
                subject_kind="gpu",
            ))
        return out
