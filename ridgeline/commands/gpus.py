"""``ridgeline gpus``: the GPU catalogue (datasheet peaks, ridge points).
"""

from __future__ import annotations

import click

from ridgeline.commands.common import _config, _say


@click.command("gpus")
@click.argument("name", required=False)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--config", type=click.Path(dir_okay=False),
              help="TOML file with a [tool.ridgeline] table (default ./ridgeline.toml): its GPUs are listed too.")
def gpus_cmd(name, fmt, config=None):
    """The GPU catalogue: datasheet peaks and ridge points (FLOP/byte) per precision.

    Ridge point = peak FLOP/s / DRAM bandwidth: kernels whose arithmetic intensity
    is below it are memory-bound. Peaks are dense (no sparsity), at boost clock.
    NVIDIA and AMD Instinct GPUs, listed by vendor; an AMD row is one device as HIP
    sees it (an MI250 is two: the row is one GCD).

    \b
    Examples:
      ridgeline gpus                 # every GPU, ridge points per precision
      ridgeline gpus h100            # one GPU in detail, with its datasheet
      ridgeline gpus mi300x
      ridgeline gpus --format json

    \b
    Your own GPUs, in ridgeline.toml (or pyproject.toml under [tool.ridgeline.gpus."NAME"]),
    with the catalogue's keys; peaks are dense FLOP/s per precision (fp64, fp32, fp16,
    tf32_tensor, fp16_tensor, fp8_tensor, int8_tensor, fp64_tensor):
      [gpus."Lab GPU"]                   # illustrative figures, not a real part
      aliases = ["NVIDIA Lab GPU 48GB"]   # the device name ncu records
      cc = "8.9"
      sm_count = 100
      memory_bytes = 48e9
      dram_bw_bytes_per_s = 1.0e12
      peak_flops = { fp32 = 50e12, fp16_tensor = 200e12 }
      source = "the datasheet you took the figures from"
    An AMD GPU: vendor = "AMD", gfx = "gfx942" and cu_count (compute units) in place of
    cc and sm_count.
    """
    import json

    from ridgeline.analyzer.kernels.gpus import PRECISION_LABELS, PRECISIONS, catalogue, lookup
    from ridgeline.pipeline import configure_gpus
    from ridgeline.rules.engine import load_config

    configure_gpus(load_config(_config(config)))

    if name:
        gpu, note = lookup(name)
        if fmt == "json":
            _say(json.dumps(gpu.to_dict() | {"match": note}, indent=2))
            return
        target = (f"{gpu.vendor} {gpu.arch}, {gpu.gfx} (HIP {gpu.hip_cc})" if gpu.vendor == "AMD"
                  else f"{gpu.arch}, compute capability {gpu.cc}")
        lines = [
            f"{gpu.name}  ({note})",
            f"  {target}{', ' + gpu.segment if gpu.segment else ''}, "
            f"{gpu.sm_count} {gpu.unit}s, {gpu.memory_bytes / 1e9:.0f} GB, "
            f"DRAM {gpu.dram_bw_bytes_per_s / 1e12:.3g} TB/s",
            f"  {'precision':<14}{'peak TFLOP/s':>14}{'ridge FLOP/B':>14}",
        ]
        for p in PRECISIONS:
            if gpu.peak(p) is None:
                continue
            mark = "  (derived)" if p in gpu.derived else ""
            lines.append(f"  {PRECISION_LABELS[p]:<14}{gpu.peak(p) / 1e12:>14.4g}{gpu.ridge(p):>14.3g}{mark}")
        lines.append(f"  source: {gpu.source}")
        if gpu.notes:
            lines.append(f"  notes: {gpu.notes}")
        import textwrap

        for line in lines:
            _say(textwrap.fill(line, width=80, subsequent_indent="    ") if len(line) > 80 else line)
        return
    gpus = catalogue()
    if fmt == "json":
        _say(json.dumps([g.to_dict() for g in gpus], indent=2))
        return
    from ridgeline.analyzer.kernels.precisions import COLUMNS as short

    def ridge(v):
        if v is None:
            return "-"
        return f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.2f}"

    from ridgeline.analyzer.kernels.gpus import configured

    # grouped by vendor, then segment, then architecture (newest first), so ~90 entries stay readable
    mine = {id(g) for g in configured()}
    titles = {"datacenter": "Datacenter", "workstation": "Workstation", "geforce": "GeForce"}
    groups: dict[tuple, list] = {}
    for g in gpus:
        seg = "configured" if id(g) in mine else (g.segment or "other")
        if g.vendor == "AMD":  # gfx942 -> (9, 4, 2): newest first, as compute capabilities sort
            from ridgeline.analyzer.kernels.archtable import hip_version

            key, label = tuple(int(x) for x in (hip_version(g.gfx) or "0.0").split(".")) + (int(g.gfx[-1], 16),), g.gfx
        else:
            key, label = tuple(int(x) for x in g.cc.split(".")), f"CC {g.cc}"
        groups.setdefault((g.vendor, seg, key, g.arch, label), []).append(g)
    seg_order = {"configured": 0, "datacenter": 1, "workstation": 2, "geforce": 3, "other": 4}
    vendor_order = {"NVIDIA": 0, "AMD": 1}
    width = max(15, *(len(g.name) + 2 for g in gpus))  # 19 for the bundled names: 80 columns
    _say("Ridge points, FLOP/byte = dense peak FLOP/s / DRAM B/s ('-': no such unit)")
    _say(f"{'GPU':<{width}}{'TB/s':>5}" + "".join(f"{short[p]:>7}" for p in PRECISIONS))
    vendor_titles = {"NVIDIA": "NVIDIA", "AMD": "AMD Instinct (one device per row: an MI250 row is one GCD)"}
    shown_vendor = None
    for vendor, seg, key, arch, label in sorted(groups, key=lambda k: (vendor_order.get(k[0], 9),
                                                                       seg_order.get(k[1], 9), tuple(-x for x in k[2]))):
        if vendor != shown_vendor:
            _say(f"== {vendor_titles.get(vendor, vendor)} ==")
            shown_vendor = vendor
        title = "Your GPUs (config)" if seg == "configured" else titles.get(seg, "Other")
        _say(f"{title}, {arch} ({label})")
        for g in groups[(vendor, seg, key, arch, label)]:
            _say(f"  {g.name:<{width - 2}}{g.dram_bw_bytes_per_s / 1e12:>5.2f}"
                       + "".join(f"{ridge(g.ridge(p)):>7}" for p in PRECISIONS))
    _say("tc = tensor cores, AMD: matrix cores (BF16tc: fp16 and bf16 inputs; GeForce:")
    _say("FP32-accumulate rate). AMD FP32: the packed/matrix FP32 ceiling.")
    _say("Details and sources: ridgeline gpus NAME")

