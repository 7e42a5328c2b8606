"""Transitions of the staged MDP with scripted policies on toy stages (the engine knows nothing of Kaggle)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentk.core.checks import Check
from agentk.core.engine import Action, Budget, Engine, MetaTest, Stage
from agentk.core.errors import AgentFailed
from agentk.core.fileio import read_jsonl


# ---- checks: plain functions of the workspace, run in the sandbox -------------------------------
def holds_int(ws: Path, name: str) -> None:
    text = (ws / f"{name}.txt").read_text().strip()
    assert text.lstrip("-").isdigit(), f"{name}.txt must hold an integer, found {text!r}"


def b_is_double_a(ws: Path) -> None:
    a, b = (int((ws / f"{n}.txt").read_text()) for n in "ab")
    assert b == 2 * a, f"b.txt ({b}) must be twice a.txt ({a})"


def writer(name: str, value) -> str:
    return f"from pathlib import Path\nPath('{name}.txt').write_text('{value}')\n"


def toy_pipeline(ws: Path, timeout: float = 60):
    """Three stages; timeout per program: generous, as a sandbox starts slowly on a loaded 2-core machine."""
    stages = [
        Stage(n, f"write {n}.txt", output=f"{n}.txt", checks=[Check(holds_int, {"name": n})], timeout=timeout)
        for n in "abc"
    ]
    return stages, [MetaTest("double", ["a", "b"], [Check(b_is_double_a)])]


class Scripted:
    """Answers from a list per stage; records the contexts it was shown."""

    name = "scripted"

    def __init__(self, script: dict[str, list[Action]]):
        self.script = {k: list(v) for k, v in script.items()}
        self.seen: list[tuple[str, str, str | None]] = []

    def act(self, stage, ctx):
        self.seen.append((stage.name, ctx.mode, ctx.error))
        return self.script[stage.name].pop(0)


def code(name, value):
    return Action(code=writer(name, value))


def steps(ws):
    return [(r["stage"], r["passed"]) for r in read_jsonl(ws / "trajectory.jsonl")]


def test_all_pass_advances_and_discounts_rewards(tmp_path):
    policy = Scripted({"a": [code("a", 1)], "b": [code("b", 2)], "c": [code("c", 7)]})
    state = Engine(tmp_path, toy_pipeline, policy, Budget(gamma=0.5)).run()
    assert state.status == "done"
    assert steps(tmp_path) == [("a", True), ("b", True), ("double", True), ("c", True)]
    assert state.discounted_return == pytest.approx(1 + 0.5 + 0.25 + 0.125)
    saved = json.loads((tmp_path / "setup.json").read_text())
    assert (
        saved["stages"]["b"]["tests"] == {"holds_int": "passed"} and saved["meta_tests"]["double"]["status"] == "passed"
    )
    assert (tmp_path / "code_a.py").read_text() == writer("a", 1)  # generated code is kept


def test_failed_unit_test_stays_with_error_in_memory(tmp_path):
    policy = Scripted({"a": [code("a", "x"), code("a", 1)], "b": [code("b", 2)], "c": [code("c", 0)]})
    state = Engine(tmp_path, toy_pipeline, policy, Budget(gamma=1.0)).run()
    assert steps(tmp_path)[:2] == [("a", False), ("a", True)]
    assert policy.seen[1][0] == "a" and policy.seen[1][1] == "retry"
    assert "a.txt must hold an integer, found 'x'" in policy.seen[1][2]
    assert state.discounted_return == pytest.approx(-1 + 4)
    memory = read_jsonl(tmp_path / "trajectory.jsonl")[0]["memory"]
    assert [m["kind"] for m in memory] == ["CODE", "ERROR"]


def test_meta_failure_backtracks_to_first_covered_stage_in_credit_assignment(tmp_path):
    policy = Scripted(
        {
            "a": [code("a", 1), Action(keep=True, thought="a is fine")],
            "b": [code("b", 3), code("b", 2)],
            "c": [code("c", 0)],
        }
    )
    state = Engine(tmp_path, toy_pipeline, policy).run()
    assert steps(tmp_path) == [
        ("a", True),
        ("b", True),
        ("double", False),
        ("a", True),
        ("b", True),
        ("double", True),
        ("c", True),
    ]
    modes = [(s, m) for s, m, _ in policy.seen]
    assert modes == [
        ("a", "first"),
        ("b", "first"),
        ("a", "credit_assignment"),
        ("b", "credit_assignment"),
        ("c", "first"),
    ]
    assert "b.txt (3) must be twice a.txt (1)" in policy.seen[2][2]
    rows = read_jsonl(tmp_path / "trajectory.jsonl")
    assert rows[3]["action"] == "keep" and rows[3]["memory"][0] == {
        "kind": "CA-THOUGHT",
        "stage": "a",
        "text": "a is fine",
    }
    assert state.backtracks == 1 and state.status == "done"


def test_fixes_go_to_on_fix_a_retry_at_once_a_credit_assignment_rewrite_once_its_meta_test_passes(tmp_path):
    fixes = []
    policy = Scripted(
        {
            "a": [code("a", "x"), code("a", 1), Action(keep=True), Action(keep=True)],
            "b": [code("b", 3), code("b", 5), code("b", 2)],
            "c": [code("c", 0)],
        }
    )
    state = Engine(tmp_path, toy_pipeline, policy, on_fix=lambda *f: fixes.append(f)).run()
    assert state.status == "done" and state.backtracks == 2
    retry, ca = fixes  # b=5 was a rewrite too, but double still failed after it: not a fix
    assert retry[0] == "a" and retry[1] == writer("a", "x") and "found 'x'" in retry[2] and retry[3] == writer("a", 1)
    assert ca[0] == "b" and ca[1] == writer("b", 5) and "b.txt (5) must be twice a.txt (1)" in ca[2]
    assert ca[3] == writer("b", 2) and not state.ca_fixes
    assert "ca_fixes" not in json.loads((tmp_path / "setup.json").read_text())


def test_stage_budget_exhausted_fails_with_reason(tmp_path):
    policy = Scripted({"a": [code("a", "bad")] * 3})
    with pytest.raises(AgentFailed, match="stage a failed"):
        Engine(tmp_path, toy_pipeline, policy, Budget(stage_attempts=3)).run()
    saved = json.loads((tmp_path / "setup.json").read_text())
    assert saved["status"] == "failed" and saved["failed_stage"] == "a"
    assert "must hold an integer" in saved["reason"]
    assert len(steps(tmp_path)) == 3


def test_backtrack_budget_exhausted(tmp_path):
    policy = Scripted({"a": [code("a", 1)] * 3, "b": [code("b", 5)] * 3})
    with pytest.raises(AgentFailed, match="meta-test double"):
        Engine(tmp_path, toy_pipeline, policy, Budget(backtracks=2)).run()
    saved = json.loads((tmp_path / "setup.json").read_text())
    assert saved["failed_stage"] == "a" and saved["backtracks"] == 3


def test_crash_and_hang_of_generated_code_are_observations(tmp_path):
    policy = Scripted(
        {
            "a": [Action(code="raise SystemExit('boom')"), Action(code="while True: pass"), code("a", 1)],
            "b": [code("b", 2)],
            "c": [code("c", 1)],
        }
    )
    state = Engine(tmp_path, lambda ws: toy_pipeline(ws, timeout=10), policy).run()  # the hang costs 10 s
    assert state.status == "done"
    assert "boom" in policy.seen[1][2]
    assert "Timed out" in policy.seen[2][2]


def test_answer_without_code_is_an_error_not_executed(tmp_path):
    policy = Scripted(
        {"a": [Action(text="I think the answer is 1"), code("a", 1)], "b": [code("b", 2)], "c": [code("c", 1)]}
    )
    Engine(tmp_path, toy_pipeline, policy).run()
    assert "no code" in policy.seen[1][2]


DRIVER = r"""
import os, sys
from pathlib import Path
sys.path.insert(0, {tests!r})
from test_engine import Scripted, code, toy_pipeline, writer
from agentk.core.engine import Action, Engine
slow = os.environ.get("SLOW") == "1"
b = Action(code="import time; time.sleep(60)\n" + writer("b", 2)) if slow else code("b", 2)
policy = Scripted({{"a": [code("a", 1)], "b": [b], "c": [code("c", 3)]}})
Engine(Path(sys.argv[1]), toy_pipeline, policy).run(resume=sys.argv[2] == "resume")
"""


def test_resume_after_kill_continues_where_it_stopped(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER.format(tests=str(Path(__file__).parent)))
    env = {**os.environ, "SLOW": "1"}
    proc = subprocess.Popen([sys.executable, str(driver), str(ws), "fresh"], env=env, start_new_session=True)
    deadline = time.time() + 60
    while not (ws / "code_b.py").exists() and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert json.loads((ws / "setup.json").read_text())["status"] == "running"
    subprocess.run(
        [sys.executable, str(driver), str(ws), "resume"], check=True, env={**os.environ, "SLOW": "0"}, timeout=60
    )
    state = json.loads((ws / "setup.json").read_text())
    assert state["status"] == "done"
    assert steps(ws) == [("a", True), ("b", True), ("double", True), ("c", True)]  # a was not redone


# ---- the typed state reads and writes the files of earlier versions ---------------------------
OLD_STATE = {  # a setup.json as the untyped engine wrote it, mid-way through credit assignment
    "status": "running",
    "policy": "llm",
    "cursor": 0,
    "mode": "credit_assignment",
    "ca_meta": "double",
    "step": 4,
    "return": 0.9,
    "backtracks": 1,
    "tokens": 1200,
    "llm_calls": 5,
    "seconds": 3.25,
    "stages": {
        "a": {"status": "revisit", "attempts": 1, "tests": {"holds_int": "passed"}, "error": None},
        "b": {"status": "revisit", "attempts": 2, "tests": {"holds_int": "passed"}, "error": None},
    },
    "meta_tests": {
        "double": {"status": "failed", "runs": 1, "error": "b_is_double_a: b.txt (3) must be twice a.txt (1)"}
    },
    "failed_stage": None,
    "reason": None,
    "source": "/data/toy",
    "llm_seconds": 2.5,
    "ca_fixes": [{"stage": "b", "failing_code": "x = 1\n", "error": "double: b wrong", "fixed_code": "x = 2\n"}],
}
OLD_ROW = {
    "step": 0,
    "time": 1700000000.5,
    "stage": "a",
    "mode": "first",
    "action": "code",
    "test": ["holds_int"],
    "passed": True,
    "failed_test": None,
    "error": None,
    "reward": 1.0,
    "tokens": 300,
    "llm_calls": 1,
    "seconds": 0.412,
    "memory": [{"kind": "CODE", "stage": "a", "text": "print(1)"}],
    "llm": [{"purpose": "code", "tokens": 300, "seconds": 0.4, "cached": False}],
}


def test_typed_state_and_trajectory_round_trip_the_old_files_exactly():
    from agentk.core.state import EpisodeState, TrajectoryRecord

    state = EpisodeState.from_json(json.loads(json.dumps(OLD_STATE)))
    assert state.stages["b"].attempts == 2 and state.meta_tests["double"].status == "failed"
    assert state.ca_fixes[0].fixed_code == "x = 2\n" and state.info == {"source": "/data/toy"}
    assert state.discounted_return == 0.9 and state.llm_seconds == 2.5
    assert state.to_json() == OLD_STATE and list(state.to_json()) == list(OLD_STATE)
    fresh = {k: v for k, v in OLD_STATE.items() if k not in ("llm_seconds", "ca_fixes")}
    assert EpisodeState.from_json(fresh).to_json() == fresh  # keys an old state lacked stay out
    row = TrajectoryRecord.from_json(OLD_ROW)
    assert row.reward == 1.0 and row.memory[0].kind == "CODE" and row.to_json() == OLD_ROW
    no_llm = {k: v for k, v in OLD_ROW.items() if k != "llm"}
    assert TrajectoryRecord.from_json(no_llm).to_json() == no_llm


def test_resume_reads_a_state_file_written_by_the_untyped_engine(tmp_path):
    (tmp_path / "a.txt").write_text("1")
    (tmp_path / "code_a.py").write_text(writer("a", 1))
    old = {
        "status": "running",
        "policy": "scripted",
        "cursor": 1,
        "mode": "first",
        "ca_meta": None,
        "step": 1,
        "return": 1.0,
        "backtracks": 0,
        "tokens": 0,
        "llm_calls": 0,
        "seconds": 0.3,
        "stages": {"a": {"status": "passed", "attempts": 1, "tests": {"holds_int": "passed"}, "error": None}},
        "meta_tests": {},
        "failed_stage": None,
        "reason": None,
        "source": "/data/toy",
        "llm_seconds": 0.0,
    }
    (tmp_path / "setup.json").write_text(json.dumps(old, indent=2))
    row = {**OLD_ROW, "memory": [{"kind": "CODE", "stage": "a", "text": writer("a", 1)}]}
    (tmp_path / "trajectory.jsonl").write_text(json.dumps({k: v for k, v in row.items() if k != "llm"}) + "\n")
    policy = Scripted({"b": [code("b", 2)], "c": [code("c", 5)]})
    state = Engine(tmp_path, toy_pipeline, policy, Budget(gamma=0.5)).run(resume=True)
    assert state.status == "done" and state.info == {"source": "/data/toy"}
    assert steps(tmp_path) == [("a", True), ("b", True), ("double", True), ("c", True)]
    assert state.discounted_return == pytest.approx(1 + 0.5 + 0.25 + 0.125)
    saved = json.loads((tmp_path / "setup.json").read_text())
    assert saved["source"] == "/data/toy" and saved["step"] == 4 and saved["stages"]["a"]["attempts"] == 1
    assert set(saved) == set(old)
