"""The LLM policy against a scripted OpenAI-compatible server on 127.0.0.1: reflection and retry, credit
assignment after a meta-test failure, re-asking when an answer has no code, and the endpoint errors."""

from __future__ import annotations

import json
import os
import re
import socket

import pytest
from conftest import EXAMPLES, agentk

from agentk.core.fileio import read_jsonl
from agentk.policies.intrinsics import Calls, extract_code, text_answer
from agentk.policies.llm import LLMClient, LLMConfig
from stages.tab_input_map import template
from testing.scripted_llm import ScriptedLLM
from testing.simulated_llm import ExpertAnswers, fenced, header

SOURCE = EXAMPLES / "iris-species"


def llm_env(server_url: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTK_", "OPENAI_")) or k == "AGENTK_MEMORY"}
    return {
        **env,
        "AGENTK_LLM_BASE_URL": server_url,
        "AGENTK_LLM_MODEL": "scripted-model",
        "AGENTK_LLM_API_KEY": "test-key",
        "AGENTK_LLM_CACHE": "off",
    }


def user_text(request: dict) -> str:
    return request["messages"][-1]["content"]


def requests_for(server, intrinsic, stage):
    return [r for r in server.requests if header(r["messages"]) == (intrinsic, stage)]


def steps(ws):
    return read_jsonl(ws / "trajectory.jsonl")


@pytest.mark.slow  # a full LLM setup (50 s); test_curriculum's LLM rounds retry a failed stage with its error in the prompt by default
def test_failed_unit_test_is_retried_with_the_error_in_the_prompt(tmp_path):
    ws = tmp_path / "ws"
    oracle = ExpertAnswers(SOURCE, ws)
    served = []

    def handler(messages):
        intrinsic, stage = header(messages)
        if (intrinsic, stage) == ("code", "metric") and not served:
            served.append(1)
            return fenced(oracle.code("metric").replace("HIGHER_IS_BETTER = True", "HIGHER_IS_BETTER = False"))
        return oracle(messages)

    with ScriptedLLM(handler=handler) as server:
        proc = agentk("setup", SOURCE, "--workspace", ws, "--policy", "llm", env=llm_env(server.url))
    assert proc.returncode == 0, proc.stderr[-3000:]
    metric_steps = [s for s in steps(ws) if s["stage"] == "metric"]
    assert [s["passed"] for s in metric_steps] == [False, True]
    first, second = requests_for(server, "code", "metric")
    assert "fix the direction" not in user_text(first)
    assert "fix the direction" in user_text(second) and "HIGHER_IS_BETTER = False" in user_text(second)
    assert requests_for(server, "reflect", "metric"), "a one-sentence reflection comes before the retry"
    kinds = [m["kind"] for m in metric_steps[1]["memory"]]
    assert kinds[0] == "REFLECTION" and "CODE" in kinds
    state = json.loads((ws / "setup.json").read_text())
    assert state["llm_calls"] == len(server.requests) and state["tokens"] > 0
    assert all(
        "llm" in s
        for s in steps(ws)
        if s["stage"] not in ("fetch", "test_maps_match", "map_dataset_train", "final_light_solve")
    )
    log = read_jsonl(ws / "llm_log.jsonl")
    assert len(log) == len(server.requests) and log[0]["messages"] and log[0]["answer"]


@pytest.mark.slow  # a full LLM setup (45 s); tests/test_engine.py's credit assignment with a scripted policy and
# tests/test_hypotheses.py's with the expert run by default, and test_curriculum's LLM rounds the LLM's prompts
def test_meta_failure_keeps_correct_stages_and_rewrites_the_faulty_one(tmp_path):
    ws = tmp_path / "ws"
    oracle = ExpertAnswers(SOURCE, ws)

    def drop_last_feature(code):
        return re.sub(r"(features = \[.*?), '[^']+'\]", r"\1]", code, count=1)

    def handler(messages):
        intrinsic, stage = header(messages)
        if (intrinsic, stage) == ("code", "test_tab_input_map"):
            return fenced(drop_last_feature(oracle.code(stage)))
        if intrinsic == "ca_thought" and stage == "test_tab_input_map":
            return "CA-THOUGHT: The test map lost a feature column the train map has.\nDECISION: REWRITE\n" + fenced(
                oracle.code(stage)
            )
        return oracle(messages)

    with ScriptedLLM(handler=handler) as server:
        proc = agentk("setup", SOURCE, "--workspace", ws, "--policy", "llm", env=llm_env(server.url))
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = steps(ws)
    seq = [(r["stage"], r["mode"], r["action"], r["passed"]) for r in rows]
    fail_at = seq.index(("test_maps_match", "meta", "meta-test", False))
    assert seq[fail_at + 1 : fail_at + 7] == [
        ("train_tab_input_map", "credit_assignment", "keep", True),
        ("train_tab_target_map", "credit_assignment", "keep", True),
        ("transform_tab_target_train", "credit_assignment", "keep", True),
        ("map_dataset_train", "meta", "meta-test", True),  # the meta-tests on the way run again
        ("test_tab_input_map", "credit_assignment", "code", True),
        ("test_maps_match", "meta", "meta-test", True),
    ]
    assert (
        "test_tab_input_map.csv columns differ from train_tab_input_map.csv: missing ['PetalWidthCm']"
        in rows[fail_at]["error"]
    )
    ca_prompts = [user_text(r) for r in server.requests if header(r["messages"])[0] == "ca_thought"]
    assert len(ca_prompts) == 4 and all("test_tab_input_map.csv columns differ" in p for p in ca_prompts)
    memory = [m["kind"] for r in rows[fail_at + 1 :] for m in r["memory"]]
    assert memory.count("META-ERROR-THOUGHT") == 1 and memory.count("CA-THOUGHT") == 4
    assert (ws / "code_train_tab_input_map.py").read_text() == oracle.code("train_tab_input_map")  # kept
    assert (ws / "code_test_tab_input_map.py").read_text() == oracle.code("test_tab_input_map")  # rewritten
    assert json.loads((ws / "setup.json").read_text())["backtracks"] == 1


@pytest.mark.slow  # a full LLM setup (35 s); test_curriculum's LLM rounds stay in the default run
def test_answer_without_code_is_asked_again_never_executed(tmp_path):
    ws = tmp_path / "ws"
    oracle = ExpertAnswers(SOURCE, ws)
    prose = "I would read train.csv with pandas and keep the Species column, then save it."

    answers = [prose, prose]  # two answers without code, then the program

    def target_map(messages):
        return answers.pop(0) if answers else fenced(oracle.code("train_tab_target_map"))

    with ScriptedLLM(rules=[(r"^\[agentk:code\] stage=train_tab_target_map", target_map)], handler=oracle) as server:
        proc = agentk("setup", SOURCE, "--workspace", ws, "--policy", "llm", env=llm_env(server.url))
    assert proc.returncode == 0, proc.stderr[-3000:]
    asked = requests_for(server, "code", "train_tab_target_map")
    assert len(asked) == 3
    assert "contained no valid Python program" in user_text(asked[1])
    target_steps = [s for s in steps(ws) if s["stage"] == "train_tab_target_map"]
    assert len(target_steps) == 1 and target_steps[0]["passed"]  # the prose was never run


def test_unreachable_endpoint_is_a_one_line_exit_2(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**llm_env(f"http://127.0.0.1:{port}/v1")}
    ws = tmp_path / "ws"
    proc = agentk("setup", SOURCE, "--workspace", ws, "--policy", "llm", env=env, timeout=120)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "unreachable" in lines[0] and str(port) in lines[0]
    assert not ws.exists()


def test_unknown_model_is_a_one_line_exit_2(tmp_path):
    with ScriptedLLM(model="other-model") as server:
        proc = agentk("setup", SOURCE, "--workspace", tmp_path / "ws", "--policy", "llm", env=llm_env(server.url))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "scripted-model" in proc.stderr and "other-model" in proc.stderr


@pytest.mark.slow  # a full LLM setup (35 s); tests/test_bad_input.py's hybrid setup stays in the default run
def test_hybrid_uses_the_llm_only_when_the_expert_fails(tmp_path):
    with ScriptedLLM(handler=lambda m: "") as server:
        proc = agentk("setup", SOURCE, "--workspace", tmp_path / "ws", env=llm_env(server.url))  # hybrid by default
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert server.requests == [] and json.loads((tmp_path / "ws" / "setup.json").read_text())["policy"] == "hybrid"


@pytest.mark.parametrize(
    "answer, expect",
    [
        ("Sure! Here you go:\n```python\nimport pandas as pd\nx = 1\n```\nHope it helps.", "x = 1"),
        ("```\nimport os\n```\nand a longer one\n```python\nimport pandas as pd\nvalue = 2\n```", "value = 2"),
        ("```python\ndef broken(:\n```", None),
        ("I cannot write this code without more information.", None),
        ("import numpy as np\ny = np.zeros(3)", "y = np.zeros(3)"),
    ],
)
def test_extract_code_from_messy_answers(answer, expect):
    code = extract_code(answer, "")
    assert (code is None) if expect is None else (expect in code)


def test_extract_code_fills_the_template_hole_with_a_body():
    code = extract_code("```python\ndf = pd.read_csv('raw/train.csv')\nreturn df\n```", template("train"))
    assert "    df = pd.read_csv('raw/train.csv')" in code and 'if __name__ == "__main__":' in code


def test_modalities_answer_is_validated_and_asked_again(tmp_path):
    ws = tmp_path / "ws"
    (ws / "raw").mkdir(parents=True)
    (ws / "task").mkdir()
    (ws / "task" / "description.md").write_text("A competition.")
    good = '{"inputs": ["tab"], "targets": ["tab"], "task_type": "BinCls"}'
    bad = '{"inputs": ["table"], "targets": ["tab"], "task_type": "BinCls"}'
    with ScriptedLLM(rules=[("modalities", ["Let me think... no JSON here", bad, good])]) as server:
        client = LLMClient(LLMConfig(base_url=server.url, model="scripted-model", api_key="k", cache_dir=None))
        from stages import modalities

        answer = text_answer(Calls(client), ws, modalities.make())
    assert json.loads(answer) == json.loads(good) and len(server.requests) == 3
    assert "invalid" in user_text(server.requests[2])


def test_hybrid_asks_the_llm_on_retries_and_credit_assignment_only(example_ws):
    from agentk.core.engine import Context
    from agentk.core.memory import WorkingMemory
    from agentk.policies.llm_policy import HybridPolicy

    ws, proc = example_ws("iris-species")
    assert proc.returncode == 0
    oracle = ExpertAnswers(SOURCE, ws)
    stage = oracle.stage("metric")
    with ScriptedLLM(handler=oracle) as server:
        policy = HybridPolicy(
            LLMClient(LLMConfig(base_url=server.url, model="scripted-model", api_key="k", cache_dir=None))
        )
        first = policy.act(stage, Context(ws, "first", 0, WorkingMemory(), None, None))
        assert server.requests == [] and first.code == oracle.code("metric")
        retry = policy.act(
            stage, Context(ws, "retry", 1, WorkingMemory(), first.code, "metric scores ... fix the direction")
        )
        assert [header(r["messages"])[0] for r in server.requests] == ["reflect", "code"]
        assert retry.calls == 2 and retry.code == oracle.code("metric")
        ca = policy.act(
            stage, Context(ws, "credit_assignment", 1, WorkingMemory(), first.code, "ids disagree", ["metric"])
        )
        assert ca.keep and [kind for kind, _ in ca.notes] == ["META-ERROR-THOUGHT"]
