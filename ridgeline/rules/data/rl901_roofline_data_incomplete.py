"""RL901 roofline-data-incomplete."""

from __future__ import annotations

from ridgeline.rules import kernels as K
from ridgeline.rules.base import Context, Evidence, Finding, Rule

DEFAULT_HINT = "ncu --set roofline --csv --page raw --print-units base"


class RooflineDataIncomplete(Rule):
    """Roofline inputs (FLOP or byte counters, duration, roofs) missing for a significant share of GPU time.

    What it finds
    -------------
    Launches the classifier could not place on the roofline because a figure it needs (FLOP
    counters, DRAM bytes, duration, a peak) is absent from the export: the ROOFLINE table's
    ``missing`` list is not empty. It fires when those launches hold at least
    ``min_time_share`` of GPU time (of launches when durations are missing too), names every
    missing figure with the number of launches lacking it, and the ncu option that collects it.
    The finding is a warning: missing counters limit what ridgeline can say, they are no fault in
    the work, so ``--fail-on critical`` does not fail a run for them. A pipeline that must have
    complete inputs sets ``critical_time_share`` (unset by default): the finding is critical from
    that share on.

    A figure is missing only when the file holds it in no spelling (totals, rates per cycle
    beside any cycle count, ``derived__`` metrics, section labels: ``docs/ncu-spellings.md``),
    so the advice never asks for a section the file already holds. A section export placed on
    the roofline by rate still lists ``gpu__time_duration.sum``: without it the launches' share
    of GPU time and every saving are unknown. Tensor work the pipe counters show but no FLOP
    counter counted is listed as ``sm__ops_path_tensor_*.sum`` with the tensor section to collect.

    Launches whose bound ncu's own Speed-of-Light throughputs decided (``bound_source``
    ``ncu-speed-of-light``: SM against memory throughput) still lack the figures named, and the
    message says how many; only launches nothing classified count toward ``critical_time_share``.

    Why it matters
    --------------
    A missing counter is not a zero: a kernel without FLOP counters is not "0 FLOP/s", and a
    profile whose big kernels are unclassified produces findings only about the small ones. Every
    other rule silently skips these kernels, so their share of time is a blind spot.

    What to do
    ----------
    Re-profile with the counters the roofline needs: ``LC_ALL=C ncu --set roofline --csv --page
    raw --print-units base`` (the roofline set collects FLOP counters per precision, DRAM bytes
    and the peaks). Tensor-core FLOPs need the ``SpeedOfLight_HierarchicalTensorRooflineChart``
    section (in the roofline and full sets); a ``--metrics`` list must name the tensor
    ``sm__ops_path_tensor_*`` counters of your architecture as well.

    Example
    -------
    An export taken with ``--section SpeedOfLight`` only: ``roofline inputs missing for 120
    launches of 4 kernels holding 83% of GPU time (>= 5%): sm__sass_thread_inst_executed_op_*_pred_on.sum,
    dram__bytes.sum``. Roofs count as inputs too: a GPU that is neither identified from the export
    nor given with ``--gpu`` shows as ``DRAM bandwidth roof, compute roof``.
    """

    code = "RL901"
    name = "roofline-data-incomplete"
    severity = "warning"
    severities = ("critical",)  # only when critical_time_share is set
    family = "data"
    thresholds = {
        "min_time_share": (0.05, "fires when launches with missing counters hold at least this share of GPU time"),
        "critical_time_share": (None, "the finding is critical when that share reaches this value (unset: never; "
                                      "missing counters are no fault in the work)"),
    }

    def check(self, ctx: Context) -> list[Finding]:
        import polars as pl

        df = K.launches(ctx)
        if df is None or "missing" not in df.columns:
            return []
        bad = df.filter(pl.col("missing").fill_null([]).list.len() > 0)
        if bad.height == 0:
            return []
        total = K.total_gpu_time(ctx)
        bad_time = bad["duration_s"].sum() if bad["duration_s"].null_count() < bad.height else None
        if total and bad_time is not None:
            share, basis = bad_time / total, "of GPU time"
        else:
            share, basis = bad.height / df.height, "of launches"
        if share < self.params["min_time_share"]:
            return []
        per_metric = (
            bad.select("missing", "duration_s")
            .explode("missing")
            .group_by("missing")
            .agg(launches=pl.len(), duration_s=pl.col("duration_s").sum())
            .sort(["launches", "missing"], descending=[True, False])
        )
        parts = (
            bad.select(pl.col("missing_hint").drop_nulls().str.split("; ").explode().alias("hint"))
            .group_by("hint")
            .agg(n=pl.len())
            .sort(["n", "hint"], descending=[True, False])
        )
        remedy = _remedy(parts["hint"].to_list())
        names = bad.group_by("subject").agg(pl.col("duration_s").sum()).sort("duration_s", descending=True, nulls_last=True)
        metrics = per_metric["missing"].to_list()
        evidence = [
            Evidence(f"launches_missing_{m}", n, "launches", "measured: absent from the export")
            for m, n in zip(metrics, per_metric["launches"].to_list())
        ]
        evidence += [
            Evidence("launches_unclassified", bad.height, "launches", "measured"),
            Evidence("duration_s_unclassified", bad_time, "s", "measured"),
            Evidence("share_unclassified", share, "ratio", f"derived: {basis}"),
            Evidence("largest_unclassified_kernel", names["subject"][0], "name", "measured"),
        ]
        got, limit = K.fmt_pct_vs(share, self.params["min_time_share"])
        # launches the Speed-of-Light throughputs classified are not a blind spot: from here on, share
        # is that of the launches nothing classified (the severity's measure)
        undecided = bad.filter(pl.col("bound").fill_null("unknown") == "unknown")
        n_sol = bad.height - undecided.height
        if total and bad_time is not None:
            share = (undecided["duration_s"].sum() or 0.0) / total
        else:
            share = undecided.height / df.height
        critical = self.params["critical_time_share"]
        severity = "critical" if critical is not None and share >= critical else self.severity
        if n_sol:
            evidence.append(Evidence("launches_bound_by_speed_of_light", n_sol, "launches", "measured: ncu's throughputs"))
        return [
            self.finding(
                severity=severity,
                subject="profile",
                message=(
                    f"roofline inputs missing for {K.plural(bad.height, 'launch')} of "
                    f"{K.plural(names.height, 'kernel')} "
                    f"holding {got} {basis} (>= {limit}): "
                    f"{', '.join(metrics)}"
                    + (f"; {'all' if n_sol == bad.height else n_sol} of them bound by ncu's Speed-of-Light "
                       "throughputs instead (SM against memory)" if n_sol else "")
                ),
                remedy=remedy,
                evidence=tuple(evidence),
                impact_s=None,
                impact_share=None,
                confidence="measured",
                subject_kind="profile",
            )
        ]


def _remedy(hints: list[str]) -> str:
    """Profiler options become one ``ncu`` re-profile step; ridgeline options (``--gpu``) a re-run step."""
    profiler = [h for h in hints if h.startswith(("--set", "--section", "--metrics"))]
    other = [h for h in hints if h not in profiler]
    steps = []
    if profiler or not other:
        steps.append(f"Re-profile with ncu {'; '.join(profiler) if profiler else DEFAULT_HINT.removeprefix('ncu ')}")
    if other:
        steps.append(f"{'then re-run' if steps else 'Re-run'} ridgeline with {'; '.join(other)}")
    return "; ".join(steps) + "."
