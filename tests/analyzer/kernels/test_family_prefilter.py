"""The literal test in front of the kernel-family table (analyzer/regex_literals, families._first_match)
only ever skips rows that cannot match: every name gets the row the full table search gives, and
every match of a row's pattern contains what the row says it must."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ridgeline.analyzer.kernels import families as fam
from ridgeline.analyzer.kernels.families import FAMILY_TABLE, family_literals_module
from ridgeline.analyzer.kernels.regex_literals import meets, required_literals

from tests.analyzer.kernels.test_families import CASES

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT.parent / "shared" / "samples"
NAMES = [c[1] for c in CASES]
# the literals themselves, in both cases, as pieces of generated names
PIECES = sorted({s for lits in fam._row_literals() if lits for need in lits for s in need})


def _same(name):
    a, b = fam._first_match(name), fam._first_match(name, prefilter=False)
    return (a is None and b is None) or (a is not None and b is not None and a[0].id == b[0].id
                                         and a[1].span() == b[1].span())


def test_every_row_has_a_requirement_and_the_generated_file_is_current():
    assert all(lits for lits in fam._row_literals())  # no row falls back to a search of every name
    current = (ROOT / "ridgeline" / "analyzer" / "kernels" / "family_literals.py").read_text(encoding="utf-8")
    assert current == family_literals_module(), "ridgeline/analyzer/kernels/family_literals.py is stale: run python scripts/gen_families_doc.py"


@pytest.mark.parametrize("name", NAMES)
def test_case_names_get_the_row_of_the_full_search(name):
    assert _same(name)


def test_a_stale_stored_pattern_is_derived_again(monkeypatch):
    from ridgeline.analyzer.kernels import family_literals

    row = FAMILY_TABLE[0]
    monkeypatch.setitem(family_literals.ROW_LITERALS, row.id, ("an older pattern", (("nothing-matches-this",),)))
    fam._row_literals.cache_clear()
    try:
        assert fam._row_literals()[0] == fam._derive_literals(row)
    finally:
        fam._row_literals.cache_clear()


def _sample_names():
    names = set()
    if not SAMPLES.is_dir():
        return []
    from ridgeline.parsers.timeline.reader import read_timeline

    for path in sorted([*SAMPLES.glob("kineto/*.json*"), *SAMPLES.glob("nsys/*.sqlite")]):
        acts = read_timeline(path).activities
        names.update(n for n in acts.get_column("name").drop_nulls().unique().to_list())
    return sorted(names)


@pytest.mark.skipif(not SAMPLES.is_dir(), reason="../shared/samples is absent")
def test_every_kernel_name_of_the_real_traces_gets_the_row_of_the_full_search():
    names = _sample_names()
    assert len(names) > 100
    assert all(_same(n) for n in names), [n for n in names if not _same(n)][:3]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES) | st.sampled_from(NAMES) | st.text(alphabet="_:<>(), abcXYZ019", max_size=12),
                max_size=6).map("".join).map(lambda s: s if len(s) % 3 else s.upper()))
def test_generated_names_get_the_row_of_the_full_search(name):
    assert _same(name)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(FAMILY_TABLE), st.lists(st.sampled_from(PIECES) | st.sampled_from(NAMES), max_size=5).map("".join))
def test_a_row_matches_only_names_that_meet_its_requirements(row, name):
    rx = re.compile(row.pattern.replace("<NS>", fam._NS), re.IGNORECASE)
    if rx.search(name) and name.isascii():
        assert meets(name.lower(), fam._derive_literals(row))


def test_requirements_of_simple_patterns():
    assert required_literals(r"cutlass::.*ReduceSplitK") == (("reducesplitk",), ("cutlass::",))
    assert required_literals(r"(?:silu|gelu)_and_mul") == (("_and_mul",), ("gelu", "silu"))
    assert required_literals(r"a?b*[xy]") is None  # nothing every match must contain
    assert required_literals(r"(?:foo)+bar|baz") in ((("bar", "baz"),), (("baz", "foo"),))  # one literal per branch
    assert meets("void ncclkernel_allreduce", required_literals(r"nccl(?:Dev)?Kernel_"))
    assert not meets("void gemm_kernel", required_literals(r"nccl(?:Dev)?Kernel_"))
    assert meets("anything", None)
