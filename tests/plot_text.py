"""Text on a matplotlib figure that a reader cannot read (issue 37's done-when): every drawn Text
artist's window extent inside the figure, and no two text extents overlapping.

Usage::

    from plot_text import text_problems
    assert text_problems(fig) == []

Texts counted: the figure's own (suptitle, figure legends), and per visible axes its titles, axis
labels, the tick labels actually drawn, its annotations and texts (an Annotation by its text's
box, not its leader line) and its legends' texts. Pairs inside one legend are laid out by
matplotlib and not compared.
"""

from __future__ import annotations

TOLERANCE_PX = 1.0


def _drawn_tick_labels(axis) -> list:
    try:
        ticks = axis._update_ticks()  # the ticks matplotlib draws (within the view interval)
    except AttributeError:  # pragma: no cover - an older or newer matplotlib
        ticks = axis.get_major_ticks()
    out = []
    for tick in ticks:
        for label in (tick.label1, tick.label2):
            if label.get_visible():
                out.append(label)
    return out


def _legend_texts(leg) -> list:
    return [leg.get_title(), *leg.get_texts()] if leg is not None and leg.get_visible() else []


def drawn_texts(fig) -> list[tuple[str, object]]:
    """(group, Text) for each text the figure draws; texts of one legend share a group."""
    out = []
    if fig._suptitle is not None:
        out.append(("suptitle", fig._suptitle))
    out += [("fig-text", t) for t in fig.texts]
    for k, leg in enumerate(fig.legends):
        out += [(f"fig-legend:{k}", t) for t in _legend_texts(leg)]
    for a, ax in enumerate(fig.axes):
        if not ax.get_visible() or not ax.axison and not ax.texts:
            continue
        out += [(f"ax{a}:title", t) for t in (ax.title, ax._left_title, ax._right_title)]
        out += [(f"ax{a}:label", ax.xaxis.label), (f"ax{a}:label", ax.yaxis.label)]
        out += [(f"ax{a}:offset", ax.xaxis.offsetText), (f"ax{a}:offset", ax.yaxis.offsetText)]
        out += [(f"ax{a}:xtick", t) for t in _drawn_tick_labels(ax.xaxis)]
        out += [(f"ax{a}:ytick", t) for t in _drawn_tick_labels(ax.yaxis)]
        out += [(f"ax{a}:text", t) for t in ax.texts]
        for k, child in enumerate(ax.get_children()):
            if type(child).__name__ == "Legend":
                out += [(f"ax{a}:legend:{k}", t) for t in _legend_texts(child)]
    seen: set[int] = set()
    kept = []
    for g, t in out:  # the suptitle is also one of fig.texts: each artist once
        if id(t) not in seen and t.get_visible() and t.get_text().strip():
            seen.add(id(t))
            kept.append((g, t))
    return kept


def text_problems(fig, *, name: str = "figure") -> list[str]:
    """What is wrong with the figure's text: a text (partly) outside the figure, or two texts
    whose boxes overlap. Empty when all is readable."""
    from matplotlib.text import Text

    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    fb = fig.bbox
    boxes = []
    problems = []
    for group, t in drawn_texts(fig):
        if hasattr(t, "update_positions"):
            t.update_positions(renderer)
        bb = Text.get_window_extent(t, renderer)
        if bb.width <= 0 or bb.height <= 0:
            continue
        text = t.get_text().replace("\n", " / ")[:60]
        if (bb.x0 < fb.x0 - TOLERANCE_PX or bb.y0 < fb.y0 - TOLERANCE_PX or bb.x1 > fb.x1 + TOLERANCE_PX
                or bb.y1 > fb.y1 + TOLERANCE_PX):
            problems.append(f"{name}: {text!r} outside the figure ({bb.x0:.0f},{bb.y0:.0f},{bb.x1:.0f},{bb.y1:.0f} "
                            f"in {fb.width:.0f}x{fb.height:.0f})")
        boxes.append((group, text, bb))
    for i, (ga, ta, a) in enumerate(boxes):
        for gb, tb, b in boxes[i + 1:]:
            if ga == gb and "legend" in ga:
                continue
            w = min(a.x1, b.x1) - max(a.x0, b.x0)
            h = min(a.y1, b.y1) - max(a.y0, b.y0)
            if w > TOLERANCE_PX and h > TOLERANCE_PX:
                problems.append(f"{name}: {ta!r} overlaps {tb!r}")
    return problems
