"""Small hand-written ncu raw export shared by the analyzer/CLI/render tests (synthetic)."""

from __future__ import annotations

from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "samples"
SCENARIOS = Path(__file__).resolve().parents[1] / "fixtures" / "scenarios"

HEADER = [
    "ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
    "Grid Size", "Device", "CC", "device__attribute_display_name", "dram__bytes.sum", "gpu__time_duration.sum",
    "sm__ops_path_tensor_src_bf16_dst_fp32.sum", "sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "sm__sass_thread_inst_executed_op_fmul_pred_on.sum", "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
]
UNITS = ["", "", "", "", "", "", "", "", "", "", "", "", "byte", "ns", "", "inst", "inst", "inst"]

# (id, kernel, dram bytes, duration ns, tensor bf16 FLOPs, ffma instructions)
# gemv: AI = 2^25 FLOP / 2^25 B = 1 FLOP/B, memory-bound on H100 (ridge 295)
# gemm: AI = (5e11 + 2 * 5e5) / 1e8 = 5000 FLOP/B, compute-bound
LAUNCHES = [
    (0, "void gemv<bf16>(float*)", 33554432, 20000, 33554432, 0),
    (1, "void gemm<bf16>(float*)", 100000000, 1000000, 500000000000, 500000),
    (2, "void gemv<bf16>(float*)", 33554432, 20000, 33554432, 0),
]


def write_mini_ncu(path: Path, device: str = "NVIDIA H100 80GB HBM3") -> Path:
    """A 3-launch ncu ``--page raw --print-units base`` export (synthetic, written by this helper)."""
    lines = [",".join(f'"{h}"' for h in HEADER), ",".join(f'"{u}"' for u in UNITS)]
    for i, name, nbytes, ns, tensor, ffma in LAUNCHES:
        cells = [i, 1, "app", "host", name, 1, 7, "(128, 1, 1)", "(1024, 1, 1)", 0, "9.0", device,
                 nbytes, ns, tensor, 0, 0, ffma]
        lines.append(",".join(f'"{c}"' for c in cells))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
