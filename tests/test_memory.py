"""Memory planned as well as time (issue 49): the solve's limit binds what its processes see as theirs, decoded
images go to disk past what is left under it, the solver's estimate grows with its inputs and says when it is over
the limit, and `agentk solve --memory-limit` refuses a limit the machine cannot give, in one line."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from agentk.core.sandbox import MemoryGroup, run_python_live
from agentk.solve.memory import ENCODER_GB, TABLE_COPIES, machine_gb, plan_memory
from tools import machine

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
PROBE = f"""
import json, sys
sys.path.insert(0, {str(ROOT)!r})
from agentk.solve.memory import machine_gb
from tools.machine import images_in_memory
print(json.dumps({{"machine": machine_gb(), "big": images_in_memory(2**30), "small": images_in_memory(2**26)}}))
"""


def test_a_solve_under_a_limit_sees_it_as_its_machine_and_keeps_large_images_on_disk(tmp_path):
    if (probe := MemoryGroup.make(2**30)) is None:
        pytest.skip("no memory cgroup can be made here (not root, or the controller is not delegated)")
    probe.remove()
    log = tmp_path / "out.log"
    with open(log, "w") as out:
        run = run_python_live(["-c", PROBE], cwd=tmp_path, output=out, memory_gb=1.5)
    assert run.returncode == 0, log.read_text()
    seen = json.loads(log.read_text().strip().splitlines()[-1])
    assert seen["machine"] == pytest.approx(1.5)  # not the machine's 20-odd GB
    assert not seen["big"] and seen["small"]  # 1 GB of images is past half of what is left; 64 MB is not
    assert machine.images_in_memory(2**30)  # this process, under no such limit, keeps them in memory


def test_the_estimate_grows_with_the_inputs_and_says_when_it_is_over_the_limit(monkeypatch):
    rng = np.random.default_rng(0)
    table = pd.DataFrame(rng.normal(size=(100_000, 20)))
    small = plan_memory({"tab": [table.iloc[:1000]]}, 64, limit_gb=8)
    large = plan_memory({"tab": [table]}, 64, limit_gb=8)
    assert large.parts["tables"] == pytest.approx(TABLE_COPIES * 100_000 * 20 * 8 / 2**30, rel=0.01)
    assert small.total_gb < large.total_gb < 8 and "under the limit of 8.0 GB" in large.line()
    assert "OVER the limit of 1.0 GB" in plan_memory({"tab": [table]}, 64, limit_gb=1.0).line()
    paths = pd.DataFrame({"path": [f"{i}.jpg" for i in range(20_000)]})
    images = plan_memory({"img": [paths]}, 96, limit_gb=8)
    assert images.parts["decoded images"] == pytest.approx(20_000 * 96 * 96 * 3 / 2**30)
    monkeypatch.setattr(machine, "available_bytes", lambda: 2**28)  # little left: the images go to a file on disk
    assert plan_memory({"img": [paths]}, 96, limit_gb=8).parts["decoded images"] == 0
    texts = pd.DataFrame({"text": ["a review of some length " * 4] * 10_000})
    with_embedding = plan_memory({"txt": [texts]}, 64, limit_gb=8, embedded_rows=10_000)
    without = plan_memory({"txt": [texts]}, 64, limit_gb=8)  # the text network left out: TF-IDF alone
    assert with_embedding.parts["texts"] == without.parts["texts"] > 0 and "text encoder" not in without.parts
    assert with_embedding.parts["text encoder"] > ENCODER_GB


@pytest.mark.parametrize("limit", ["0.1", "100000"])
def test_solve_refuses_a_memory_limit_the_machine_cannot_give_in_one_line(tmp_path, limit):
    run = subprocess.run(
        [sys.executable, "-m", "agentk", "solve", "--workspace", str(tmp_path), "--memory-limit", limit],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "--memory-limit" in lines[0] and f"{machine_gb():.1f}" in lines[0], run.stderr
