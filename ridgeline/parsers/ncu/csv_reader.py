"""Nsight Compute CSV exports (details page and raw page) -> the KERNEL table.

Both layouts, every column set seen from 2019.5 to 2026.2, end in the same normalized table
(:data:`ridgeline.analyzer.schema.KERNEL_COLUMNS`, exact names and order):

* **details** (long): one row per launch x section x metric; identity columns, then
  ``Section Name, Metric Name, Metric Unit, Metric Value`` and optional rule columns (whose
  plain metric rows are *ragged*: 13 fields under a 15-column header). Metric names may be
  section labels (``Duration``, ``SOL FB``): :data:`ncu_metrics.SECTION_LABELS` maps them.
* **raw** (wide): one row per launch, one column per metric, usually a units row second.

The layout is detected from the header line, never from the file name. Text that is not CSV
(``==PROF==``/``==WARNING==`` lines, the application's own output) may appear before the
header and between rows: after a quoted header every line that does not start with ``"`` is
noise; noise lines that look like cut CSV rows (they contain ``","``) are listed in
``skipped``. Several header blocks appended in one file are read one after the other.

Values: all cells are read as strings and only the counters a recipe needs are cast, with
polars expressions (see :mod:`ridgeline.units` for numbers and units). Strict by default: a
non-numeric cell in a needed numeric metric raises :class:`~ridgeline.errors.InputError`
naming the file, the 1-based physical line, the metric and the value; ``strict=False`` turns
such cells into nulls and lists each one in ``skipped``. A file written in a decimal-comma
locale is always refused ("re-export with LC_ALL=C").

Decisions (documented here, tested in ``tests/parsers/test_ncu_*.py``):

* A launch whose duration is zero stays in the table with ``duration_s`` null and
  ``duration_s_source`` starting ``"rejected (non-positive duration): "`` plus the counters,
  so the classifier marks it unknown; nothing is dropped. A *negative* (or infinite, NaN)
  value of any counter the recipes read is a bad value, not a measurement
  (:mod:`ridgeline.parsers.ncu.checks`): strict, an error naming file, line and metric;
  lenient, the launch skipped and listed. Repeated header names and repeated launches are
  resolved there too (``docs/ncu-damaged.md``).
* ``id`` is the ncu ``ID``; with several header blocks in one file it becomes
  ``"<block>/<ID>"`` for blocks after the first; with several files every id gets
  ``"<file index>:"`` in front (file index 0-based, in the order given).
* ``short_name``: the name without its return type (``void``, ``enable_if<...>::type``, any
  other), template arguments and parameter list, with namespaces kept and anonymous namespaces
  (``<unnamed>``, ``(anonymous namespace)``) removed, by :func:`ridgeline.names.short_name`
  (the one normaliser every reader uses): ``void at::native::<unnamed>::k<float>(int)`` ->
  ``at::native::k``; ``enable_if<!T7, void>::type kernel<...>(T13)`` -> ``kernel``;
  ``ampere_sgemm_128x64_nn`` stays itself.
* Tensor FLOPs: ``sm__ops_path_tensor_src_*`` totals by precision; per-family counters
  (``..._op_<family>_src_...``) only when no total was collected for the launch. The Volta
  counter ``sm__inst_executed_pipe_tensor.sum`` x 512 only on CC 7.0; on other or unknown CC a
  non-zero count leaves tensor FLOPs null (a note says why; the counter stays in ``metrics``);
  a count of exactly 0 proves no tensor work, so the tensor columns are 0.
* FLOPs on CUDA cores follow ncu's own roofline sections: FP64/FP32 ``add + mul + 2*fma``
  (plus Blackwell's paired ``fadd2``/``fmul2`` x2 and ``ffma2`` x4 when collected), FP16
  ``2*hadd + 2*hmul + 4*hfma``: ncu's Half roofline counts HADD/HMUL/HFMA as half2
  instructions (two lanes), so its FP16 FLOPs are twice NERSC's ``hadd + hmul + 2*hfma``; we
  follow ncu so achieved FP16 matches the peak ncu records (hfma peak x 4). Totals (``.sum``)
  first, then ``.sum.per_cycle_elapsed`` x elapsed cycles, then ``.sum.per_second`` x duration.
* Sparse tensor counters (``*_sparsity_on``) are counted as reported, with a note when one
  counted ops (a ``.peak_sustained`` column says nothing about use).
* The tensor roof is the DENSE peak of the path the launch used (see :func:`_tensor_peak`):
  Hopper's precision totals record the 2:4-sparse rate, the per-family ``_sparsity_off``
  counters the dense one; ``tensor_path`` names the instruction family (``hgmma``, ``hmma``).
* Old details pages print ``Block Size``/``Grid Size`` as Launch Statistics metrics (total
  threads / blocks): they fill ``block_size``/``grid_size`` as printed and the thread/block
  counts.

The work is split by job: :mod:`ridgeline.parsers.ncu.blocks` (text -> header blocks),
:mod:`ridgeline.parsers.ncu.checks` (bad values, repeated columns and launches),
:mod:`ridgeline.parsers.ncu.frames` (blocks -> raw/details metric frames, cell checks, short
names) and :mod:`ridgeline.parsers.ncu.derive` (metric frames -> KERNEL columns from the recipes);
this module is the entry point (:func:`read_ncu`, :func:`kernels_from_raw_frame`) and keeps the
public names.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from ridgeline.errors import InputError
from ridgeline.result import InputInfo, Skipped

from ridgeline.parsers.ncu.blocks import (  # noqa: F401
    HEAD_BYTES, LOCALE_SAMPLE_ROWS, NARROW_MIN_BYTES, _Block, _plan, _plan_fast, _raw_columns, _read_block, _read_fast, _size,
    detect_ncu_layout,
)
from ridgeline.parsers.ncu.checks import dedupe_columns
from ridgeline.parsers.ncu.derive import _derive  # noqa: F401
from ridgeline.parsers.ncu.frames import (  # noqa: F401
    _Ctx, _details_block, _launch_rows, _raw_block, _short_name, short_name,
)

@dataclasses.dataclass
class NcuResult:
    """What :func:`read_ncu` returns.

    ``kernels``: KERNEL table (schema order). ``metrics``: source -> every metric by its ncu
    name (raw page: the wide table as printed, strings; details page: the long table, strings);
    a :class:`MetricsTables` dict: a raw page read by the fast path keeps only the counters its
    recipes need in memory and reads its full table from the file on first access.
    ``units``: source -> {column: unit as printed} for raw pages. ``notes``: things worth telling
    the user that are not errors (unknown units, tensor counters that cannot give FLOPs...).
    """

    kernels: Any
    metrics: dict[str, Any]
    skipped: list[Skipped]
    inputs: list[InputInfo]
    units: dict[str, dict[str, str]] = dataclasses.field(default_factory=dict)
    notes: list[str] = dataclasses.field(default_factory=list)


# ======================================================================================
# entry point
# ======================================================================================
def _concat_longs(longs):
    import polars as pl

    return longs[0] if len(longs) == 1 else pl.concat(longs, how="diagonal_relaxed")


class MetricsTables(dict):
    """``NcuResult.metrics``: source -> DataFrame of every metric by its ncu name.

    A raw page read by the fast path keeps only the columns the recipes need in memory; its
    full table (every column, strings) is read from the file the first time it is looked up
    (``[]``, ``get``, ``values``, ``items``, iteration into another mapping), then kept.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._loaders: dict = {}

    def defer(self, key, loader) -> None:
        self._loaders[key] = loader
        super().__setitem__(key, None)

    def _load(self, key) -> None:
        loader = self._loaders.pop(key, None)
        if loader is not None:
            super().__setitem__(key, loader())

    def __getitem__(self, key):
        self._load(key)
        return super().__getitem__(key)

    def __setitem__(self, key, value) -> None:
        self._loaders.pop(key, None)
        super().__setitem__(key, value)

    def get(self, key, default=None):
        return self[key] if key in self else default

    def __iter__(self):  # not the C fast path: dict(m) and {**m} go through __getitem__
        return iter(list(super().keys()))

    def values(self):
        return [self[k] for k in self]

    def items(self):
        return [(k, self[k]) for k in self]

    def pop(self, key, *default):
        if key in self:
            self._load(key)
        return super().pop(key, *default)

    def copy(self):
        return dict(self.items())

    def __eq__(self, other):
        return dict(self.items()) == other

    __hash__ = None

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{k!r}: " + ("<read on first access>" if k in self._loaders else repr(v))
                               for k, v in super().items()) + "}"


