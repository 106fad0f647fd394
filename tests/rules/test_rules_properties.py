"""Every rule on arbitrary small ROOFLINE tables: never raises, findings are well-formed (hypothesis)."""

from __future__ import annotations

import math
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


from rule_cases import context, launch  # noqa: E402

from ridgeline.rules.base import SEVERITIES  # noqa: E402
from ridgeline.rules.engine import run_rules  # noqa: E402

NAMES = [
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n",
    "flash_fwd_splitkv_kernel",
    "vectorized_elementwise_kernel",
    "gemv2T_kernel_val<float>",
    "rms_norm_kernel",
]
PRECISIONS = [
    ("fp16_tensor", 989e12),
    ("fp8_tensor", 1979e12),
    ("tf32_tensor", 494.5e12),
    ("fp32", 66.9e12),
    (None, None),
]
maybe = lambda s: st.one_of(st.none(), s)  # noqa: E731


@st.composite
def launches(draw):
    prec, peak = draw(st.sampled_from(PRECISIONS))
    return launch(
        draw(st.sampled_from(NAMES)),
        duration_s=draw(maybe(st.floats(1e-7, 1e-1))),
        flops=draw(maybe(st.one_of(st.just(0.0), st.floats(1e3, 1e13)))),
        dram_bytes=draw(maybe(st.one_of(st.just(0.0), st.floats(1e3, 1e11)))),
        precision=prec,
        peak_flops=peak,
        gpu=draw(st.sampled_from(["H100 SXM", "A100 SXM 80GB", None])),
        peak_source=draw(st.sampled_from(["ncu", "catalogue"])),
        grid_blocks=draw(maybe(st.integers(1, 10_000))),
        l2_bytes=draw(maybe(st.floats(1e3, 1e12))),
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(launches(), min_size=1, max_size=12))
def test_rules_never_raise_and_findings_are_well_formed(rows):
    findings = run_rules(context(rows), family=("kernel", "data"))
    for f in findings:
        assert f.severity in SEVERITIES
        assert f.message and "\n" not in f.message and f.remedy and "\n" not in f.remedy
        assert f.subject
        if f.impact_s is not None:
            assert math.isfinite(f.impact_s) and f.impact_s >= 0
        if f.impact_share is not None:
            assert 0 <= f.impact_share <= 1 + 1e-9
        assert "nan" not in f.message.lower().replace("nanos", "")
    impacts = [f.impact_s or 0.0 for f in findings]
    assert impacts == sorted(impacts, reverse=True)
