"""How each ROOFLINE precision is named in every view: one table, read by the terminal, Markdown,
HTML, plots, ``ridgeline gpus`` and the rule messages, so one precision is never ``bf16`` in one
view, ``FP16/BF16 tensor`` in a second and ``fp16_tensor`` in a third (issue 37 item 5). The
JSON document keeps the keys (``fp16_tensor``): they are data, not labels.

Forms, all of one name. ``BF16`` names the 16-bit tensor roof bf16 and fp16 share (the counters
do not tell them apart; the kernel table's legend says ``bf16 = bf16 or fp16``), ``TC`` tensor cores:

* ``LABELS`` -- roofs lists, tables with room, the catalogue: ``BF16 TC`` (``BF16 TC mma.sync``
  with a tensor path still fits an 80-column roof line);
* ``PLOT_LABELS`` -- the same, CUDA-core math said as such on a roofline plot's roof lines;
* ``SHORT`` -- the terminal kernel table's 4-character column (its legend spells them out);
* ``COLUMNS`` -- ``ridgeline gpus``' narrow column headers;
* ``WORDS`` -- inside a sentence (rule messages, finding subjects): ``bf16/fp16``.
"""

from __future__ import annotations

LABELS = {
    "fp64": "FP64",
    "fp32": "FP32",
    "fp16": "FP16",
    "tf32_tensor": "TF32 TC",
    "fp16_tensor": "BF16 TC",
    "fp8_tensor": "FP8 TC",
    "int8_tensor": "INT8 TC",
    "fp64_tensor": "FP64 TC",
}
PLOT_LABELS = {k: (v if k.endswith("_tensor") else f"{v} (CUDA cores)") + (" (op/s)" if k == "int8_tensor" else "")
               for k, v in LABELS.items()}
SHORT = {"fp64": "fp64", "fp32": "fp32", "fp16": "fp16", "fp64_tensor": "fp64", "tf32_tensor": "tf32",
         "fp16_tensor": "bf16", "fp8_tensor": "fp8", "int8_tensor": "int8"}
SHORT_LEGEND = "tf32, bf16 = bf16 or fp16, fp8, int8: tensor cores"
# ``ridgeline gpus``' 7-character column headers, one column per precision (fp64 and fp64 tensor apart)
COLUMNS = {"fp64": "FP64", "fp32": "FP32", "fp16": "FP16", "tf32_tensor": "TF32tc", "fp16_tensor": "BF16tc",
           "fp8_tensor": "FP8tc", "int8_tensor": "INT8tc", "fp64_tensor": "FP64tc"}
WORDS = {
    "fp64": "fp64",
    "fp32": "fp32",
    "fp16": "fp16 CUDA cores",
    "tf32_tensor": "tf32",
    "fp16_tensor": "bf16/fp16",
    "fp8_tensor": "fp8",
    "int8_tensor": "int8",
    "fp64_tensor": "fp64 tensor",
}


def label(precision: str | None, default: str = "n/a") -> str:
    """``BF16 TC`` for ``fp16_tensor``; ``default`` when there is none."""
    return LABELS.get(precision or "", precision or default)
