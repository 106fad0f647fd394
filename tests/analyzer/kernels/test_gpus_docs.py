"""docs/gpus.md's per-architecture tables are the ones the code uses (archrates.RATES, and
archtable.AMD_RATES per gfx target)."""

from pathlib import Path

from ridgeline.analyzer.kernels.archrates import RATES
from ridgeline.analyzer.kernels.archtable import AMD_RATES
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


def test_doc_amd_table_equals_amd_rates():
    rows = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 + len(PRECISIONS) and cells[0][:3] == "gfx" and cells[0][3:4].isdigit():
            rows[cells[0]] = (cells[1], cells[2:])
    assert set(rows) == set(AMD_RATES)
    for gfx, (arch, rates) in AMD_RATES.items():
        doc_arch, doc_rates = rows[gfx]
        assert doc_arch == arch
        assert doc_rates == [f"{rates[p]:g}" if p in rates else "-" for p in PRECISIONS], gfx
