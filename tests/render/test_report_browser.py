"""The HTML report in a real browser (headless Chromium): it loads, logs nothing to the console,
fetches nothing, sorts its kernel table, and shows the hostile kernel name as text.

Skipped when no Chromium is installed (``apt-get install chromium``; ``.ci/run`` tries).
A screenshot is saved under ``test-artifacts/`` (gitignored) for a human to look at.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from _render_sample import SCRIPT_NAME, make_result
from ridgeline.render.html import render_html

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

# Runs after the page's own script: records what was fetched, exercises the sorter, and writes
# the answers into the DOM, where --dump-dom can read them.
PROBE = """
(function () {
  var out = {};
  out.resources = performance.getEntriesByType("resource").map(function (e) { return e.name; });
  out.findingsRows = document.querySelectorAll("#findings-table tbody tr").length;
  out.kernelRows = document.querySelectorAll("#kernel-table tbody tr").length;
  var share = document.querySelector("#kernel-table thead th:nth-child(4)");
  function col(n) {
    return Array.prototype.map.call(document.querySelectorAll("#kernel-table tbody tr"),
      function (r) { return r.cells[n].textContent; });
  }
  share.click();
  out.sortedAsc = col(3);
  share.click();
  out.sortedDesc = col(3);
  document.querySelector("#kernel-table thead th:nth-child(1)").click();
  out.byName = col(0);
  out.scriptTags = document.getElementsByTagName("script").length;
  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
"""


def _browser() -> str | None:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


def _run(browser: str, tmp_path: Path, url: str, *extra: str) -> subprocess.CompletedProcess:
    args = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-extensions",
        "--enable-logging=stderr",
        "--v=0",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        f"--user-data-dir={tmp_path / 'profile'}",
        *extra,
        url,
    ]
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def _console_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


@pytest.fixture(scope="module")
def browser():
    found = _browser()
    if found is None:
        pytest.skip("no Chromium found (install it with `apt-get install chromium`); browser test skipped")
    return found


@pytest.fixture(scope="module")
def page_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "report.html"
    path.write_text(render_html(make_result()), encoding="utf-8")
    return path


def test_page_loads_without_console_messages_and_shows_names_as_text(browser, page_file, tmp_path):
    proc = _run(browser, tmp_path, page_file.as_uri(), "--dump-dom")
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = proc.stdout
    assert "<h1>ridgeline report" in dom
    # no console output at all: no script error, no CSP violation, no blocked request
    assert _console_lines(proc.stderr) == []
    # the hostile name is a text node (serialized escaped), and no extra script element exists
    assert html.escape(SCRIPT_NAME, quote=False) in dom
    assert len(re.findall(r"<script\b", dom)) == 1


def test_sorting_works_and_nothing_is_fetched(browser, page_file, tmp_path):
    page = page_file.read_text(encoding="utf-8")
    probe = PROBE.strip()
    digest = base64.b64encode(hashlib.sha256(probe.encode()).digest()).decode()
    # allow the probe by its hash, next to the page's own script hash; nothing else changes
    page, n = re.subn(r"script-src ('sha256-[^']+')", rf"script-src \1 'sha256-{digest}'", page, count=1)
    assert n == 1
    page = page.replace("</body>", f"<script>{probe}</script></body>")
    copy = tmp_path / "probe.html"
    copy.write_text(page, encoding="utf-8")
    proc = _run(browser, tmp_path, copy.as_uri(), "--dump-dom")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _console_lines(proc.stderr) == []
    m = re.search(r'<pre id="probe">(.*?)</pre>', proc.stdout, re.S)
    assert m, "probe did not run (a script error or CSP block?)"
    out = json.loads(html.unescape(m.group(1)))
    assert out["resources"] == []
    assert out["findingsRows"] == 3
    assert out["kernelRows"] == 6
    # share column: 42.1 / 26.3 / 21.1 / 5.3 / 2.6 / 2.6 percent
    assert out["sortedAsc"] == ["2.6%", "2.6%", "5.3%", "21.1%", "26.3%", "42.1%"]
    assert out["sortedDesc"] == ["42.1%", "26.3%", "21.1%", "5.3%", "2.6%", "2.6%"]
    # by name (localeCompare): the names that start with a letter come in alphabetical order
    letters = [n for n in out["byName"] if n[0].isalpha()]
    # (the table shows each kernel's label: what it is, ridgeline.analyzer.kernels.families)
    assert letters == sorted(letters, key=str.lower) and len(letters) == 5
    assert letters[0] == "cuBLAS gemv_bf16" and letters[1].startswith("cuBLAS sm90 xmma gemm")
    assert SCRIPT_NAME in out["byName"]
    assert out["scriptTags"] == 2  # the page's sorter and the probe


def test_screenshot_for_a_human(browser, page_file, tmp_path):
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "report-browser.png"
    if shot.exists():
        shot.unlink()
    proc = _run(
        browser, tmp_path, page_file.as_uri(), f"--screenshot={shot}", "--window-size=1280,3200",
        "--hide-scrollbars",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert shot.exists() and shot.read_bytes()[:4] == b"\x89PNG"
    assert shot.stat().st_size > 50_000  # a rendered page, not a blank one


def test_fixture_report_end_to_end_in_the_browser(browser, tmp_path):
    """ncu export + dcgmi dmon fixture -> pipeline -> page -> Chromium: loads clean, all rows there."""
    scenario = Path(__file__).resolve().parents[2] / "fixtures" / "scenarios" / "decode-b1-h100"
    if not scenario.exists():
        pytest.skip("fixture scenario decode-b1-h100 not present")
    from ridgeline.pipeline import analyze_paths

    result = analyze_paths([scenario])
    page = tmp_path / "b1.html"
    page.write_text(render_html(result), encoding="utf-8")
    proc = _run(browser, tmp_path, page.as_uri(), "--dump-dom")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _console_lines(proc.stderr) == []
    body = proc.stdout.split('id="findings-table"', 1)[1].split("</table>", 1)[0]
    assert body.count("<tr") == 1 + len(result.findings)  # header row + one per finding
    assert proc.stdout.count("<svg") >= 2  # roofline and telemetry figures rendered inline


# ----------------------------------------------------------------------------------------
# layout (issue 37 items 8 and 10): every element inside the viewport, the heatmap's content
# inside its viewBox, shortened names carrying the full name in a tooltip
# ----------------------------------------------------------------------------------------
LAYOUT_PROBE = """
(function () {
  var out = {outside: [], svgOutside: [], svgs: 0};
  var vw = document.documentElement.clientWidth;
  function where(el) {
    var s = el.tagName.toLowerCase();
    if (el.id) { s += "#" + el.id; }
    var p = el.closest("[id]");
    return (p && p !== el ? p.tagName.toLowerCase() + "#" + p.id + " " : "") + s + " " +
      (el.textContent || "").slice(0, 60);
  }
  Array.prototype.forEach.call(document.querySelectorAll("main *"), function (el) {
    if (el.closest("svg") && el.tagName.toLowerCase() !== "svg") { return; }
    var r = el.getBoundingClientRect();
    if (!r.width && !r.height) { return; }
    if (r.left < -0.5 || r.right > vw + 0.5) { out.outside.push(where(el) + " [" + r.left + ", " + r.right + "]"); }
  });
  Array.prototype.forEach.call(document.querySelectorAll("svg.heatmap"), function (svg) {
    out.svgs += 1;
    var vb = svg.viewBox.baseVal;
    Array.prototype.forEach.call(svg.querySelectorAll("text, rect"), function (el) {
      var b = el.getBBox();
      if (b.x < vb.x - 0.5 || b.y < vb.y - 0.5 || b.x + b.width > vb.x + vb.width + 0.5 ||
          b.y + b.height > vb.y + vb.height + 0.5) {
        out.svgOutside.push(el.tagName + " " + (el.textContent || "").slice(0, 60) + " " +
          [b.x, b.y, b.width, b.height].join(","));
      }
    });
    var texts = Array.prototype.map.call(svg.querySelectorAll(":scope > text"), function (t) { return t.getBBox(); });
    texts.forEach(function (a, i) {
      texts.slice(i + 1).forEach(function (b) {
        if (a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height) {
          out.svgOutside.push("overlap " + [a.x, a.y, b.x, b.y].join(","));
        }
      });
    });
  });
  var pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
"""


def _probe(browser: str, tmp_path: Path, page: str, probe: str, *extra: str) -> dict:
    """Run ``probe`` (allowed by its hash, like the page's own script) in the page; its JSON."""
    digest = base64.b64encode(hashlib.sha256(probe.strip().encode()).digest()).decode()
    page, n = re.subn(r"script-src ('sha256-[^']+')", rf"script-src \1 'sha256-{digest}'", page, count=1)
    assert n == 1
    copy = tmp_path / "probe.html"
    copy.write_text(page.replace("</body>", f"<script>{probe.strip()}</script></body>"), encoding="utf-8")
    proc = _run(browser, tmp_path, copy.as_uri(), "--dump-dom", *extra)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _console_lines(proc.stderr) == []
    m = re.search(r'<pre id="probe">(.*?)</pre>', proc.stdout, re.S)
    assert m, "probe did not run (a script error or CSP block?)"
    return json.loads(html.unescape(m.group(1)))


@pytest.fixture(scope="module")
def demo_page():
    """The report page of the bundled demo inputs (``ridgeline demo``'s profile and dmon file)."""
    from ridgeline.commands.demo import DEMO_FILES, DEMO_START, demo_folder
    from ridgeline.pipeline import analyze_paths
    from ridgeline.commands.common import _parse_start as parse_start

    folder = demo_folder()
    result = analyze_paths([Path(str(folder / n)) for n in DEMO_FILES], start=parse_start(DEMO_START))
    return render_html(result)


@pytest.mark.parametrize("which", ["demo", "sample"])
def test_every_box_is_inside_the_viewport_and_the_heatmap_inside_its_viewbox(browser, demo_page, page_file,
                                                                             tmp_path, which):
    page = demo_page if which == "demo" else page_file.read_text(encoding="utf-8")
    out = _probe(browser, tmp_path, page, LAYOUT_PROBE, "--window-size=1024,800")
    assert out["outside"] == [], "\n".join(out["outside"])
    assert out["svgOutside"] == []
    if which == "demo":
        assert out["svgs"] == 1  # the demo's telemetry draws the fleet heatmap

