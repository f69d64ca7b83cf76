"""Whether a process of this host still runs: how a dead holder's lease or temp file is known."""

from __future__ import annotations

import os
import socket


def this_host() -> str:
    return socket.gethostname()


def process_alive(pid: int) -> bool:
    """True while `pid` names a running process here (a zombie, killed but not yet reaped,
    counts as ended)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: alive
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return stat.read().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):
        return True  # no /proc (macOS): kill(0) is all we know
