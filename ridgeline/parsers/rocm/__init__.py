"""AMD ROCm profiler outputs -> the timeline tables (TIMELINE, TIMELINE_TOTALS), ``vendor`` ``amd``.

* :mod:`~ridgeline.parsers.rocm.detect`: which ROCm format a file's head is (content, never the name).
* :mod:`~ridgeline.parsers.rocm.v1`: rocprof v1 (``rocprof --stats``/``--hip-trace``): the kernel
  trace ``results.csv``, the Chrome trace JSON, the ``.stats.csv`` per-name summary.
* :mod:`~ridgeline.parsers.rocm.v3`: rocprofv3 ``kernel_trace.csv`` in each header era.
* :mod:`~ridgeline.parsers.rocm.common`: the columns every reader fills (device, stream, times,
  name with AMD's ``.kd`` suffix removed, grid/workgroup sizes), record checks, the result.

Formats, equations and sources: ``docs/amd.md``.
"""
