"""Loading polars with its allocator tuned for a run that reads timelines only (moved out of
:mod:`ridgeline.pipeline`, which still exports both names)."""

from __future__ import annotations

#: polars' allocator (jemalloc) options for a run that reads timelines only: memory freed between the
#: reading and analysis phases goes back to the system after 300 ms, and one arena serves every
#: thread, instead of each thread's arena keeping what it freed for 10 s. The 100 MB synthetic trace
#: of benchmarks/bench_hta.py peaked at 285-290 MB without, 244-246 MB with, in the same time.
TIMELINE_ALLOCATOR = "narenas:1,dirty_decay_ms:300,muzzy_decay_ms:0"
_ALLOCATOR_ENV = "_RJEM_MALLOC_CONF"


def load_polars_for_timelines() -> str | None:
    """Import polars with :data:`TIMELINE_ALLOCATOR` for its allocator, when nothing has loaded it yet
    (jemalloc reads its options once, as polars loads) and the user set none of their own; the
    variable is removed again, so child processes do not inherit it. The options applied, else None."""
    import os
    import sys

    if "polars" in sys.modules or _ALLOCATOR_ENV in os.environ:
        return None
    os.environ[_ALLOCATOR_ENV] = TIMELINE_ALLOCATOR
    try:
        import polars  # noqa: F401
    finally:
        del os.environ[_ALLOCATOR_ENV]
    return TIMELINE_ALLOCATOR
