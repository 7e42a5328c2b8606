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


def idle_cores(seconds: float = 1.0) -> int:
    """Of this process's cores, those other processes leave idle: their use over `seconds`, this process's own
    left out (the load average counts it: a solver busy a minute on its features before AutoGluon saw one of two
    cores busy, and CatBoost then fitted 300,000 rows on one thread); at least one."""
    mine = cores()
    if not hasattr(os, "sched_getaffinity"):
        return max(1, round(mine * (1 - psutil.cpu_percent(interval=seconds) / 100)))
    allowed = sorted(os.sched_getaffinity(0))
    me = psutil.Process()
    me.cpu_percent(None)  # starts the process's own count
    per_cpu = psutil.cpu_percent(interval=seconds, percpu=True)
    busy = sum(per_cpu[i] for i in allowed if i < len(per_cpu)) / 100 - me.cpu_percent(None) / 100
    return max(1, min(mine, round(mine - max(0.0, busy))))


def _cgroup_memory() -> list[tuple[int, int]]:
    """(limit, usage) in bytes of each of this process's own memory cgroups that has a limit (the solve's
    MemoryGroup, a container's); v1 writes "unlimited" as a huge number, v2 as "max"."""
    found = []
    for folder, v2 in own_cgroups("memory"):
        try:
            limit = (folder / ("memory.max" if v2 else "memory.limit_in_bytes")).read_text().strip()
            used = (folder / ("memory.current" if v2 else "memory.usage_in_bytes")).read_text().strip()
        except OSError:
            continue
        if limit.isdigit() and used.isdigit() and int(limit) < 2**60:
            found.append((int(limit), int(used)))
    return found


def cgroup_limit_bytes() -> int | None:
    """The lowest memory limit of this process's own cgroups, if any."""
    return min((limit for limit, _ in _cgroup_memory()), default=None)


def available_bytes() -> int:
    """What may still be allocated: the machine's available memory, or less where a cgroup's limit is nearer."""
    return min([psutil.virtual_memory().available, *(max(0, limit - used) for limit, used in _cgroup_memory())])


def images_in_memory(n_bytes: int) -> bool:
    """Whether decoded images of n_bytes stay in memory (else a memory-mapped file)."""
    return n_bytes <= IN_MEMORY_SHARE * available_bytes()
