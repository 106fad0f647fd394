"""Live sources: servers ridgeline asks for telemetry instead of reading a file.

A source is not a parser: it fetches, then hands rows to the same TELEMETRY long table the file
readers produce (:data:`ridgeline.analyzer.schema.TELEMETRY_COLUMNS`), so the same reduction and
the same rules run on it. Sources may use the parsers' vocabulary (``ridgeline.parsers.telemetry.dcgm_fields``)
and their per-series converters; nothing above them (rules, render, pipeline, cli).

* :mod:`ridgeline.sources.prometheus`: Prometheus HTTP API (``/api/v1/query_range``), also
  Thanos, Mimir, VictoriaMetrics. Needs the ``ridgeline[prometheus]`` extra (httpx).
* :mod:`ridgeline.sources.url`: the one reading of a server URL, user info kept apart and never
  shown; :mod:`ridgeline.sources.client`: HTTP with per-request deadlines, answer caps and
  secret-free one-line errors; :mod:`ridgeline.sources.spill`: a pull's temporary files.
* :mod:`ridgeline.sources.store`: the pulled table written as a hive-partitioned wide Parquet
  store that ``ridgeline telemetry DIR`` reads back.
"""
