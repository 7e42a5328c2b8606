"""One run per workspace (agentk.core.lock), with real processes: a second setup (--resume or --force), a solve,
a submit or a curriculum on a folder another process holds exits 2 at once naming that process, deletes nothing,
and the first run finishes as if alone. That the OS drops the lock when its holder is killed is
test_setup_examples.py's resume-after-kill test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import EXAMPLES, ROOT, agentk

from agentk.core.errors import BadInput
from agentk.core.lock import hold
from agentk.workspace import Workspace

IRIS = EXAMPLES / "iris-species"


def start_setup(ws: Path) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentk", "setup", str(IRIS), "--workspace", str(ws)],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lock = Workspace(ws).lock
    deadline = time.time() + 120
    while not (lock.exists() and lock.read_text().startswith(f"{proc.pid} ")):  # written once the lock is held
        assert proc.poll() is None, proc.communicate()
        assert time.time() < deadline, "the setup never took the workspace's lock"
        time.sleep(0.05)
    return proc


def assert_refused(proc: subprocess.CompletedProcess, pid: int, progress: bool = False) -> None:
    """Exit 2 and one line naming the holder (after the progress a curriculum shows before a round's step)."""
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert (progress or len(lines) == 1) and f"is in use by pid {pid} (" in lines[-1], proc.stderr


@pytest.mark.slow  # a full setup (30 s); the refusals on a held workspace below run by default
def test_a_second_setup_on_a_running_workspace_exits_2_and_the_first_finishes_alone(tmp_path):
    ws = tmp_path / "ws"
    first = start_setup(ws)
    resumed = agentk("setup", "--resume", "--workspace", ws)
    forced = agentk("setup", IRIS, "--workspace", ws, "--force")
    assert_refused(resumed, first.pid)
    assert_refused(forced, first.pid)
    assert "setup iris-species" not in forced.stderr and "agentk.cli setup" in forced.stderr  # the holder's command
    out, err = first.communicate(timeout=300)
    assert first.returncode == 0, err[-3000:]
    state = json.loads(Workspace(ws).setup_state.read_text())
    assert state["status"] == "done"
    steps = [json.loads(line)["step"] for line in Workspace(ws).trajectory.read_text().splitlines()]
    assert steps == list(range(len(steps)))  # each step once: no second writer
    assert Workspace(ws).submission.exists() and Workspace(ws).raw.is_dir()  # --force deleted nothing


@pytest.fixture
def held(tmp_path):
    """A workspace with a (finished-looking) setup state whose lock this test process holds."""
    ws = Workspace(tmp_path / "ws")
    ws.root.mkdir()
    ws.setup_state.write_text(json.dumps({"status": "done", "source": str(IRIS)}))
    before = sorted(p.name for p in ws.root.iterdir())
    with hold(ws.lock):
        yield ws
    assert sorted(p.name for p in ws.root.iterdir()) == sorted([*before, Workspace.LOCK])  # nothing was touched


@pytest.mark.parametrize("command", [("solve",), ("submit",), ("setup", "--resume"), ("setup", str(IRIS), "--force")])
def test_every_command_on_a_held_workspace_exits_2_naming_the_holder(held, command):
    t0 = time.time()
    proc = agentk(*command, "--workspace", held.root)
    assert_refused(proc, os.getpid())
    assert time.time() - t0 < 60  # at once: no waiting for the holder


def test_a_lock_taken_twice_in_one_process_is_refused_too(tmp_path):
    with hold(tmp_path / "lock"):
        with pytest.raises(BadInput, match=f"in use by pid {os.getpid()} "):
            hold(tmp_path / "lock")
    with hold(tmp_path / "lock"):  # released: free again
        pass


def test_a_second_curriculum_on_an_out_folder_exits_2(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "pool.txt").write_text(f"{IRIS}\n")
    with hold(Workspace(out).lock):
        proc = agentk("curriculum", tmp_path / "pool.txt", "--out", out, "--rounds", "1", "--setup-only")
    assert_refused(proc, os.getpid())
    assert sorted(p.name for p in out.iterdir()) == [Workspace.LOCK]  # no round was started


def test_the_curriculum_does_not_clear_a_task_workspace_another_run_holds(tmp_path):
    out = tmp_path / "out"
    ws = Workspace(out / IRIS.name)
    ws.root.mkdir(parents=True)
    (ws.root / "notes.txt").write_text("a run started by hand")
    (tmp_path / "pool.txt").write_text(f"{IRIS}\n")
    with hold(ws.lock):
        proc = agentk("curriculum", tmp_path / "pool.txt", "--out", out, "--rounds", "1", "--setup-only")
    assert_refused(proc, os.getpid(), progress=True)
    assert (ws.root / "notes.txt").read_text() == "a run started by hand"
