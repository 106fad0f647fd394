"""Test helper: a raw-page CSV written from a .ncu-rep with NVIDIA's reader itself.

What `ncu --import report.ncu-rep --csv --page raw --print-units base` would print, made
without ncu: the identity columns ncu prints (ID, Kernel Name, Context, Stream, Block Size,
Grid Size, Device, CC), then every metric, a units row second, values at full precision.
Written independently of ridgeline.parsers.ncu.rep so the two paths can be compared.
"""

from __future__ import annotations

import csv


def report_to_raw_csv(report_path, csv_path) -> int:
    import ncu_report

    ctx = ncu_report.load_report(str(report_path))
    actions = [ctx.range_by_idx(r).action_by_idx(a) for r in range(ctx.num_ranges())
               for a in range(ctx.range_by_idx(r).num_actions())]
    rows, units = [], {}
    for i, a in enumerate(actions):
        def get(name):
            m = a.metric_by_name(name)
            if m is None:
                return ""
            if not m.has_value():
                return "n/a"
            if m.kind() == m.ValueKind_STRING:
                return m.as_string()
            if m.kind() in (m.ValueKind_UINT64, m.ValueKind_UINT32):
                return str(m.as_uint64())
            return repr(float(m.as_double()))

        row = {
            "ID": str(i),
            "Kernel Name": a.name(a.NameBase_DEMANGLED),
            "Context": get("launch__context_id"),
            "Stream": get("launch__stream_id"),
            # ncu prints launch dimensions as integers, whatever type the report stores them in
            "Block Size": "({}, {}, {})".format(*(int(float(get(f"launch__block_dim_{x}"))) for x in "xyz")),
            "Grid Size": "({}, {}, {})".format(*(int(float(get(f"launch__grid_dim_{x}"))) for x in "xyz")),
            "Device": get("launch__device_id"),
            "CC": "{}.{}".format(int(float(get("device__attribute_compute_capability_major"))),
                                 int(float(get("device__attribute_compute_capability_minor")))),
        }
        for name in a.metric_names():
            row[name] = get(name)
            units.setdefault(name, a.metric_by_name(name).unit() or "")
        rows.append(row)
    ident = ["ID", "Kernel Name", "Context", "Stream", "Block Size", "Grid Size", "Device", "CC"]
    metrics = sorted({k for r in rows for k in r} - set(ident))
    with open(csv_path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, quoting=csv.QUOTE_ALL, lineterminator="\n")
        w.writerow(ident + metrics)
        w.writerow([""] * len(ident) + [units.get(m, "") for m in metrics])
        for r in rows:
            w.writerow([r.get(c, "") for c in ident + metrics])
    return len(rows)