def kernels_from_raw_frame(path, frame, *, strict: bool = True, skipped: list[Skipped] | None = None,
                           notes: list[str] | None = None, id_prefix: str = ""):
    """A raw-page-shaped frame -> (KERNEL table, units): the raw CSV path's own derivation.

    ``frame``: every cell a string, columns named as on ncu's raw page (identity columns such as
    ``ID``, ``Kernel Name``, ``Block Size``, then metric names), the first row the units row
    (``ID`` null) and one row per launch after it. Readers of other containers of the same
    metrics (``.ncu-rep`` via :mod:`ridgeline.parsers.ncu.rep`) call this, so the FLOP/byte
    recipes, peaks and notes exist once.
    """
    import polars as pl

    ctx = _Ctx(Path(path), strict, skipped if skipped is not None else [], notes if notes is not None else [])
    if "__row" not in frame.columns:
        frame = frame.with_row_index("__row").with_columns(pl.col("__row").cast(pl.Int64))
    blk = _Block(0, "raw", [c for c in frame.columns if c != "__row"], 1, None, 0, [], True)
    m, units, present = _raw_block(ctx, blk, frame)
    kernels = _derive(ctx, m, set(present), block=blk, id_prefix=id_prefix)
    if ctx.unknown_units:
        ctx.notes.append(f"{path}: unknown unit(s) {', '.join(sorted(ctx.unknown_units))}: values kept unscaled")
    return kernels, units


