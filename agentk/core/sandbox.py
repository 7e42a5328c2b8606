"""Run generated code in a subprocess: cwd the workspace, a timeout, a memory limit, an allow-list environment,
and, where bubblewrap (`bwrap`) runs, a sandbox: the filesystem read-only but for the workspace, `raw/` and the
user's files it links to read-only, an empty HOME and /tmp, no network, its own PID namespace (nothing outlives it).

Whatever the code does (crash, hang, allocate too much) comes back as a `RunResult` to observe;
it never raises into agentk.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import os
import pwd
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from agentk.core.errors import BadInput
from agentk.core.text import truncate
from agentk.workspace import Workspace

SANDBOX_ENV = "AGENTK_SANDBOX"  # "off" forces the unsandboxed fallback (tests of it)
# a fork bomb stops here: a pids cgroup where one can be made, else RLIMIT_NPROC (which does not bind root)
MAX_PROCESSES = 4096

# The environment generated code gets: what Python, numpy/torch and the locale need, nothing else (no secret passes
# whatever its name). HOME stays a path, but inside the sandbox it is an empty tmpfs.
_ALLOWED = {
    "PATH", "HOME", "LANG", "LANGUAGE", "TZ",
    "PYTHONPATH", "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING",
    "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS", "NUMEXPR_MAX_THREADS",
    "VECLIB_MAXIMUM_THREADS", "TOKENIZERS_PARALLELISM",
    "CUDA_VISIBLE_DEVICES", "CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH", "NVIDIA_VISIBLE_DEVICES",
    "NVIDIA_DRIVER_CAPABILITIES", "PYTORCH_CUDA_ALLOC_CONF", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE",
    "XDG_CACHE_HOME", "HF_HOME", "HF_HUB_CACHE", "TORCH_HOME",
}  # fmt: skip


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The allow-listed part of os.environ (LC_* included), plus `extra`."""
    env = {k: v for k, v in os.environ.items() if k in _ALLOWED or k.startswith("LC_")}
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    return env


_warned = False


