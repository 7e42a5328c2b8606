"""What the machine gives this process: its CPU cores, and the memory left to it (the machine's, or less under its
cgroup's limit: the solve's, agentk.core.sandbox.MemoryGroup)."""

from __future__ import annotations

import os

import psutil

from agentk.core.sandbox import own_cgroups

IN_MEMORY_SHARE = 0.5  # decoded images stay in memory when they take at most this share of the memory left


def cores() -> int:
    """The CPU cores this process may use (its affinity, where the system has one)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def available_bytes() -> int:
    """What may still be allocated: the machine's available memory, or less where the cgroup's limit is nearer."""
    available = psutil.virtual_memory().available
    for folder, v2 in own_cgroups("memory"):
        try:
            limit = (folder / ("memory.max" if v2 else "memory.limit_in_bytes")).read_text().strip()
            used = (folder / ("memory.current" if v2 else "memory.usage_in_bytes")).read_text().strip()
        except OSError:
            continue
        if limit.isdigit() and used.isdigit() and int(limit) < 2**60:
            available = min(available, max(0, int(limit) - int(used)))
    return available


def images_in_memory(n_bytes: int) -> bool:
    """Whether decoded images of n_bytes stay in memory (else a memory-mapped file)."""
    return n_bytes <= IN_MEMORY_SHARE * available_bytes()
