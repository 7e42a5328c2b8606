"""Shared helpers: run the real CLI in a subprocess, and set each example up once per test session."""

from __future__ import annotations

import atexit
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from threadpoolctl import threadpool_limits

# Three workers on two cores: a second BLAS or OpenMP thread in each only spins against the other workers (an L-BFGS
# logistic regression on a small matrix took 106 s with two BLAS threads and 21 s with one). The env vars reach
# agentk's subprocesses and torch, imported later; the limit, this process, whose numpy is loaded already.
os.environ.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
threadpool_limits(1)

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
ARENA = ROOT.parent / "shared" / "arena-dev"
EXAMPLE_NAMES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "description.md").exists())
# the tests' agentk runs (and their subprocesses) keep their long-term memory out of ~/.agentk
if "AGENTK_MEMORY" not in os.environ:
    os.environ["AGENTK_MEMORY"] = tempfile.mkdtemp(prefix="agentk-test-memory-")
    atexit.register(shutil.rmtree, os.environ["AGENTK_MEMORY"], True)


@pytest.fixture(autouse=True)
def _own_memory(monkeypatch, tmp_path_factory):
    """Each test its own long-term memory: what one test's setups learn (fixes, hypotheses that passed) must not
    steer another's, whichever runs first."""
    monkeypatch.setenv("AGENTK_MEMORY", str(tmp_path_factory.mktemp("memory")))


def agentk(*args: str | Path, timeout: float = 300, env: dict | None = None) -> subprocess.CompletedProcess:
    """The CLI in a child process, as a user runs it: no standard input, an ordinary 80-column terminal (the
    console's wrapping is then the same on every machine)."""
    return subprocess.run(
        [sys.executable, "-m", "agentk", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
        env={**(os.environ if env is None else env), "COLUMNS": "80"},
    )


def example_meta(name: str) -> dict:
    return json.loads((EXAMPLES / "_private" / name / "meta.json").read_text())


@pytest.fixture(scope="session")
def example_ws(tmp_path_factory):
    """example name -> a workspace where `agentk setup` ran on it, once per test run: the pytest-xdist workers
    share it (the first to need an example sets it up under a file lock; the others wait, then read its result).
    Tests read it, or copy it (example_copy) to change it."""
    base = tmp_path_factory.getbasetemp()
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "example-setups"
    shared.mkdir(exist_ok=True)

    def get(name: str) -> tuple[Path, subprocess.CompletedProcess]:
        ws, result = shared / name, shared / f"{name}.json"
        with open(shared / f"{name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or its process dies
            if not result.exists():
                proc = agentk("setup", EXAMPLES / name, "--workspace", ws)
                done = {
                    "args": list(map(str, proc.args)),
                    "rc": proc.returncode,
                    "out": proc.stdout,
                    "err": proc.stderr,
                }
                result.write_text(json.dumps(done))
        done = json.loads(result.read_text())
        return ws, subprocess.CompletedProcess(done["args"], done["rc"], done["out"], done["err"])

    return get


def copy_setup(example_ws, name: str, dest: Path) -> Path:
    """A copy at `dest` of the test run's setup of the example (which must have succeeded), for a test that changes
    the workspace: TaskData writes its split there, a solve its solutions; the shared setup stays as it was."""
    src, setup = example_ws(name)
    assert setup.returncode == 0, f"setup of {name} failed:\n{setup.stderr[-2000:]}"
    shutil.copytree(src, dest, symlinks=True)
    return dest


@pytest.fixture
def example_copy(example_ws, tmp_path, monkeypatch):
    """example name -> copy_setup in tmp_path, the working directory (as for `agentk solve`: the setup's generated
    code reads workspace-relative paths)."""

    def get(name: str) -> Path:
        ws = copy_setup(example_ws, name, tmp_path / name)
        monkeypatch.chdir(ws)
        return ws

    return get


def render(html_path, screenshot):
    """Opens the page in chromium; returns what it shows: each image's alt and decoded width, the tables' header
    rows, section ids, the page's text, and every URL it asked for."""
    from playwright.sync_api import sync_playwright

    from tools.scraper import CHROMIUM_ARGS, find_chromium

    exe = find_chromium()
    assert exe, "no chromium found: install it (tests/run does: apt-get install chromium) or set AGENTK_CHROMIUM"
    requests = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.on("request", lambda r: requests.append(r.url))
            page.goto(html_path.as_uri(), wait_until="load")
            shown = page.evaluate(
                """() => ({
                    images: [...document.images].map(i => [i.alt, i.complete ? i.naturalWidth : 0]),
                    tables: [...document.querySelectorAll('table')].map(t =>
                        [...t.querySelectorAll('th')].map(h => h.textContent)),
                    rows: [...document.querySelectorAll('table')].map(t => t.querySelectorAll('tbody tr').length),
                    sections: [...document.querySelectorAll('section')].map(s => s.id),
                    text: document.body.innerText,
                })"""
            )
            page.screenshot(path=str(screenshot), full_page=True)
        finally:
            browser.close()
    shown["requests"] = requests
    return shown
