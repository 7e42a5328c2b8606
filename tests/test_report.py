"""`agentk report`: what the report says of a workspace whose solve did not finish, the curriculum's report rendered
in a real headless chromium (plots decoded, tables present), pass@k, the command. A solved workspace's report is
rendered in tests/test_solve.py, on its full solve."""

from __future__ import annotations

import shutil

import pytest
from conftest import agentk, render

from agentk.core.fileio import write_json
from agentk.report import write_report
from agentk.workspace import Workspace
from curriculum.report import pass_at_k, write_curriculum_report


@pytest.fixture(scope="module")
def set_up(example_ws, tmp_path_factory):
    """breast-cancer set up (no solve yet), in a folder of this module's own."""
    good, proc = example_ws("breast-cancer")
    assert proc.returncode == 0, proc.stderr[-2000:]
    ws = tmp_path_factory.mktemp("report") / "breast-cancer"
    shutil.copytree(good, ws, symlinks=True)
    return ws


def test_the_report_says_when_the_submission_is_not_a_finished_solves(set_up, tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(set_up, ws, symlinks=True)
    text = write_report(ws).read_text()
    assert "not a finished solve" in text and "no solve was run" in text
    assert "light (setup)" in text and "network-1" not in text  # the setup's light solution alone
    write_json(Workspace(ws).solve_summary, {"status": "running", "budget": "quick"})
    assert "a solve is running or was killed" in write_report(ws).read_text()


def test_pass_at_k_counts_first_successes_within_k_tries():
    rounds = [
        {"task": "a", "outcome": "solve failed (exit 1)"},
        {"task": "b", "outcome": "solved: validation accuracy 0.9"},
        {"task": "a", "outcome": "solved: validation accuracy 0.8"},
        {"task": "c", "outcome": "setup failed (exit 1)"},
    ]
    assert pass_at_k(rounds) == {1: 1 / 3, 2: 2 / 3}


def test_curriculum_report_shows_rounds_pass_at_k_and_successes(set_up, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    shutil.copytree(set_up, out / "breast-cancer", symlinks=True)
    write_report(out / "breast-cancer")
    base = {"step": "done", "source": "x", "setup_passed": True, "setup_rc": 0, "llm_calls": 3, "tokens": 900}
    rounds = [
        {**base, "round": 0, "task": "iris", "why": "easiest tree (empty memory)", "outcome": "solve failed (exit 1)"},
        {
            **base,
            "round": 1,
            "task": "breast-cancer",
            "why": "highest score",
            "outcome": "solved: validation roc_auc 0.99",
        },
        {**base, "round": 2, "task": "iris", "why": "highest score", "outcome": "solved: validation accuracy 0.9"},
    ]
    for i, r in enumerate(rounds):
        r.update(metric="accuracy", val_score=0.9, public_score=None, scores={"iris": 0.1 * i, "breast-cancer": -0.1})
    write_json(
        Workspace(out).curriculum_state, {"pool": "pool.txt", "solved": ["breast-cancer", "iris"], "rounds": rounds}
    )
    path = write_curriculum_report(out)
    shown = render(path, tmp_path / "curriculum.png")
    assert shown["sections"] == ["rounds", "passk", "successes", "scores", "selection"]
    assert {alt for alt, w in shown["images"] if w > 0} == {"pass@k", "successes over time", "selection scores"}
    assert "50%" in shown["text"] and "100%" in shown["text"]  # pass@1 (breast-cancer), pass@2 (iris too)
    assert shown["rows"][0] == 3  # one row per round
    assert 'href="breast-cancer/report.html"' in path.read_text()  # a round links its workspace's report


def test_report_command_and_version(set_up, tmp_path):
    proc = agentk("report", "--workspace", set_up)
    assert proc.returncode == 0 and proc.stdout.strip() == str(Workspace(set_up).report), proc.stderr
    bad = agentk("report", "--workspace", tmp_path / "nothing")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "holds no setup" in bad.stderr
    version = agentk("--version")
    assert version.returncode == 0 and version.stdout.startswith("agentk 0.")
