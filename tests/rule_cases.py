"""Small ROOFLINE tables for rule tests (synthetic: built here, not captured on a GPU).

``launch(...)`` makes one ROOFLINE row from the inputs a profiler would give (duration,
FLOPs, bytes, peaks) and fills the derived roofline columns the way the contract in
``ridgeline.analyzer.schema`` defines them, so each test states its numbers once and computes
the expected message values by hand.
"""

from __future__ import annotations

import polars as pl

from ridgeline.analyzer.schema import KERNEL_COLUMNS, ROOFLINE_COLUMNS, polars_schema
from ridgeline.rules.base import Context

H100_BF16 = 989e12  # FLOP/s dense, datasheet
H100_BW = 3.35e12  # B/s, datasheet
TENSOR_SRC = "sm__ops_path_tensor_src_bf16_dst_fp32"
DRAM_SRC = "dram__bytes.sum"
SCHEMA = polars_schema(KERNEL_COLUMNS | ROOFLINE_COLUMNS)


def launch(
    kernel_name: str,
    *,
    duration_s: float | None,
    flops: float | None = None,
    dram_bytes: float | None = None,
    precision: str | None = "fp16_tensor",
    gpu: str | None = "H100 SXM",
    peak_flops: float | None = H100_BF16,
    peak_bw: float | None = H100_BW,
    peak_source: str = "catalogue",
    short_name: str | None = None,
    **extra,
) -> dict:
    row: dict = {
        "id": extra.pop("id", None),
        "kernel_name": kernel_name,
        "short_name": short_name or kernel_name,
        "duration_s": duration_s,
        "duration_s_source": "gpu__time_duration.sum" if duration_s is not None else None,
        "gpu": gpu,
        "precision": precision,
        "flops": flops,
        "dram_bytes": dram_bytes,
        "dram_bytes_source": DRAM_SRC if dram_bytes is not None else None,
        "peak_flops_per_s": peak_flops,
        "peak_flops_source": peak_source if peak_flops is not None else None,
        "peak_bw_bytes_per_s": peak_bw,
        "peak_bw_source": peak_source if peak_bw is not None else None,
    }
    if flops is not None and precision and precision.endswith("_tensor"):
        row.update(flops_tensor=flops, flops_tensor_source=TENSOR_SRC, flops_fp32=0.0, flops_fp16=0.0, flops_fp64=0.0)
    elif flops is not None and precision in ("fp32", "fp16", "fp64"):
        row.update({f"flops_{precision}": flops, f"flops_{precision}_source": f"{precision} sass ops", "flops_tensor": 0.0})
    missing = []
    if flops is None:
        missing.append("flops_tensor")
    if dram_bytes is None:
        missing.append("dram_bytes")
    if duration_s is None:
        missing.append("duration_s")
    row["missing"] = missing
    row["missing_hint"] = "--set roofline" if missing else None
    if not missing and peak_flops and peak_bw:
        ai = flops / dram_bytes if dram_bytes else None
        ridge = peak_flops / peak_bw
        roof = min(peak_flops, ai * peak_bw) if ai is not None else peak_flops
        achieved = flops / duration_s
        row.update(
            intensity_dram=ai,
            ridge_flop_per_byte=ridge,
            roof_flops_per_s=roof,
            achieved_flops_per_s=achieved,
            achieved_dram_bytes_per_s=dram_bytes / duration_s,
            bound="memory" if ai is not None and ai < ridge else "compute",
            roof_fraction=achieved / roof if roof else None,
            ridge_distance=ai / ridge if ai is not None else None,
            time_to_roof_s=flops / roof if roof else None,
        )
    else:
        row["bound"] = "unknown"
    row.update(extra)
    unknown = set(row) - set(SCHEMA)
    assert not unknown, f"not ROOFLINE columns: {unknown}"
    return row


def label(name: str) -> str:
    """The subject a finding on kernel ``name`` carries: its label (ridgeline.analyzer.kernels.families)."""
    from ridgeline.analyzer.kernels.families import classify_name

    return classify_name(name).label


def frame(rows: list[dict]) -> pl.DataFrame:
    """A ROOFLINE DataFrame with every contract column (absent values null)."""
    full = [{col: r.get(col, [] if col == "missing" else None) for col in SCHEMA} for r in rows]
    return pl.DataFrame(full, schema=SCHEMA)


def context(rows: list[dict], *, total_gpu_time_s: float | None = None, **kw) -> Context:
    df = frame(rows)
    if total_gpu_time_s is None:
        total_gpu_time_s = df["duration_s"].sum() or None
    return Context(kernels=df, total_gpu_time_s=total_gpu_time_s, **kw)


def run(rule_cls, rows: list[dict], *, overrides: dict | None = None, **kw):
    """Findings of one rule on these launches (exceptions propagate: a raising rule is a bug)."""
    return rule_cls(overrides).check(context(rows, **kw))
