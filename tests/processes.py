"""The live processes of this machine, read from /proc: what tests count to prove a kill or a leftover."""

from __future__ import annotations

from pathlib import Path


def live_processes() -> dict[int, str]:
    """pid → command line (arguments joined by spaces) of every live process; a zombie is not live
    (it has exited and holds nothing; its parent reaps it) and one that vanished mid-read is skipped."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except (OSError, IndexError):
            continue
        if state != "Z":
            found[int(entry.name)] = cmdline
    return found
