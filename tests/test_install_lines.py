"""Every install line in the README and docs works from a fresh environment (issue 24 item 4).

ridgeline is installed from its checkout (it is not on PyPI): a line that names the bare package
(``pip install ridgeline[prometheus]``) fails for a new user. The static test reads every
``pip install`` line of README.md and docs/*.md and checks each requirement: a checkout path
(``.``, ``./ridgeline``, ``/src/ridgeline``) with extras that setup.cfg defines, or a third-party
package the docs name on purpose. The slow test creates a fresh virtualenv, copies the tracked
files of the checkout and runs every distinct checkout install line there, then the README's demo.
"""

from __future__ import annotations

import configparser
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# third-party packages the docs tell people to install next to ridgeline, on purpose
THIRD_PARTY = {"dask-jobqueue", "duckdb", "pytest", "holistictraceanalysis", "pandas<3"}
_LINE = re.compile(r"pip install ([^`\n]*)")


def install_lines() -> list[tuple[str, int, list[str]]]:
    """(file, line number, requirement specs) for every ``pip install`` in README and docs."""
    out = []
    for path in DOCS:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for m in _LINE.finditer(line):
                cmd = re.split(r"&&|;|\|\||#", m.group(1))[0]
                try:
                    words = shlex.split(cmd)
                except ValueError:
                    words = cmd.split()
                specs = [w for w in words if not w.startswith("-")]
                out.append((path.relative_to(ROOT).as_posix(), n, specs))
    return out


def extras() -> set[str]:
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    return set(cfg["options.extras_require"].keys())


def checkout_spec(spec: str) -> tuple[str, set[str]] | None:
    """``(path, extras)`` when ``spec`` installs ridgeline from a checkout, else None."""
    m = re.fullmatch(r"(\.|\.?/?[\w./-]*ridgeline|/[\w./-]+)(?:\[([\w,-]+)\])?", spec)
    if not m:
        return None
    return m.group(1), set(filter(None, (m.group(2) or "").split(",")))


def test_every_install_line_names_the_checkout_or_a_known_third_party_package():
    lines = install_lines()
    assert len(lines) >= 5, "README and docs have install lines"
    known = extras()
    for where, n, specs in lines:
        assert specs, f"{where}:{n}: pip install with nothing to install"
        for spec in specs:
            low = spec.lower()
            assert not re.fullmatch(r"ridgeline(\[.*\])?", low), (
                f"{where}:{n}: {spec!r} is not on PyPI; install from the checkout: pip install \".[extra]\"")
            got = checkout_spec(spec)
            if got is None:
                assert low in THIRD_PARTY, f"{where}:{n}: unexpected package {spec!r}"
                continue
            _path, wanted = got
            assert wanted <= known, f"{where}:{n}: extras {sorted(wanted - known)} are not in setup.cfg"


def _pypi_reachable() -> bool:
    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple")
    host = re.sub(r"^\w+://([^/:]+).*$", r"\1", index)
    try:
        with socket.create_connection((host, 443), timeout=5):
            return True
    except OSError:
        return False


@pytest.mark.early  # ~1.5 min of pip: started first, so the other workers never wait on it at the end
def test_install_lines_run_in_a_fresh_virtualenv(tmp_path):
    if not _pypi_reachable():
        pytest.skip("the package index is not reachable from here: a fresh install cannot be tried")
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the tracked files cannot be listed")
    src = tmp_path / "ridgeline"
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for rel in filter(None, tracked.decode().split("\0")):
        if not (ROOT / rel).is_file():
            continue
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, src / rel)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    seen = set()
    for where, n, specs in install_lines():
        local = [s for s in specs if checkout_spec(s) is not None]
        for spec in local:
            path, wanted = checkout_spec(spec)
            req = "." + (f"[{','.join(sorted(wanted))}]" if wanted else "")  # every checkout path is this one
            if req in seen:
                continue
            seen.add(req)
            done = subprocess.run([str(py), "-m", "pip", "install", "--quiet", req], cwd=src, env=env,
                                  capture_output=True, text=True, timeout=900)
            assert done.returncode == 0, f"{where}:{n}: pip install {spec} failed:\n{done.stderr[-2000:]}"
    assert "." in seen
    # the README's first command: install, then the demo on the bundled fixtures
    demo = subprocess.run([str(venv / "bin" / "ridgeline"), "demo"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert demo.returncode in (0, 1), demo.stderr[-2000:]
    assert "memory-bound" in demo.stdout
    # the installed package is the copy, not this checkout
    where = subprocess.run([str(py), "-c", "import ridgeline, sys; print(ridgeline.__file__)"], cwd=tmp_path,
                           env=env, capture_output=True, text=True, check=True).stdout
    assert str(ROOT) not in where
