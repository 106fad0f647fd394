"""RL904 clocks-below-boost."""

from __future__ import annotations

from ridgeline.rules import kernels as K
from ridgeline.rules.base import Context, Evidence, Finding, Rule


class ClocksBelowBoost(Rule):
    """Peaks ncu recorded are well below the datasheet: the profile ran at locked or throttled clocks.

    What it finds
    -------------
    For each GPU and precision whose compute roof came from ncu (``peak_flops_source`` =
    ``ncu``), the median recorded peak compared with the catalogue's datasheet peak for the
    same precision (launches on Hopper's legacy mma.sync tensor path, whose peak is lower by
    design, are left out). When the ratio is below ``max_peak_ratio`` it reports the clock the
    profiler saw (``sm_clock_hz``, median) next to the ratio.

    Why it matters
    --------------
    ncu locks clocks to base by default (``--clock-control base``): durations are longer than
    in production and the recorded peaks are base-clock peaks (a B200 ran at 1.15 GHz under
    ``base`` vs about 1.9 GHz with ``--clock-control none``). Fractions of roof stay
    consistent within the profile, but absolute times and FLOP/s do not carry over to
    production runs. The same signature appears with power or thermal throttling.

    What to do
    ----------
    Compare kernels within this profile, not against production timings; to see production
    clocks, re-profile with ``ncu --clock-control none`` (and check power/thermal headroom in
    telemetry).

    Example
    -------
    An H100 SXM profiled with default clock control: ``ncu-recorded bf16/fp16 peak 700 TFLOP/s
    = 71% of the datasheet 989 TFLOP/s on H100 SXM (< 85%) at SM clock 1.2 GHz: clocks were
    locked or throttled``.
    """

    code = "RL904"
    name = "clocks-below-boost"
    severity = "info"
    family = "data"
    thresholds = {
        "max_peak_ratio": (0.85, "fires when the ncu-recorded peak is below this fraction of the datasheet peak"),
    }

    def check(self, ctx: Context) -> list[Finding]:
        import polars as pl

        df = K.launches(ctx)
        if df is None:
            return []
        meas = (
            # the legacy mma.sync path (tensor_path hmma) has a lower peak by design, not by clock
            df.filter((pl.col("peak_flops_source") == "ncu").fill_null(False) & pl.col("gpu").is_not_null()
                      & (pl.col("tensor_path").is_null() | (pl.col("tensor_path") == "hgmma")))
            .group_by("gpu", "precision", maintain_order=True)
            .agg(
                peak=pl.col("peak_flops_per_s").median(),
                clock=pl.col("sm_clock_hz").median(),
                launches=pl.len(),
            )
            .filter(pl.col("precision").is_not_null())
        )
        out = []
        for row in meas.iter_rows(named=True):
            gpu = K.catalogue_gpu(ctx, row["gpu"])
            sheet = K.catalogue_peak_of(gpu, row["precision"])
            if not sheet or not row["peak"]:
                continue
            ratio = row["peak"] / sheet
            if ratio >= self.params["max_peak_ratio"]:
                continue
            got, limit = K.fmt_pct_vs(ratio, self.params["max_peak_ratio"])
            clock = f" at SM clock {K.fmt_si(row['clock'], 'Hz')}" if row["clock"] else ""
            out.append(
                self.finding(
                    subject=f"gpu:{row['gpu']}",
                    message=(
                        f"ncu-recorded {K.precision_label(row['precision'])} peak {K.fmt_si(row['peak'], 'FLOP/s')} = "
                        f"{got} of the datasheet {K.fmt_si(sheet, 'FLOP/s')} on {row['gpu']} "
                        f"(< {limit}){clock}: clocks were locked or throttled"
                    ),
                    remedy=(
                        "Compare kernels within this profile, not with production timings; re-profile with "
                        "ncu --clock-control none to see production clocks."
                    ),
                    evidence=(
                        Evidence(f"peak_flops_{row['precision']}", row["peak"], "FLOP/s", "ncu"),
                        Evidence(f"datasheet_peak_flops_{row['precision']}", sheet, "FLOP/s", "catalogue"),
                        Evidence("peak_ratio", ratio, "ratio", "derived"),
                        Evidence("sm_clock_hz", row["clock"], "Hz", "measured"),
                        Evidence("launches", row["launches"], "count", "measured"),
                    ),
                    impact_s=None,
                    impact_share=None,
                    confidence="measured",
                    subject_kind="gpu",
                )
            )
        return out
