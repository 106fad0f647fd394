"""A run that reads timelines only loads polars with its allocator tuned (pipeline.TIMELINE_ALLOCATOR:
memory freed between phases goes back to the system), never over the user's own options, never
after polars is already loaded, and without leaving the variable to child processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBE = """
import json, os, sys
from ridgeline.pipeline import load_polars_for_timelines
before = 'polars' in sys.modules
first = load_polars_for_timelines()
print(json.dumps({"before": before, "first": first, "loaded": 'polars' in sys.modules,
                  "env": os.environ.get('_RJEM_MALLOC_CONF'), "second": load_polars_for_timelines()}))
"""


def _probe(env_extra=None):
    env = {k: v for k, v in os.environ.items() if k != "_RJEM_MALLOC_CONF"}
    env.update(env_extra or {})
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=ROOT, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_polars_is_loaded_with_the_timeline_allocator_once():
    from ridgeline.pipeline import TIMELINE_ALLOCATOR

    got = _probe()
    assert got == {"before": False, "first": TIMELINE_ALLOCATOR, "loaded": True, "env": None, "second": None}


def test_the_users_own_allocator_options_win():
    got = _probe({"_RJEM_MALLOC_CONF": "dirty_decay_ms:5000"})
    assert got["first"] is None and got["loaded"] is False and got["env"] == "dirty_decay_ms:5000"


def test_a_trace_run_leaves_no_allocator_variable_behind():
    trace = ROOT / "fixtures" / "timeline" / "capture.kineto.json"
    code = ("import io, contextlib, os, sys\nfrom ridgeline.cli import main\nout = io.StringIO()\n"
            "with contextlib.redirect_stdout(out):\n    try:\n"
            f"        main(['analyze', {str(trace)!r}, '--format', 'json'])\n    except SystemExit:\n        pass\n"
            "assert out.getvalue().startswith('{')\nprint(os.environ.get('_RJEM_MALLOC_CONF'))")
    env = {k: v for k, v in os.environ.items() if k != "_RJEM_MALLOC_CONF"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, check=True)
    assert out.stdout.strip().splitlines()[-1] == "None"
