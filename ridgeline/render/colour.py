"""Colour for the terminal report: severities and bounds, on a TTY only.

:func:`wanted` says whether to colour (stdout is a terminal, ``NO_COLOR`` unset or empty,
``TERM`` not ``dumb``; https://no-color.org); :func:`colourize` adds ANSI codes to the finding
headers (``RL101 warning ...``) of text rendered without them, so pipes and files never get any.
"""

from __future__ import annotations

import os
import re

_CODES = {"critical": "1;31", "warning": "33", "info": "36"}
_FINDING = re.compile(r"(?m)^(RL\d{3}) (critical|warning|info)( +)")


def wanted(stream) -> bool:
    if os.environ.get("NO_COLOR", ""):
        return False
    if os.environ.get("TERM", "") == "dumb":
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def colourize(text: str) -> str:
    """Finding headers with their severity in colour (bold red, yellow, cyan)."""
    return _FINDING.sub(lambda m: f"\033[1m{m.group(1)}\033[0m \033[{_CODES[m.group(2)]}m{m.group(2)}\033[0m{m.group(3)}",
                        text)
