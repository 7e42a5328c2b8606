"""Native crashes made visible. A signal (a segfault in a library reading the user's data, the kernel's OOM killer)
cannot be caught by the process it kills, so the `agentk` command runs each command that reads data in a child and
watches it from a thin parent (`supervise`). The child notes the step under way, the log it writes and how to go
on (`note`), and its faulthandler writes the dying traceback to a file the parent gave it (`watched`). When the
child dies by a signal, the parent appends that traceback to the child's log, says in one line which step died of
which signal and how to go on, and exits 1; a setup's state is saved after every step, so --resume goes on from
the step that died.
"""

from __future__ import annotations

import ctypes
import faulthandler
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

CRASH_DIR = "AGENTK_CRASH_DIR"  # set by the watching parent in the child's environment
PARENT = "AGENTK_WATCHER"  # ... and its pid
FAULTS, STEP = "faults.txt", "step.json"
WATCHED = ("setup", "solve", "curriculum", "submit", "report")  # the commands that read the user's data


def watch(args: list[str]) -> None:
    """The `agentk` command's first step: a command of WATCHED (not its --help) runs in a watched child, and this
    process exits with the child's code; anything else, and the child itself, goes on."""
    command = next((a for a in args if not a.startswith("-")), None)
    if command in WATCHED and not {"--help", "-h"} & set(args) and not watched():
        sys.exit(supervise(args, command))


def watched() -> bool:
    """In the child: send the dying traceback of any thread to the parent's file; False when not watched."""
    folder, parent = os.environ.get(CRASH_DIR), int(os.environ.get(PARENT, "0") or 0)
    if not folder or not Path(folder).is_dir() or not parent:
        return False
    if os.getppid() != parent:  # the variables came down from a watched ancestor: this is a run of its own
        return False
    faulthandler.enable(file=open(Path(folder) / FAULTS, "w"), all_threads=True)  # noqa: SIM115 - open until death
    try:  # die with the watching parent: killing the `agentk` a user started ends the run (and frees its lock)
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent died between the check above and the prctl
        os._exit(1)
    return True


def user_pid() -> int:
    """The pid of the `agentk` process the user started: the watching parent's in a watched child (killing it ends
    both), else this process's."""
    parent = os.environ.get(PARENT)
    return int(parent) if parent and os.environ.get(CRASH_DIR) and os.getppid() == int(parent) else os.getpid()


def note(step: str | None = None, *, log: Path | None = None, resume: str | None = None) -> None:
    """In the child: the step under way (and the log it writes, and the command that goes on after a crash), for
    the parent's one line if this process dies. Without a watching parent, nothing."""
    folder = os.environ.get(CRASH_DIR)
    if not folder:
        return
    path = Path(folder) / STEP
    try:
        known = json.loads(path.read_text()) if path.exists() else {}
        known.update({k: str(v) for k, v in {"step": step, "log": log, "resume": resume}.items() if v is not None})
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(known))
        tmp.replace(path)
    except (OSError, ValueError):
        pass  # the note is for a crash that may never come: it must not make one


def supervise(argv: list[str], what: str) -> int:
    """In the parent: run `python -m agentk.cli <argv>` as a watched child, in this process group (Ctrl-C reaches
    it, and it ends itself with 130), and return its exit code; when it died by a signal, report it (one line on
    stderr, the traceback in its log) and return 1."""
    with tempfile.TemporaryDirectory(prefix="agentk-watch-") as folder:
        env = {**os.environ, CRASH_DIR: folder, PARENT: str(os.getpid())}
        proc = subprocess.Popen([sys.executable, "-m", "agentk.cli", *argv], env=env)
        while True:
            try:
                rc = proc.wait()
                break
            except KeyboardInterrupt:
                continue  # the child got it too: wait for it to end
        if rc >= 0:
            return rc
        sig = signal.Signals(-rc)
        if sig == signal.SIGINT:
            return 130
        print(report(Path(folder), what, sig), file=sys.stderr)
        return 1


def report(folder: Path, what: str, sig: signal.Signals) -> str:
    """The one line about a child of `what` (setup, solve...) dead of `sig`, its traceback appended to its log
    (kept in a file of its own when it died before it had one)."""
    try:
        known = json.loads((folder / STEP).read_text())
    except (OSError, ValueError):
        known = {}
    faults = (folder / FAULTS).read_text(errors="replace") if (folder / FAULTS).exists() else ""
    header = f"agentk: {what} died of signal {sig.value} ({sig.name}) in {known.get('step') or 'its start'}"
    log = Path(known["log"]) if known.get("log") else None
    try:
        if log is None or not log.parent.is_dir():
            fd, name = tempfile.mkstemp(prefix=f"agentk-{what}-crash-", suffix=".log")
            os.close(fd)
            log = Path(name)
        with open(log, "a") as f:
            f.write(f"{header}\n{faults}\n")
    except OSError:
        log = None
    where = f"; its traceback is in {log}" if log else ""
    then = f"; `{known['resume']}` goes on from there" if known.get("resume") else ""
    cause = (
        "; the kernel killed it, most likely for memory: close other programs or use a machine with more"
        if sig == signal.SIGKILL
        else "; please report it with the log"
    )
    return f"{header}{where}{then}{cause}"
