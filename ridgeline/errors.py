"""The one exception family users see.

Every error caused by a user's input or invocation derives from :class:`RidgelineError`.
The CLI catches it once, prints ``str(err)`` as a single line and exits 2. Messages name
the file, the line or column where known, what was expected and what was found.
"""

from __future__ import annotations


class RidgelineError(Exception):
    """Base for every user-facing error (exit code 2 in the CLI)."""

    exit_code = 2


class InputError(RidgelineError):
    """A file that cannot be read as what it claims to be.

    ``InputError(path, "expected a numeric value", line=12, column="dram__bytes.sum",
    actual="abc")`` renders as
    ``trace.csv:12: column 'dram__bytes.sum': expected a numeric value, got 'abc'``; with
    ``kind="Nsight Compute raw CSV"`` (added by :mod:`ridgeline.refusals` when the message does
    not say what the file was read as) ``trace.csv:12: column ... got 'abc' (read as Nsight Compute raw CSV)``.
    """

    def __init__(
        self,
        path: object,
        expected: str,
        *,
        line: int | None = None,
        column: str | None = None,
        actual: object | None = None,
        kind: str | None = None,
    ) -> None:
        self.path = str(path)
        self.expected = expected
        self.line = line
        self.column = column
        self.actual = actual
        self.kind = kind  # what ridgeline took the file for, when the rest does not say it
        where = self.path if line is None else f"{self.path}:{line}"
        parts = [where]
        if column is not None:
            parts.append(f"column {column!r}")
        text = expected
        if actual is not None:
            shown = str(actual)
            if len(shown) > 80:
                shown = shown[:77] + "..."
            text = f"{expected}, got {shown!r}"
        parts.append(text)
        message = ": ".join(parts)
        if kind is not None:
            message += f" (read as {kind})"
        super().__init__(message)


class UsageError(RidgelineError):
    """A bad option value or combination (unknown GPU name, bad rule code...)."""
