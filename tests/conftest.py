"""Shared helpers: run the real CLI in a subprocess, and set each example up once per test session."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
ARENA = ROOT.parent / "shared" / "arena-dev"
EXAMPLE_NAMES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "description.md").exists())
# the tests' agentk runs (and their subprocesses) keep their long-term memory out of ~/.agentk
if "AGENTK_MEMORY" not in os.environ:
    os.environ["AGENTK_MEMORY"] = tempfile.mkdtemp(prefix="agentk-test-memory-")
    atexit.register(shutil.rmtree, os.environ["AGENTK_MEMORY"], True)


def agentk(*args: str, timeout: float = 300, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agentk.cli", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
        env=env,
    )


def example_meta(name: str) -> dict:
    return json.loads((EXAMPLES / "_private" / name / "meta.json").read_text())


@pytest.fixture(scope="session")
def example_ws(tmp_path_factory):
    """example name -> a workspace where `agentk setup` ran on it (once per session, on first use)."""
    done: dict[str, tuple[Path, subprocess.CompletedProcess]] = {}

    def get(name: str):
        if name not in done:
            ws = tmp_path_factory.mktemp("ws") / name
            done[name] = (ws, agentk("setup", EXAMPLES / name, "--workspace", ws))
        return done[name]

    return get
