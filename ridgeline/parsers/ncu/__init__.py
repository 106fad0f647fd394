"""Nsight Compute readers: CSV pages (csv_reader: blocks -> frames -> derive), ``.ncu-rep`` reports (rep,
rep_layout), their vocabulary (metrics, spellings) and boundary checks (checks, guard).

The names of the former module ``ridgeline.parsers.ncu``, now :mod:`ridgeline.parsers.ncu.csv_reader`, are still importable from here
(:mod:`ridgeline.reexport`): NcuResult, MetricsTables, kernels_from_raw_frame, read_ncu.
"""

from ridgeline.reexport import former_module

__getattr__ = former_module(__name__, "ridgeline.parsers.ncu.csv_reader", "NcuResult MetricsTables kernels_from_raw_frame read_ncu".split())
