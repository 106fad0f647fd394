"""Communication and ranks in the terminal, Markdown and HTML views (docs/timeline.md).

With at least two devices carrying a rank: the per-rank table (compute, communication,
exposed communication, idle, capture, compute vs the ranks' median); otherwise, where a device
ran communication kernels: one line per such device (communication time, exposed, overlap).
The figures come from ``ridgeline.analyzer.timeline.comm`` / ``ridgeline.analyzer.timeline.ranks``."""

from __future__ import annotations

from pathlib import Path

RANK_LEGEND = ("compute = union of non-communication kernels; comm = union of communication kernels (NCCL/RCCL, "
               "custom all-reduce); exposed = comm with no compute beside it; x median = compute / the ranks' median")
COMM_LEGEND = ("comm = union of communication kernels (NCCL/RCCL, custom all-reduce); exposed = comm with no compute "
               "kernel beside it; overlap = the share hidden behind compute")


def source_numbers(devices) -> dict[str, int]:
    """Each input's number (1, 2...) in the order of the device table: the terminal's device
    column says ``#2 gpu:0`` and one line per input names the file (cut file names read alike)."""
    out: dict[str, int] = {}
    if devices is not None:
        for src in devices.get_column("source").to_list():
            out.setdefault(src, len(out) + 1)
    return out


def device_id(r, numbers: dict[str, int] | None = None) -> str:
    """``gpu:N``, with ``#k`` of its input in front when there are several inputs."""
    dev = "gpu:?" if r["device"] is None else f"gpu:{r['device']}"
    if numbers and len(numbers) > 1 and r.get("source") in numbers:
        return f"#{numbers[r['source']]} {dev}"
    return dev


def _device_label(r) -> str:
    dev = "gpu:?" if r["device"] is None else f"gpu:{r['device']}"
    return f"{Path(r['source']).name} {dev}"


def ranks_heading(table) -> str:
    """What the rank table covers: ``one job of 4 ranks``, or ``2 of 128 ranks of one job`` where
    the traces record a larger world size (``ridgeline.analyzer.timeline.ranks.coverage``)."""
    from ridgeline.analyzer.timeline.ranks import coverage

    captured, world = coverage(table)
    if world is not None and world > captured:
        return f"{captured} of {world} ranks of one job (world size {world} recorded by the traces)"
    return f"one job of {captured} ranks"


def _first_upper(text: str) -> str:
    return text[:1].upper() + text[1:]


def _rank_origin(table) -> str:
    how = sorted({h for h in table.get_column("rank_from").to_list() if h})
    words = {"trace": "the traces (distributedInfo.rank)", "file name": "the file names", "file order": "the file order"}
    return ", ".join(words.get(h, h) for h in how) or "unknown"


def comm_devices(devices):
    """Device rows with communication kernels (None when there are none)."""
    import polars as pl

    if devices is None or not devices.height or "comm_kernels" not in devices.columns:
        return None
    d = devices.filter(pl.col("comm_kernels").fill_null(0) > 0)
    return d if d.height else None


def terminal_lines(tl, width: int = 80) -> list[str]:
    """The per-rank table, else the communication lines; [] when neither applies."""
    import textwrap

    from ridgeline.analyzer.timeline.ranks import rank_table
    from ridgeline.render.text import fmt_pct, fmt_seconds, shorten

    devices = getattr(tl, "devices", None)
    numbers = source_numbers(devices)
    table = rank_table(devices)
    lines: list[str] = []
    if table is not None:
        lines += ["", *textwrap.wrap(f"Ranks: {ranks_heading(table)}; ranks from {_rank_origin(table)}", width),
                  f"{'rank':>5} {'device':<24}{'compute':>9}{'comm':>9}{'exposed':>9}{'idle':>9}{'x median':>9}"]
        for r in table.iter_rows(named=True):
            vs = f"{r['compute_vs_median']:.2f}" if r["compute_vs_median"] is not None else "-"
            lines.append(f"{r['rank']:>5} {shorten(device_id(r, numbers), 23):<24}{fmt_seconds(r['compute_busy_s']):>9}"
                         f"{fmt_seconds(r['comm_busy_s']):>9}{fmt_seconds(r['comm_exposed_s']):>9}"
                         f"{fmt_seconds(r['idle_s']):>9}{vs:>9}")
        lines += textwrap.wrap(RANK_LEGEND, width)
        return lines + collective_lines(tl, width)
    d = comm_devices(devices)
    if d is None:
        return []
    lines += ["", "Communication per device (docs/timeline.md)",
              f"{'device':<30}{'kernels':>8}{'comm':>10}{'exposed':>10}{'overlap':>9}{'of kern':>9}"]
    for r in d.iter_rows(named=True):
        label = device_id(r, numbers)
        of_kernel = r["comm_busy_s"] / r["kernel_busy_s"] if r["kernel_busy_s"] else None
        lines.append(f"{shorten(label, 29):<30}{r['comm_kernels']:>8,}{fmt_seconds(r['comm_busy_s']):>10}"
                     f"{fmt_seconds(r['comm_exposed_s']):>10}{fmt_pct(r['comm_overlap_share']):>9}{fmt_pct(of_kernel):>9}")
    lines += textwrap.wrap(COMM_LEGEND + "; of kern = comm / kernel busy time", width)
    return lines


