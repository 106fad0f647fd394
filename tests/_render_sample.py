"""Hand-built AnalysisResult objects for the renderer tests (synthetic numbers, no parsing).

The numbers are chosen so expected values can be worked out by hand:
H100 SXM roofs: DRAM 3.35e12 B/s (ncu), L2 1.2e13 B/s (ncu), fp16_tensor 989e12 FLOP/s (ncu),
fp8_tensor 1979e12 FLOP/s (catalogue), fp32 67e12 FLOP/s (catalogue).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from ridgeline.result import AnalysisResult, InputInfo, Roof, Skipped
from ridgeline.rules.base import Evidence, Finding

DRAM_BW = 3.35e12
L2_BW = 1.2e13
PEAK_BF16 = 989e12
PEAK_FP8 = 1979e12
PEAK_FP32 = 67e12

SCRIPT_NAME = "<script>alert('x')</script>"
PIPE_NAME = "layer|norm`fused`"

ROOFS = [
    Roof("bandwidth", DRAM_BW, "ncu", level="dram"),
    Roof("bandwidth", L2_BW, "ncu", level="l2"),
    Roof("compute", PEAK_FP32, "catalogue", precision="fp32"),
    Roof("compute", PEAK_BF16, "ncu", precision="fp16_tensor"),
    Roof("compute", PEAK_FP8, "catalogue", precision="fp8_tensor"),
]

# (kernel_name, short_name, launches, seconds per launch, intensity FLOP/B, fraction of roof, precision)
KERNELS = [
    ("void gemv_bf16_kernel<128, 4>(const bf16*, bf16*)", "gemv_bf16_kernel", 4, 400e-6, 1.0, 0.80, "fp16_tensor"),
    ("flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128>>", "flash_fwd_splitkv_kernel", 2, 500e-6, 0.9, 0.55, "fp16_tensor"),
    ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64", 2, 400e-6, 600.0, 0.70, "fp16_tensor"),
    (SCRIPT_NAME, SCRIPT_NAME, 1, 200e-6, 5.0, 0.30, "fp32"),
    (PIPE_NAME, PIPE_NAME, 1, 100e-6, 2.0, 0.50, "fp32"),
    ("rotary_embedding_kernel", "rotary_embedding_kernel", 1, 100e-6, None, None, None),
]


def _peak(precision):
    return {"fp16_tensor": PEAK_BF16, "fp32": PEAK_FP32, "fp8_tensor": PEAK_FP8}.get(precision)


def kernel_rows(scale: float = 1.0):
    """Per-launch rows; ``scale`` multiplies the intensity of the GEMV (batch sweep)."""
    rows = []
    n = 0
    for name, short, launches, dur, ai, frac, prec in KERNELS:
        for _ in range(launches):
            n += 1
            row = {"id": str(n), "launch_id": n, "source": "decode.csv", "kernel_name": name,
                   "short_name": short, "duration_s": dur, "device_name": "NVIDIA H100 80GB HBM3"}
            if ai is not None:
                ai_k = ai * scale if short.startswith("gemv") else ai
                peak = _peak(prec)
                roof = min(peak, ai_k * DRAM_BW)
                achieved = frac * roof
                flops = achieved * dur
                row.update(
                    flops=flops, dram_bytes=flops / ai_k, intensity_dram=ai_k,
                    achieved_flops_per_s=achieved, peak_flops_per_s=peak,
                    peak_bw_bytes_per_s=DRAM_BW, ridge_flop_per_byte=peak / DRAM_BW,
                    roof_flops_per_s=roof, roof_fraction=frac, precision=prec,
                    bound="memory" if ai_k < peak / DRAM_BW else "compute",
                    time_to_roof_s=flops / roof, missing=[],
                )
            else:
                row.update(bound="unknown", missing=["dram__bytes.sum"], missing_hint="--section SpeedOfLight")
            rows.append(row)
    return rows


def make_result(scale: float = 1.0, *, source: str = "decode.csv", with_telemetry: bool = True):
    import polars as pl

    from ridgeline.analyzer.schema import KERNEL_COLUMNS, ROOFLINE_COLUMNS, SUMMARY_COLUMNS, polars_schema

    schema = polars_schema({**KERNEL_COLUMNS, **ROOFLINE_COLUMNS})
    rows = kernel_rows(scale)
    for r in rows:
        r["source"] = source
    from ridgeline.analyzer.kernels.families import family_columns

    kernels = family_columns(pl.DataFrame(rows, schema=schema))
    total = kernels["duration_s"].sum()
    summary = (
        kernels.group_by("kernel_name", maintain_order=True)
        .agg(
            pl.col("short_name").first(),
            pl.col("kernel_family").first(),
            pl.col("kernel_label").first(),
            pl.len().cast(pl.Int64).alias("launches"),
            pl.col("duration_s").sum().alias("total_duration_s"),
            (pl.col("duration_s").sum() / total).alias("time_share"),
            (pl.col("flops").sum() / pl.col("dram_bytes").sum()).alias("intensity_dram"),
            pl.col("precision").first(),
            pl.col("bound").first(),
            pl.col("bound_source").first(),
            pl.col("latency_kind").first(),
            pl.col("roof_fraction").mean(),
            (pl.col("duration_s") - pl.col("time_to_roof_s")).sum().alias("saving_upper_bound_s"),
        )
        .with_columns(
            pl.when(pl.col("intensity_dram").is_nan()).then(None).otherwise(pl.col("intensity_dram")).alias("intensity_dram")
        )
        .select(list(SUMMARY_COLUMNS))
        .cast(polars_schema(SUMMARY_COLUMNS))
        .sort("time_share", descending=True)
    )
    findings = [
        Finding(
            code="RL101", name="decode-gemm-memory-bound", severity="warning",
            subject="gemv_bf16_kernel",
            message="intensity 1 FLOP/B < ridge 295 FLOP/B",
            remedy="Batch more requests per decode step.",
            evidence=(Evidence("intensity_dram", 1.0, "FLOP/B", "measured: dram__bytes.sum"),
                      Evidence("ridge_flop_per_byte", 295.2, "FLOP/B", "measured")),
            impact_s=0.00032, impact_share=0.1, confidence="measured", subject_kind="kernel",
        ),
        Finding(
            code="RL102", name="kernel-far-below-roof", severity="info",
            subject=SCRIPT_NAME,
            message="30% of roof < 50%",
            remedy="Look at <memory coalescing> & occupancy.",
            evidence=(Evidence("roof_fraction", 0.3, "ratio", "derived"),),
            impact_s=0.00014, impact_share=0.04, confidence="derived", subject_kind="kernel",
        ),
    ]
    inputs = [InputInfo(source, "ncu-raw", len(rows))]
    telemetry = None
    if with_telemetry:
        telemetry = make_telemetry()
        t0 = datetime(2026, 1, 5, 10, 0, tzinfo=timezone.utc)
        findings.append(
            Finding(
                code="RL201", name="busy-but-not-tensor-active", severity="warning",
                subject=f"host:node1 gpu:1 window:{(t0 + timedelta(minutes=5)).isoformat()}/{(t0 + timedelta(minutes=10)).isoformat()}",
                message="GPU-Util 98% but tensor active 4% < 20%",
                remedy="Profile the busy window with ncu; GPU-Util only says a kernel was running.",
                evidence=(Evidence("gpu_util_ratio", 0.98, "ratio", "telemetry"),
                          Evidence("tensor_active_ratio", 0.04, "ratio", "telemetry")),
                impact_s=None, confidence="measured", subject_kind="telemetry",
            )
        )
        inputs.append(InputInfo("dcgm.txt", "dcgm-dmon", telemetry.height))
    findings.sort(key=lambda f: f.sort_key)
    return AnalysisResult(
        inputs=inputs,
        gpu_name="H100 SXM",
        gpu_match="device name 'NVIDIA H100 80GB HBM3'",
        roofs=list(ROOFS),
        kernels=kernels,
        summary=summary,
        telemetry=telemetry,
        findings=findings,
        skipped=[Skipped(source, "launch 99 (kernel memcpy_<b>)", "no FLOP counters and no duration"),
                 Skipped("notes.txt", "file", "not an ncu or telemetry export")],
        notes=["GPU 'H100' -> 'H100 SXM' (most common variant)"],
        total_gpu_time_s=float(total),
    )


def make_telemetry():
    """Two GPUs on node1, 15 minutes at 10 s: GPU 1 busy but tensor-idle from minute 5 to 10."""
    import polars as pl

    from ridgeline.analyzer.schema import TELEMETRY_COLUMNS, polars_schema

    t0 = datetime(2026, 1, 5, 10, 0, tzinfo=timezone.utc)
    rows = []
    for gpu in (0, 1):
        for i in range(90):
            t = t0 + timedelta(seconds=10 * i)
            idle = gpu == 1 and 30 <= i < 60
            vals = {
                "gpu_util_ratio": 0.98 if idle else 0.95,
                "tensor_active_ratio": 0.04 if idle else 0.45 + 0.05 * (i % 3),
                "dram_active_ratio": 0.30 if idle else 0.60,
                "power_w": 400.0,
            }
            for field, v in vals.items():
                rows.append({"timestamp": t, "host": "node1", "gpu": gpu, "uuid": None, "gpu_instance": None,
                             "model": "NVIDIA H100 80GB HBM3", "field": field, "value": v, "source": "dcgm.txt"})
    return pl.DataFrame(rows, schema=polars_schema(TELEMETRY_COLUMNS))
