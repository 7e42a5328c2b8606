"""Run generated code in a subprocess: cwd the workspace, a timeout, a memory limit, no credentials.

Whatever the code does (crash, hang, allocate too much) comes back as a `RunResult` to observe;
it never raises into agentk.
"""

from __future__ import annotations

import ctypes
import os
import re
import resource
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

# Environment variables that could leak credentials to generated code.
_SECRET = re.compile(
    r"^(KAGGLE_|OPENAI_|AWS_|AZURE_)|((^|_)(API_?KEY|KEY|TOKEN|SECRET)|PASSWORD|PASSWD|CREDENTIALS?)$", re.IGNORECASE
)


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """os.environ without credentials, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not _SECRET.search(k)}
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    return env


def truncate(text: str, limit: int = 4000) -> str:
    """Keep the head and the tail (where tracebacks end) of long output."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n... [{len(text) - 2 * half} characters cut] ...\n{text[len(text) - half :]}"


@dataclass
class RunResult:
    returncode: int | None
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False
    out_of_memory: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def error(self, limit: int = 4000) -> str:
        """What went wrong, short enough for a prompt; empty when it went well."""
        if self.timed_out:
            return (
                f"Timed out after {self.seconds:.0f}s (killed). Make the code faster or process less data.\n"
                + truncate(self.stderr, limit)
            )
        if self.out_of_memory:
            return "Ran out of memory (killed). Process the data in chunks or use smaller dtypes.\n" + truncate(
                self.stderr, limit
            )
        if self.returncode != 0:
            return truncate(self.stderr.strip() or self.stdout.strip() or f"exit code {self.returncode}", limit)
        return ""


def _limit_memory(max_bytes: int | None):
    def apply():
        if max_bytes is not None:
            resource.setrlimit(resource.RLIMIT_AS, (max_bytes, max_bytes))
        try:  # die with agentk: a killed run leaves no generated code running (Linux only)
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except OSError:
            pass

    return apply


def run_python(
    args: list[str], cwd: Path, timeout: float = 600, memory_gb: float = 16, env: dict[str, str] | None = None
) -> RunResult:
    """Run `python <args>` in `cwd` under the limits and return what happened."""
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, *args],
        cwd=cwd,
        env=clean_env(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        start_new_session=True,  # own process group: a timeout kills the children too
        preexec_fn=_limit_memory(int(memory_gb * 2**30)),
    )
    try:
        out, err = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        try:
            out, err = proc.communicate(timeout=1)
        except subprocess.TimeoutExpired as exc:  # an escaped grandchild holds the pipes: stop listening
            out, err = _text(exc.stdout), _text(exc.stderr)
            proc.stdout.close()
            proc.stderr.close()
            proc.wait()
        timed_out = True
    rc = proc.returncode
    oom = (
        not timed_out
        and rc != 0
        and (
            rc == -signal.SIGKILL
            or "MemoryError" in err
            or "Cannot allocate memory" in err
            or "Unable to allocate" in err
        )
    )
    return RunResult(rc, out, err, time.monotonic() - start, timed_out, oom)


def _text(data) -> str:
    return data.decode(errors="replace") if isinstance(data, bytes) else (data or "")


def run_python_live(
    args: list[str], cwd: Path, timeout: float | None = None, output: TextIO | None = None
) -> int | None:
    """Run `python <args>` in `cwd` without credentials, its output going as it comes to `output` (a file),
    else straight to the terminal (long jobs show their progress). No memory limit: it would break CUDA, which
    reserves huge address ranges. Returns the exit code, None on timeout."""
    if output is not None:
        output.flush()  # what was written to it so far comes before the child's output
    proc = subprocess.Popen(
        [sys.executable, *args],
        cwd=cwd,
        env=clean_env(),
        stdin=subprocess.DEVNULL,
        stdout=output,
        stderr=subprocess.STDOUT if output is not None else None,
        start_new_session=True,
        preexec_fn=_limit_memory(None),
    )
    try:
        return proc.wait(timeout=timeout)
    except (subprocess.TimeoutExpired, KeyboardInterrupt):
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return None
