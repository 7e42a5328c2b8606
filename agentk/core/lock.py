"""One run per folder: an OS lock (flock) on a file in the folder, which holds the holder's pid and command line.

The OS drops a flock when the last descriptor of its open file closes, so the lock ends with its holder however
that ends (an exception, Ctrl-C, SIGKILL) and a file left behind never blocks a later run. Python opens
descriptors non-inheritable, so a child process (the solver) never keeps a dead parent's lock.
"""

from __future__ import annotations

import fcntl
import os
import shlex
import shutil
import sys
import time
from pathlib import Path

from agentk.core import crash
from agentk.core.errors import BadInput


class FolderLock:
    """A held lock; release() (or leaving the `with` block) drops it."""

    def __init__(self, path: Path, fd: int):
        self.path, self._fd = path, fd

    def empty_folder(self) -> None:
        """Deletes everything in the lock's folder but the lock file, which must stay: a run that opened it is
        refused by this lock, while one on a new file of the same name would not be."""
        for path in self.path.parent.iterdir():
            if path == self.path:
                continue
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)  # removes the links in raw/, never what they point to
            else:
                path.unlink()

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing drops the flock
            self._fd = None

    def __enter__(self) -> FolderLock:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def hold(path: Path) -> FolderLock:
    """Takes the lock file `path` (created if missing; its folder must exist) without waiting. Held by another
    process: BadInput naming that process's pid and command."""
    path = Path(path)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder(fd)
        os.close(fd)
        raise BadInput(
            f"{path.parent} is in use by {holder}: wait for it to finish or stop it (one run per folder)"
        ) from None
    except BaseException:
        os.close(fd)
        raise
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{crash.user_pid()} {_command()}\n".encode(), 0)
    return FolderLock(path, fd)


def check_free(path: Path) -> None:
    """BadInput naming the holder when another process holds the lock file `path`; writes nothing. A run calls
    it before slow checks of its input, so that a second command is refused at once."""
    if Path(path).exists():
        hold(path).release()


def _command() -> str:
    """The holder's command as its user typed it: `agentk setup …`, or `python -m agentk.cli setup …`."""
    argv = sys.orig_argv if sys.argv and sys.argv[0].endswith(".py") else sys.argv  # -m or a script: show python
    return shlex.join([Path(argv[0]).name, *argv[1:]]) if argv else "python"


def _holder(fd: int) -> str:
    # the holder writes its line just after it takes the lock: give it a moment to do so
    for _ in range(20):
        line = os.pread(fd, 4096, 0).decode(errors="replace").strip()
        if line:
            pid, _, command = line.partition(" ")
            return f"pid {pid} ({command})"
        time.sleep(0.05)
    return "another process"
