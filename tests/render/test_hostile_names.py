"""No terminal, Markdown or workflow-command injection through names (issue 21, escapes).

A generator puts hostile text (ESC/OSC/CSI sequences, BEL, NUL, DEL, C1 controls, bidi
overrides, U+2028, newlines, ``|``, backticks, ``%0A``, ``::warning``, ``##[``) into the kernel
names of a real ncu CSV, the kernel names of a real Nsight Systems trace, the labels of a real
dcgm-exporter scrape, and a file name; each is then run through every output format. Checked:
no raw control character reaches stdout, stderr or the written file (other than the newlines
the format writes), no line can be read as a GitHub workflow command (other than ridgeline's own
``--format github`` lines), JSON keeps the names exact, and the name is still recognisable.

The inputs are built in ``tmp_path`` from ``../shared/samples`` (read in place, never copied into
the repo); the tests skip when that folder is absent.
"""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from ridgeline.cli import main
from ridgeline.render import safe_text
from ridge_inputs import SAMPLES

NCU = SAMPLES / "ncu" / "gardenia-a100-details-printfp-gemm.csv"
NSYS = SAMPLES / "nsys" / "tornadovm-rtx4090-nsys2024.5.1-gpullama3-nsys-12-llm-fp16_cuda_gpu_trace.csv"
PROM = SAMPLES / "dcgm" / "datadog-t4-dcgm-exporter-scrapes.prom"

# each one a way in: OSC title, CSI moves and colour, BEL, NUL, DEL, C1 (CSI 0x9b, NEL 0x85),
# bidi override, line separator, zero-width, newline/CR, Markdown table and code breakers,
# an encoded newline and workflow commands in both syntaxes
PAYLOADS = [
    "\x1b]0;pwned\x07", "\x1b[2J\x1b[H", "\x1b[31mred\x1b[0m", "\x07", "\x00", "\x7f", "\x9b31m", "\x85",
    "\u202eevil\u202c", "\u2028", "\u200b", "\n::warning::injected", "\r", "|", "`code`", "<b>x</b>",
    "%0A::error::x", "##[add-mask]y", "\x08\x08",
]
# a NUL byte makes a text export binary (the readers refuse it as such): files carry the rest,
# the unit tests below carry NUL
IN_FILES = [p for p in PAYLOADS if p != "\x00"]
# what no output may hold raw: every C0 but LF, DEL, C1, bidi/zero-width/separators
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]")
COMMAND_LINE = re.compile(r"(?m)^\s*::")

pytestmark = pytest.mark.skipif(not (NCU.exists() and NSYS.exists() and PROM.exists()),
                                reason="../shared/samples is absent")


def hostile(marker: str, k: int) -> str:
    """``marker`` followed by every payload, rotated by ``k`` so each name leads with another."""
    rot = IN_FILES[k % len(IN_FILES):] + IN_FILES[: k % len(IN_FILES)]
    return marker + "_" + "_".join(rot)


def rename_csv(src, dst, column: str, keep=lambda name: True, rename=lambda name: name) -> dict[str, str]:
    """Copy a CSV with every distinct value of ``column`` (where ``keep``) made hostile."""
    with open(src, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    col = rows[0].index(column)
    names: dict[str, str] = {}
    for row in rows[1:]:
        if len(row) > col and keep(row[col]):
            row[col] = names.setdefault(row[col], rename(hostile(f"EVIL{len(names)}", len(names))))
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    dst.write_text(buf.getvalue(), encoding="utf-8")
    return names


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile")
    ncu = tmp / "profile\x1b]0;title\x07\u202e.csv"  # a hostile file name too
    rename_csv(NCU, ncu, "Kernel Name")  # line breaks too: a quoted one is legal (issue 32 item 10)
    nsys = tmp / "trace_cuda_gpu_trace.csv"
    rename_csv(NSYS, nsys, "Name", keep=lambda n: not n.startswith("[CUDA"))
    prom = tmp / "scrape.prom"
    host = "host\x1b]0;x\x07\u202e\x9b|`::warning::h"
    label = host.replace("\\", "\\\\").replace('"', '\\"')
    prom.write_text(PROM.read_text(encoding="utf-8").replace('Hostname="424773df46e0"', f'Hostname="{label}"'),
                    encoding="utf-8")
    return {"ncu": ncu, "nsys": nsys, "prom": prom, "tmp": tmp, "host": host}


def strings(obj) -> list[str]:
    """Every string value in a decoded JSON document."""
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, dict):
        return [t for v in obj.values() for t in strings(v)]
    if isinstance(obj, list):
        return [t for v in obj for t in strings(v)]
    return []