@functools.lru_cache(maxsize=4)
def _probe(bwrap: str) -> str | None:
    """Why bwrap cannot run here (no user namespaces, a container that forbids mounts), or None when it can."""
    args = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    args += ["--unshare-net", "--unshare-pid", "--die-with-parent", "true"]
    try:
        res = subprocess.run(args, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap failed to start: {exc}"
    return None if res.returncode == 0 else f"bwrap failed: {res.stderr.strip()[:200] or res.returncode}"


def sandbox_available() -> tuple[bool, str]:
    """(True, "bwrap") when generated code runs under bubblewrap, else (False, why not)."""
    if os.environ.get(SANDBOX_ENV, "").lower() in ("off", "0", "no", "false"):
        return False, f"{SANDBOX_ENV}={os.environ[SANDBOX_ENV]}"
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return False, "bwrap (Debian/Ubuntu package bubblewrap) is not on PATH"
    reason = _probe(bwrap)
    return (False, reason) if reason else (True, "bwrap")


def require_sandbox(unsafe: bool = False) -> None:
    """For the policies whose code nobody has read (LLM, hybrid): BadInput unless the sandbox runs or the user
    passed --unsafe-sandbox (`unsafe`)."""
    ok, why = sandbox_available()
    if not ok and not unsafe:
        raise BadInput(
            f"no sandbox for LLM-written code ({why}): install bubblewrap, use --policy expert, "
            "or pass --unsafe-sandbox to run it unsandboxed"
        )


def _bwrap() -> str | None:
    """The bwrap to wrap a run in, or None (warned once per process) to run unsandboxed."""
    global _warned
    ok, why = sandbox_available()
    if ok:
        return shutil.which("bwrap")
    if not _warned:
        _warned = True
        print(f"agentk: warning: generated code runs without a sandbox ({why})", file=sys.stderr, flush=True)
    return None


def _under(path: Path, roots: list[Path]) -> bool:
    return any(path == r or r in path.parents for r in roots)


MAX_BOUND_FILES = 64  # linked files bound one by one; beyond this, the folders that hold them


def _link_targets(raw: Path) -> list[Path]:
    """What raw/'s links point to outside it, at any depth (a folder of recoded tables beside links to the others
    is a real folder of links): the files themselves, or where there are many (a folder of per-sample links),
    the folders holding them. Linked folders are not entered."""
    targets = set()
    for folder, dirs, files in os.walk(raw):
        for name in [*dirs, *files]:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                targets.add(Path(os.path.realpath(path)))
    targets = {t for t in targets if t.exists() and not _under(t, [raw])}
    if len(targets) > MAX_BOUND_FILES:
        targets = {t if t.is_dir() else t.parent for t in targets}
    return [t for t in sorted(targets) if not any(q in t.parents for q in targets)]


def _sandboxed(bwrap: str, cwd: Path, argv: list[str]) -> list[str]:
    """The bwrap command line for `argv` run in `cwd`. Mount order matters: later mounts cover earlier ones."""
    ws = cwd.resolve()
    homes = {Path(os.path.expanduser("~")).resolve(), Path(pwd.getpwuid(os.getuid()).pw_dir).resolve()}
    hidden = [Path("/tmp"), *sorted(h for h in homes if h != Path("/"))]
    cmd = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for d in sorted(glob.glob("/dev/nvidia*")):  # the GPU, when there is one
        cmd += ["--dev-bind", d, d]
    for h in hidden:
        cmd += ["--tmpfs", str(h)]
    # what Python needs that lives in a hidden folder (an interpreter under ~/.pyenv or ~/.local/share/uv, the
    # project's .venv under HOME), and the model caches (public weights; not ~/.cache/huggingface/token)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path(os.path.expanduser("~")) / ".cache")
    hf_hub = os.environ.get("HF_HUB_CACHE") or Path(os.environ.get("HF_HOME") or cache / "huggingface") / "hub"
    torch_hub = Path(os.environ.get("TORCH_HOME") or cache / "torch") / "hub"
    needed = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *sys.path]
    needed += [os.path.realpath(sys.executable), hf_hub, torch_hub]
    keep = {Path(p).resolve() for p in needed if p and os.path.exists(p)}
    keep = {p for p in keep if _under(p, hidden) and not _under(p, [ws])}
    for p in sorted(keep):
        if not any(q in p.parents for q in keep):
            cmd += ["--ro-bind", str(p), str(p)]
    cmd += ["--bind", str(ws), str(ws)]
    raw = Workspace(ws).raw
    if raw.is_dir():  # read-only, and so are the user's files its links point to (those only, not their folder)
        cmd += ["--ro-bind", str(raw), str(raw)]
        for t in _link_targets(raw):
            cmd += ["--ro-bind", str(t), str(t)]
    cmd += ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--new-session"]
    return [*cmd, "--chdir", str(ws), "--", *argv]


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


