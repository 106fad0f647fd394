"""Labels on a roofline: the march of a kernel across inputs (series, arrows, input tags),
the short tags that tell inputs apart, and the greedy placement of kernel labels clear of
markers, roofs, legends and each other."""

from __future__ import annotations

import math
from typing import Any, Sequence

from ridgeline.render.plot_style import plain


MARCH_COLOR = "#444444"
MARCH_MAX = 4  # marches drawn at most (the heaviest kernels): more reads as a tangle


def march_key(name: str) -> tuple[str, str | None]:
    """What makes two inputs' kernels "the same kernel" on a march: the function and its
    template arguments in one spelling (:func:`ridgeline.names.join_key`), so a batch sweep whose
    tools spell the arguments differently still joins; parameters and grid sizes do not count."""
    from ridgeline.names import join_key

    return join_key(str(name))


def march_series(points: Sequence[Sequence[dict[str, Any]]], *, limit: int) -> list[list[tuple[int, dict]]]:
    """The kernels that appear (drawn) in more than one input, heaviest first (summed share of GPU
    time), at most ``limit``: each a list of ``(input index, point)`` in input order.

    A kernel joins on its exact name first; a name with no exact partner joins on
    :func:`march_key` when that key is held by one kernel only in each input (two instantiations
    that normalise alike stay apart rather than being joined at random).
    """
    keyed: list[dict[Any, dict]] = []
    for pts in points:
        by_key: dict[Any, dict] = {}
        loose: dict[Any, list[dict]] = {}
        for p in pts:
            if not (p.get("x") and p.get("y")) or p.get("name") is None:
                continue
            by_key.setdefault(("name", str(p["name"])), p)
            loose.setdefault(("key", march_key(p["name"])), []).append(p)
        for k, group in loose.items():
            if len(group) == 1:
                by_key.setdefault(k, group[0])
        keyed.append(by_key)
    names_everywhere: dict[Any, int] = {}
    for by_key in keyed:
        for k in by_key:
            if k[0] == "name":
                names_everywhere[k] = names_everywhere.get(k, 0) + 1
    chains: dict[Any, list[tuple[int, dict]]] = {}
    used: list[set[int]] = [set() for _ in keyed]
    # exact names first, then the loose key for points not yet in a chain
    for kind in ("name", "key"):
        for i, by_key in enumerate(keyed):
            for k, p in by_key.items():
                if k[0] != kind or id(p) in used[i]:
                    continue
                if kind == "key":
                    # a point whose exact name marches already is not joined again
                    if names_everywhere.get(("name", str(p["name"])), 0) > 1:
                        continue
                chain = chains.setdefault(k, [])
                chain.append((i, p))
        for k in [k for k in chains if k[0] == kind]:
            if len(chains[k]) < 2:
                del chains[k]
                continue
            for i, p in chains[k]:
                used[i].add(id(p))
    ordered = sorted(chains.values(), key=lambda c: -sum(float(p.get("share") or 0.0) for _i, p in c))
    return [sorted(c, key=lambda ip: ip[0]) for c in ordered[:max(0, limit)]]


def _draw_march(ax, series, tags: Sequence[str]) -> None:
    """Each series as a line with an arrowhead per step (input order); every point tagged with what
    tells its input apart (``b1``, ``b8``...), once per place, so the march reads without the legend."""
    for rank, chain in enumerate(series):
        xs = [p["x"] for _i, p in chain]
        ys = [p["y"] for _i, p in chain]
        (ln,) = ax.plot(xs, ys, color=MARCH_COLOR, linewidth=1.3, alpha=0.85, zorder=4)
        ln.set_gid(f"march:{rank}")
        for k, ((x0, y0), (x1, y1)) in enumerate(zip(zip(xs, ys), zip(xs[1:], ys[1:]))):
            # the head sits just short of the next point, where it reads as "toward"
            xm = math.exp(math.log(x0) + 0.82 * (math.log(x1) - math.log(x0)))
            ym = math.exp(math.log(y0) + 0.82 * (math.log(y1) - math.log(y0)))
            arrow = ax.annotate("", xy=(xm, ym), xytext=(x0, y0),
                                arrowprops={"arrowstyle": "-|>", "color": MARCH_COLOR, "lw": 1.3,
                                            "mutation_scale": 13, "shrinkA": 0, "shrinkB": 0},
                                zorder=4, annotation_clip=False)
            arrow.set_gid(f"march-step:{rank}:{k}")
    # tags: points of different series at one place share one tag ("b1, b32, b256": attention does not move)
    spots: list[list] = []  # [cx, cy, {input index: tag}, point]
    for _rank, chain in enumerate(series):
        for i, p in chain:
            cx, cy = ax.transData.transform((p["x"], p["y"]))
            tag = tags[i] if i < len(tags) else str(i)
            spot = next((s for s in spots if abs(s[0] - cx) < 12 and abs(s[1] - cy) < 12), None)
            if spot is None:
                spots.append([cx, cy, {i: tag}, p])
            else:
                spot[2].setdefault(i, tag)
                if float(p.get("share") or 0) > float(spot[3].get("share") or 0):
                    spot[3] = p
    for n, (_cx, _cy, by_input, p) in enumerate(spots):
        text = ", ".join(by_input[i] for i in sorted(by_input))
        t = ax.annotate(plain(text), (p["x"], p["y"]), xytext=(0, -4 - math.sqrt(point_area(p["share"])) / 2),
                        textcoords="offset points", ha="center", va="top", fontsize=7.5,
                        color="#222222", zorder=6, annotation_clip=False)
        t.set_gid(f"march-tag:{n}")


