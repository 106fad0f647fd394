"""One table of precision names (issue 37 item 5: ``bf16``, ``FP16/BF16 tensor`` and
``fp16_tensor`` for one precision in three views)."""

from __future__ import annotations

import re
from pathlib import Path

from ridgeline.analyzer.kernels import precisions
from ridgeline.analyzer.kernels.gpus import PRECISIONS

PKG = Path(__file__).resolve().parents[3] / "ridgeline"


def test_every_precision_has_every_form_of_one_name():
    for table in (precisions.LABELS, precisions.PLOT_LABELS, precisions.SHORT, precisions.WORDS, precisions.COLUMNS):
        assert set(table) == set(PRECISIONS)
    for key, name in precisions.LABELS.items():
        assert precisions.PLOT_LABELS[key].startswith(name)
        # the sentence form starts with the label's own word, lower case (bf16/fp16 spells BF16 out)
        assert precisions.WORDS[key].split()[0].split("/")[0] == name.split()[0].lower(), key


def test_no_view_or_rule_keeps_a_table_of_precision_names_of_its_own():
    own = re.compile(r'"fp16_tensor"\s*:\s*"(?!flops_)')  # a column name is not a label
    holders = sorted(str(p.relative_to(PKG)) for p in PKG.rglob("*.py") if own.search(p.read_text(encoding="utf-8")))
    assert holders == ["analyzer/kernels/precisions.py"], holders
