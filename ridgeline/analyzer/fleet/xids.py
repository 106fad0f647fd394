"""XIDs as data: code -> meaning -> kind -> severity -> action.

Source: NVIDIA, "Xid Errors" and the Xid Catalog (https://docs.nvidia.com/deploy/xid-errors/,
"Analyzing Xid Errors with the Xid Catalog": each code's mnemonic, description and its
"Resolution Bucket (Immediate Action)": RESTART_APP, RESET_GPU, RESTART_BM, CONTACT_SUPPORT...).
Wording shortened; ``kind`` is ridgeline's grouping of that bucket:

* ``application``: the application faulted (illegal address, engine exception, a killed
  process); the GPU is fine. A warning naming the GPU's workload: restart or fix the application.
  It becomes a GPU problem only when it repeats across applications.
* ``memory`` / ``hardware`` / ``link`` / ``driver``: the card, its memory, its links or the
  driver's firmware failed. Critical: drain the node, reset the GPU, RMA when it repeats.

An XID the table does not know stays critical (as before the table: a fault ridgeline cannot
judge is not played down), with a pointer to the catalogue.

What the telemetry can see: ``DCGM_FI_DEV_XID_ERRORS`` is a **gauge** holding the code of the
last XID seen (0 = none since the driver loaded). ridgeline counts an XID when the value changes
to a non-zero code, or is non-zero at a GPU's first sample (it may predate the capture). A
repeat of the same XID leaves the value unchanged, so it **cannot be seen** in this field: one
XID 13 and a thousand look alike; count repeats in the kernel log (``dmesg | grep -i xid``).
"""

from __future__ import annotations

CATALOG = "https://docs.nvidia.com/deploy/xid-errors/"

# code: (meaning, kind, NVIDIA's immediate action bucket, what to do)
XIDS: dict[int, tuple[str, str, str, str]] = {
    13: ("Graphics Engine Exception (an application error such as an out-of-range access)", "application",
         "RESTART_APP", "restart the application and check it (compute-sanitizer); a GPU problem only if it "
         "repeats across applications"),
    31: ("GPU memory page fault (an illegal memory access by the application)", "application", "RESTART_APP",
         "fix the application's illegal address (compute-sanitizer); the GPU is fine"),
    43: ("GPU stopped processing (a channel was reset after an application fault)", "application", "RESTART_APP",
         "restart the application; the GPU is fine"),
    45: ("preemptive cleanup after earlier errors (channels torn down, e.g. a killed application)", "application",
         "IGNORE", "nothing on the GPU: it follows another event (a killed process, an earlier XID)"),
    68: ("video decoder (NVDEC) exception", "application", "RESTART_APP", "restart the application"),
    69: ("graphics engine class error (a bad command from the application)", "application", "RESTART_APP",
         "restart the application"),
    48: ("double-bit ECC error (uncorrectable memory error)", "memory", "RESET_GPU",
         "drain the node and reset the GPU; RMA if double-bit errors recur"),
    61: ("internal micro-controller breakpoint/warning", "driver", "RESET_GPU", "reset the GPU; update the driver"),
    62: ("internal micro-controller halt", "driver", "RESET_GPU", "drain the node and reset the GPU"),
    63: ("ECC page retirement or row remap recorded (reset the GPU to apply it)", "memory", "RESET_GPU",
         "drain the node and reset the GPU to apply the remap"),
    64: ("ECC page retirement or row remap recording failed", "memory", "CONTACT_SUPPORT",
         "drain the node; the card needs repair (RMA)"),
    74: ("NVLink error", "link", "RESET_GPU", "drain the node, reset the GPUs of the link; check the NVLink "
         "bridges or baseboard if it repeats"),
    79: ("GPU has fallen off the bus", "hardware", "RESTART_BM", "drain the node and reboot it; RMA if it repeats"),
    92: ("high single-bit ECC error rate", "memory", "RESET_GPU", "drain the node and reset the GPU; RMA if it repeats"),
    94: ("contained ECC error (applications using the affected memory must restart)", "memory", "RESTART_APP",
         "drain the node, reset the GPU at the next chance (applies the row remap)"),
    95: ("uncontained ECC error (every application on the GPU is affected)", "memory", "RESET_GPU",
         "drain the node and reset the GPU"),
    119: ("GSP RPC timeout (the GPU System Processor did not answer)", "driver", "RESET_GPU",
          "drain the node and reset the GPU; update the driver if it repeats"),
    120: ("GSP error", "driver", "RESET_GPU", "drain the node and reset the GPU"),
}

KINDS = ("application", "memory", "hardware", "link", "driver")


def meaning(code: int) -> str:
    row = XIDS.get(int(code))
    return row[0] if row else f"see NVIDIA's Xid catalog ({CATALOG})"


def kind(code: int) -> str | None:
    """The XID's kind, None for a code the table does not know."""
    row = XIDS.get(int(code))
    return row[1] if row else None


def severity(code: int) -> str:
    """``"warning"`` for an application XID, ``"critical"`` for every other (unknown ones included)."""
    return "warning" if kind(code) == "application" else "critical"


def action(code: int) -> str:
    row = XIDS.get(int(code))
    return row[3] if row else f"look the code up in NVIDIA's Xid catalog ({CATALOG}); drain the node meanwhile"


def critical_codes() -> tuple[int, ...]:
    """The known XIDs of the GPU, its memory, links or driver (not the application's)."""
    return tuple(sorted(c for c, row in XIDS.items() if row[1] != "application"))
