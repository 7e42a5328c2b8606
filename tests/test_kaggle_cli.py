"""`agentk setup <kaggle url>` and `agentk submit` end to end: the real kaggle client against the fake
Kaggle API on localhost:7777, the tabs scraped from local pages by a real headless Chromium. The competition's
files are a generated Titanic-layout fixture (testing.competitions) served under the pages' slug."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from conftest import ROOT, agentk
from test_scraper import base_url  # noqa: F401 - the local Kaggle-like pages, a fixture

from testing.competitions import build
from testing.fake_kaggle import FakeKaggle


@pytest.fixture(scope="module")
def comp(tmp_path_factory):
    return build("gender-submission", tmp_path_factory.mktemp("competition"))


@pytest.fixture
def env(tmp_path):
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("KAGGLE_", "AGENTK_LLM", "OPENAI_"))}
    return {
        **clean,
        "KAGGLE_API_ENVIRONMENT": "TEST",
        "KAGGLE_USERNAME": "agentk-test",
        "KAGGLE_KEY": "fake-key",
        "KAGGLE_CONFIG_DIR": str(tmp_path / "cfg"),
        "HOME": str(tmp_path / "home"),
    }


def one_line(proc) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    return lines[0]


def test_setup_from_a_url_then_submit(comp, tmp_path, env, base_url):  # noqa: F811
    ws = tmp_path / "ws"
    with FakeKaggle(
        {"spaceship-titanic": comp / "public"}, answers={"spaceship-titanic": comp / "private" / "answers.csv"}
    ) as fake:
        proc = agentk("setup", f"{base_url}/competitions/spaceship-titanic/overview?tab=1", "--workspace", ws, env=env)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert (ws / "raw" / "train.csv").is_file() and not (ws / "raw" / "spaceship-titanic.zip").exists()
        meta = json.loads((ws / "task" / "meta.json").read_text())
        assert meta["slug"] == "spaceship-titanic" and meta["scraped_with"] == "browser"
        assert "classification accuracy" in (ws / "task" / "evaluation.md").read_text()
        assert "METRIC = 'accuracy'" in (ws / "code_metric.py").read_text()
        assert json.loads((ws / "setup.json").read_text())["status"] == "done"

        proc = agentk("submit", "--light", "--workspace", ws, "--message", "light solve", env=env)
        assert proc.returncode == 0, proc.stderr[-3000:]
        records = json.loads((ws / "submissions.json").read_text())
        assert len(records) == 1 and records[0]["status"] == "complete" and records[0]["message"] == "light solve"
        assert 0.5 < records[0]["public_score"] <= 1.0  # the light solve beats a coin on the hidden answers
        assert json.loads((ws / "final_pick.json").read_text())["ref"] == records[0]["ref"]
        assert any("CreateSubmission" in path for _, path in fake.requests)

        # killed while waiting for the score: the rerun waits for that submission instead of submitting again
        fake.pending_polls = 10**6
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentk", "submit", "--light", "--workspace", str(ws), "-m", "second"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 120
        while len(json.loads((ws / "submissions.json").read_text())) < 2 and time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            time.sleep(0.2)
        proc.kill()
        proc.wait()
        pending = json.loads((ws / "submissions.json").read_text())[1]
        assert pending["status"] == "pending" and pending["public_score"] is None
        fake.pending_polls = 0
        proc = agentk("submit", "--light", "--workspace", ws, "-m", "third", env=env)
        assert proc.returncode == 0, proc.stderr[-3000:]
        records = json.loads((ws / "submissions.json").read_text())
        assert [r["ref"] for r in records][1] == pending["ref"] and len(records) == 2
        assert records[1]["status"] == "complete" and records[1]["message"] == "second"
        assert sum("CreateSubmission" in path for _, path in fake.requests) == 2


def test_unknown_competition_is_exit_2(comp, tmp_path, env):
    with FakeKaggle({"spaceship-titanic": comp / "public"}):
        line = one_line(agentk("setup", "https://www.kaggle.com/c/no-such-competition", "-w", tmp_path / "ws", env=env))
    assert "no-such-competition" in line and not (tmp_path / "ws").exists()


def test_rules_not_accepted_is_exit_2_with_what_to_do(comp, tmp_path, env):
    with FakeKaggle({"spaceship-titanic": comp / "public"}, rules_not_accepted=["spaceship-titanic"]):
        line = one_line(
            agentk("setup", "https://www.kaggle.com/competitions/spaceship-titanic", "-w", tmp_path / "ws", env=env)
        )
    assert "rules" in line and "spaceship-titanic/rules" in line


def test_no_credentials_is_exit_2_saying_how(comp, tmp_path, env):
    env = {k: v for k, v in env.items() if k not in ("KAGGLE_USERNAME", "KAGGLE_KEY")}
    with FakeKaggle({"spaceship-titanic": comp / "public"}):
        line = one_line(
            agentk("setup", "https://www.kaggle.com/competitions/spaceship-titanic", "-w", tmp_path / "ws", env=env)
        )
    assert "kaggle.json" in line


def test_submit_refuses_a_local_workspace(example_ws, env):
    ws, proc = example_ws("iris-species")
    assert proc.returncode == 0
    line = one_line(agentk("submit", "--light", "--workspace", ws, env=env))
    assert "local folder" in line
