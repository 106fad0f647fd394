"""The HTML report page (self-contained, escaped) and the Markdown job summary."""

from __future__ import annotations

import base64
import hashlib
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from _render_sample import PIPE_NAME, SCRIPT_NAME, make_result
from ridgeline.render.html import embed_svg, render_html
from ridgeline.render.markdown import md, render_markdown


class _Page(HTMLParser):
    """Collects tags, per-table body rows and script bodies from a page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.rows: dict[str, int] = {}
        self.cells: dict[str, list[list[str]]] = {}
        self.scripts: list[str] = []
        self._table: list[str] = []
        self._in_tbody = False
        self._in_script = False
        self._cell: list[str] | None = None
        self.ids: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if "id" in a:
            self.ids.append(a["id"])
        if tag == "table":
            self._table.append(a.get("id", ""))
        elif tag == "tbody":
            self._in_tbody = True
        elif tag == "tr" and self._in_tbody and self._table:
            t = self._table[-1]
            self.rows[t] = self.rows.get(t, 0) + 1
            self.cells.setdefault(t, []).append([])
        elif tag in ("td",) and self._in_tbody:
            self._cell = []
        elif tag == "script":
            self._in_script = True
            self.scripts.append("")

    def handle_endtag(self, tag):
        if tag == "table" and self._table:
            self._table.pop()
        elif tag == "tbody":
            self._in_tbody = False
        elif tag == "td" and self._cell is not None and self._table:
            self.cells[self._table[-1]][-1].append("".join(self._cell))
            self._cell = None
        elif tag == "script":
            self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data
        else:
            self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


@pytest.fixture(scope="module")
def result():
    return make_result()


@pytest.fixture(scope="module")
def page(result):
    return render_html(result)


@pytest.fixture(scope="module")
def parsed(page):
    p = _Page()
    p.feed(page)
    p.close()
    return p


def test_script_kernel_name_is_escaped_text(page, parsed):
    assert page.count("<script") == 1  # only the page's own sorter
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    kernel_names = [row[0] for row in parsed.cells["kernel-table"]]
    assert SCRIPT_NAME in kernel_names  # the parser sees it as text, not as a tag
    assert "alert" not in "".join(parsed.scripts)


def test_no_external_resources(page, parsed):
    urls = re.findall(r"(?:https?:)?//[A-Za-z0-9.-]+\.[a-z]{2,}[^\s\"'<>)]*", page)
    allowed = {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}
    assert set(urls) <= allowed, set(urls) - allowed
    for tag, attrs in parsed.tags:
        assert tag not in ("link", "iframe", "img", "object", "embed", "base")
        assert "src" not in attrs, (tag, attrs)
        href = attrs.get("href") or attrs.get("xlink:href")
        assert href is None or href.startswith("#"), (tag, href)
    assert "@import" not in page and "url(http" not in page


def test_content_security_policy_allows_only_the_page_script(page, parsed):
    csp = next(a["content"] for t, a in parsed.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert "default-src 'none'" in csp
    digest = base64.b64encode(hashlib.sha256(parsed.scripts[0].encode()).digest()).decode()
    assert f"'sha256-{digest}'" in csp


def test_findings_table_has_one_row_per_finding_sorted_by_impact(result, parsed):
    assert parsed.rows["findings-table"] == len(result.findings) == 3
    codes = [row[2][:5] for row in parsed.cells["findings-table"]]
    # impact 320 us (RL101) > 140 us (RL102) > none (RL201)
    assert codes == ["RL101", "RL102", "RL201"]
    assert "Batch more requests per decode step." in parsed.cells["findings-table"][0][4]
    assert "Look at <memory coalescing> & occupancy." in parsed.cells["findings-table"][1][4]


def test_kernel_table_lists_every_name(result, parsed):
    assert parsed.rows["kernel-table"] == result.summary.height == 6
    shares = [row[3] for row in parsed.cells["kernel-table"]]
    assert shares[0] == "42.1%"  # gemv: 1.6 ms of 3.8 ms


def test_summary_states_gpu_roof_sources_and_time_split(parsed):
    text = " ".join(parsed.text)
    assert "H100 SXM" in text
    roofs = parsed.cells["roofs"]
    assert ["BF16 TC", "989 TFLOP/s", "295 FLOP/B", "measured by ncu"] in roofs
    assert ["FP8 TC", "1.98 PFLOP/s", "591 FLOP/B", "catalogue (datasheet)"] in roofs
    # launches: 1.6 + 1.0 + 0.2 + 0.1 ms memory-bound of 3.8 ms = 76.3%
    assert re.search(r"memory-bound:\s*76\.3%", text)
    assert re.search(r"compute-bound:\s*21\.1%", text)


def test_inputs_and_skipped_items_are_listed(parsed):
    assert [r[0] for r in parsed.cells["inputs-table"]] == ["decode.csv", "dcgm.txt"]
    skipped = parsed.cells["skipped-table"]
    assert len(skipped) == 2
    assert any("memcpy_<b>" in r[3] for r in skipped)


def test_plots_are_inline_svg_with_unique_ids(page, parsed):
    svgs = [a for t, a in parsed.tags if t == "svg"]
    assert len(svgs) == 2  # roofline + telemetry
    assert all(a.get("role") == "img" for a in svgs)
    assert len(parsed.ids) == len(set(parsed.ids)), "duplicate ids across inline SVGs"
    # every internal reference points at an id on the page
    refs = set(re.findall(r'(?:href="|url\()#([^")]+)', page))
    assert refs <= set(parsed.ids)
    assert "<?xml" not in page and "<!DOCTYPE svg" not in page and "<!--" not in page


def test_page_without_findings_or_telemetry(result):
    res = make_result(with_telemetry=False)
    res.findings = []
    page = render_html(res)
    p = _Page()
    p.feed(page)
    assert "No rule fired." in page
    assert "findings-table" not in p.rows
    assert len([t for t, _a in p.tags if t == "svg"]) == 1


def test_embed_svg_prefixes_ids_and_drops_comments():
    svg = ('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="10pt" height="5pt">'
           '<!-- <script>x</script> --><defs><path id="a"/></defs><use xlink:href="#a"/>'
           '<g clip-path="url(#a)"/></svg>')
    out = embed_svg(svg, "p-", "x <label>")
    assert 'id="p-a"' in out and 'href="#p-a"' in out and "url(#p-a)" in out
    assert "<!--" not in out and "script" not in out
    assert 'aria-label="x &lt;label&gt;"' in out
    assert 'width="10pt"' not in out


def test_markdown_escapes_pipes_backticks_and_html(result):
    text = render_markdown(result)
    assert "layer\\|norm\\`fused\\`" in text
    assert "<script>" not in text and "&lt;script&gt;" in text
    lines = text.splitlines()
    start = lines.index("### Findings (3)")
    table = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        table.append(line)
    assert len(table) == 2 + 3  # header, separator, one row per finding
    # every row of every table has as many cells as its header (unescaped pipes would add cells)
    cells = lambda line: len(re.split(r"(?<!\\)\|", line.strip().strip("|")))  # noqa: E731
    block = []
    for line in lines + [""]:
        if line.startswith("|"):
            block.append(line)
            continue
        if block:
            assert len({cells(b) for b in block}) == 1, block
            block = []


def test_md_escape():
    assert md("a|b`c`<d>") == "a\\|b\\`c\\`&lt;d&gt;"
    assert md(PIPE_NAME).count("\\|") == 1
    assert md("two\nlines") == "two\\\\nlines"  # the newline shown escaped (safe_text), \\ for Markdown


# ----------------------------------------------------------------------------------------
# end to end: synthetic fixture (ncu export + dcgmi dmon) -> pipeline -> report command
# ----------------------------------------------------------------------------------------
SCENARIOS = Path(__file__).resolve().parents[2] / "fixtures" / "scenarios"


def _cli(*args: str) -> tuple[int, str, str]:
    import contextlib
    import io

    from ridgeline.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        with pytest.raises(SystemExit) as exc:
            main(list(args))
    return exc.value.code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def decode_b1():
    path = SCENARIOS / "decode-b1-h100"
    if not path.exists():
        pytest.skip("fixture scenario decode-b1-h100 not present")
    return path


def test_cli_report_html_end_to_end(decode_b1, tmp_path):
    from ridgeline.pipeline import analyze_paths

    out = tmp_path / "report.html"
    rc, _stdout, err = _cli("report", str(decode_b1), "-o", str(out))
    assert rc == 0, err
    page = out.read_text(encoding="utf-8")
    p = _Page()
    p.feed(page)
    expected = analyze_paths([decode_b1])
    assert len(expected.findings) > 0
    assert p.rows["findings-table"] == len(expected.findings)
    assert p.rows["kernel-table"] == expected.summary.height
    plots = [t for t, a in p.tags if t == "svg" and dict(a).get("class") not in ("heatmap", "spark")]
    assert len(plots) == 2  # roofline + telemetry (the folder has a dmon file)
    assert [t for t, a in p.tags if t == "svg" and dict(a).get("class") == "heatmap"]  # and the fleet heatmap
    assert [r[1] for r in p.cells["inputs-table"]] == [i.kind for i in expected.inputs]
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", page))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}


def test_cli_report_markdown_to_stdout(decode_b1):
    rc, stdout, err = _cli("report", str(decode_b1), "--format", "markdown")
    assert rc == 0, err
    assert stdout.startswith("## ridgeline report")
    assert "### Findings (" in stdout and "| Kernel |" in stdout
    assert "<svg" not in stdout


def test_cli_report_format_follows_suffix(decode_b1, tmp_path):
    out = tmp_path / "summary.md"
    rc, _o, err = _cli("report", str(decode_b1 / "profile.ncu-raw.csv"), "-o", str(out))
    assert rc == 0, err
    assert out.read_text().startswith("## ridgeline report")


def test_hostile_kernel_name_from_a_real_export_is_escaped_everywhere(tmp_path):
    """A kernel name with markup and mathtext dollars, parsed from an ncu CSV, through every output."""
    src = SCENARIOS / "decode-b8-h100" / "profile.ncu-raw.csv"
    if not src.exists():
        pytest.skip("fixture scenario decode-b8-h100 not present")
    hostile = "<script>alert(1)</script><img src=x onerror=alert(2)>$x$|`y`"
    text = src.read_text(encoding="utf-8").replace("void flash_fwd_splitkv_kernel<", f"void {hostile}<")
    profile = tmp_path / "hostile.csv"
    profile.write_text(text, encoding="utf-8")
    out = tmp_path / "r.html"
    rc, _o, err = _cli("report", str(profile), "-o", str(out))
    assert rc == 0, err
    page = out.read_text(encoding="utf-8")
    assert page.count("<script") == 1 and "<img" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;" in page
    rc, md_text, err = _cli("report", str(profile), "--format", "markdown")
    assert rc == 0, err
    assert "<script>" not in md_text and "<img" not in md_text
    png = tmp_path / "r.png"
    rc, _o, err = _cli("roofline", str(profile), "-o", str(png), "--top", "20")
    assert rc == 0, err
    assert png.stat().st_size > 10_000


def test_top_finding_is_called_out(page, result):
    top = sorted(result.findings, key=lambda f: f.sort_key)[0]
    assert top.code == "RL101"
    assert '<p class="verdict"><b>Top finding:</b> <code>RL101</code>' in page
    assert "**Top finding:** RL101" in render_markdown(result)


def test_markdown_summary_fits_a_pull_request(decode_b1):
    """One table line per finding; remedies folded in <details>, the evidence left to the JSON and
    the HTML (issue 37 item 11), no counter recipes; the whole page stays under the job-summary
    budget (every sample and scenario: tests/view_labels.py)."""
    from ridgeline.pipeline import analyze_paths
    from ridgeline.render.markdown import BUDGET_BYTES

    res = analyze_paths([decode_b1])
    text = render_markdown(res)
    findings = res.findings
    assert findings
    head, _, folded = text.partition("<details><summary>What to do (the evidence: JSON and HTML report)</summary>")
    assert folded, "remedies are folded"
    table = [ln for ln in head.split("### Findings", 1)[1].splitlines() if ln.startswith("| ") and ln[2:3].isdigit()]
    assert len(table) == len(findings)
    assert all(len(ln) < 600 for ln in table)
    assert "**Do:**" not in head and "_evidence:_" not in head
    assert "__" not in text.replace("\\_\\_", "")  # no raw ncu metric recipe (sm__..., dram__...)
    for f in findings:  # every remedy still reaches the reader, once per rule and remedy
        assert folded.count(md(f.remedy)) == 1
    assert len(text.encode()) < BUDGET_BYTES <= 6 * 1024


def test_markdown_over_budget_drops_detail_then_cuts(result):
    """Plan by plan: fewer kernel rows, inputs to a count, fewer finding rows, no remedies; past
    the last plan the page is cut at a line, its <details> closed, and says where the rest is."""
    from ridgeline.render.markdown import CUT_NOTE

    res = result
    full = render_markdown(res, budget=None)
    assert "### Inputs" in full
    smaller = render_markdown(res, budget=len(full.encode()) - 1)
    assert len(smaller.encode()) < len(full.encode()) and CUT_NOTE not in smaller
    tiny = render_markdown(res, budget=1500)
    assert len(tiny.encode()) < 1500 and tiny.rstrip().endswith(CUT_NOTE)
    assert tiny.count("<details>") == tiny.count("</details>")
