"""Telemetry readers: DCGM (dcgm_dmon, dcgm_exporter, dcgm_fields), nvidia-smi, Prometheus API answers
(prometheus_json), our own long/wide tables (table), Slurm accounting (sacct), what they share
(common, syntax); reader detects each file's format and builds the long table.

The names of the former module ``ridgeline.parsers.telemetry``, now :mod:`ridgeline.parsers.telemetry.reader`, are still importable from here
(:mod:`ridgeline.reexport`): KINDS, EPOCH, HEAD_BYTES, Options, detect_telemetry_format, expand_paths, TelemetrySource, WIDE_READERS, scan_telemetry_sources, long_table, telemetry_partitions, scan_telemetry, read_telemetry.
"""

from ridgeline.reexport import former_module

__getattr__ = former_module(__name__, "ridgeline.parsers.telemetry.reader", "KINDS EPOCH HEAD_BYTES Options detect_telemetry_format expand_paths TelemetrySource WIDE_READERS scan_telemetry_sources long_table telemetry_partitions scan_telemetry read_telemetry".split())