def distinct_tags(labels: Sequence[str]) -> list[str]:
    """The part of each input label that tells it apart from the others.

    ``decode-b1-h100, decode-b8-h100, decode-b256-h100`` -> ``b1, b8, b256``: the common
    prefix and suffix are cut at a separator (``-``, ``_``, ``.``, space or ``/``) so a tag never
    starts or ends mid-word. Labels that are all the same, or a single label, are kept whole.
    """
    labels = [str(x) for x in labels]
    if len(set(labels)) < 2:
        return labels
    seps = "-_. /"

    def common_prefix(items: list[str]) -> int:
        n = 0
        for chars in zip(*items):
            if len(set(chars)) > 1:
                break
            n += 1
        # back off to just after the last separator inside the common part
        while n > 0 and items[0][n - 1] not in seps:
            n -= 1
        return n

    pre = common_prefix(labels)
    rev = [x[::-1] for x in labels]
    suf = common_prefix(rev)
    out = []
    for x in labels:
        tag = x[pre: len(x) - suf if suf else None].strip(seps)
        out.append(tag or x)
    return out


def label_text(short: str, input_label: str | None = None) -> str:
    """A point's label: the short kernel name, shortened at token boundaries to fit
    (ridgeline.render.fit); on multi-input plots, tagged with its input."""
    from ridgeline.render.fit import fit_labels

    if input_label is None:
        return fit_labels([short], 30)[0]
    tag = fit_labels([input_label], 14)[0]
    return f"{fit_labels([short], 24)[0]} [{tag}]"


def point_area(share: float) -> float:
    """Marker area (points^2) for a share of GPU time: the area grows linearly with the share."""
    return 28.0 + 1400.0 * max(0.0, min(1.0, float(share or 0.0)))


_OFFSETS = [  # (dx, dy) in points from the marker's edge, nearest first
    (8, 6, "left", "bottom"),
    (8, -6, "left", "top"),
    (-8, 6, "right", "bottom"),
    (-8, -6, "right", "top"),
    (10, 0, "left", "center"),
    (-10, 0, "right", "center"),
    (0, 10, "center", "bottom"),
    (0, -10, "center", "top"),
    (16, 20, "left", "bottom"),
    (16, -20, "left", "top"),
    (-16, 20, "right", "bottom"),
    (-16, -20, "right", "top"),
    (24, 36, "left", "bottom"),
    (24, -36, "left", "top"),
    (-24, 36, "right", "bottom"),
    (-24, -36, "right", "top"),
    (40, 0, "left", "center"),
    (-40, 0, "right", "center"),
    # last resorts for a crowded spot (a cluster near the ridge): further out, on a leader line
    (20, -64, "left", "top"),
    (-20, -64, "right", "top"),
    (0, -72, "center", "top"),
    (20, 64, "left", "bottom"),
    (-20, 64, "right", "bottom"),
]


CLUSTER_MAX_NAMES = 6  # a label for points drawn on top of each other lists at most this many names


def _segments_cross(a, b, c, d) -> bool:
    """Do the segments a-b and c-d (display points) cross?"""
    def orient(p, q, r):
        v = (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])
        return 0 if abs(v) < 1e-9 else (1 if v > 0 else -1)

    o1, o2, o3, o4 = orient(a, b, c), orient(a, b, d), orient(c, d, a), orient(c, d, b)
    return o1 * o2 < 0 and o3 * o4 < 0


