"""Shared style of every plot: the palette, labels for bounds, precisions, levels and roof
sources, text helpers (safe, SI, shortened), a new Agg figure, and the writers (PNG/SVG/PDF
files, inline SVG). matplotlib is imported inside the functions, so importing this is cheap."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterable

from ridgeline import fmt
from ridgeline.analyzer.kernels.latency import VIEW_LABELS
from ridgeline.errors import UsageError

# Okabe-Ito, the colour-blind-safe palette (Okabe & Ito 2008).
OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
}

# points are coloured by the bound every view shows (ridgeline.analyzer.kernels.latency.view_bound): the
# latency class split into launch-bound and stall-bound
BOUND_COLORS = {
    "memory": OKABE_ITO["blue"],
    "compute": OKABE_ITO["vermillion"],
    "launch": OKABE_ITO["purple"],
    "stall": "#009E73",  # Okabe-Ito bluish green
    "latency": OKABE_ITO["purple"],
    "unknown": "#8C8C8C",
}
BOUND_LABELS = {**VIEW_LABELS, "unknown": "unknown bound"}
LATENCY_BOUNDS = ("launch", "stall", "latency")  # no roof explains their time
LATENCY_MARKER = "X"  # latency-bound points get a marker of their own (single input) or a hollow one

from ridgeline.analyzer.kernels.precisions import PLOT_LABELS as PRECISION_LABELS  # noqa: E402 (one table of names)
# roof colours share none of the bound colours above (a launch-bound point never wears a roof's
# colour): black and greys, sky blue, orange and Paul Tol's indigo, wine, olive and a brown
PRECISION_COLORS = {
    "fp64": "#000000",
    "fp64_tensor": "#555555",
    "fp32": OKABE_ITO["sky_blue"],
    "fp16": "#332288",
    "tf32_tensor": "#882255",
    "fp16_tensor": OKABE_ITO["orange"],
    "fp8_tensor": "#A6761D",
    "int8_tensor": "#999933",
}
LEVEL_STYLES = {"dram": "-", "l2": "--", "l1": ":"}
LEVEL_LABELS = {"dram": "DRAM", "l2": "L2", "l1": "L1"}
SOURCE_LABELS = {
    "ncu": "measured by ncu",
    "ncu-device-attributes": "ncu device attributes",
    "catalogue": "catalogue",
    "derived-from-device-attributes": "derived from device attributes",
}
# one marker per input on a multi-input plot
INPUT_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h")

SAVE_FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}
RASTERIZE_ABOVE = 5000  # points per input beyond which vector outputs embed the markers as an image

_FIG_DPI = 100


# ----------------------------------------------------------------------------------------
# small helpers
# ----------------------------------------------------------------------------------------
def plain(text: object) -> str:
    """Text from an input, made safe for matplotlib: ``$`` would start mathtext (``\\$`` is drawn
    as ``$``); control characters shown escaped (ridgeline.render.safe_text.inline), as in every
    text format. Outside mathtext matplotlib draws a backslash as it is, so none is doubled."""
    from ridgeline.render.safe_text import inline

    return inline(text).replace("$", r"\$")


def si(value: float | None, unit: str, digits: int = 3) -> str:
    """``989e12, "FLOP/s"`` -> ``"989 TFLOP/s"``."""
    return fmt.si(value, unit, fmt.PLOT, digits=digits)


def shorten(name: str, width: int = 32) -> str:
    """A kernel label short enough to sit next to a point."""
    from ridgeline.render.safe_text import inline

    name = " ".join(inline(name).split())
    return name if len(name) <= width else name[: width - 1] + "\u2026"


def _new_figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=_FIG_DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _finite_pos(values: Iterable[Any]) -> list[float]:
    out = []
    for v in values:
        if v is None:
            continue
        try:
            f = float(v)
        except (TypeError, ValueError):
            continue
        if math.isfinite(f) and f > 0:
            out.append(f)
    return out


def _decade_floor(v: float) -> float:
    return 10.0 ** math.floor(math.log10(v))


def _decade_ceil(v: float) -> float:
    return 10.0 ** math.ceil(math.log10(v))



# ----------------------------------------------------------------------------------------
# output
# ----------------------------------------------------------------------------------------
def save_figure(fig, path, *, dpi: int = 150) -> Path:
    """Write ``fig`` to ``path``; the suffix picks the format (.png, .svg, .pdf)."""
    path = Path(path)
    fmt = SAVE_FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise UsageError(
            f"cannot write a plot to {str(path)!r}: unknown suffix {path.suffix or '(none)'!r}; "
            f"use one of {', '.join(SAVE_FORMATS)}"
        )
    metadata = {"Date": None} if fmt in ("svg", "pdf") else None
    import matplotlib

    with matplotlib.rc_context({"svg.hashsalt": "ridgeline"}):
        fig.savefig(path, format=fmt, dpi=dpi, bbox_inches="tight", metadata=metadata)
    return path


def figure_svg(fig) -> str:
    """The figure as an SVG document string (text drawn as paths, no external fonts)."""
    import io

    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "ridgeline", "svg.fonttype": "path"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    return buf.getvalue()


def _with_kind(df):
    """``df`` with a ``latency_kind`` column (null when a table from before the split has none)."""
    import polars as pl

    return df if "latency_kind" in df.columns else df.with_columns(pl.lit(None, dtype=pl.String).alias("latency_kind"))


def fit_text_width(fig, text, *, width_px: float | None = None, min_size: float = 9.0) -> None:
    """Make a title fit across the figure (issue 37: no text outside the canvas): a smaller font
    first, down to ``min_size``; then its words cut at token boundaries around an ellipsis
    (ridgeline.render.fit). Titles name inputs, whose full names the JSON and text views carry."""
    from ridgeline.render.fit import fit_one

    renderer = fig.canvas.get_renderer()
    room = (width_px if width_px is not None else fig.bbox.width) - 16
    if text.get_window_extent(renderer).width <= room:
        return
    size = text.get_fontsize()
    while size > min_size and text.get_window_extent(renderer).width > room:
        size -= 0.5
        text.set_fontsize(size)
    if text.get_window_extent(renderer).width <= room:
        return
    full = text.get_text()
    probe = text.get_window_extent(renderer).width / max(len(full), 1)

    def fits(candidate: str) -> bool:
        if len(candidate) * probe > room * 1.3:  # far too long: no need to measure
            return False
        text.set_text(candidate)
        return text.get_window_extent(renderer).width <= room

    text.set_text(fit_one(full, fits))
