"""A ``.json.gz`` trace is inflated by ISA-L's igzip where the ``isal`` package is installed, else by
the standard library's gzip: the same tables either way, and a damaged file is the same one-line
error (the checksum, a cut stream)."""

from __future__ import annotations

import builtins
import gzip
import json
from pathlib import Path

import pytest
from polars.testing import assert_frame_equal

from ridgeline.errors import InputError
from ridgeline.parsers.timeline import kineto

ROOT = Path(__file__).resolve().parents[3]
FIXTURE = ROOT / "fixtures" / "timeline" / "capture.kineto.json"


@pytest.fixture
def without_isal(monkeypatch):
    real = builtins.__import__

    def refuse(name, *a, **k):
        if name == "isal" or name.startswith("isal."):
            raise ImportError("no isal here")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", refuse)


def _gz(tmp_path, name="t.json.gz", times=400):
    doc = json.loads(FIXTURE.read_text())
    doc["traceEvents"] = doc["traceEvents"] * times  # past the 4 MiB that starts the chunked reader
    path = tmp_path / name
    path.write_bytes(gzip.compress(json.dumps(doc).encode(), compresslevel=1))
    return path


def _read(path):
    return kineto.read_kineto(path, strict=False)


def test_igzip_and_gzip_give_the_same_tables(tmp_path, request):
    pytest.importorskip("isal", reason="isal has no wheel for this platform")
    path = _gz(tmp_path)
    fast = _read(path)
    request.getfixturevalue("without_isal")
    slow = _read(path)
    assert fast.activities.height > 1000
    assert_frame_equal(fast.activities, slow.activities)
    assert_frame_equal(fast.api, slow.api)


@pytest.mark.parametrize("isal", [True, False])
@pytest.mark.parametrize("damage", ["crc", "cut"])
def test_a_damaged_gzip_is_one_line(tmp_path, request, isal, damage):
    if isal:
        pytest.importorskip("isal", reason="isal has no wheel for this platform")
    else:
        request.getfixturevalue("without_isal")
    data = bytearray(_gz(tmp_path, times=20).read_bytes())
    if damage == "crc":
        data[-8] ^= 0xFF  # the trailer's CRC32
    else:
        data = data[: len(data) // 2]
    path = tmp_path / "damaged.json.gz"
    path.write_bytes(bytes(data))
    with pytest.raises(InputError) as err:
        _read(path)
    text = str(err.value)
    assert "\n" not in text and "damaged.json.gz" in text
    assert ("checksum does not match" if damage == "crc" else "cut short") in text
