"""Names shortened to fit (ridgeline.render.fit, issue 37 item 10): cut only where a word ends,
first and last words kept, never two names alike, and nothing cut that fits."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ridgeline.render.fit import ELLIPSIS, fit_labels, fit_names, tokens

GEMMS = [f"cuBLAS sm90 xmma gemm bf16 {t} tn" for t in ("128x64", "64x32", "64x64", "64x256", "64x128")]


def test_names_that_fit_are_kept_whole():
    assert fit_labels(["vLLM rms_norm (fused add)", "x"], 30) == ["vLLM rms_norm (fused add)", "x"]


def test_cut_at_word_ends_keeping_the_distinguishing_tail():
    labels = fit_labels(GEMMS, 30)
    assert len(set(labels)) == len(GEMMS)
    for name, label in zip(GEMMS, labels):
        assert len(label) <= 30 and ELLIPSIS in label
        head, tail = (part.strip() for part in label.split(ELLIPSIS))
        assert name.startswith(head) and name.endswith(tail)
        # every kept piece is a whole word of the name (no "bf16 12…")
        words = set(name.split())
        assert all(w in words for w in (head + " " + tail).split())


def test_host_names_stay_apart_and_keep_their_numbers():
    hosts = [f"gpu-node-rack12-row4-unit-{n:06d}.cluster.example.com" for n in (123, 124)]
    a, b = fit_labels(hosts, 30)
    assert a != b and a.endswith("123") and b.endswith("124")


def test_names_alike_to_the_last_word_are_numbered():
    names = ["a" * 50, "a" * 49 + "b"]
    labels = fit_labels(names, 20)
    assert len(set(labels)) == 2 and all(len(x) <= 20 for x in labels)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="ab_-. :<>,xy019", min_size=1, max_size=60), min_size=1, max_size=8, unique=True),
       st.integers(min_value=12, max_value=40))
def test_never_two_names_alike_and_never_too_long(names, width):
    names = [" ".join(n.split()) or "z" for n in names]
    names = list(dict.fromkeys(names))
    table = fit_names(names, lambda t: len(t) <= width)
    assert len(set(table.values())) == len(names)
    assert all(len(v) <= width for v in table.values())
    assert all(table[n] == n for n in names if len(n) <= width)


def test_tokens_join_back():
    name = "void at::native::elementwise_kernel<128, 4>(int, float*)"
    assert "".join(tokens(name)) == name
    # each piece ends at a separator, or before a space, or at the end
    toks = tokens(name)
    assert all(t[-1] in ":_<>,()*" or nxt.startswith(" ") for t, nxt in zip(toks, toks[1:])), toks


@pytest.mark.parametrize("n_hosts", [1, 3])
def test_heatmap_svg_holds_its_scale_and_time_axis(n_hosts):
    """The heatmap's width covers the scale and both time labels, which never overlap."""
    from datetime import datetime, timezone

    from ridgeline.render.fleet import html as fleet_html
    from tests.render.fleet.test_fleet_page import windows

    hosts = tuple(f"very-long-host-name-in-rack-{k:03d}.example.org" for k in range(n_hosts))
    svg = fleet_html.heatmap_svg(windows(hosts=hosts, gpus=1, n=2, start=datetime(2026, 3, 1, tzinfo=timezone.utc)))
    width = float(re.search(r'width="(\d+)"', svg).group(1))
    xs = [float(x) for x in re.findall(r'<text x="([\d.]+)"[^>]*>\d+%</text>', svg)]
    assert xs and max(xs) + fleet_html.text_width("100%", 10) <= width
    # two short bins: no room for both time labels under the cells, so one line "start – end"
    (axis,) = re.findall(r'<text x="([\d.]+)" y="\d+" font-size="10">([^<]*\u2013[^<]*)</text>', svg)
    assert float(axis[0]) + fleet_html.text_width(axis[1], 10) <= width
    for h in hosts:  # full names in a tooltip when shortened
        assert h in svg


def test_terminal_notes_wrap_paths_after_a_folder_not_inside_a_file_name():
    from ridgeline.render.text import _wrap

    name = "nsysai-h100x2-nsys2026.2.1-fastvideo-train-mfu-window.sqlite"
    lines = _wrap(f"- ../shared/samples/nsys/{name}: Nsight Systems 2026.2.1.210 sqlite export", "  ")
    assert all(len(line) <= 80 for line in lines)
    assert any(name in line for line in lines), lines  # the file name whole on one line


def test_html_tables_show_labels_uncut_and_never_alike():
    """Labels the analyzer cut to 48 characters (for a terminal) show whole in the page's tables;
    two kernels whose cut labels differ only in the cut part stay apart."""
    import polars as pl

    from ridgeline.analyzer.kernels.families import family_columns
    from ridgeline.render.htmltext import kernel_displays

    names = [f"void at::native::vectorized_elementwise_kernel<(int)4, void at::native::pow_tensor_scalar_kernel_impl"
             f"<float, float>(at::TensorIteratorBase &, T2)::[lambda(float) (instance {k})]>(int, T2, T3)"
             for k in (1, 2)]
    cut = family_columns(pl.DataFrame({"name": names}), name_column="name", fallback_column="name")["kernel_label"]
    assert all(len(c) <= 48 for c in cut)
    shown = kernel_displays(zip(cut.to_list(), names))
    assert len(set(shown)) == 2
    assert all(len(s) > 48 and "\u2026" not in s.replace("<\u2026>", "") for s in shown), shown
    assert kernel_displays([("vLLM rms_norm", "x")]) == ["vLLM rms_norm"]  # an uncut label is kept
