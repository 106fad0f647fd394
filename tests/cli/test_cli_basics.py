"""CLI start-up: --help is instant (no heavy imports) and errors are one line."""

import subprocess
import sys

HEAVY = ("polars", "pandas", "matplotlib", "pyarrow", "numpy")


def test_help_imports_no_heavy_module():
    code = (
        "import sys\n"
        "from ridgeline.cli import cli\n"
        "try:\n"
        "    cli.main(args=['--help'], standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print('HEAVY=' + ','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = out.stdout.strip().splitlines()[-1].removeprefix("HEAVY=")
    assert loaded == "", f"ridgeline --help imported heavy modules: {loaded}"


def test_version_runs():
    out = subprocess.run(
        [sys.executable, "-m", "ridgeline.cli", "--version"], capture_output=True, text=True
    )
    assert out.returncode == 0
    assert "ridgeline" in out.stdout
