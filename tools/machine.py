"""What the machine gives this process: its CPU cores."""

from __future__ import annotations

import os


def cores() -> int:
    """The CPU cores this process may use (its affinity, where the system has one)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