def run(capsys, *args):
    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in args])
    out = capsys.readouterr()
    return exc.value.code, out.out, out.err


def assert_safe(text: str, what: str, *, commands_allowed: bool = False) -> None:
    raw = RAW.search(text)
    assert raw is None, f"{what}: raw {raw.group(0)!r} at {raw.start()}: {text[max(0, raw.start() - 40):raw.start() + 40]!r}"
    assert "##[" not in text, f"{what}: a v1 workflow command reaches the output"
    if commands_allowed:  # --format github: every line is one of ridgeline's own annotations
        for line in text.splitlines():
            # `::command props::data` with no raw `:` in the props: the first `::` after them is ours
            assert re.match(r"::(error|warning|notice)( [^:\n]*)?::", line), f"{what}: {line[:80]!r}"
    else:
        assert not COMMAND_LINE.search(text), f"{what}: a line starts a workflow command"


FORMATS = ["table", "json", "csv", "sarif", "github"]


@pytest.mark.parametrize("source", ["ncu", "nsys"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_analyze_every_format_escapes_hostile_names(capsys, inputs, source, fmt):
    gpu = ["--gpu", "A100 SXM 40GB"] if source == "ncu" else []  # the export does not name its GPU
    code, out, err = run(capsys, "analyze", inputs[source], "--format", fmt, *gpu)
    assert code in (0, 1), err
    assert out, "no output"
    assert_safe(out, f"analyze {source} --format {fmt}", commands_allowed=fmt == "github")
    assert_safe(err, "stderr")
    if fmt == "json":  # JSON stays exact: the hostile names come back as they were
        text = "\n".join(strings(json.loads(out)))
        assert "\x1b]0;pwned\x07" in text and "\u202eevil" in text and "\x9b31m" in text and "##[add-mask]" in text
    elif source == "nsys":  # a trace alone: its names are in the JSON document only
        pass
    elif fmt == "csv":  # full names: still recognisable, the controls shown escaped
        assert "EVIL0" in out
        assert "\\x1b]0;pwned\\x07" in out
    elif fmt == "sarif":  # JSON: exact after decoding, escaped in the text
        assert "\\u001b]0;pwned\\u0007" in out and any("##[add-mask]" in t for t in strings(json.loads(out)))
    elif fmt == "table":  # C++ short names (after a payload's last `::`), cut to the width
        assert "[add-mask]y" in out and "\\x08\\x08" in out
    if fmt == "csv":
        for row in csv.reader(io.StringIO(out)):
            assert not any(cell[:1] and cell[0] in "=+@" for cell in row), row


def test_analyze_to_a_file_is_escaped_too(capsys, inputs):
    for fmt in ("table", "json", "github", "csv"):
        path = inputs["tmp"] / f"out.{fmt}"
        code, _out, err = run(capsys, "analyze", inputs["nsys"], "--format", fmt, "-o", path)
        assert code in (0, 1), err
        assert_safe(path.read_text(encoding="utf-8"), f"-o {fmt}", commands_allowed=fmt == "github")


@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_report_escapes_hostile_names(capsys, inputs, fmt):
    path = inputs["tmp"] / f"report.{fmt}"
    code, _out, err = run(capsys, "report", inputs["ncu"], "--gpu", "A100 SXM 40GB", "--format", fmt, "-o", path)
    assert code in (0, 1), err
    text = path.read_text(encoding="utf-8")
    assert_safe(text, f"report --format {fmt}")
    assert_safe(err, "stderr")
    assert "add-mask" in text
    if fmt == "markdown":
        # no cell is split by a name's `|`, no code span opened by its backticks, no tag kept
        for line in text.splitlines():
            if line.startswith("|") and "EVIL" in line:
                assert "\\|" in line and "\\`" in line and "<b>" not in line, line


@pytest.mark.parametrize("fmt", FORMATS + ["markdown"])
def test_telemetry_labels_are_escaped(capsys, inputs, fmt):
    if fmt == "markdown":
        return  # telemetry has no Markdown view
    code, out, err = run(capsys, "telemetry", inputs["prom"], "--format", fmt)
    assert code in (0, 1), err
    assert_safe(out, f"telemetry --format {fmt}", commands_allowed=fmt == "github")
    assert_safe(err, "stderr")
    if fmt == "json":
        assert inputs["host"] in strings(json.loads(out))


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_diff_of_hostile_documents(capsys, inputs, fmt):
    docs = []
    for i in range(2):
        path = inputs["tmp"] / f"doc{i}.json"
        code, _out, err = run(capsys, "analyze", inputs["ncu"], "--gpu", "A100 SXM 40GB", "--format", "json",
                              "-o", path)
        assert code in (0, 1), err
        docs.append(path)
    code, out, err = run(capsys, "diff", *docs, "--format", fmt)
    assert code in (0, 1), err
    assert_safe(out, f"diff --format {fmt}")
    assert_safe(err, "stderr")


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_diff_trend_of_hostile_documents(capsys, inputs, fmt):
    """Several nights of telemetry from a host with a hostile name: the trend escapes it too."""
    path = inputs["tmp"] / "night.json"
    code, _out, err = run(capsys, "telemetry", inputs["prom"], "--format", "json", "-o", path)
    assert code in (0, 1), err
    code, out, err = run(capsys, "diff", path, path, path, path, "--format", fmt)
    assert code in (0, 1), err
    assert_safe(out, f"diff (trend) --format {fmt}")
    assert_safe(err, "stderr")
    if fmt == "json":
        assert json.loads(out)["mode"] == "trend"


def test_error_line_escapes_a_hostile_file_name(capsys, inputs):
    bad = inputs["tmp"] / "missing\x1b]0;pwn\x07\n::error::x\u202e.csv"
    code, out, err = run(capsys, "analyze", bad)
    assert code == 2
    assert err.count("\n") == 1, err  # one line
    assert_safe(err, "error line")
    assert "missing\\x1b]0;pwn\\x07\\n" in err  # recognisable


def test_error_line_escapes_quoted_content(capsys, inputs):
    """A damaged file whose bad value is quoted back: the quote is escaped."""
    path = inputs["tmp"] / "damaged.csv"
    text = NCU.read_text(encoding="utf-8").splitlines()
    header = text[0].replace('"Kernel Name"', '"Kernel\x1b[2J Name\u202e"').replace('"Metric Value"', '"Metric\x9b Value"')
    path.write_text("\n".join([header] + text[1:]) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "analyze", path)
    assert_safe(err, "error line")
    assert_safe(out, "stdout")
    if code == 2:
        assert err.count("\n") == 1, err


def test_colour_on_a_terminal_adds_only_ridgelines_own_codes(capsys, inputs, monkeypatch):
    """Colour is added after escaping: every ESC in the output starts one of ridgeline's SGR
    codes (bold, red, yellow, cyan, reset), none comes from a name."""
    from ridgeline.render import colour

    import click.utils

    monkeypatch.setattr(colour, "wanted", lambda stream: True)
    # click strips ANSI codes when stdout is not a terminal (as under capsys): act as one
    monkeypatch.setattr(click.utils, "should_strip_ansi", lambda stream=None, color=None: False)
    code, out, err = run(capsys, "analyze", inputs["ncu"], "--gpu", "A100 SXM 40GB")
    assert code in (0, 1), err
    assert "\x1b[" in out  # coloured
    assert not re.search(r"\x1b(?!\[(?:0|1|33|36|1;31)m)", out), "an ESC that is not a colour code"
    assert_safe(out.replace("\x1b[", ""), "coloured table")
    assert "\\x1b]0;pwned\\x07" in out
