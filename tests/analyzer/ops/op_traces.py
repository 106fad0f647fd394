"""Small SYNTHETIC Kineto traces with CPU ops recorded with shapes (``record_shapes=True``), made in
memory by :func:`trace` (no file is kept: the tests write them to a temporary folder).

Each op is ``(name, start_us, dur_us, dims, types, children, launches)``: ``children`` nested ops,
``launches`` ``(t_us, kernel_start_us, kernel_dur_us, stream)`` kernel launches made at ``t_us``
while the op is the innermost one on the thread."""

from __future__ import annotations

import json


def trace(ops, *, stray=(), gpu: str = "NVIDIA A100-SXM4-80GB", tid: int = 100, old_ids: bool = False) -> dict:
    """``ops``: top-level ops (above); ``stray``: kernels with no launching op ``(start_us, dur_us)``.
    ``old_ids``: the GPU events' ``External id`` is their correlation id (older Kineto), so only the
    thread's op stack ties a launch to its op."""
    events, ext, corr = [], [0], [1000]

    def op(o):
        name, start, dur, dims, types, children, launches = o
        ext[0] += 1
        me = ext[0]
        args = {"External id": me}
        if dims is not None:
            args["Input Dims"], args["Input type"] = dims, types
        events.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": tid, "ts": start, "dur": dur,
                       "args": args})
        for c in children:
            op(c)
        for t, ks, kd, stream in launches:
            corr[0] += 1
            c = corr[0]
            x = c if old_ids else me
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": tid, "ts": t,
                           "dur": 1, "args": {"External id": x, "correlation": c}})
            events.append({"ph": "X", "cat": "kernel", "name": f"gemm_{name}", "pid": 0, "tid": stream, "ts": ks,
                           "dur": kd, "args": {"External id": x, "device": 0, "stream": stream, "correlation": c,
                                               "grid": [1, 1, 1], "block": [128, 1, 1]}})

    for o in ops:
        op(o)
    for ks, kd in stray:
        corr[0] += 1
        events.append({"ph": "X", "cat": "kernel", "name": "stray_kernel", "pid": 0, "tid": 7, "ts": ks, "dur": kd,
                       "args": {"device": 0, "stream": 7, "correlation": corr[0], "grid": [1, 1, 1],
                                "block": [32, 1, 1]}})
    events.sort(key=lambda e: e["ts"])
    return {"traceEvents": events, "deviceProperties": [{"id": 0, "name": gpu, "numSms": 108}]}


def write(tmp_path, doc, name: str = "ops.json"):
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return p


def linear_trace(**kw) -> dict:
    """``aten::linear`` over ``aten::addmm`` (bf16, 4096x1024 @ 1024x512, two launches on two streams
    that overlap by 5 us), an ``aten::bmm`` (8 x 128x64 @ 64x256, fp32) and one stray kernel."""
    addmm = ("aten::addmm", 10, 20, [[512], [4096, 1024], [1024, 512], [], []],
             ["c10::BFloat16"] * 3 + ["Scalar", "Scalar"], [], [(12, 100, 10, 7), (14, 105, 10, 8)])
    linear = ("aten::linear", 5, 30, [[4096, 1024], [512, 1024], [512]], ["c10::BFloat16"] * 3, [addmm], [])
    bmm = ("aten::bmm", 40, 10, [[8, 128, 64], [8, 64, 256]], ["float", "float"], [], [(42, 130, 4, 7)])
    return trace([linear, bmm], stray=[(200, 3)], **kw)