COLLECTIVE_LEGEND = ("transfer = the shortest duration of the instance across ranks (bytes moving once all are "
                     "there); wait = the longest rank's duration - transfer; skew = latest - earliest start; last = "
                     "the rank that arrived last; busbw = bytes / transfer x NCCL's bus factor")


def _bw(v) -> str:
    return f"{v / 1e9:.1f}GB/s" if v is not None else "-"


def collective_lines(tl, width: int = 80, top: int = 8) -> list[str]:
    """Collectives matched across ranks (the ``top`` instances by wait) and the per-rank waits; []
    when none were matched (``ridgeline.analyzer.timeline.collectives``)."""
    import textwrap

    from ridgeline.render.text import fmt_seconds, shorten

    c = getattr(tl, "collectives", None)
    if c is None or not c.height:
        return []
    from ridgeline.analyzer.timeline.ranks import rank_table

    how = " and ".join(sorted(set(c.get_column("matched_by").to_list())))
    table = rank_table(getattr(tl, "devices", None))
    cover = f" ({ranks_heading(table)})" if table is not None else ""
    total_t = float(c.get_column("transfer_s").sum())
    total_w = float(c.get_column("wait_s").sum())
    lines = ["", *textwrap.wrap(f"Collectives matched across ranks{cover}: {c.height:,} instance(s) by {how}; transfer "
                                f"{fmt_seconds(total_t)}, longest waits {fmt_seconds(total_w)} in all", width),
             f"{'group':<15}{'seq':>4} {'name':<15}{'ranks':>5}{'transfer':>9}{'wait':>8}{'skew':>8}{'last':>5}"
             f"{'busbw':>10}"]
    for r in c.sort("wait_s", "start_ns", descending=[True, False]).head(top).iter_rows(named=True):
        lines.append(f"{shorten(r['group'] or '-', 14):<15}{r['seq']:>4} {shorten(r['name'], 14):<15}{r['ranks']:>5}"
                     f"{fmt_seconds(r['transfer_s']):>9}{fmt_seconds(r['wait_s']):>8}"
                     f"{fmt_seconds(r['start_skew_s']):>8}{r['last_rank']:>5}{_bw(r['busbw_bytes_per_s']):>10}")
    if c.height > top:
        lines.append(f"(the {top} longest waits of {c.height:,}; all in JSON timeline.collectives)")
    w = getattr(tl, "rank_waits", None)
    if w is not None and w.height:
        lines.append(f"{'rank':>5}{'instances':>10}{'comm':>9}{'waited':>9}{'last':>6}{'imposed':>9}")
        for r in w.iter_rows(named=True):
            lines.append(f"{r['rank']:>5}{r['collectives']:>10,}{fmt_seconds(r['comm_s']):>9}"
                         f"{fmt_seconds(r['comm_wait_s']):>9}{r['arrived_last']:>6,}{fmt_seconds(r['imposed_wait_s']):>9}")
    lines += textwrap.wrap(COLLECTIVE_LEGEND + "; imposed = the others' waits where this rank arrived last", width)
    return lines


