"""Views of the kernel job: the roofline figure (plot_roofline, plot_points, plot_labels), the
per-launch table as CSV/Parquet (tables), what-if projections (whatif)."""
