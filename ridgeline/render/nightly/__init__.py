"""Views of the nightly job: a two-run comparison (diff) and the trend over nights (trend)."""
