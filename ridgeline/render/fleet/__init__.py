"""Views of the fleet job: telemetry windows as text (telemetry), per-group tables (groups), the
fleet page of the HTML report (html), the telemetry figure (plot), host names in columns
(hostnames)."""