def markdown_lines(tl, _table, md) -> list[str]:
    """The same tables for ``ridgeline report --format markdown`` (``_table`` and ``md``: the
    Markdown renderer's table and escaping helpers, passed in by that module, which calls this one)."""
    from ridgeline.analyzer.timeline.ranks import rank_table
    from ridgeline.render.htmltext import fmt_pct, fmt_seconds

    devices = getattr(tl, "devices", None)
    table = rank_table(devices)
    if table is not None:
        rows = [[str(r["rank"]), md(_device_label(r)), fmt_seconds(r["compute_busy_s"]), fmt_seconds(r["comm_busy_s"]),
                 fmt_seconds(r["comm_exposed_s"]), fmt_seconds(r["idle_s"]),
                 f"{r['compute_vs_median']:.2f}" if r["compute_vs_median"] is not None else "-"]
                for r in table.iter_rows(named=True)]
        return [f"Ranks: {md(ranks_heading(table))}; ranks from {md(_rank_origin(table))}; {md(RANK_LEGEND)}.", "",
                *_table(["Rank", "Device", "Compute", "Comm", "Exposed", "Idle", "x median"], rows,
                        ["r", "l", "r", "r", "r", "r", "r"]), ""]
    d = comm_devices(devices)
    if d is None:
        return []
    rows = [[md(_device_label(r)), f"{r['comm_kernels']:,}", fmt_seconds(r["comm_busy_s"]), fmt_seconds(r["comm_exposed_s"]),
             fmt_pct(r["comm_overlap_share"])] for r in d.iter_rows(named=True)]
    return [f"Communication per device: {md(COMM_LEGEND)}.", "",
            *_table(["Device", "Kernels", "Comm", "Exposed", "Overlap"], rows, ["l", "r", "r", "r", "r"]), ""]


def html_section(tl) -> str:
    """``<h3>`` + table for the report page ('' when neither table applies)."""
    from ridgeline.analyzer.timeline.ranks import rank_table
    from ridgeline.render.htmltext import esc, fmt_pct, fmt_seconds

    devices = getattr(tl, "devices", None)

    def secs(v):
        return f'<td class="num" data-v="{v if v is not None else ""}">{esc(fmt_seconds(v))}</td>'

    table = rank_table(devices)
    if table is not None:
        parts = [f'<h3 id="ranks">Ranks</h3><p class="muted">{esc(_first_upper(ranks_heading(table)))}; ranks from '
                 f"{esc(_rank_origin(table))}. {esc(RANK_LEGEND)}.</p>",
                 '<table class="sortable"><thead><tr><th class="num">rank</th><th>device</th><th class="num">compute</th>'
                 '<th class="num">comm</th><th class="num">exposed</th><th class="num">idle</th>'
                 '<th class="num">x median</th></tr></thead><tbody>']
        for r in table.iter_rows(named=True):
            vs = r["compute_vs_median"]
            parts.append(f'<tr><td class="num">{r["rank"]}</td><td class="name">{esc(_device_label(r))}</td>'
                         + secs(r["compute_busy_s"]) + secs(r["comm_busy_s"]) + secs(r["comm_exposed_s"])
                         + secs(r["idle_s"])
                         + f'<td class="num" data-v="{vs if vs is not None else ""}">'
                         f'{esc(f"{vs:.2f}" if vs is not None else "-")}</td></tr>')
        parts.append("</tbody></table>")
        return "".join(parts)
    d = comm_devices(devices)
    if d is None:
        return ""
    parts = [f'<h3 id="communication">Communication</h3><p class="muted">{esc(COMM_LEGEND)}.</p>',
             '<table class="sortable"><thead><tr><th>device</th><th class="num">kernels</th><th class="num">comm</th>'
             '<th class="num">exposed</th><th class="num">overlap</th></tr></thead><tbody>']
    for r in d.iter_rows(named=True):
        ov = r["comm_overlap_share"]
        parts.append(f'<tr><td class="name">{esc(_device_label(r))}</td><td class="num">{r["comm_kernels"]:,}</td>'
                     + secs(r["comm_busy_s"]) + secs(r["comm_exposed_s"])
                     + f'<td class="num" data-v="{ov if ov is not None else ""}">{esc(fmt_pct(ov))}</td></tr>')
    parts.append("</tbody></table>")
    return "".join(parts)
