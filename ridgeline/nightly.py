"""``ridgeline diff`` with several documents: which are the baselines, which is tonight, and the
comparison that fits (a trend, or the pairwise diff when there are too few nights).

Arguments: ``NIGHT... TONIGHT`` (files), or folders of nightly documents (their ``*.json`` files,
not recursive), or both: ``diff nights/ tonight.json``. The last argument is tonight; when it is
a folder, tonight is its latest document (``diff nights/``). A folder's file that is tonight's
(``nights/`` holding ``tonight.json``) is not its own baseline; files named as arguments are
used as given.

* one baseline: the pairwise diff (:func:`ridgeline.analyzer.nightly.diff.compare`), as two files give;
* fewer than ``trend_min_baselines``: the pairwise diff against the latest baseline, saying so;
* otherwise the trend (:func:`ridgeline.analyzer.nightly.trend.trend`).

"Latest" is by the document's time (its first telemetry window) when every document has one,
else by argument order, a folder's files in name order.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Mapping

from ridgeline.errors import InputError


def _expand(path: str) -> tuple[list[str], int]:
    """A folder's ``*.json`` files in name order (and how many other files it holds), or the path."""
    if path != "-" and os.path.isdir(path):
        entries = sorted(p for p in Path(path).iterdir() if p.is_file())
        docs = [str(p) for p in entries if p.suffix.lower() == ".json"]
        if not docs:
            raise InputError(path, "expected nightly ridgeline JSON documents (*.json) in the folder, found none")
        return docs, len(entries) - len(docs)
    return [path], 0


def _same(a: str, b: str) -> bool:
    try:
        return a != "-" and b != "-" and os.path.samefile(a, b)
    except OSError:
        return False


# left-out nights named one by one in the notices; the rest are counted
LEFT_OUT_NAMED = 5


def collect(paths: tuple[str, ...] | list[str], read: Callable[[str], Any]):
    """(baselines, tonight, notices, left out): :class:`ridgeline.analyzer.nightly.trend.Night` objects,
    oldest first, and ``[(label, why)]`` for the past nights that are not valid documents.

    Every document is validated (:func:`ridgeline.analyzer.nightly.docshape.check_document`) before
    anything is judged: a bad tonight is an InputError; a bad past night (unreadable, not JSON,
    NaN figures, an unknown schema major...) is left out and named in the notices, so the trend
    stands on the nights that are valid and says how many. When tonight is a folder's latest
    document and the folder's last file by name is not valid, it is refused as tonight (it may be
    tonight's: judging yesterday in its place would be wrong)."""
    from ridgeline.analyzer.nightly.docshape import check_document
    from ridgeline.analyzer.nightly.trend import Night, order_nights

    notices: list[str] = []
    files: list[tuple[str, bool]] = []  # (path, found in a folder)
    ignored = 0
    for p in paths[:-1]:
        found, other = _expand(p)
        files += [(f, f != p) for f in found]
        ignored += other
    last, other = _expand(paths[-1])
    ignored += other
    left_out: list[tuple[str, str]] = []

    def load(p: str) -> Night:
        doc = read(p)
        check_document(doc, p)
        return Night(p, doc)

    def try_load(p: str) -> Night | None:
        try:
            return load(p)
        except InputError as err:
            left_out.append((p, str(err)))
            return None

    if len(last) == 1:
        lasts = [load(last[0])]
    else:  # a folder last: its latest document is tonight
        load(last[-1])  # the last by name must be valid (see above)
        lasts = [n for n in map(try_load, last) if n is not None]
        order_nights(lasts)
    tonight = lasts[-1]
    baselines = [n for n in (try_load(p) for p, in_folder in files if not (in_folder and _same(p, tonight.label)))
                 if n is not None] + lasts[:-1]
    if ignored:
        notices.append(f"{ignored} file(s) in the folder(s) not named *.json were not read")
    if left_out:
        total = len(baselines) + len(left_out)
        notices.append(f"judged on {len(baselines)} of {total} past nights: {len(left_out)} left out, not valid "
                       "ridgeline documents")
        notices += [f"left out: {why}" for _label, why in left_out[:LEFT_OUT_NAMED]]
        if len(left_out) > LEFT_OUT_NAMED:
            notices.append(f"left out: {len(left_out) - LEFT_OUT_NAMED} more night(s) like these")
    if not baselines:
        why = f"; {len(left_out)} left out, e.g. {left_out[0][1]}" if left_out else ""
        raise InputError(tonight.label, "expected at least one valid baseline document before tonight's "
                         f"(ridgeline diff NIGHT... TONIGHT, or a folder of nightly JSON documents){why}")
    return baselines, tonight, notices, left_out


def diff_many(paths, read, overrides: Mapping[str, Any], *, fmt: str, top: int) -> tuple[str, bool]:
    """The rendered comparison and whether it regressed."""
    from ridgeline.analyzer.nightly.diff import compare, thresholds
    from ridgeline.analyzer.nightly.trend import order_nights, trend

    baselines, tonight, notices, left_out = collect(paths, read)
    order = order_nights(baselines)
    need = thresholds(overrides)["trend_min_baselines"]
    if len(baselines) < max(need, 2):
        latest = baselines[-1]
        cmp = compare(latest.doc, tonight.doc, base_label=latest.label, new_label=tonight.label, overrides=overrides)
        if len(baselines) > 1:
            notices.append(f"{len(baselines)} baselines, fewer than trend_min_baselines = {need}: compared with the "
                           f"latest ({latest.label}, by {order}) only")
        cmp.notices[:0] = notices
        from ridgeline.render.nightly import diff as R

        return _render(cmp, fmt, top, R.render_diff_json, R.render_diff_markdown, R.format_diff)
    tr = trend(baselines, tonight, overrides=overrides, order=order)
    tr.notices[:0] = notices
    tr.left_out = [{"label": label, "reason": why} for label, why in left_out]
    from ridgeline.render.nightly import trend as R

    return _render(tr, fmt, top, R.render_trend_json, R.render_trend_markdown, R.format_trend)


def _render(result, fmt: str, top: int, as_json, as_markdown, as_text) -> tuple[str, bool]:
    """``result`` (a pairwise Comparison or a Trend) in ``fmt``, and whether it regressed."""
    if fmt == "json":
        return as_json(result), result.regressed
    if fmt == "markdown":
        return as_markdown(result, top=top), result.regressed
    return as_text(result, top=top), result.regressed