def own_cgroups(controller: str) -> list[tuple[Path, bool]]:
    """The folders of this process's own cgroups that hold `controller`: (folder, whether cgroup v2)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        _, controllers, rel = line.split(":", 2)
        if controller in controllers.split(","):
            found.append((Path("/sys/fs/cgroup") / controller / rel.lstrip("/"), False))
        elif controllers == "" and Path("/sys/fs/cgroup/cgroup.controllers").exists():
            found.append((Path("/sys/fs/cgroup") / rel.lstrip("/"), True))
    return found


def _new_cgroup(controller: str, settings: dict[bool, tuple[str, str]]) -> tuple[Path, bool] | None:
    """A fresh child of this process's cgroup for `controller`, with settings[v2] (file, value) written, where this
    process may make one (root on a cgroup v1 hierarchy, or v2 with the controller delegated), else None."""
    for base, v2 in own_cgroups(controller):
        group = base / f"agentk-{controller}-{os.getpid()}-{time.monotonic_ns()}"
        try:
            group.mkdir()
        except OSError:
            continue
        try:
            (group / settings[v2][0]).write_text(settings[v2][1])
            return group, v2
        except OSError:
            group.rmdir()
    return None


def _pids_cgroup() -> Path | None:
    """A fresh cgroup allowing at most MAX_PROCESSES tasks, else None. RLIMIT_NPROC does not bind root; this does."""
    made = _new_cgroup("pids", {False: ("pids.max", str(MAX_PROCESSES)), True: ("pids.max", str(MAX_PROCESSES))})
    return made[0] if made else None


@dataclass
class MemoryGroup:
    """A memory cgroup that bounds a whole process tree (a solver and every process it starts, sandboxed ones
    included, where a per-process limit bounds each alone), and says afterwards how much the tree used at most and
    whether the kernel killed in it for memory. Page cache is counted, and reclaimed before anything is killed."""

    path: Path
    v2: bool

    @classmethod
    def make(cls, max_bytes: int) -> MemoryGroup | None:
        """A fresh group limited to max_bytes, where this process may make one (else None)."""
        made = _new_cgroup(
            "memory", {False: ("memory.limit_in_bytes", str(max_bytes)), True: ("memory.max", str(max_bytes))}
        )
        return cls(*made) if made else None

    def peak_gb(self) -> float | None:
        """The most the tree used, in GB (None where the kernel does not say: cgroup v2 before Linux 5.19)."""
        try:
            return int((self.path / ("memory.peak" if self.v2 else "memory.max_usage_in_bytes")).read_text()) / 2**30
        except (OSError, ValueError):
            return None

    def oom_killed(self) -> bool:
        """Whether the kernel killed a process of the tree for going over the limit."""
        try:
            text = (self.path / ("memory.events" if self.v2 else "memory.oom_control")).read_text()
        except OSError:
            return False
        counts = dict(line.split() for line in text.splitlines() if len(line.split()) == 2)
        return int(counts.get("oom_kill", 0)) > 0

    def remove(self) -> None:
        _remove_cgroup(self.path)


def _remove_cgroup(group: Path | None) -> None:
    """rmdir once its last task is gone (the PID namespace's tasks die as its init exits)."""
    for _ in range(100 if group else 0):
        try:
            group.rmdir()
            return
        except OSError:
            time.sleep(0.05)


# The limits a run starts under, set by a fresh single-threaded Python that then execs the command. Not a
# preexec_fn: that runs Python in a fork of multithreaded agentk, where a lock another thread held stays held, so
# the child can hang before exec, holding agentk's descriptors (the workspace lock among them) while it lives.
_LIMITS = """
import ctypes, os, resource, signal, sys
max_bytes, kind, cgroup, nproc, cap, *argv = sys.argv[1:]
for group in filter(None, cgroup.split("\\n")):
    try:
        with open(os.path.join(group, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
    except OSError:
        pass
if max_bytes:
    limit = resource.RLIMIT_DATA if kind == "data" else resource.RLIMIT_AS
    resource.setrlimit(limit, (int(max_bytes), int(max_bytes)))
soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
cap = int(cap) if hard == resource.RLIM_INFINITY else min(int(cap), hard)
if nproc == "1" and (soft == resource.RLIM_INFINITY or soft > cap):
    resource.setrlimit(resource.RLIMIT_NPROC, (cap, hard))
try:  # die with agentk: a killed run leaves no generated code running (Linux only)
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
except OSError:
    pass
os.execv(argv[0], argv)
"""


def _limited(
    argv: list[str], max_bytes: int | None, cgroups: list[Path] = (), nproc: bool = True, kind: str = "as"
) -> list[str]:
    """`argv` run under a memory limit of `max_bytes` (None: none) on its address space (`kind` "as") or on its
    data, the writable private memory it allocates ("data"), in `cgroups`, with at most MAX_PROCESSES processes
    (`nproc`), killed when agentk dies."""
    limits = [str(max_bytes or ""), kind, "\n".join(map(str, cgroups)), "1" if nproc else "0", str(MAX_PROCESSES)]
    return [sys.executable, "-I", "-S", "-c", _LIMITS, *limits, *argv]


def run_python(
    args: list[str], cwd: Path, timeout: float = 600, memory_gb: float = 16, env: dict[str, str] | None = None
) -> RunResult:
    """Run `python <args>` in `cwd` under the limits (and in the sandbox where bwrap runs); what happened."""
    bwrap = _bwrap()
    argv = [sys.executable, *args]
    cgroup = _pids_cgroup()
    try:
        argv = _sandboxed(bwrap, Path(cwd), argv) if bwrap else argv
        return _run(_limited(argv, int(memory_gb * 2**30), [cgroup] if cgroup else []), cwd, timeout, env, cgroup)
    finally:
        _remove_cgroup(cgroup)


def _kill_tasks(group: Path | None) -> None:
    """SIGKILL every task of a cgroup at once: killpg reaches agentk's process group only, and the sandbox's tasks,
    in a session of their own, otherwise die one by one as their namespace's init goes (a fork bomb's 4,096 took
    24 s on a busy 2-core machine). cgroup.kill on v2; on v1 each listed task, again until none is left (a fork
    bomb's last forks land while the first are killed)."""
    if group is None:
        return
    with contextlib.suppress(OSError):
        (group / "cgroup.kill").write_text("1")
        return
    for _ in range(50):
        try:
            pids = [int(p) for p in (group / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def _run(argv, cwd, timeout, env, cgroup: Path | None = None) -> RunResult:
    start = time.monotonic()
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=clean_env(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        start_new_session=True,  # own process group: a timeout kills the children too
    )
    try:
        out, err = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        _kill_tasks(cgroup)
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
            rc in (-signal.SIGKILL, 128 + signal.SIGKILL)  # bwrap exits 128+n for a child killed by signal n
            or "MemoryError" in err
            or "Cannot allocate memory" in err
            or "Unable to allocate" in err
        )
    )
    return RunResult(rc, out, err, time.monotonic() - start, timed_out, oom)


def _text(data) -> str:
    return data.decode(errors="replace") if isinstance(data, bytes) else (data or "")


@dataclass
class LiveRun:
    returncode: int | None  # None: killed at the timeout
    peak_gb: float | None = None  # the most its process tree used (its memory group's count), where measured
    out_of_memory: bool = False  # the kernel killed in its tree for going over memory_gb


def run_python_live(
    args: list[str],
    cwd: Path,
    timeout: float | None = None,
    output: TextIO | None = None,
    network: bool = False,
    memory_gb: float | None = None,
) -> LiveRun:
    """Run `python <args>` in `cwd` in the sandbox (the network kept only when `network`: a remote Ray cluster),
    its output going as it comes to `output` (a file), else straight to the terminal (long jobs show their
    progress). `memory_gb` limits the data each process allocates (RLIMIT_DATA: the limit an address-space cap
    would be breaks CUDA, which reserves huge address ranges it never writes) and, where a memory cgroup can be
    made, the whole process tree's memory (MemoryGroup). Ctrl-C kills it and goes on up as KeyboardInterrupt."""
    if output is not None:
        output.flush()  # what was written to it so far comes before the child's output
    bwrap = _bwrap()
    argv = [sys.executable, *args]
    if bwrap:
        argv = _sandboxed(bwrap, Path(cwd), argv)
        if network:
            argv.remove("--unshare-net")
    max_bytes = int(memory_gb * 2**30) if memory_gb else None
    group = MemoryGroup.make(max_bytes) if max_bytes else None
    proc = subprocess.Popen(
        # torch and AutoGluon threads count as processes: no process cap
        _limited(argv, max_bytes, [group.path] if group else [], nproc=False, kind="data"),
        cwd=cwd,
        env=clean_env(),
        stdin=subprocess.DEVNULL,
        stdout=output,
        stderr=subprocess.STDOUT if output is not None else None,
        start_new_session=True,
    )
    try:
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_tasks(group.path if group else None)
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            rc = None
        except KeyboardInterrupt:
            _kill_tasks(group.path if group else None)
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
        return LiveRun(rc, group.peak_gb() if group else None, bool(group and group.oom_killed()))
    finally:
        if group:
            group.remove()


def died_of(returncode: int | None) -> signal.Signals | None:
    """The signal a run died of: a negative exit code, or 128+n from bwrap, whose child died of signal n."""
    if returncode is None:
        return None
    n = -returncode if returncode < 0 else returncode - 128 if 128 < returncode < 128 + 65 and _bwrap() else 0
    try:
        return signal.Signals(n) if n else None
    except ValueError:
        return None