def _segment_hits_box(a, b, box) -> bool:
    """Does the segment a-b (display points) pass through the box (x0, y0, x1, y1)?"""
    x0, y0, x1, y1 = box
    if max(a[0], b[0]) < x0 or min(a[0], b[0]) > x1 or max(a[1], b[1]) < y0 or min(a[1], b[1]) > y1:
        return False
    if x0 <= a[0] <= x1 and y0 <= a[1] <= y1 or x0 <= b[0] <= x1 and y0 <= b[1] <= y1:
        return True
    corners = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
    return any(_segments_cross(a, b, corners[k], corners[(k + 1) % 4]) for k in range(4))


def _nearest_on_box(cx, cy, box):
    x0, y0, x1, y1 = box
    return (min(max(cx, x0), x1), min(max(cy, y0), y1))


def cluster_text(names: list[str], width: int = 34) -> str:
    """One label for kernels drawn on top of each other: their shared first words once, then what
    sets each apart (``cuBLAS sm90 xmma gemm bf16:`` / ``128x64 tn, 64x32 tn``), in lines of at
    most ``width`` characters; names without shared words one a line. At most
    :data:`CLUSTER_MAX_NAMES` names, then how many more."""
    from ridgeline.render.fit import fit_labels, tokens
    from ridgeline.render.safe_text import inline

    more = len(names) - CLUSTER_MAX_NAMES
    names = [inline(n) for n in names[:CLUSTER_MAX_NAMES]]  # a newline in a name is shown escaped
    toks = [tokens(n) for n in names]
    m = 0
    while all(len(t) > m + 1 for t in toks) and len({t[m] for t in toks}) == 1:
        m += 1
    head = "".join(toks[0][:m]).rstrip(" _-:(<,")
    rests = ["".join(t[m:]).strip() for t in toks]
    if len(head) >= 6 and len(set(rests)) == len(rests):
        lines = [fit_labels([head], width)[0] + ":"]
        row = ""
        for rest in fit_labels(rests, width - 2):
            cand = f"{row}, {rest}" if row else rest
            if row and len(cand) > width:
                lines.append(row + ",")
                row = rest
            else:
                row = cand
        lines.append(row)
    else:
        lines = fit_labels(names, width)
    if more > 0:
        lines.append(f"+{more} more")
    return "\n".join(lines)


