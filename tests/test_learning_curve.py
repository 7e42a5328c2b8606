"""benchmarks/learning_curve.py against a configured LLM endpoint (a scripted server on 127.0.0.1 answering like
the expert): the setups talk to it instead of the simulated LLM, and the curve counts the calls it answered."""

import json
import os
import subprocess
import sys

import pytest
from conftest import EXAMPLES, ROOT

from testing.scripted_llm import ScriptedLLM
from testing.simulated_llm import ExpertAnswers


@pytest.mark.slow  # the benchmark end to end (45 s on 2 cores); test_curriculum covers its LLM setup rounds
def test_learning_curve_uses_a_configured_endpoint_and_counts_its_calls(tmp_path):
    work, out = tmp_path / "work", tmp_path / "out"
    oracle: list[ExpertAnswers] = []

    def handler(messages):  # one rule, one seed, one round: the workspace is known in advance
        if not oracle:
            oracle.append(ExpertAnswers(EXAMPLES / "iris-species", work / "random-s0" / "iris-species"))
        return oracle[0](messages)

    with ScriptedLLM(handler=handler) as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTK_LLM_", "OPENAI_", "AGENTK_CONFIG"))}
        env.update(AGENTK_LLM_BASE_URL=server.url, AGENTK_LLM_MODEL="scripted-model", AGENTK_LLM_API_KEY="x")
        proc = subprocess.run(
            [
                sys.executable,
                "benchmarks/learning_curve.py",
                "--only",
                "iris-species",
                "--seeds",
                "1",
                "--rounds",
                "1",
                "--jobs",
                "1",
                "--selections",
                "random",
                "--arena",
                str(tmp_path / "none"),
                "--work",
                str(work),
                "--out",
                str(out),
            ],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=600,
        )
        answered = len(server.requests)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "LLM: scripted-model at" in proc.stdout
    [run] = json.loads((out / "learning_curve.json").read_text())
    [round_] = run["rounds"]
    assert run["selection"] == "random" and round_["task"] == "iris-species" and round_["setup_passed"]
    assert round_["requests"] == answered > 10  # the setup's own count is the endpoint's
    assert round_["faults"] is None and round_["examples_shown"] == 0  # no simulation, an empty memory
    report = (out / "learning_curve.md").read_text()
    assert "LLM endpoint scripted-model at http://127.0.0.1" in report and "simulated" not in report
    assert "| random order |" in report and "full eq. 7" not in report  # only the rule asked for
