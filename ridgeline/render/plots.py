"""Pictures drawn from a finished :class:`~ridgeline.result.AnalysisResult`.

Drawing is separate from analysis: every function takes results that the pipeline already built
and returns a matplotlib :class:`~matplotlib.figure.Figure`; nothing is parsed or classified
here. This module is the one place callers import plots from; each kind lives in its own module:

* :mod:`ridgeline.render.kernels.plot_roofline` -- :func:`roofline_figure`: log-log roofline, DRAM slope
  (plus L2/L1 slopes when those roofs exist), one flat compute roof per precision, ridge points
  labelled, kernels as points (area = share of GPU time, colour = bound, marker = input).
* :mod:`ridgeline.render.kernels.plot_labels` -- the march of a kernel across inputs and label placement.
* :mod:`ridgeline.render.kernels.plot_points` -- the points a roofline draws (per kernel or per launch).
* :mod:`ridgeline.render.fleet.plot` -- :func:`telemetry_figure`: per GPU, GPU-Util against
  tensor-active and DRAM-active over time, with the spans that rules flagged shaded.
* :mod:`ridgeline.render.timeline.plot` -- the timeline's busy/idle panels.
* :mod:`ridgeline.render.plot_style` -- palette, labels, text helpers, :func:`save_figure`.

matplotlib is imported inside the functions (Agg canvas, no pyplot state), so importing this
module is cheap.
"""

from __future__ import annotations

from ridgeline.render.kernels.plot_labels import (  # noqa: F401
    MARCH_COLOR,
    MARCH_MAX,
    distinct_tags,
    label_text,
    march_key,
    march_series,
    point_area,
)
from ridgeline.render.kernels.plot_points import kernel_points, projected_points  # noqa: F401
from ridgeline.render.kernels.plot_roofline import distinct_roofs, roofline_figure  # noqa: F401
from ridgeline.render.plot_style import (  # noqa: F401
    BOUND_COLORS,
    BOUND_LABELS,
    INPUT_MARKERS,
    LATENCY_BOUNDS,
    LATENCY_MARKER,
    LEVEL_LABELS,
    LEVEL_STYLES,
    OKABE_ITO,
    PRECISION_COLORS,
    PRECISION_LABELS,
    RASTERIZE_ABOVE,
    SAVE_FORMATS,
    SOURCE_LABELS,
    _new_figure,
    figure_svg,
    plain,
    save_figure,
    shorten,
    si,
)
from ridgeline.render.fleet.plot import (  # noqa: F401
    SHORT_SPAN_S,
    TELEMETRY_SERIES,
    WINDOW_STATE_COLUMNS,
    finding_span,
    telemetry_figure,
)

__all__ = [
    "BOUND_COLORS",
    "BOUND_LABELS",
    "INPUT_MARKERS",
    "LATENCY_BOUNDS",
    "LATENCY_MARKER",
    "LEVEL_LABELS",
    "LEVEL_STYLES",
    "MARCH_COLOR",
    "MARCH_MAX",
    "OKABE_ITO",
    "PRECISION_COLORS",
    "PRECISION_LABELS",
    "RASTERIZE_ABOVE",
    "SAVE_FORMATS",
    "SHORT_SPAN_S",
    "SOURCE_LABELS",
    "TELEMETRY_SERIES",
    "WINDOW_STATE_COLUMNS",
    "_new_figure",
    "distinct_roofs",
    "distinct_tags",
    "figure_svg",
    "finding_span",
    "kernel_points",
    "label_text",
    "march_key",
    "march_series",
    "plain",
    "point_area",
    "projected_points",
    "roofline_figure",
    "save_figure",
    "shorten",
    "si",
    "telemetry_figure",
]