def _place_labels(fig, ax, items, scatters, *, multi: bool, labels: Sequence[str]) -> None:
    """Label the top kernels, greedily: for each (heaviest first) try offsets around the point,
    nearest first, and keep the first whose box stays inside the axes and clear of the legends,
    the ridge labels, the markers, the roof lines, the labels already placed and their leader
    lines (a leader never crosses another, nor another label); else leave it out. Kernels drawn
    on top of each other share one label that lists them (:func:`cluster_text`)."""
    from matplotlib.text import Text

    if not items:
        return
    fig.draw_without_rendering()  # settle the constrained layout before measuring
    renderer = fig.canvas.get_renderer()
    import numpy as np

    ax_box = ax.get_window_extent(renderer)
    boxes = [leg.get_window_extent(renderer).extents for leg in ax.get_children() if type(leg).__name__ == "Legend"]
    boxes += [t.get_window_extent(renderer).extents for t in ax.texts]
    obstacles = [np.asarray(boxes, dtype=float).reshape(-1, 4)]
    px = fig.dpi / 72.0
    for drawable, sizes in scatters:  # markers, as squares around their centres (vectorized)
        if not drawable:
            continue
        centres = ax.transData.transform(np.array([[p["x"], p["y"]] for p in drawable]))
        r = np.sqrt(np.asarray(sizes, dtype=float)) / 2 * px
        obstacles.append(np.column_stack([centres[:, 0] - r, centres[:, 1] - r, centres[:, 0] + r, centres[:, 1] + r]))
    obstacle_arr = np.concatenate(obstacles)
    # roof lines as sampled display points (straight in log-log, so straight on screen)
    pts = [np.empty((0, 2))]
    for ln in ax.get_lines():
        gid = ln.get_gid() or ""
        if not gid.startswith(("roof:", "compare:")):
            continue
        xy = ax.transData.transform(np.column_stack([ln.get_xdata(), ln.get_ydata()]))
        for (x0, y0), (x1, y1) in zip(xy[:-1], xy[1:]):
            n = max(2, int(math.hypot(x1 - x0, y1 - y0) / 4))
            t = np.linspace(0.0, 1.0, n + 1)
            pts.append(np.column_stack([x0 + (x1 - x0) * t, y0 + (y1 - y0) * t]))
    line_pts = np.concatenate(pts)

    def blocked(bb, placed_arr) -> bool:
        for arr in (obstacle_arr, placed_arr):
            if len(arr) and np.any((arr[:, 0] < bb.x1) & (arr[:, 2] > bb.x0) & (arr[:, 1] < bb.y1) & (arr[:, 3] > bb.y0)):
                return True
        return bool(len(line_pts)) and bool(np.any(
            (line_pts[:, 0] >= bb.x0) & (line_pts[:, 0] <= bb.x1) & (line_pts[:, 1] >= bb.y0) & (line_pts[:, 1] <= bb.y1)
        ))

    tags = distinct_tags(labels) if multi else []
    # kernels drawn on top of each other (their markers mostly overlap) get one label
    clusters: list[list[tuple]] = []
    for idx, rank, p in items:
        cx, cy = ax.transData.transform((p["x"], p["y"]))
        r = math.sqrt(point_area(p["share"])) / 2 * px
        text = (p["label"] if p.get("untagged") else
                label_text(p.get("label") or p["short"], tags[idx] if multi else None))
        full = str(p["short"]) if not multi or p.get("untagged") else f"{p['short']} [{tags[idx]}]"
        for c in clusters:
            _i, _r, _p, ccx, ccy, cr, _t, _f = c[0]
            if math.hypot(cx - ccx, cy - ccy) < max(8.0 * px, 0.6 * (r + cr)):
                c.append((idx, rank, p, cx, cy, r, text, full))
                break
        else:
            clusters.append([(idx, rank, p, cx, cy, r, text, full)])

    placed: list = []  # label boxes
    leaders: list = []  # (point, end on its box) of the labels that have a leader line
    for cluster in clusters:
        idx, rank, p, cx, cy, _r, text, _f = cluster[0]
        if len(cluster) > 1:
            text = cluster_text([c[7] for c in cluster])
        # clear the markers of the cluster (in points)
        own = max(math.hypot(c[3] - cx, c[4] - cy) + c[5] for c in cluster) / px
        best = None
        for dx, dy, ha, va in _OFFSETS:
            sx = dx + math.copysign(0.7 * own, dx) if dx else 0.0
            sy = dy + math.copysign(0.7 * own, dy) if dy else 0.0
            lead = abs(sy) > 14 or abs(sx) > 22
            ann = ax.annotate(
                "\n".join(plain(line) for line in text.split("\n")), (p["x"], p["y"]), xytext=(sx, sy),
                textcoords="offset points", ha=ha, va=va, fontsize=8.5, color="#111111", zorder=6,
                multialignment="left",
                arrowprops=({"arrowstyle": "-", "color": "#888888", "lw": 0.6, "shrinkA": 1, "shrinkB": 2}
                            if lead else None),
                annotation_clip=False,
            )
            # the text's own box (Annotation's extent would include the leader line)
            ann.update_positions(renderer)
            bb = Text.get_window_extent(ann, renderer).expanded(1.03, 1.12)
            inside = bb.x0 >= ax_box.x0 and bb.x1 <= ax_box.x1 and bb.y0 >= ax_box.y0 and bb.y1 <= ax_box.y1
            ok = inside and not blocked(bb, np.asarray(placed, dtype=float).reshape(-1, 4))
            seg = ((cx, cy), _nearest_on_box(cx, cy, bb.extents)) if lead else None
            if ok and seg is not None:  # its leader crosses no other leader and no other label
                ok = not any(_segments_cross(seg[0], seg[1], a, b) for a, b in leaders) and not any(
                    _segment_hits_box(seg[0], seg[1], box) for box in placed)
            if ok:  # and no leader placed before runs through its box
                ok = not any(_segment_hits_box(a, b, bb.extents) for a, b in leaders)
            if ok:
                best = (ann, bb, seg)
                break
            ann.remove()
        if best is None:
            continue  # no free spot: leave it unlabelled rather than overprint
        ann, bb, seg = best
        ann.set_gid(f"label:{idx}:{rank}")
        placed.append(bb.extents)
        if seg is not None:
            leaders.append(seg)
