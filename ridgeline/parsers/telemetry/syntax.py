"""How telemetry files spell their layout: shared by the readers and by their boundary checks.

The readers (:mod:`ridgeline.parsers.telemetry.table`, :mod:`ridgeline.parsers.telemetry.dcgm_exporter`)
and the boundary that checks their files (:mod:`ridgeline.parsers.guard`) both need these
spellings; they live one floor below all of them so no reader imports another reader or the
guard a reader (tests/test_architecture.py fails on any import circle). Nothing here parses.
Which vendor name means which canonical field is :mod:`ridgeline.parsers.telemetry.dcgm_fields`.
"""

from __future__ import annotations

# column roles of a long/wide telemetry table (CSV or Parquet) -> the header names (lower case)
# that fill them
ALIASES = {
    "timestamp": ("timestamp", "time", "ts"),
    "host": ("host", "hostname", "instance", "node"),
    "gpu": ("gpu", "gpu_index", "index"),
    "uuid": ("uuid", "gpu_uuid"),
    "gpu_instance": ("gpu_instance", "gpu_i_id"),
    "model": ("model", "modelname", "model_name"),
    "field": ("field", "__name__", "metric"),
    "value": ("value",),
}

# one Prometheus text-exposition sample line (dcgm-exporter): groups metric name, {labels},
# value, optional timestamp in milliseconds
SAMPLE_RE = r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?[ \t]+([^ \t]+)(?:[ \t]+(-?[0-9]+(?:\.[0-9]+)?))?[ \t]*$"

# the most columns a telemetry CSV table (long/wide, nvidia-smi --query-gpu) may have: identity
# columns and one per DCGM field are a few hundred at most; 100,000 columns ran past 600 s (the
# CSV reader's cost grows with columns x columns). A wider header is refused naming this cap.
MAX_COLUMNS = 2_048
