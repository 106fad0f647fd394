"""ridgeline: which wall is your GPU workload hitting, and what to do about it.

Reads Nsight Compute (ncu) exports and DCGM telemetry, places every kernel on the
roofline of the GPU it ran on, and turns that into findings a person can act on.

Heavy dependencies (polars, pandas, matplotlib) are imported lazily by the modules that
need them, so importing ``ridgeline`` and running ``ridgeline --help`` stay instant.
"""

__version__ = "0.1.0"
