"""Text helpers the HTML and Markdown renderers share (escaping, durations, percents, numbers);
ridgeline.render.html and .postmortem_html import them from here, never each other."""

from __future__ import annotations

import html
import math
import re

from ridgeline import fmt


def esc(value: object) -> str:
    """Escape any input-derived value for HTML text or a quoted attribute. A line break becomes
    ``&#10;`` (the same to a browser): a name's next line never starts a line of the file, where
    ``::`` would read as a workflow command (the HTML report keeps its own lines, CSS ``::before``)."""
    return html.escape("" if value is None else str(value), quote=True).replace("\n", "&#10;")


_LONG_WORD = re.compile(r"\S{24,}")
_BREAK_AFTER = re.compile(r"([/\\_.:=,])(?=[^/\\_.:=,])")


def esc_breakable(value: object) -> str:
    """:func:`esc`, and in words of 24 characters or more (paths, metric names) a ``<wbr>`` after
    each ``/ _ . : = ,`` so the browser wraps them where a part of the name ends, never inside one
    (CSS ``overflow-wrap: anywhere`` would cut ``decode-b8.ncu`` into ``decode-b`` / ``8.ncu``).
    The text read by a person or a script is unchanged: ``<wbr>`` adds no character."""
    text = "" if value is None else str(value)
    out, last = [], 0
    for m in _LONG_WORD.finditer(text):
        out.append(esc(text[last:m.start()]))
        out.append("<wbr>".join(esc(part) for part in _BREAK_AFTER.sub("\\1\0", m.group(0)).split("\0")))
        last = m.end()
    out.append(esc(text[last:]))
    return "".join(out)


HTML_LABEL_MAX = 160  # a kernel label in the page's tables (the terminal's are cut at 48)


def kernel_displays(pairs) -> list[str]:
    """What an HTML table shows for each ``(label, full name)``: the label, or where the analyzer
    cut it to fit a terminal (it holds an ellipsis) the label at its full length, since a page has
    room (ridgeline.analyzer.kernels.families.full_label), told apart from the other rows' the way
    the analyzer tells labels apart (ridgeline.names.distinct_labels), at up to
    :data:`HTML_LABEL_MAX` characters. Two different kernels never read alike."""
    from ridgeline.analyzer.kernels.families import full_label
    from ridgeline.names import distinct_labels

    pairs = [(None if lab is None else str(lab), None if name is None else str(name)) for lab, name in pairs]
    named = [i for i, (_lab, name) in enumerate(pairs) if name]
    full = distinct_labels([full_label(pairs[i][1]) for i in named], [pairs[i][1] for i in named], HTML_LABEL_MAX)
    longer = dict(zip(named, full))
    shown = [longer[i] if i in longer and lab and "\u2026" in lab else lab for i, (lab, _name) in enumerate(pairs)]
    names_by_text: dict = {}
    for text, (_lab, name) in zip(shown, pairs):
        names_by_text.setdefault(text, set()).add(name)
    return [lab if text != lab and len(names_by_text[text]) > 1 else text
            for text, (lab, _name) in zip(shown, pairs)]


def fmt_seconds(value: float | None) -> str:
    return fmt.duration(value, fmt.HTML)


def fmt_pct(value: float | None, digits: int = 1) -> str:
    return fmt.percent(value, fmt.HTML, digits=digits)


def fmt_num(value: float | None, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    return f"{value:.{digits}g}"


def fmt_si(value: float | None, unit: str) -> str:
    return fmt.si(value, unit, fmt.PLOT)


_ID_RE = re.compile(r'\bid="([^"]+)"')


def embed_svg(svg: str, prefix: str, label: str) -> str:
    """Make a matplotlib SVG document safe and unique inside an HTML page.

    Drops the XML prologue, doctype, comments (matplotlib writes each text as a comment)
    and the RDF metadata block; prefixes every id (and every reference to it) with
    ``prefix`` so two plots never share an id; labels the image for screen readers.
    """
    svg = svg[svg.index("<svg") :]
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.S)
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)
    ids = set(_ID_RE.findall(svg))

    def ren(m: re.Match) -> str:
        return f'id="{prefix}{m.group(1)}"'

    svg = _ID_RE.sub(ren, svg)

    def ref(m: re.Match) -> str:
        name = m.group(2)
        return f"{m.group(1)}#{prefix}{name}" if name in ids else m.group(0)

    svg = re.sub(r'(url\(|href=")#([^)"]+)', ref, svg)
    svg = svg.replace("<svg ", f'<svg role="img" aria-label="{esc(label)}" class="plot" ', 1)
    svg = re.sub(r'\s(width|height)="[0-9.]+pt"', "", svg, count=2)  # scale with the page
    return svg.strip()
