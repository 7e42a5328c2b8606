"""The optional Ray backend: curriculum rounds and HEBO trials as Ray tasks on a cluster,
or on a local Ray in tests. Without it everything runs in one process, so `ray` is imported only here, on first
use, and is an optional extra (`uv sync --extra ray`).

A task runs on whichever node has its resources free: the files it reads and writes (workspaces, solutions,
logs) must be on a filesystem every node mounts at the same path, and the nodes need agentk installed."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from agentk.core.errors import BadInput

# how `agentk` passes the cluster's address to the child processes it starts (e.g. `python -m agentk.solve.solver`)
ADDRESS_ENV = "AGENTK_RAY_ADDRESS"


def requested_address(explicit: str | None = None) -> str | None:
    """The Ray address asked for (an explicit option, else AGENTK_RAY_ADDRESS); None: run in this process."""
    return explicit or os.environ.get(ADDRESS_ENV) or None


def import_ray():
    """The ray module; BadInput (exit 2) when it is not installed, e.g. for a CLI to check before it starts work."""
    # Ray's default under `uv run` starts every worker through `uv run` in a copy of the driver's cwd (a
    # workspace here): a fresh virtualenv per session and a minute's wait. Workers on a local cluster run this
    # interpreter anyway; a remote cluster's nodes have their own agentk install.
    os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage report over the network (often offline)
    try:
        import ray
    except ImportError:
        raise BadInput("the Ray backend needs ray: install it with `uv sync --extra ray`") from None
    return ray


def connect(address: str | None = None) -> None:
    """Joins a Ray cluster once per process: None or "local" starts a local one on this machine's CPUs (and
    GPUs); "auto" or "ray://host:port" connects to a running cluster."""
    ray = import_ray()
    if ray.is_initialized():
        return
    quiet = {"logging_level": logging.ERROR, "ignore_reinit_error": True}
    if address in (None, "", "local"):
        # "local" always starts a new cluster (None would join one that `ray start` left running);
        # a small object store: tasks pass file paths and small records, not data
        ray.init(
            address="local", num_cpus=os.cpu_count(), include_dashboard=False, object_store_memory=200 * 2**20, **quiet
        )
    else:
        ray.init(address=address, **quiet)


def shutdown() -> None:
    """Leaves the cluster (and stops a local one this process started)."""
    if "ray" in sys.modules:
        sys.modules["ray"].shutdown()


def cluster_share(parallel: int) -> dict[str, float]:
    """Resources for one of `parallel` concurrent tasks: an equal share of the cluster's CPUs and GPUs, never more
    than its largest node holds (a task runs on one node) nor less than one CPU."""
    ray = import_ray()
    nodes = [n["Resources"] for n in ray.nodes() if n.get("Alive")]
    total = ray.cluster_resources()
    cpus = min(total.get("CPU", 1) // parallel, max(n.get("CPU", 1) for n in nodes))
    gpus = min(total.get("GPU", 0) / parallel, 1.0)
    return {"num_cpus": max(1, int(cpus)), "num_gpus": gpus}


def cluster_gpus() -> int:
    return int(import_ray().cluster_resources().get("GPU", 0))


def map_tasks(fn: Callable[[Any], Any], items: Iterable[Any], num_cpus: float = 1, num_gpus: float = 0) -> list:
    """[fn(item) for item in items], each call a Ray task: results in the items' order. fn and the items must
    pickle (a module-level function, or a closure over picklable values). A task's exception is raised here as
    itself (its type and message), so a caller that treats it as an observation keeps working."""
    ray = import_ray()
    call = ray.remote(_call).options(num_cpus=num_cpus, num_gpus=num_gpus)
    fn_ref = ray.put(fn)  # pickled once, not once per item
    return _get(ray, [call.remote(fn_ref, item) for item in items])


def _call(fn: Callable[[Any], Any], item: Any) -> Any:
    return fn(item)


def _get(ray, refs):
    """ray.get, a task's exception raised as itself: the original object when it pickled, else Ray's copy of its
    type (whose message carries the remote traceback)."""
    try:
        return ray.get(refs)
    except ray.exceptions.RayTaskError as err:
        cause = getattr(err, "cause", None)
        raise (cause if isinstance(cause, Exception) else err.as_instanceof_cause()) from None


def run_command(
    argv: list[str],
    log_path: Path,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    num_cpus: float = 1,
    num_gpus: float = 0,
) -> int:
    """Runs argv in a Ray task on some node and returns its exit code; its stdout and stderr are appended to
    log_path, stdin is empty. An argv[0] equal to this interpreter (sys.executable) means the node's own Python
    (the same one on a local cluster). env: variables set on top of the task's environment, which holds the CUDA
    devices Ray gave it. log_path and cwd must be on the filesystem the nodes share."""
    ray = import_ray()
    task = ray.remote(_run_logged).options(num_cpus=num_cpus, num_gpus=num_gpus)
    argv = [str(a) for a in argv]
    own_python = bool(argv) and argv[0] == sys.executable
    ref = task.remote(
        argv[1:] if own_python else argv,
        own_python,
        str(log_path),
        dict(env or {}),
        str(cwd) if cwd is not None else None,
    )
    return _get(ray, ref)


def _run_logged(argv: list[str], own_python: bool, log_path: str, env: dict[str, str], cwd: str | None) -> int:
    argv = [sys.executable, *argv] if own_python else argv
    Path(log_path).parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "a") as log:
        return subprocess.run(
            argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=cwd, env={**os.environ, **env}
        ).returncode