def read_ncu(paths, *, strict: bool = True) -> NcuResult:
    """Read one or several ncu CSV exports (details or raw page, detected per file).

    >>> res = read_ncu(["profile.csv"])          # doctest: +SKIP
    >>> res.kernels.select("short_name", "duration_s", "dram_bytes")  # doctest: +SKIP
    """
    import polars as pl

    from ridgeline.analyzer.schema import KERNEL_COLUMNS, polars_schema

    if isinstance(paths, (str, Path)):
        paths = [paths]
    paths = [Path(p) for p in paths]
    if not paths:
        raise InputError("<no input>", "expected at least one ncu CSV file")
    skipped: list[Skipped] = []
    notes: list[str] = []
    kernels, metrics, inputs, units_all = [], MetricsTables(), [], {}
    for fi, path in enumerate(paths):
        ctx = _Ctx(path, strict, skipped, notes)
        prefix = f"{fi}:" if len(paths) > 1 else ""
        frames, longs, unit_map, launches = [], [], {}, 0
        read = _read_fast(path, notes)
        if read is None:
            blocks = _plan(path, strict, skipped, notes)
            read = [(blk, _read_block(path, blk, strict, skipped)) for blk in blocks]
        blocks = [blk for blk, _df in read]
        for blk, df in read:
            df = dedupe_columns(ctx, blk, df)
            if blk.layout == "raw":
                m, units, present = _raw_block(ctx, blk, df)
                labels = None
                unit_map.update(units)
                long = None if blk.full is not None else _launch_rows(df)
            else:
                m, present, labels = _details_block(ctx, blk, df)
                long = _launch_rows(df)
            k = _derive(ctx, m, set(present), block=blk, id_prefix=prefix, labels=labels if blk.layout == "details" else None)
            frames.append(k)
            launches += k.height
            id_col = pl.concat_str([pl.lit(prefix + (f"{blk.index}/" if blk.index else "")), pl.col("ID").str.replace_all(",", "", literal=True)])
            if blk.full is not None:  # read by columns: the whole table is read when first asked for
                longs.append(lambda load=blk.full, id_col=id_col: _launch_rows(load()).drop("__row").with_columns(
                    id_col.alias("id")).select("id", pl.exclude("id")))
            else:
                longs.append(long.drop("__row").with_columns(id_col.alias("id")).select("id", pl.exclude("id")))
        if launches == 0:
            raise InputError(path, "expected at least one profiled launch after the header, found none")
        kernels.extend(frames)
        if any(callable(x) for x in longs):
            metrics.defer(str(path), lambda longs=longs: _concat_longs([x() if callable(x) else x for x in longs]))
        else:
            metrics[str(path)] = _concat_longs(longs)
        if unit_map:
            units_all[str(path)] = unit_map
        kind = "ncu-" + blocks[0].layout
        inputs.append(InputInfo(str(path), kind, launches))
        if ctx.unknown_units:
            notes.append(f"{path}: unknown unit(s) {', '.join(sorted(ctx.unknown_units))}: values kept unscaled")
    table = pl.concat(kernels, how="vertical") if kernels else pl.DataFrame(schema=polars_schema(KERNEL_COLUMNS))
    return NcuResult(kernels=table, metrics=metrics, skipped=skipped, inputs=inputs, units=units_all, notes=notes)
