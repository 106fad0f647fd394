"""``analyze --format csv`` writes the table straight from polars (issue 32 item 11: the CSV was
built as one string and scanned again in Python, 5 s on a 50,000-launch page): its cells are made
safe in the table, so the file must be byte for byte what escaping the whole text gave
(``for_output(csv_ready(df).write_csv())``), for hostile cells in the first column (where a
line starts) and elsewhere. Inputs are generated here."""

from __future__ import annotations

import itertools

import pytest

from ridgeline.render.kernels import tables
from ridgeline.render.safe_text import for_output

CELLS = ["::warning::x", "  ::x", " \t::x", "a,::b", '"::q', "##[group]x", "x##[y", "ok::", "=1+2", "@sum", "-1",
         "a\x1b[31mred", "x\ny", "x\r\n::y", "\u202eevil", "\x07", "", None, "void at::native::k<int>(int)"]


class _Result:
    def __init__(self, df):
        self.kernels = df


@pytest.mark.parametrize("first", CELLS)
def test_csv_file_equals_the_escaped_text(tmp_path, first):
    import polars as pl

    others = list(itertools.islice(itertools.cycle(CELLS), len(CELLS)))
    df = pl.DataFrame({
        "id": [first] + others[: len(CELLS) - 1],
        "kernel_name": others,
        "value": [float(i) for i in range(len(CELLS))],
        "missing": [[c, "::x"] if c is not None else None for c in others],
    })
    expected = for_output(tables.csv_ready(df).write_csv())
    path = tmp_path / "launches.csv"
    tables.write_table(_Result(df), "csv", path)
    assert path.read_bytes() == expected.encode("utf-8")
    assert "\\u003a:" in expected or not (first or "").lstrip(" ").startswith("::") or any(c in first for c in ',"\t')
