"""The timeline job: busy/idle per device (busy), why the GPU waited (idle_causes), communication
(comm), steps, fusion candidates, annotated ranges, ranks of one job, on interval arithmetic
(intervals).

The names of the former module ``ridgeline.analyzer.timeline``, now :mod:`ridgeline.analyzer.timeline.busy`, are still importable from here
(:mod:`ridgeline.reexport`): DEFAULT_OPTIONS, TimelineAnalysis, sync_filter, analyze_one, combine, totals_labels, analyze_timeline, join_roofline, IDLE_CAUSES_LEGEND, host_calls_legend, wall_shares.
"""

from ridgeline.reexport import former_module

__getattr__ = former_module(__name__, "ridgeline.analyzer.timeline.busy", "DEFAULT_OPTIONS TimelineAnalysis sync_filter analyze_one combine totals_labels analyze_timeline join_roofline IDLE_CAUSES_LEGEND host_calls_legend wall_shares".split())
