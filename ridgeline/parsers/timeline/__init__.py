"""Timeline readers: PyTorch profiler (Kineto) traces (kineto, kineto_fast, kineto_events), Nsight
Systems exports (nsys_sqlite, nsys_nvtx, nsys_csv, nsys_stats_checks, rank_env), and what they share
(common); reader detects the format and dispatches; allocator loads polars tuned for timeline runs.

The names of the former module ``ridgeline.parsers.timeline``, now :mod:`ridgeline.parsers.timeline.reader`, are still importable from here
(:mod:`ridgeline.reexport`): detect_timeline_format, is_nsys_report, nsys_export_error, read_timeline.
"""

from ridgeline.reexport import former_module

__getattr__ = former_module(__name__, "ridgeline.parsers.timeline.reader", "detect_timeline_format is_nsys_report nsys_export_error read_timeline".split())
