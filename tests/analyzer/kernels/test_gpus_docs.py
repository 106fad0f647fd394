"""docs/gpus.md's per-architecture table is the one the code uses (archrates.RATES)."""

from pathlib import Path

from ridgeline.analyzer.kernels.archrates import RATES
from ridgeline.analyzer.kernels.gpus import PRECISIONS

DOC = Path(__file__).resolve().parents[3] / "docs" / "gpus.md"


def test_doc_table_equals_rates():
    rows = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 + len(PRECISIONS) and cells[0] in RATES:
            rows[cells[0]] = (cells[1], cells[2:])
    assert set(rows) == set(RATES)
    for cc, (arch, rates) in RATES.items():
        doc_arch, doc_rates = rows[cc]
        assert doc_arch == arch
        assert doc_rates == [f"{rates[p]:g}" if p in rates else "-" for p in PRECISIONS], cc
